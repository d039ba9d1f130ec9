// The engine behind the ABI exports (abi/abi.go): registration, the batch
// loop, per-port output buffers (one emit per port per batch, or when a
// buffer passes 64 KiB), keyed state, error texts and the exports.
//
// AssemblyScript has no exceptions: callbacks return a status (0 or a
// negative Status; a filter returns 1 to keep). Use fail() to return a
// failure with its text.

import { configProblems, resetConfigProblems } from "./config";
import { Buf } from "./buf";
import {
  hostEmit, hostEmitEnds, hostError, hostPort, hostStateDel, hostStateGet, hostStatePut,
  hostListGet, hostListAppend, hostListUpdate, hostMapGet, hostMapPut, hostMapDel, hostMapContains, hostMapEntries, hostStateClear,
  hostTimerRegister, hostTimerDelete, hostCurrentWatermark, hostCurrentProcessingTime,
} from "./host";
import { Edit, Record, parseRecord, parseWhy, pool, putEnvelope } from "./record";
import { Iter, Value, setFxMap, skip } from "./value";

/** The statuses of abi.Status. */
export enum Status {
  OK = 0,
  Malformed = -1,
  OutOfMemory = -2,
  User = -3,
  Unsupported = -4,
  State = -5,
  Config = -6,
  Host = -7,
  Limit = -8,
}

/** The output handle of the main output; side output i is i + 1. */
export const MAIN = 0;

const FLUSH_AT = 64 << 10;

export enum Kind { Map, Filter, FlatMap, Process, Partitioner, Reduce }

const kindNames: string[] = ["map", "filter", "flat-map", "process", "partitioner", "reduce"];

/** Where the instance runs: Flink's RuntimeContext. */
export class Context {
  subtask: i32 = 0;
  parallelism: i32 = 0;
  maxParallelism: i32 = 0;
}

export type OpenFn = (ctx: Context, config: Value) => i32;
export type CloseFn = () => i32;
export type FilterFn = (r: Record) => i32;
export type MapFn = (r: Record, out: Edit) => i32;
export type FlatMapFn = (r: Record) => i32;
export type ProcessFn = (port: i32, r: Record) => i32;
/** Returns a channel in [0, n), or a negative Status (see fail). */
export type PartitionFn = (key: Value, n: i32) => i32;
/** Appends the operator state's bytes to out (out.putRaw) without changing
 * it; returns Status.OK or a negative Status. */
export type SnapshotFn = (out: Buf) => i32;
/** Merges bytes a SnapshotFn wrote (ptr/len, valid during the call) into
 * the state; returns Status.OK or a negative Status. */
export type RestoreFn = (ptr: usize, len: i32) => i32;
/** A timer fired (Flink's onTimer): kind EVENT_TIME or PROCESSING_TIME, at
 * ts; timer carries the timer's key, and ts as its time for an event-time
 * timer, so begin(MAIN, timer) stamps records as Flink does and
 * stateGet(slot, timer.key, v) reads the key's state. */
export type TimerFn = (kind: i32, ts: i64, timer: Record) => i32;

function openNothing(ctx: Context, config: Value): i32 { return Status.OK; }
function closeNothing(): i32 { return Status.OK; }
function noFilter(r: Record): i32 { return Status.Unsupported; }
function noMap(r: Record, out: Edit): i32 { return Status.Unsupported; }
function noFlatMap(r: Record): i32 { return Status.Unsupported; }
function noProcess(port: i32, r: Record): i32 { return Status.Unsupported; }
function noPartition(key: Value, n: i32): i32 { return Status.Unsupported; }

/** The registered operator; describe it further with the chained setters. */
export class Plugin {
  tags: string[] = [];
  isKeyed: bool = false;
  openFn: OpenFn = openNothing;
  closeFn: CloseFn = closeNothing;
  filterFn: FilterFn = noFilter;
  mapFn: MapFn = noMap;
  flatMapFn: FlatMapFn = noFlatMap;
  processFn: ProcessFn = noProcess;
  partitionFn: PartitionFn = noPartition;
  snapshotFn: SnapshotFn | null = null;
  restoreFn: RestoreFn | null = null;
  timerFn: TimerFn | null = null;

  constructor(public name: string, public kind: Kind) {}

