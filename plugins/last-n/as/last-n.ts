// last-n (AssemblyScript): the Go plugin plugins/last-n/main.go with the
// same output. Keyed by account, each transaction goes out with "last" (the
// account's last n amounts, oldest first: list state, slot 0),
// "merchant_count" (map state, slot 1) and "merchants" (the map's size).
// Config: n (default 3).
import {
  Buf, Context, MAIN, Record, Status, Value, configInt, emitEdited, fail, listAdd, listGet, listUpdate,
  mapEntries, mapGet, mapPut, process, putWire, startEdit, wireNext,
} from "../../../sdk/assemblyscript/assembly/index";
export * from "../../../sdk/assemblyscript/assembly/operator";

let n: i32 = 3;
const tmp = new Buf();
const upd = new Buf();
const arr = new Buf();
const wire = new Value();
const item = new Value();
const item2 = new Value();
const got = new Value();
const arrVal = new Value();

function opened(ctx: Context, config: Value): i32 {
  const v = configInt(config, "n", 3);
  if (v < 1 || v > 1 << 20) return fail(Status.Config, "config n: want at least 1");
  n = <i32>v;
  return Status.OK;
}

function lastN(port: i32, r: Record): i32 {
  tmp.reset();
  tmp.putInt(r.field("amount").int());
  let st = listAdd(0, r.key, tmp.ptr, tmp.len);
  if (st < 0) return st;
  if ((st = listGet(0, r.key, wire)) < 0) return st;
  let k = 0;
  const start = wire.ptr, total = wire.len;
  while (wireNext(wire, item) == 1) k++;
  const from = k > n ? k - n : 0;
  wire.set(start, total);
  arr.reset();
  arr.putArray(k - from);
  upd.reset();
  for (let i = 0; wireNext(wire, item) == 1; i++) {
    if (i < from) continue;
    arr.putRaw(item.ptr, item.len);
    putWire(upd, item.ptr, item.len);
  }
  if (from > 0 && (st = listUpdate(0, r.key, upd.ptr, upd.len)) < 0) return st;
  const m = r.field("merchant");
  const mp = m.strPtr, ml = m.strLen;
  if ((st = mapGet(1, r.key, mp, ml, got)) < 0) return st;
  const seen: i64 = st == 1 ? got.int() + 1 : 1;
  tmp.reset();
  tmp.putInt(seen);
  if ((st = mapPut(1, r.key, mp, ml, tmp.ptr, tmp.len)) < 0) return st;
  if ((st = mapEntries(1, r.key, wire)) < 0) return st;
  let merchants = 0;
  while (wireNext(wire, item) == 1 && wireNext(wire, item2) == 1) merchants++;
  const e = startEdit();
  e.setRaw("last", arrVal.set(arr.ptr, arr.len));
  e.setInt("merchant_count", seen);
  e.setInt("merchants", merchants);
  return emitEdited(MAIN, r, e);
}

process("last-n", lastN).keyed().onOpen(opened);
