// Records (zero-copy envelope views) and Edit (typed setters that rebuild a
// record's value map).

import { Buf, mapHeaderSize } from "./buf";
import { copySmall, nameKey } from "./names";
import { Iter, Type, Value, be64, bytesEqual, fxN, fxOff, indexPairs, indexed, setFxMap, skipAt, skipFast, typeOf, why } from "./value";

/** A small pool of views handed out while a record is processed; reused
 * for the next record, so field lookups allocate nothing in steady state. */
class Pool {
  items: Value[] = [];
  used: i32 = 0;
  active: bool = false; // outside a record, views are fresh objects

  take(): Value {
    if (!this.active) return new Value();
    if (this.used == this.items.length) this.items.push(new Value());
    return unchecked(this.items[this.used++]);
  }
}

export const pool = new Pool();

/** One envelope [event_time|nil, key|nil, value]: views into the batch,
 * valid during the callback that receives it. */
export class Record {
  raw: Value = new Value();    // the whole envelope
  hasTime: bool = false;
  time: i64 = 0;               // ms since the Unix epoch, when hasTime
  key: Value = new Value();    // raw msgpack key; key.exists is false when nil
  value: Value = new Value();  // the record, by convention a map str -> any

  /** A top-level field of the value map (exists is false when missing). */
  field(name: string): Value {
    return this.value.getInto(name, pool.take());
  }
  // The scalar getters read through one scratch view (nothing escapes)
  // and are inlined with the lookup: no call per field.
  // @ts-ignore: decorator
  @inline has(name: string): bool { return this.value.getInto(name, scratch).exists; }
  /** An integer field with the Go SDK's semantics (see Value.int). */
  // @ts-ignore: decorator
  @inline int(name: string): i64 { return this.value.getInto(name, scratch).int(); }
  /** A number field: a float, an integer converted, else 0. */
  // @ts-ignore: decorator
  @inline float(name: string): f64 { return this.value.getInto(name, scratch).asF64(); }
  // @ts-ignore: decorator
  @inline bool(name: string): bool { return this.value.getInto(name, scratch).asBool(); }
}

const scratch = new Value();

/** Reads the envelope at p (before e) into r; the end, or 0 (reason in `parseWhy`). */
export let parseWhy: string = "";

const timeView = new Value();

/** Inline fast paths for what writers produce: an int64/uint64 or nil
 * time, a nil key, a fixmap value. */
// @ts-ignore: decorator
@inline export function parseRecord(p: usize, e: usize, r: Record): usize {
  const start = p;
  if (p >= e) { parseWhy = "truncated msgpack"; return 0; }
  if (load<u8>(p) != 0x93) { parseWhy = "record is not a [event_time, key, value] envelope"; return 0; }
  p++;
  if (p >= e) { parseWhy = "truncated msgpack"; return 0; }
  const c = load<u8>(p);
  if (c == 0xc0) {
    r.hasTime = false;
    r.time = 0;
    p++;
  } else if ((c == 0xd3 || c == 0xcf) && e - p >= 9) {
    const t = be64(p + 1);
    if (c == 0xcf && <i64>t < 0) { parseWhy = "event time out of range"; return 0; }
    r.time = <i64>t;
    r.hasTime = true;
    p += 9;
  } else {
    if (typeOf(p, <i32>(e - p)) != Type.Int) { parseWhy = "event time is not an int or nil"; return 0; }
    const end = skipAt(p, e, 1);
    if (end == 0) { parseWhy = why; return 0; }
    if (load<u8>(p) == 0xcf && load<u8>(p + 1) >= 0x80) { parseWhy = "event time out of range"; return 0; }
    const t = timeView.set(p, <i32>(end - p));
    r.time = t.asInt();
    r.hasTime = true;
    p = end;
  }
  let kEnd: usize;
  if (p < e && load<u8>(p) == 0xc0) {
    kEnd = p + 1;
    r.key.set(p, 0);
  } else {
    kEnd = skipAt(p, e, 1);
    if (kEnd == 0) { parseWhy = why; return 0; }
    r.key.set(p, <i32>(kEnd - p));
  }
  const v = kEnd < e ? load<u8>(kEnd) : 0;
  let end: usize;
  if ((v & 0xf0) == 0x80) end = indexPairs(kEnd, e, v & 0x0f);
  else { setFxMap(0); end = skipAt(kEnd, e, 1); }
  if (end == 0) { parseWhy = why; return 0; }
  r.value.set(kEnd, <i32>(end - kEnd));
  r.raw.set(start, <i32>(end - start));
  return end;
}