  /** Declares side-output tags: output handle i + 1 is tags[i]. */
  outputs(tags: string[]): Plugin { this.tags = tags; return this; }
  /** Marks the operator as using keyed state (reported by describe). */
  keyed(): Plugin { this.isKeyed = true; return this; }
  /** Called once with the config (a map, valid for the instance's life). */
  onOpen(fn: OpenFn): Plugin { this.openFn = fn; return this; }
  /** Called once at the end of the input; may emit final records. */
  onClose(fn: CloseFn): Plugin { this.closeFn = fn; return this; }
  /** Declares operator state (abi.ExportSnapshot): snapshot at each
   * checkpoint, restore after open and before the first record when the
   * job starts from one, once per snapshot the subtask is given (several
   * or none after a rescale: it merges them). */
  state(snapshot: SnapshotFn, restore: RestoreFn): Plugin { this.snapshotFn = snapshot; this.restoreFn = restore; return this; }
  /** Called when a timer the process registered fires (keyed). */
  onTimer(fn: TimerFn): Plugin { this.timerFn = fn; this.isKeyed = true; return this; }
}

let plugin: Plugin | null = null;

function register(p: Plugin): Plugin {
  plugin = p;
  return p;
}

/** Registers a filter: fn returns 1 to keep the record, 0 to drop it. */
export function filter(name: string, fn: FilterFn): Plugin { const p = new Plugin(name, Kind.Filter); p.filterFn = fn; return register(p); }
/** Registers a map: fn edits `out`, which starts as the record. */
export function map(name: string, fn: MapFn): Plugin { const p = new Plugin(name, Kind.Map); p.mapFn = fn; return register(p); }
/** Registers a flatMap: fn emits zero or more records. */
export function flatMap(name: string, fn: FlatMapFn): Plugin { const p = new Plugin(name, Kind.FlatMap); p.flatMapFn = fn; return register(p); }
/** Registers a process function: side outputs, keyed state. */
export function process(name: string, fn: ProcessFn): Plugin { const p = new Plugin(name, Kind.Process); p.processFn = fn; return register(p); }
/** Registers a keyed reduce (Flink's KeyedStream.reduce; describe says
 * "reduce", keyed): fn runs on input port 0 as a process function does,
 * keeps the key's accumulator in keyed state (stateGet/statePut) and emits
 * the running result. */
export function reduce(name: string, fn: ProcessFn): Plugin { const p = new Plugin(name, Kind.Reduce); p.processFn = fn; p.isKeyed = true; return register(p); }
/** Registers a custom partitioner. */
export function partitioner(name: string, fn: PartitionFn): Plugin { const p = new Plugin(name, Kind.Partitioner); p.partitionFn = fn; return register(p); }

// ---- the instance ----------------------------------------------------------

class Port {
  buf: Buf = new Buf();
  ends: Buf = new Buf(); // the end of each record in buf, a little-endian u32 each (emit_ends)
  count: i32 = 0;
  port: i32 = 0; // the host's port; negative: nothing consumes it, drop
}

const ports: Port[] = [new Port()];
const ctx = new Context();
const rec = new Record();
const edit = new Edit();
const input = new Buf();
const stateBuf = new Buf();
const errBuf = new Buf();
const sink = new Buf(); // where records for a bad handle go
const nilKey = new Value();
let opened = false;
let failStatus = 0; // the first output failure of the call
let errSet = false; // the call has sent an error text
// A filter's kept records that lie back to back in the batch: copied to
// the main output as one block when the run breaks, before anything else
// is written there, and at the end of the call.
let runPtr: usize = 0;
let runLen = 0;
let runCount = 0;
// The ends of the run's records but the last, from runPtr: a run breaks at
// RUN_MAX records, so that keeping one costs a store.
const RUN_MAX = 1024;
const runEnd = new StaticArray<u32>(RUN_MAX - 1);

function beginCall(): void {
  setFxMap(0);
  for (let i = 0; i < ports.length; i++) {
    const p = unchecked(ports[i]);
    p.buf.reset();
    p.ends.reset();
    p.count = 0;
  }
  failStatus = 0;
  errSet = false;
  pool.active = false;
  runLen = 0;
  runCount = 0;
}

/** Sends msg as the call's error text and returns status:
 * `return fail(Status.User, "no amount")`. */
