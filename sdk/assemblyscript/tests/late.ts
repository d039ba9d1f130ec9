// A process function: records with time < 100 go to the side output
// "late"; keyed state counts records per key; "unused" is not consumed.
import { MAIN, Record, Status, Value, begin, emit, emitValue, end, fail, output, process, stateGet, statePut } from "../assembly/index";
export * from "../assembly/operator";

const seen = new Value();
const one = memory.data<u8>([0x01]);

function late(port: i32, r: Record): i32 {
  let st = stateGet(0, r.key, seen);
  if (st < 0) return st;
  if (st == 1) {
    st = emit(output("unused"), r); // dropped by the SDK
    if (st < 0) return st;
  }
  st = statePut(0, r.key, one, 1);
  if (st < 0) return st;
  if (r.field("fail").exists) return fail(Status.User, "told to fail");
  if (r.field("seven").exists) return 7; // no status: the SDK fails it
  if (r.field("alerts").exists) return emit(output("alerts"), r); // not declared
  if (r.hasTime && r.time < 100) return emitValue(output("late"), r, r.value);
  const b = begin(MAIN, r);
  b.putStr("x");
  return end(MAIN);
}

process("late", late).outputs(["late", "unused"]).keyed();