/** Appends the head of an envelope: [, the time and the key. */
export function putEnvelope(b: Buf, hasTime: bool, time: i64, key: Value): void {
  b.putByte(0x93);
  if (hasTime) b.putInt(time);
  else b.putNil();
  if (key.len > 0) b.putRaw(key.ptr, key.len);
  else b.putNil();
}

// An op is 5 i32 in `ops`: name offset, name length, value offset, value
// length (in `scratch`) and flags, in 32 bytes: the count is a shift, where
// a division by 20 was an idiv in every edit.
const OP_SHIFT = 5, OP_SIZE = 1 << OP_SHIFT;
const UNSET = 1, FOUND = 2;

/**
 * Typed setters on a record's value map. Existing fields keep their order
 * (edited in place), new fields are appended in the order first set, a
 * field set twice keeps the last value, and the map header is rewritten in
 * its smallest form. With no change the record is passed on byte for byte.
 */
export class Edit {
  ops: Buf = new Buf();
  scratch: Buf = new Buf();
  private iter: Iter = new Iter();

  clear(): void {
    this.ops.reset();
    this.scratch.reset();
  }

  get count(): i32 { return this.ops.len >> OP_SHIFT; }

  private opAt(i: i32): usize { return this.ops.ptr + (<usize>i << OP_SHIFT); }

  /** The op for the name in scratch[at, at+n), found or added; the value
   * to be written next starts at the end of scratch. */
  private op(at: i32, n: i32, flags: i32): usize {
    const s = this.scratch;
    let op: usize = 0;
    for (let i = 0, c = this.count; i < c; i++) {
      const o = this.opAt(i);
      if (bytesEqual(s.ptr + <usize>load<i32>(o), load<i32>(o, 4), s.ptr + <usize>at, n)) { op = o; break; }
    }
    if (op == 0) {
      op = this.ops.grow(OP_SIZE);
      store<i32>(op, at);
      store<i32>(op, n, 4);
    }
    store<i32>(op, s.len, 8);
    store<i32>(op, 0, 12);
    store<i32>(op, flags, 16);
    return op;
  }

  private begin(name: string): usize {
    const at = this.scratch.len;
    const key = nameKey(name); // the name's UTF-8 bytes, cached (names.ts)
    if (key == 0) return this.beginLong(name);
    const n = <i32>(load<u8>(key) & 0x1f);
    copySmall(this.scratch.grow(n), key + 1, <usize>n);
    return this.op(at, n, 0);
  }

  /** begin for a name of 32 UTF-8 bytes or more, out of line. */
  private beginLong(name: string): usize {
    const at = this.scratch.len;
    const n = String.UTF8.byteLength(name);
    String.UTF8.encodeUnsafe(changetype<usize>(name), name.length, this.scratch.grow(n));
    return this.op(at, n, 0);
  }

  private done(op: usize): Edit {
    store<i32>(op, this.scratch.len - load<i32>(op, 8), 12);
    return this;
  }

  setInt(name: string, v: i64): Edit { const op = this.begin(name); this.scratch.putInt(v); return this.done(op); }
  setF64(name: string, v: f64): Edit { const op = this.begin(name); this.scratch.putF64(v); return this.done(op); }
  setBool(name: string, v: bool): Edit { const op = this.begin(name); this.scratch.putBool(v); return this.done(op); }
  setNil(name: string): Edit { const op = this.begin(name); this.scratch.putNil(); return this.done(op); }
  setStr(name: string, v: string): Edit { const op = this.begin(name); this.scratch.putStr(v); return this.done(op); }
  setStrBytes(name: string, ptr: usize, n: i32): Edit { const op = this.begin(name); this.scratch.putStrBytes(ptr, n); return this.done(op); }
  setRaw(name: string, v: Value): Edit { const op = this.begin(name); this.scratch.putRaw(v.ptr, v.len); return this.done(op); }

