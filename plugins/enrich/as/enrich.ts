// enrich (AssemblyScript): a map that adds every config key as a field:
// with config {bank: NBI} each record gets "bank": "NBI". A field the
// record already has is overwritten in place; new fields are appended in
// the config's key order, sorted bytewise (the host sorts them too).
// Values are copied as the host encoded them.
import { Context, Edit, Iter, Record, Status, Value, fail, map } from "../../../sdk/assemblyscript/assembly/index";
export * from "../../../sdk/assemblyscript/assembly/operator";

/** A config field: views into the config, valid for the instance's life. */
class Field {
  constructor(public name: usize, public nameLen: i32, public value: Value) {}
}

const fields: Field[] = [];

function less(a: Field, b: Field): bool {
  const c = memory.compare(a.name, b.name, <usize>min(a.nameLen, b.nameLen));
  return c < 0 || (c == 0 && a.nameLen < b.nameLen);
}

function open(ctx: Context, config: Value): i32 {
  const it = new Iter();
  it.reset(config, true); // the SDK checked that config is a map
  while (it.next()) {
    if (!it.key.isStr) return fail(Status.Config, "enrich: config keys must be strings");
    const f = new Field(it.key.strPtr, it.key.strLen, new Value().set(it.value.ptr, it.value.len));
    let i = fields.length; // insertion sort: configs are small
    fields.push(f);
    for (; i > 0 && less(f, fields[i - 1]); i--) fields[i] = fields[i - 1];
    fields[i] = f;
  }
  return Status.OK;
}

function enrich(r: Record, out: Edit): i32 {
  for (let i = 0; i < fields.length; i++) {
    const f = unchecked(fields[i]);
    out.setRawBytes(f.name, f.nameLen, f.value);
  }
  return Status.OK;
}

map("enrich", enrich).onOpen(open);
