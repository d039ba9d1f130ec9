// running-count (AssemblyScript): sets the field "count" of each record to
// the number of records its subtask has seen, kept as operator state
// (Plugin.state: 8 little-endian bytes), as the Go plugin
// (plugins/running-count/main.go).
import { Buf, Edit, Record, Status, fail, map } from "../../../sdk/assemblyscript/assembly/index";
export * from "../../../sdk/assemblyscript/assembly/operator";

let count: i64 = 0;

function counted(r: Record, out: Edit): i32 {
  count++;
  out.setInt("count", count);
  return Status.OK;
}

function snapshot(out: Buf): i32 {
  store<i64>(out.grow(8), count); // wasm is little-endian
  return Status.OK;
}

function restore(ptr: usize, len: i32): i32 {
  if (len != 8) return fail(Status.Malformed, "a count snapshot has 8 bytes");
  count += load<i64>(ptr);
  return Status.OK;
}

map("running-count", counted).state(snapshot, restore);
