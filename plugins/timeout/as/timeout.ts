// timeout (AssemblyScript): the Go plugin plugins/timeout/main.go with the
// same output, Flink's CountWithTimeoutFunction. Keyed; each record counts
// (slot 1), notes its event time (slot 0) and registers an event-time
// timer at that time + timeout-ms (default 10 s); a timer that finds no
// later record of its key emits {"key", "count", "last", "message"}
// stamped with the timer's time.
import {
  Buf, Context, EVENT_TIME, MAIN, Record, Status, Value, begin, configInt, end, fail, process, registerTimer, stateGet, statePut,
} from "../../../sdk/assemblyscript/assembly/index";
export * from "../../../sdk/assemblyscript/assembly/operator";

const SLOT_LAST = 0;
const SLOT_COUNT = 1;
let timeout: i64 = 10000;
const tmp = new Buf();
const got = new Value();

function opened(ctx: Context, config: Value): i32 {
  timeout = configInt(config, "timeout-ms", 10000);
  if (timeout <= 0) return fail(Status.Config, "config timeout-ms: want a positive number of milliseconds");
  return Status.OK;
}

// intState reads an integer slot of key into *out; a negative Status on failure.
let intOut: i64 = 0;
function intState(slot: i32, key: Value): i32 {
  const st = stateGet(slot, key, got);
  if (st < 0) return st;
  intOut = st == 1 ? got.int() : 0;
  return Status.OK;
}

function putInt(slot: i32, key: Value, v: i64): i32 {
  tmp.reset();
  tmp.putInt(v);
  return statePut(slot, key, tmp.ptr, tmp.len);
}

function onRecord(port: i32, r: Record): i32 {
  if (!r.hasTime) return Status.OK; // no event time: nothing to time out
  let st = intState(SLOT_COUNT, r.key);
  if (st < 0) return st;
  if ((st = putInt(SLOT_COUNT, r.key, intOut + 1)) < 0) return st;
  if ((st = putInt(SLOT_LAST, r.key, r.time)) < 0) return st;
  return registerTimer(EVENT_TIME, r.key, r.time + timeout);
}

const msg = new Buf();

// ascii appends the bytes of an ASCII literal (no allocation: the plugin
// runs on the stub runtime, which never frees).
function ascii(b: Buf, s: string): void {
  for (let i = 0; i < s.length; i++) b.putByte(<u8>s.charCodeAt(i));
}

function decimal(b: Buf, v: i64): void {
  if (v >= 10) decimal(b, v / 10);
  b.putByte(<u8>(48 + v % 10));
}

// seconds appends ms as seconds, "10" or "1.5", as Go's FormatFloat(ms/1000, 'f', -1).
function seconds(b: Buf, ms: i64): void {
  decimal(b, ms / 1000);
  let frac = ms % 1000;
  if (frac == 0) return;
  b.putByte(46); // '.'
  let digits = 3;
  while (frac % 10 == 0) { frac /= 10; digits--; }
  for (let d = digits - 1; d >= 0; d--) {
    let p: i64 = 1;
    for (let i = 0; i < d; i++) p *= 10;
    b.putByte(<u8>(48 + (frac / p) % 10));
  }
}

function onTimer(kind: i32, ts: i64, t: Record): i32 {
  let st = intState(SLOT_LAST, t.key);
  if (st < 0) return st;
  const last = intOut;
  if (ts != last + timeout) return Status.OK; // a later record of the key set a later timer
  if ((st = intState(SLOT_COUNT, t.key)) < 0) return st;
  const n = intOut;
  msg.reset();
  ascii(msg, "key ");
  msg.putRaw(t.key.strPtr, t.key.strLen);
  ascii(msg, " silent for ");
  seconds(msg, timeout);
  ascii(msg, " s");
  const b = begin(MAIN, t);
  b.putMap(4);
  b.putStr("key");
  b.putStrBytes(t.key.strPtr, t.key.strLen);
  b.putStr("count");
  b.putInt(n);
  b.putStr("last");
  b.putInt(last);
  b.putStr("message");
  b.putStrBytes(msg.ptr, msg.len);
  return end(MAIN);
}

process("timeout", onRecord).keyed().onOpen(opened).onTimer(onTimer);