export function fail(status: i32, msg: string): i32 {
  errBuf.reset();
  const n = String.UTF8.byteLength(msg);
  String.UTF8.encodeUnsafe(changetype<usize>(msg), msg.length, errBuf.grow(n));
  hostError(errBuf.ptr, errBuf.len);
  errSet = true;
  return status;
}

function failOnce(status: i32, msg: string): i32 {
  if (failStatus == 0) failStatus = fail(status, msg);
  return failStatus;
}

/** A failing callback's status, with a text and the record's position. */
function userFailed(st: i32, what: string, i: i32): i32 {
  if (failStatus != 0) return failStatus;
  const name = plugin ? (<Plugin>plugin).name : "plugin";
  const text = errSet ? String.UTF8.decodeUnsafe(errBuf.ptr, <usize>errBuf.len) : name + ": " + what + " failed with status " + st.toString();
  // an open refusing a config value ("config NAME: ...") goes as the Go
  // SDK's does, unprefixed: the host reads NAME to point at its line
  if (i < 0 && st == Status.Config && errSet && text.startsWith("config ")) return fail(st, text);
  return fail(st, i >= 0 ? "record " + i.toString() + ": " + text : what + ": " + text);
}

/** Fails a callback that returned a positive number: no status is positive,
 * and taking it for OK dropped the record without a word. */
function positiveReturn(st: i32, what: string, i: i32): i32 {
  if (failStatus != 0) return failStatus;
  const name = plugin ? (<Plugin>plugin).name : "plugin";
  const text = name + ": " + what + " returned " + st.toString() + ", not a status: return Status.OK or a negative status (fail)";
  return fail(Status.User, i >= 0 ? "record " + i.toString() + ": " + text : what + ": " + text);
}

/** The handle output() gives a tag the plugin does not declare. */
export const NO_OUTPUT: i32 = -1;
let badTag: string | null = null;

/**
 * The handle of the side output `tag`, one of the plugin's .outputs([...])
 * (as sdk/go's EmitTo names it): emit(output("late"), r). For a tag the
 * plugin does not declare it is NO_OUTPUT, which every emit refuses with
 * the tags the plugin has. It compares the tags: keep the handle where a
 * record loop would look it up often.
 */
export function output(tag: string): i32 {
  const tags = plugin ? (<Plugin>plugin).tags : <string[]>[];
  for (let i = 0; i < tags.length; i++) if (tags[i] == tag) return i + 1;
  badTag = tag;
  return NO_OUTPUT;
}

function portOf(h: i32): Port | null {
  if (h == MAIN && runCount != 0) flushRun(); // keeps the main output in order
  if (h == NO_OUTPUT && badTag != null) {
    const tags = plugin ? (<Plugin>plugin).tags : <string[]>[];
    let have = "";
    for (let i = 0; i < tags.length; i++) have += (i > 0 ? ", \"" : "\"") + tags[i] + "\"";
    failOnce(Status.User, "unknown side output \"" + (<string>badTag) + "\" (output): the plugin declares " +
      (tags.length > 0 ? have + " in its .outputs([...])" : "no side outputs (.outputs([...]))"));
    return null;
  }
  if (h < 0 || h >= ports.length) {
    failOnce(Status.User, "unknown output handle " + h.toString() + ": the plugin has MAIN (0) and " + (ports.length - 1).toString() +
      " side outputs (1 on), in the order of its .outputs([...]) tags");
    return null;
  }
  return unchecked(ports[h]);
}

function flush(p: Port): i32 {
  let st = 0;
  if (p.count > 0 && p.port >= 0) st = hostEmitEnds(p.port, p.buf.ptr, p.buf.len, p.count, p.ends.ptr);
  p.buf.reset();
  p.ends.reset();
  p.count = 0;
  if (st == 0) return Status.OK;
  return failOnce(st, (st == Status.Limit ? "output limit reached on port " : "emit refused on port ") + p.port.toString());
}

/** Counts n records written to p, the last of which ends its buffer (the
 * ends of the others are noted already), and flushes a full buffer. */
function done(p: Port, n: i32 = 1): i32 {
  store<u32>(p.ends.grow(4), <u32>p.buf.len);
  p.count += n;
  if (p.buf.len >= FLUSH_AT) return flush(p);
  return failStatus;
}