  /** Sets a field named by UTF-8 bytes to a raw msgpack value (copied). */
  setRawBytes(name: usize, nameLen: i32, v: Value): Edit {
    const at = this.scratch.len;
    this.scratch.putRaw(name, nameLen);
    const op = this.op(at, nameLen, 0);
    this.scratch.putRaw(v.ptr, v.len);
    return this.done(op);
  }

  /** Removes a field (a no-op when missing). */
  unset(name: string): Edit {
    const op = this.begin(name);
    store<i32>(op, UNSET, 16);
    return this.done(op);
  }

  /** The common edit, one field set, when r's value is a fixmap whose keys
   * up to that field are fixstrs: the field's value is spliced in (or the
   * field appended, the header counting it) and every other byte copied as
   * it is. False, with nothing written, for any other record, which the
   * general path takes. Inline in write: the call cost `double` ~3 %. */
  // @ts-ignore: decorator
  @inline private splice(r: Record, dst: Buf): bool {
    const op = this.opAt(0), s = this.scratch;
    const name = s.ptr + <usize>load<i32>(op), nameLen = load<i32>(op, 4);
    const val = s.ptr + <usize>load<i32>(op, 8), valLen = load<i32>(op, 12);
    const v = r.value.ptr, e = v + <usize>r.value.len;
    const c0 = load<u8>(v);
    if ((c0 & 0xf0) != 0x80) return false;
    const n = <i32>(c0 & 0x0f);
    let p = v + 1;
    if (indexed(v, r.value.len)) {
      for (let i = 0; i < fxN; i++) {
        const k = v + <usize>load<u32>(fxOff + (<usize>i << 2));
        const kn = <i32>(load<u8>(k) & 0x1f);
        if (!bytesEqual(k + 1, kn, name, nameLen)) continue;
        const at = k + 1 + <usize>kn, end = v + <usize>load<u32>(fxOff + (<usize>(i + 1) << 2));
        spliceAt(dst, r, at, end, val, valLen);
        return true;
      }
      p = e; // not there: appended below
    } else for (let i = 0; i < n; i++) {
      if (p >= e) return false;
      const c = load<u8>(p);
      if ((c & 0xe0) != 0xa0) return false;
      const kn = <i32>(c & 0x1f), at = p + 1 + <usize>kn;
      const end = skipFast(at, e, 1);
      if (end == 0) return false;
      if (bytesEqual(p + 1, kn, name, nameLen)) { // the first of that name, as the general path
        spliceAt(dst, r, at, end, val, valLen);
        return true;
      }
      p = end;
    }
    if (n == 15 || p != e) return false;
    if (e == r.raw.ptr + <usize>r.raw.len) {
      // the record in one copy, its header then counting one field more
      const start = dst.len;
      dst.putRaw(r.raw.ptr, r.raw.len);
      store<u8>(dst.ptr + <usize>start + (v - r.raw.ptr), <u8>(0x81 + n));
    } else {
      dst.putRaw(r.raw.ptr, <i32>(v - r.raw.ptr));
      dst.putByte(<u8>(0x81 + n));
      dst.putRaw(v + 1, <i32>(e - v - 1));
    }
    dst.putStrBytes(name, nameLen);
    dst.putRaw(val, valLen);
    return true;
  }

