// A reduce: a keyed running count per key, emitted after each record.
import { MAIN, Record, Status, Value, beginWith, end, reduce, stateGet, statePut } from "../assembly/index";
export * from "../assembly/operator";

const seen = new Value();
const n = memory.data<u8>([0x00]);

function count(port: i32, r: Record): i32 {
  const st = stateGet(0, r.key, seen);
  if (st < 0) return st;
  store<u8>(n, st == 1 ? load<u8>(seen.ptr) + 1 : 1); // a fixint
  const put = statePut(0, r.key, n, 1);
  if (put != Status.OK) return put;
  beginWith(MAIN, r.hasTime, r.time, r.key).putRaw(n, 1);
  return end(MAIN);
}

reduce("count", count);