function flushRun(): i32 {
  const p = unchecked(ports[MAIN]);
  const base = <u32>p.buf.len;
  p.buf.putRaw(runPtr, runLen);
  const n = runCount;
  if (n > 1) {
    const d = p.ends.grow(4 * (n - 1));
    for (let i = 0; i < n - 1; i++) store<u32>(d + <usize>(4 * i), base + unchecked(runEnd[i]));
  }
  runLen = 0;
  runCount = 0;
  return done(p, n);
}

/** emit(MAIN, r) for a filter's record r: it extends the run when r
 * follows it in the batch. */
function keep(r: Record): i32 {
  const ptr = r.raw.ptr, len = r.raw.len;
  if (runCount != 0 && runPtr + <usize>runLen == ptr && runLen < FLUSH_AT && runCount < RUN_MAX) {
    unchecked(runEnd[runCount - 1] = <u32>runLen); // where the run's last record ends
    runLen += len;
    runCount++;
    return failStatus;
  }
  const st = runCount != 0 ? flushRun() : failStatus;
  runPtr = ptr;
  runLen = len;
  runCount = 1;
  return st;
}

/** Passes r on unchanged to output `out` (MAIN or a side output). */
export function emit(out: i32, r: Record): i32 {
  const p = portOf(out);
  if (p == null) return failStatus;
  p.buf.putRaw(r.raw.ptr, r.raw.len);
  return done(p);
}

/** Emits r's time and key with the value v. */
export function emitValue(out: i32, r: Record, v: Value): i32 {
  beginWith(out, r.hasTime, r.time, r.key).putRaw(v.ptr, v.len);
  return end(out);
}

/** Starts a new record stamped with r's event time and no key, as sdk/go's
 * NewRecord (no time when r is null): write exactly one value to the
 * returned buffer, then call end(out). beginWith sets both. */
export function begin(out: i32, r: Record | null): Buf {
  if (r == null) return beginWith(out, false, 0, nilKey);
  return beginWith(out, r.hasTime, r.time, nilKey);
}

/** begin with an explicit time and key (key.exists false for nil). */
export function beginWith(out: i32, hasTime: bool, time: i64, key: Value): Buf {
  const p = portOf(out);
  let b = sink;
  if (p != null) b = p.buf;
  else sink.reset();
  putEnvelope(b, hasTime, time, key);
  return b;
}

export function end(out: i32): i32 {
  const p = portOf(out);
  return p == null ? failStatus : done(p);
}

/** An edit of r to emit with emitEdited (map callbacks get one ready). */
export function startEdit(): Edit {
  edit.clear();
  return edit;
}

/** Emits r changed by e. */
export function emitEdited(out: i32, r: Record, e: Edit): i32 {
  const p = portOf(out);
  if (p == null) return failStatus;
  if (!e.write(r, p.buf)) return failOnce(Status.Malformed, "record value is not a map");
  return done(p);
}

// ---- keyed state -------------------------------------------------------------

/** Reads the state of slot under key (a record's key) into out: 1 when
 * found (out views an SDK buffer until the next stateGet), 0 when absent,
 * a negative Status on failure. */
export function stateGet(slot: i32, key: Value, out: Value): i32 {
  if (!key.exists) return fail(Status.State, "keyed state needs a key (the record's key is nil)");
  if (stateBuf.cap < 256) { stateBuf.reset(); stateBuf.grow(256); }
  let n = hostStateGet(slot, key.ptr, key.len, stateBuf.ptr, stateBuf.cap);
  if (n > stateBuf.cap) { // too small: grow to the value's length and ask again
    stateBuf.reset();
    stateBuf.grow(n);
    n = hostStateGet(slot, key.ptr, key.len, stateBuf.ptr, stateBuf.cap);
  }
  if (n == -1) return 0;
  if (n < 0) return fail(n, "state_get failed");
  if (n > stateBuf.cap) return fail(Status.State, "state_get: the value changed size");
  out.set(stateBuf.ptr, n);
  return 1;
}

export function statePut(slot: i32, key: Value, ptr: usize, len: i32): i32 {
  if (!key.exists) return fail(Status.State, "keyed state needs a key (the record's key is nil)");
  const st = hostStatePut(slot, key.ptr, key.len, ptr, len);
  return st == 0 ? Status.OK : fail(st, "state_put failed");
}

export function stateDel(slot: i32, key: Value): i32 {
  if (!key.exists) return fail(Status.State, "keyed state needs a key (the record's key is nil)");
  const st = hostStateDel(slot, key.ptr, key.len);
  return st == 0 ? Status.OK : fail(st, "state_del failed");
}

