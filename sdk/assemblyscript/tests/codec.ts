// A map exercising the reader and the writer: for the record's field "x"
// it sets type/int/asInt/f64/str/len, re-encodes "x" through the typed
// setters ("copy"), and the Java hash of a string "s" ("h").
import { Edit, Record, Status, Type, javaStringHash, map } from "../assembly/index";
export * from "../assembly/operator";

function codec(r: Record, out: Edit): i32 {
  assert(!r.field("boom").exists, "boom"); // exercises the abort handler
  const x = r.field("x");
  out.setInt("type", <i64>x.type);
  out.setInt("int", x.int());
  out.setInt("asInt", x.asInt());
  out.setF64("f64", x.asF64());
  out.setBool("isStr", x.isStr);
  if (x.isStr) out.setStrBytes("str", x.strPtr, x.strLen);
  if (x.type == Type.Int) out.setInt("copy", x.asInt());
  else if (x.type == Type.Float) out.setF64("copy", x.asF64());
  else if (x.type == Type.Bool) out.setBool("copy", x.asBool());
  else if (x.type == Type.Nil) out.setNil("copy");
  else out.setRaw("copy", x);
  const s = r.field("s");
  if (s.isStr) out.setInt("h", javaStringHash(s.strPtr, s.strLen));
  if (r.field("ünï").exists) out.setStr("found", "ünï ✓");
  out.unset("x");
  out.unset("s");
  return Status.OK;
}

map("codec", codec);
