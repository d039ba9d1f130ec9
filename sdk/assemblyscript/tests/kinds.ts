// List and map state: per record, appends "v" to list slot 0 (keeping the
// last two) and counts per "m" in map slot 1; "clear" clears both. Emits
// [list length, sum of the list, map entries, whether the map holds "a"].
import { Buf } from "../assembly/buf";
import { MAIN, Record, Value, begin, end, listAdd, listGet, listUpdate, mapContains, mapDel, mapEntries, mapGet, mapPut, process, putWire, stateClear, wireNext } from "../assembly/index";
export * from "../assembly/operator";

const wire = new Value();
const item = new Value();
const item2 = new Value();
const got = new Value();
const tmp = new Buf();
const upd = new Buf();
const A = memory.data<u8>([0x61]);

function kinds(port: i32, r: Record): i32 {
  let st: i32;
  if (r.field("clear").exists) {
    st = stateClear(0, r.key);
    if (st < 0) return st;
    st = stateClear(1, r.key);
    if (st < 0) return st;
  } else {
    tmp.reset();
    tmp.putInt(r.field("v").int());
    st = listAdd(0, r.key, tmp.ptr, tmp.len);
    if (st < 0) return st;
    // keep the last two
    st = listGet(0, r.key, wire);
    if (st < 0) return st;
    let n = 0;
    while (wireNext(wire, item) == 1) n++;
    if (n > 2) {
      listGet(0, r.key, wire);
      upd.reset();
      for (let i = 0; wireNext(wire, item) == 1; i++) if (i >= n - 2) putWire(upd, item.ptr, item.len);
      st = listUpdate(0, r.key, upd.ptr, upd.len);
      if (st < 0) return st;
    }
    const m = r.field("m");
    const mp = m.strPtr, ml = m.strLen;
    st = mapGet(1, r.key, mp, ml, got);
    if (st < 0) return st;
    const c: i64 = st == 1 ? got.int() + 1 : 1;
    tmp.reset();
    tmp.putInt(c);
    st = mapPut(1, r.key, mp, ml, tmp.ptr, tmp.len);
    if (st < 0) return st;
    if (r.field("drop").exists) {
      st = mapDel(1, r.key, A, 1);
      if (st < 0) return st;
    }
  }
  let len = 0, sum: i64 = 0, ents = 0;
  st = listGet(0, r.key, wire);
  if (st < 0) return st;
  while (wireNext(wire, item) == 1) { len++; sum += item.int(); }
  st = mapEntries(1, r.key, wire);
  if (st < 0) return st;
  while (wireNext(wire, item) == 1 && wireNext(wire, item2) == 1) ents++;
  const hasA = mapContains(1, r.key, A, 1);
  if (hasA < 0) return hasA;
  const b = begin(MAIN, r);
  b.putArray(4);
  b.putInt(len);
  b.putInt(sum);
  b.putInt(ents);
  b.putBool(hasA == 1);
  return end(MAIN);
}

process("kinds", kinds).keyed();