// ---- list and map state (Flink's ListState and MapState) -----------------------
// Under a record's key, as stateGet. A slot holds one kind of state (value,
// list or map): the host refuses a slot used as two. Elements and values
// are bytes (put msgpack there); map user keys are bytes (a string's UTF-8).

const kindsBuf = new Buf();

// kindsCall is one of the reads below, by number (no closures with the
// stub runtime).
function kindsCall(which: i32, slot: i32, key: Value, up: usize, ul: i32): i32 {
  if (which == 0) return hostListGet(slot, key.ptr, key.len, kindsBuf.ptr, kindsBuf.cap);
  if (which == 1) return hostMapGet(slot, key.ptr, key.len, up, ul, kindsBuf.ptr, kindsBuf.cap);
  return hostMapEntries(slot, key.ptr, key.len, kindsBuf.ptr, kindsBuf.cap);
}

function kindsRead(which: i32, name: string, slot: i32, key: Value, up: usize, ul: i32, out: Value): i32 {
  if (!key.exists) return fail(Status.State, "keyed state needs a key (the record's key is nil)");
  if (kindsBuf.cap < 256) { kindsBuf.reset(); kindsBuf.grow(256); }
  let n = kindsCall(which, slot, key, up, ul);
  if (n > kindsBuf.cap) {
    kindsBuf.reset();
    kindsBuf.grow(n);
    n = kindsCall(which, slot, key, up, ul);
  }
  if (n == -1) { out.set(0, 0); return 0; }
  if (n < 0) return fail(n, name + " failed");
  if (n > kindsBuf.cap) return fail(Status.State, name + ": the state grew between two reads");
  out.set(kindsBuf.ptr, n);
  return 1;
}

/** Reads the list of slot under key into wire (the list wire layout, a view
 * until the next list or map read): 1, 0 when there is none, or a negative
 * Status. Walk it with wireNext. */
export function listGet(slot: i32, key: Value, wire: Value): i32 {
  return kindsRead(0, "state_list_get", slot, key, 0, 0, wire);
}

/** Takes the next u32-prefixed item off wire into item: 1, 0 at the end,
 * Status.State when malformed. A map entry is two items, key then value. */
export function wireNext(wire: Value, item: Value): i32 {
  if (wire.len == 0) return 0;
  if (wire.len < 4) return Status.State;
  const n = <i32>load<u32>(wire.ptr);
  if (n < 0 || n > wire.len - 4) return Status.State;
  item.set(wire.ptr + 4, n);
  wire.set(wire.ptr + 4 + <usize>n, wire.len - 4 - n);
  return 1;
}

/** Appends the u32 length and bytes of one element (or key, or value) to b,
 * to build listUpdate's wire. */
export function putWire(b: Buf, ptr: usize, len: i32): void {
  store<u32>(b.grow(4), <u32>len);
  b.putRaw(ptr, len);
}

/** Appends an element to the list (ListState.add). */
export function listAdd(slot: i32, key: Value, ptr: usize, len: i32): i32 {
  if (!key.exists) return fail(Status.State, "keyed state needs a key (the record's key is nil)");
  const st = hostListAppend(slot, key.ptr, key.len, ptr, len);
  return st == 0 ? Status.OK : fail(st, "state_list_append failed");
}

/** Replaces the list with the elements of a wire built with putWire
 * (ListState.update); len 0 clears it. */
export function listUpdate(slot: i32, key: Value, ptr: usize, len: i32): i32 {
  if (!key.exists) return fail(Status.State, "keyed state needs a key (the record's key is nil)");
  const st = hostListUpdate(slot, key.ptr, key.len, ptr, len);
  return st == 0 ? Status.OK : fail(st, "state_list_update failed");
}

/** Reads the value of user key uk in the map into out: 1, 0 when absent. */
export function mapGet(slot: i32, key: Value, up: usize, ul: i32, out: Value): i32 {
  return kindsRead(1, "state_map_get", slot, key, up, ul, out);
}

export function mapPut(slot: i32, key: Value, up: usize, ul: i32, ptr: usize, len: i32): i32 {
  if (!key.exists) return fail(Status.State, "keyed state needs a key (the record's key is nil)");
  const st = hostMapPut(slot, key.ptr, key.len, up, ul, ptr, len);
  return st == 0 ? Status.OK : fail(st, "state_map_put failed");
}