  /** Appends r with the edits applied, as an envelope, to dst; false when
   * the value is not a map. */
  write(r: Record, dst: Buf): bool {
    const c = this.count;
    if (c == 0) { // unchanged: byte for byte, whatever the value
      dst.putRaw(r.raw.ptr, r.raw.len);
      return true;
    }
    // the envelope as it was encoded, when the value ends it (as for every
    // record the SDK reads)
    const head = r.value.ptr - r.raw.ptr;
    const asRead = r.value.ptr >= r.raw.ptr && head + <usize>r.value.len == <usize>r.raw.len;
    if (asRead && c == 1 && !(load<i32>(this.opAt(0), 16) & UNSET) && this.splice(r, dst)) return true;
    const it = this.iter;
    if (!it.reset(r.value, true)) return false;
    if (asRead) dst.putRaw(r.raw.ptr, <i32>head);
    else putEnvelope(dst, r.hasTime, r.time, r.key);
    const at = dst.len;
    dst.grow(5); // room for the largest map header
    for (let i = 0; i < c; i++) store<i32>(this.opAt(i), load<i32>(this.opAt(i), 16) & ~FOUND, 16);
    const s = this.scratch;
    let count = 0, unseen = c;
    while (it.next()) {
      const k = it.key;
      const off = strBody(k);
      let op: usize = 0;
      if (off >= 0) {
        for (let i = 0; i < c; i++) {
          const o = this.opAt(i);
          if (bytesEqual(s.ptr + <usize>load<i32>(o), load<i32>(o, 4), k.ptr + <usize>off, k.len - off)) { op = o; break; }
        }
      }
      let unset = false;
      if (op != 0) {
        const flags = load<i32>(op, 16);
        if (!(flags & FOUND)) { store<i32>(op, flags | FOUND, 16); unseen--; }
        unset = (flags & UNSET) != 0;
        if (!unset) {
          dst.putRaw(k.ptr, k.len);
          dst.putRaw(s.ptr + <usize>load<i32>(op, 8), load<i32>(op, 12));
        }
      } else {
        dst.putRaw(k.ptr, k.len);
        dst.putRaw(it.value.ptr, it.value.len);
      }
      if (!unset) count++;
      if (unseen == 0) { // every edit applied: the rest is copied as it is (as sdk/go)
        dst.putRaw(it.p, <i32>(it.e - it.p));
        count += <i32>it.remaining;
        break;
      }
    }
    for (let i = 0; i < c; i++) {
      const o = this.opAt(i);
      if (load<i32>(o, 16) & (UNSET | FOUND)) continue;
      dst.putStrBytes(s.ptr + <usize>load<i32>(o), load<i32>(o, 4));
      dst.putRaw(s.ptr + <usize>load<i32>(o, 8), load<i32>(o, 12));
      count++;
    }
    // write the smallest header and close the gap
    const h = mapHeaderSize(count);
    const base = dst.ptr + <usize>at;
    memory.copy(base + <usize>h, base + 5, <usize>(dst.len - at - 5));
    dst.len -= 5 - h;
    if (h == 1) store<u8>(base, <u8>(0x80 | count));
    else if (h == 3) { store<u8>(base, 0xde); store<u16>(base + 1, bswap<u16>(<u16>count)); }
    else { store<u8>(base, 0xdf); store<u32>(base + 1, bswap<u32>(<u32>count)); }
    return true;
  }
}

/** The offset of a string key's bytes, or -1. */
function strBody(k: Value): i32 {
  const p = k.strPtr;
  return p == 0 ? -1 : <i32>(p - k.ptr);
}

/** Appends r's envelope with the value bytes [at, end) replaced by
 * val[0, valLen). A value of the same size is written over its own after
 * one copy of the whole record: each copy is a memory.copy, which the host
 * runs as a call out of the guest. */
// @ts-ignore: decorator
@inline function spliceAt(dst: Buf, r: Record, at: usize, end: usize, val: usize, valLen: i32): void {
  const raw = r.raw.ptr, rawEnd = raw + <usize>r.raw.len;
  if (<i32>(end - at) == valLen) {
    const start = dst.len;
    dst.putRaw(raw, r.raw.len);
    const to = dst.ptr + <usize>start + (at - raw);
    if (valLen <= 9) { // an int or a float: stores, not a memory.copy's call out of the guest
      for (let i = 0; i < valLen; i++) store<u8>(to + <usize>i, load<u8>(val + <usize>i));
    } else memory.copy(to, val, <usize>valLen);
    return;
  }
  dst.putRaw(raw, <i32>(at - raw));
  dst.putRaw(val, valLen);
  dst.putRaw(end, <i32>(rawEnd - end));
}
