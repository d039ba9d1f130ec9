// Timers: each record registers an event-time timer at its time + 10
// (twice: one timer) and a processing-time one it deletes again, and
// notes 1 in slot 0; onTimer emits {"wm": current watermark, "seen": the
// key's state} stamped with the timer's time.
import { EVENT_TIME, MAIN, PROCESSING_TIME, Record, Status, Value, begin, currentWatermark, deleteTimer, end, process, registerTimer, stateGet, statePut } from "../assembly/index";
export * from "../assembly/operator";

const one = memory.data<u8>([0x01]);
const got = new Value();

function onRecord(port: i32, r: Record): i32 {
  let st = registerTimer(EVENT_TIME, r.key, r.time + 10);
  if (st == Status.OK) st = registerTimer(EVENT_TIME, r.key, r.time + 10);
  if (st == Status.OK) st = registerTimer(PROCESSING_TIME, r.key, 99);
  if (st == Status.OK) st = deleteTimer(PROCESSING_TIME, r.key, 99);
  if (st == Status.OK) st = statePut(0, r.key, one, 1);
  return st;
}

function onTimer(kind: i32, ts: i64, t: Record): i32 {
  if (kind != EVENT_TIME || !t.hasTime || t.time != ts) return Status.User;
  const st = stateGet(0, t.key, got);
  if (st < 0) return st;
  const b = begin(MAIN, t);
  b.putMap(2);
  b.putStr("wm");
  b.putInt(currentWatermark());
  b.putStr("seen");
  b.putInt(st == 1 ? got.int() : 0);
  return end(MAIN);
}

process("timed", onRecord).onTimer(onTimer);