export function mapDel(slot: i32, key: Value, up: usize, ul: i32): i32 {
  if (!key.exists) return fail(Status.State, "keyed state needs a key (the record's key is nil)");
  const st = hostMapDel(slot, key.ptr, key.len, up, ul);
  return st == 0 ? Status.OK : fail(st, "state_map_del failed");
}

/** 1 when the map holds uk, 0 when not, a negative Status on failure. */
export function mapContains(slot: i32, key: Value, up: usize, ul: i32): i32 {
  if (!key.exists) return fail(Status.State, "keyed state needs a key (the record's key is nil)");
  const st = hostMapContains(slot, key.ptr, key.len, up, ul);
  return st >= 0 ? st : fail(st, "state_map_contains failed");
}

/** Reads the whole map into wire (user keys ascending): 1, 0 when none.
 * Walk it with wireNext twice per entry. */
export function mapEntries(slot: i32, key: Value, wire: Value): i32 {
  return kindsRead(2, "state_map_entries", slot, key, 0, 0, wire);
}

/** Removes the state of slot under key, whatever its kind. */
export function stateClear(slot: i32, key: Value): i32 {
  if (!key.exists) return fail(Status.State, "keyed state needs a key (the record's key is nil)");
  const st = hostStateClear(slot, key.ptr, key.len);
  return st == 0 ? Status.OK : fail(st, "state_clear failed");
}

/** The context of the open call. */
// ---- timers (Flink's TimerService, abi/timers.go) ----------------------------

export const EVENT_TIME = 0;
export const PROCESSING_TIME = 1;

/** Registers a timer of kind (EVENT_TIME, PROCESSING_TIME) at ts for key
 * (a record's key): one per (kind, key, ts). */
export function registerTimer(kind: i32, key: Value, ts: i64): i32 {
  if (!key.exists) return fail(Status.State, "timers need a key (the record's key is nil)");
  const st = hostTimerRegister(kind, key.ptr, key.len, ts);
  return st == 0 ? Status.OK : fail(st, "timer_register failed");
}

/** Deletes the timer of (kind, key, ts); one not there is no error. */
export function deleteTimer(kind: i32, key: Value, ts: i64): i32 {
  if (!key.exists) return fail(Status.State, "timers need a key (the record's key is nil)");
  const st = hostTimerDelete(kind, key.ptr, key.len, ts);
  return st == 0 ? Status.OK : fail(st, "timer_delete failed");
}

/** The operator's input watermark (i64.MIN_VALUE before the first). */
export function currentWatermark(): i64 { return hostCurrentWatermark(); }

/** The processing-time clock in ms: the real clock when the plugin is
 * granted clock, else the host's deterministic one. */
export function currentProcessingTime(): i64 { return hostCurrentProcessingTime(); }

const timerRec = new Record();
const nilValue = memory.data<u8>([0xc0]);

export function sluice_on_timer(kind: i32, ts: i64, ptr: usize, len: i32): i32 {
  beginCall();
  const st0 = checkCall(true, "on_timer");
  if (st0 < 0) return st0;
  const f = (<Plugin>plugin).timerFn;
  if (f == null) return fail(Status.Unsupported, "on_timer: the plugin has no onTimer callback");
  if (kind != EVENT_TIME && kind != PROCESSING_TIME) return fail(Status.Malformed, "on_timer: unknown timer kind " + kind.toString());
  if (len <= 0 || skip(ptr, len, 0) != len) return fail(Status.Malformed, "on_timer: the key is not one msgpack value");
  timerRec.raw.set(0, 0);
  timerRec.hasTime = kind == EVENT_TIME;
  timerRec.time = ts;
  timerRec.key.set(ptr, len);
  timerRec.value.set(nilValue, 1);
  const st = f(kind, ts, timerRec);
  if (st > 0) return positiveReturn(st, "on_timer", -1);
  if (st < 0) return userFailed(st, "on_timer", -1);
  for (let i = 0; i < ports.length; i++) {
    const st2 = flush(unchecked(ports[i]));
    if (st2 != 0) return st2;
  }
  return failStatus;
}

export function context(): Context { return ctx; }

// ---- the exports ----------------------------------------------------------------

export function sluice_abi_v1(): void {}

