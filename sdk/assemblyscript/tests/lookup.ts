// A map exercising field lookups: for each string of the record's array
// "names" it looks the name up in the map "obj", as a string (getInto) and
// as UTF-8 bytes (getBytesInto), and sets "v<i>" to the value found (or
// nil) and "same<i>" to whether both lookups agree. A record without "obj"
// looks the names up in its own value, the map the SDK indexed while it
// read the record.
import { Edit, Iter, Record, Status, Value, map } from "../assembly/index";
export * from "../assembly/operator";

const it = new Iter();
const a = new Value(), b = new Value();

function lookup(r: Record, out: Edit): i32 {
  const own = !r.has("obj");
  const obj = own ? r.value : r.field("obj");
  const names = r.field("names");
  if (!it.reset(names, false)) return Status.OK;
  for (let i = 0; it.next(); i++) {
    const name = it.value.asString(); // allocates: fine in a test
    obj.getInto(name, a);
    obj.getBytesInto(it.value.strPtr, it.value.strLen, b);
    if (a.exists) out.setRaw("v" + i.toString(), a);
    else out.setNil("v" + i.toString());
    out.setBool("same" + i.toString(), a.ptr == b.ptr && a.len == b.len && a.exists == b.exists);
  }
  if (own) { // only v<i> and same<i> stay
    const keys = new Iter();
    if (keys.reset(r.value, true)) while (keys.next()) out.unset(keys.key.asString());
    return Status.OK;
  }
  out.unset("obj");
  out.unset("names");
  return Status.OK;
}

map("lookup", lookup);