/** At least size bytes for the host to write the next input to. */
export function sluice_buffer(size: i32): usize {
  input.reset();
  input.grow(size < 1 ? 1 : size); // 0 means failure: always a real pointer
  return input.ptr;
}

const cfg = new Value();

export function sluice_open(ptr: usize, len: i32, subtask: i32, parallelism: i32, maxParallelism: i32): i32 {
  beginCall();
  if (plugin == null) return fail(Status.Unsupported, "no operator registered: call filter(), map(), ... at the top level of the plugin");
  const p = <Plugin>plugin;
  if (opened) return fail(Status.Unsupported, "open called twice");
  // The config outlives the input buffer: its views stay valid.
  const copy = heap.alloc(len > 0 ? <usize>len : 1);
  memory.copy(copy, ptr, <usize>len);
  cfg.set(copy, len);
  if (skip(copy, len, 0) != len || !new Iter().reset(cfg, true)) return fail(Status.Config, "the config is not a msgpack map");
  ctx.subtask = subtask;
  ctx.parallelism = parallelism;
  ctx.maxParallelism = maxParallelism;
  const tag = new Buf();
  for (let i = 0; i < p.tags.length; i++) {
    const port = new Port();
    tag.reset();
    const t = p.tags[i];
    String.UTF8.encodeUnsafe(changetype<usize>(t), t.length, tag.grow(String.UTF8.byteLength(t)));
    port.port = hostPort(tag.ptr, tag.len);
    ports.push(port);
  }
  const open = p.openFn;
  resetConfigProblems();
  const st = open(ctx, cfg);
  if (st > 0) return positiveReturn(st, "open", -1);
  if (st < 0) return userFailed(st, "open", -1);
  // the config getters' refusals, as sdk/go reports them (no "open: ")
  const problems = configProblems();
  if (problems.length > 0) return fail(Status.Config, problems);
  opened = true;
  beginCall();
  return Status.OK;
}

/** Runs the kind's callback on one record. */
function call(p: Plugin, port: i32, r: Record): i32 {
  switch (p.kind) {
    case Kind.Filter: {
      const f = p.filterFn;
      const st = f(r);
      return st > 0 ? keep(r) : st;
    }
    case Kind.Map: {
      edit.clear();
      const f = p.mapFn;
      const st = f(r, edit);
      return st != 0 ? st : emitEdited(MAIN, r, edit);
    }
    case Kind.FlatMap: {
      const f = p.flatMapFn;
      return f(r);
    }
  }
  const f = p.processFn;
  return f(port, r);
}

function badRecord(i: i32, off: i32, tooFew: bool, why: string): i32 {
  if (tooFew) why = "batch holds fewer records than its count";
  return fail(Status.Malformed, "malformed input: record " + i.toString() + " at byte " + off.toString() + ": " + why);
}

function checkCall(kind: bool, what: string): i32 {
  if (plugin == null || !opened) return fail(Status.Unsupported, what + " called before open");
  if (!kind) return fail(Status.Unsupported, what + ": not implemented by a " + kindNames[(<Plugin>plugin).kind]);
  return Status.OK;
}

export function sluice_process(port: i32, ptr: usize, len: i32, count: i32): i32 {
  beginCall();
  let st = checkCall(plugin != null && (<Plugin>plugin).kind != Kind.Partitioner, "process");
  if (st < 0) return st;
  const p = <Plugin>plugin;
  if (port != 0 && !(p.kind == Kind.Process && port == 1)) return fail(Status.Unsupported, "no input port " + port.toString());
  if (count < 0) return fail(Status.Malformed, "malformed input: negative record count");
  const e = ptr + <usize>len;
  let q = ptr;
  pool.active = true;
  for (let i = 0; i < count; i++) {
    pool.used = 0;
    const next = parseRecord(q, e, rec);
    if (next == 0) return badRecord(i, <i32>(q - ptr), q >= e, parseWhy);
    st = call(p, port, rec);
    if (st > 0) return positiveReturn(st, kindNames[p.kind], i);
    if (st < 0) return userFailed(st, kindNames[p.kind], i);
    if (failStatus != 0) return failStatus;
    q = next;
  }
  pool.active = false;
  if (q != e) {
    return badRecord(count, <i32>(q - ptr), false, "bytes left after the last record");
  }
  if (runCount != 0 && (st = flushRun()) != 0) return st;
  for (let i = 0; i < ports.length; i++) {
    st = flush(unchecked(ports[i]));
    if (st != 0) return st;
  }
  return Status.OK;
}

export function sluice_close(): i32 {
  beginCall();
  const st0 = checkCall(true, "close");
  if (st0 < 0) return st0;
  const f = (<Plugin>plugin).closeFn;
  const st = f();
  if (st > 0) return positiveReturn(st, "close", -1);
  if (st < 0) return userFailed(st, "close", -1);
  for (let i = 0; i < ports.length; i++) {
    const st2 = flush(unchecked(ports[i]));
    if (st2 != 0) return st2;
  }
  return failStatus;
}

export function sluice_partition(ptr: usize, len: i32, count: i32, n: i32): i32 {
  beginCall();
  let st = checkCall(plugin != null && (<Plugin>plugin).kind == Kind.Partitioner, "partition");
  if (st < 0) return st;
  if (n < 1 || count < 0 || count > len) return fail(Status.Malformed, "partition: count must be >= 0 and n > 0");
  const f = (<Plugin>plugin).partitionFn;
  const out = unchecked(ports[0]).buf;
  out.reset();
  out.grow(4 * count);
  const e = ptr + <usize>len;
  let q = ptr;
  pool.active = true;
  for (let i = 0; i < count; i++) {
    pool.used = 0;
    const next = parseRecord(q, e, rec);
    if (next == 0) return badRecord(i, <i32>(q - ptr), q >= e, parseWhy);
    const c = f(rec.key, n);
    if (c < 0) return userFailed(c, "partition", i);
    store<i32>(out.ptr + <usize>(4 * i), c); // little-endian
    q = next;
  }
  pool.active = false;
  if (q != e) {
    return badRecord(count, <i32>(q - ptr), false, "bytes left after the last record");
  }
  st = hostEmit(0, out.ptr, out.len, count);
  return st == 0 ? Status.OK : fail(st, "emit of the channels refused");
}

const stateOut = new Buf();
const stateBin = new Buf();
const restoreVal = new Value();
const noState = "the operator declares no operator state (Plugin.state)";

/** The operator state as one msgpack bin on port 0. */
export function sluice_snapshot(): i32 {
  beginCall();
  const st0 = checkCall(true, "snapshot");
  if (st0 < 0) return st0;
  const p = <Plugin>plugin;
  if (p.snapshotFn == null) return fail(Status.Unsupported, noState);
  stateOut.reset();
  const f = <SnapshotFn>p.snapshotFn;
  const st = f(stateOut);
  if (st < 0) return userFailed(st, "snapshot", -1);
  stateBin.reset();
  stateBin.putBin(stateOut.ptr, stateOut.len);
  return hostEmit(0, stateBin.ptr, stateBin.len, 1);
}

/** One element, the bin sluice_snapshot emitted. */
export function sluice_restore(ptr: usize, len: i32): i32 {
  beginCall();
  const st0 = checkCall(true, "restore");
  if (st0 < 0) return st0;
  const p = <Plugin>plugin;
  if (p.restoreFn == null) return fail(Status.Unsupported, noState);
  const v = restoreVal.set(ptr, len);
  if (skip(ptr, len, 0) != len || v.binPtr == 0) return fail(Status.Malformed, "restore: the element is not the msgpack bin the SDK snapshots");
  const f = <RestoreFn>p.restoreFn;
  const st = f(v.binPtr, v.binLen);
  if (st < 0) return userFailed(st, "restore", -1);
  return Status.OK;
}

/** {kind, sdk, name, outputs, keyed} on port 0 (abi.Describe plus "keyed",
 * as sdk/go). */
export function sluice_describe(): i32 {
  if (plugin == null) return fail(Status.Unsupported, "no operator registered");
  const p = <Plugin>plugin;
  const b = new Buf();
  b.putMap(5);
  b.putStr("kind");
  b.putStr(kindNames[p.kind]);
  b.putStr("sdk");
  b.putStr("assemblyscript");
  b.putStr("name");
  b.putStr(p.name);
  b.putStr("outputs");
  b.putArray(p.tags.length);
  for (let i = 0; i < p.tags.length; i++) b.putStr(p.tags[i]);
  b.putStr("keyed");
  b.putBool(p.isKeyed);
  return hostEmit(0, b.ptr, b.len, 1);
}
