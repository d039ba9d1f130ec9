// A minimal, allocation-free msgpack reader (abi/msgpack.go): skip a value
// with bounds and depth checks, and Value, a zero-copy view of one value.

import { nameKey } from "./names";

/** The deepest nesting of arrays and maps accepted (abi.MaxDepth). */
export const MAX_DEPTH = 64;

export enum Type { Invalid, Nil, Bool, Int, Float, Str, Bin, Array, Map, Ext }

/** Why the last skip failed (a constant, no allocation). */
export let why: string = "";

export function typeOf(ptr: usize, len: i32): Type {
  if (len <= 0) return Type.Invalid;
  const c = load<u8>(ptr);
  if (c <= 0x7f || c >= 0xe0) return Type.Int;
  if (c <= 0x8f) return Type.Map;
  if (c <= 0x9f) return Type.Array;
  if (c <= 0xbf) return Type.Str;
  switch (c) {
    case 0xc0: return Type.Nil;
    case 0xc2: case 0xc3: return Type.Bool;
    case 0xc4: case 0xc5: case 0xc6: return Type.Bin;
    case 0xca: case 0xcb: return Type.Float;
    case 0xd9: case 0xda: case 0xdb: return Type.Str;
    case 0xdc: case 0xdd: return Type.Array;
    case 0xde: case 0xdf: return Type.Map;
    case 0xc1: return Type.Invalid;
  }
  return c >= 0xcc && c <= 0xd3 ? Type.Int : Type.Ext;
}

// @ts-ignore: decorator
@inline export function be16(p: usize): u32 { return <u32>bswap<u16>(load<u16>(p)); }
// @ts-ignore: decorator
@inline export function be32(p: usize): u32 { return bswap<u32>(load<u32>(p)); }
// @ts-ignore: decorator
@inline export function be64(p: usize): u64 { return bswap<u64>(load<u64>(p)); }

function truncated(): usize {
  why = "truncated msgpack";
  return 0;
}

/** p + size when size bytes remain before e, else 0. */
// @ts-ignore: decorator
@inline function need(p: usize, e: usize, size: u64): usize {
  return size <= <u64>(e - p) ? p + <usize>size : truncated();
}

/** FIXED + c holds the whole size of a value whose header byte c gives it
 * (fixint, fixstr, nil, bool, fixed-width numbers, fixext), else 0
 * (containers, str/bin/ext 8/16/32, 0xc1), as fixedSize in abi/msgpack.go:
 * the common case of every scan is one load and one length check. */
const FIXED = memory.data<u8>([
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, // 0x00-0x7f fixint
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 0x80-0x9f fixmap, fixarray
  1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, // 0xa0-0xbf fixstr
  1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 5, 9, 2, 3, 5, 9, 2, 3, 5, 9, 3, 4, 6, 10, 18, 0, 0, 0, 0, 0, 0, 0, // 0xc0-0xdf
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, // 0xe0-0xff fixint
]);

/** Whether c is a fixint header (0x00-0x7f, 0xe0-0xff): one compare. */
// @ts-ignore: decorator
@inline function isFixint(c: u8): bool {
  return <i8>c >= -32;
}

/** Skips the n values of a container body at p, one level deeper. Only a
 * nested container or a str/bin/ext 8/16/32 costs a call. */
function skipN(p: usize, e: usize, n: u64, depth: i32): usize {
  if (depth + 1 > MAX_DEPTH) {
    why = "msgpack nested deeper than the limit";
    return 0;
  }
  if (n > <u64>(e - p)) return truncated(); // every value takes a byte
  while (n-- > 0) {
    if (p >= e) return truncated();
    const size = <usize>load<u8>(FIXED + <usize>load<u8>(p));
    if (size == 0) p = skipAt(p, e, depth + 1);
    else if (size <= e - p) p += size;
    else return truncated();
    if (p == 0) return 0;
  }
  return p;
}

/** Skips the n key/value pairs of a map body at p, one level deeper, with
 * the common cases inline and no table load: a fixstr key, a fixint value
 * (the next header's load then waits on one add, not on a load). */
// @ts-ignore: decorator
@inline export function skipPairs(p: usize, e: usize, n: i32, depth: i32): usize {
  if (depth + 1 > MAX_DEPTH) {
    why = "msgpack nested deeper than the limit";
    return 0;
  }
  while (n-- > 0) {
    if (p >= e) return truncated();
    let c = load<u8>(p);
    p = (c & 0xe0) == 0xa0 ? p + 1 + <usize>(c & 0x1f) : skipAt(p, e, depth + 1);
    if (p == 0) return 0;
    if (p >= e) return truncated(); // the key's value
    c = load<u8>(p);
    p = isFixint(c) ? p + 1 : skipFast(p, e, depth + 1);
    if (p == 0) return 0;
  }
  return p;
}

/**
 * The field index of the record the batch loop read last, as the C SDK's
 * g_fx: parseRecord walks every field of a fixmap value to find the
 * record's end, and notes where each key starts (fxOff[i], from the map's
 * header; fxOff[fxN] is the map's size), so that a lookup or an edit on
 * that map reads keys in place instead of walking it again. fxMap is the
 * map's address, 0 for no index; every call starts with none (the batch
 * is the only memory it describes, and no one writes it during a call).
 */
export let fxMap: usize = 0;
export let fxN: i32 = 0;
/** Sets fxMap (0: no index) from another module. */
// @ts-ignore: decorator
@inline export function setFxMap(m: usize): void { fxMap = m; }
export const fxOff: usize = memory.data(16 * 4);

/** Whether the index describes the map at ptr, len bytes long. */
// @ts-ignore: decorator
@inline export function indexed(ptr: usize, len: i32): bool {
  return ptr == fxMap && ptr != 0 && load<u32>(fxOff + (<usize>fxN << 2)) == <u32>len;
}

/** skipPairs for the n (<= 15) pairs of the fixmap whose header is at
 * map, filling the index; at a key that is not a fixstr it leaves no
 * index and skipPairs reads the rest. */
// @ts-ignore: decorator
@inline export function indexPairs(map: usize, e: usize, n: i32): usize {
  fxMap = 0;
  let p = map + 1;
  for (let i = 0; i < n; i++) {
    if (p >= e) return truncated();
    let c = load<u8>(p);
    if ((c & 0xe0) != 0xa0) return skipPairs(p, e, n - i, 1);
    store<u32>(fxOff + (<usize>i << 2), <u32>(p - map));
    p += 1 + <usize>(c & 0x1f);
    if (p >= e) return truncated(); // the key's value
    c = load<u8>(p);
    p = isFixint(c) ? p + 1 : skipFast(p, e, 2);
    if (p == 0) return 0;
  }
  store<u32>(fxOff + (<usize>n << 2), <u32>(p - map));
  fxN = n;
  fxMap = map;
  return p;
}

/** skipAt with its common case inline: a value whose header gives its size. */
// @ts-ignore: decorator
@inline export function skipFast(p: usize, e: usize, depth: i32): usize {
  if (p < e) {
    const c = load<u8>(p);
    if (isFixint(c)) return p + 1;
    const size = <usize>load<u8>(FIXED + <usize>c);
    if (size != 0 && size <= e - p) return p + size;
  }
  return skipAt(p, e, depth);
}

/** The end of the value at p (before e), or 0 when it is malformed. */
export function skipAt(p: usize, e: usize, depth: i32): usize {
  if (p >= e) return truncated();
  const c = load<u8>(p);
  const size = load<u8>(FIXED + <usize>c);
  if (size != 0) return need(p, e, <u64>size);
  if (c <= 0x8f) return skipN(p + 1, e, 2 * <u64>(c & 0x0f), depth);
  if (c <= 0x9f) return skipN(p + 1, e, <u64>(c & 0x0f), depth);
  switch (c) {
    case 0xc4: case 0xd9: case 0xc7: // bin8, str8, ext8 (+type)
      if (need(p, e, 2) == 0) return 0;
      return need(p, e, (c == 0xc7 ? 3 : 2) + <u64>load<u8>(p + 1));
    case 0xc5: case 0xda: case 0xc8:
      if (need(p, e, 3) == 0) return 0;
      return need(p, e, (c == 0xc8 ? 4 : 3) + <u64>be16(p + 1));
    case 0xc6: case 0xdb: case 0xc9:
      if (need(p, e, 5) == 0) return 0;
      return need(p, e, (c == 0xc9 ? 6 : 5) + <u64>be32(p + 1));
    case 0xdc: case 0xde: {
      if (need(p, e, 3) == 0) return 0;
      const n = <u64>be16(p + 1);
      return skipN(p + 3, e, c == 0xde ? 2 * n : n, depth);
    }
    case 0xdd: case 0xdf: {
      if (need(p, e, 5) == 0) return 0;
      const n = <u64>be32(p + 1);
      return skipN(p + 5, e, c == 0xdf ? 2 * n : n, depth);
    }
  }
  why = "invalid msgpack byte"; // 0xc1
  return 0;
}

/** The offset just past the value at ptr+off, or -1 when malformed. */
export function skip(ptr: usize, len: i32, off: i32): i32 {
  const end = off < len ? skipAt(ptr + <usize>off, ptr + <usize>len, 0) : truncated();
  return end == 0 ? -1 : <i32>(end - ptr);
}

/** Compares UTF-8 bytes with a string, encoding it on the fly (no allocation). */
export function utf8Equals(ptr: usize, len: i32, s: string): bool {
  return utf8EqualsAt(ptr, len, changetype<usize>(s), s.length);
}

/** The 4 UTF-16 units of w as 4 bytes (the low byte of each). */
// @ts-ignore: decorator
@inline function pack4(w: u64): u32 {
  return <u32>(w & 0xff) | <u32>((w >> 8) & 0xff00) | <u32>((w >> 16) & 0xff0000) | <u32>((w >> 24) & 0xff000000);
}

/** Whether the n UTF-16 units at units are all ASCII: by 4-unit words
 * (the last one overlapping) when n >= 4. */
// @ts-ignore: decorator
@inline export function isAscii(units: usize, n: i32): bool {
  let m: u64 = 0;
  if (n >= 4) {
    for (let i = 0; i + 4 <= n; i += 4) m |= load<u64>(units + (<usize>i << 1));
    m |= load<u64>(units + (<usize>(n - 4) << 1));
  } else {
    for (let i = 0; i < n; i++) m |= <u64>load<u16>(units + (<usize>i << 1));
  }
  return (m & 0xff80ff80ff80ff80) == 0;
}

/** Whether n UTF-8 bytes at bytes are the n ASCII units at units. */
// @ts-ignore: decorator
@inline function asciiEquals(bytes: usize, units: usize, n: i32): bool {
  if (n < 4) {
    for (let i = 0; i < n; i++) if (<u32>load<u8>(bytes + <usize>i) != <u32>load<u16>(units + (<usize>i << 1))) return false;
    return true;
  }
  for (let i = 0; i + 4 <= n; i += 4) {
    if (load<u32>(bytes + <usize>i) != pack4(load<u64>(units + (<usize>i << 1)))) return false;
  }
  return load<u32>(bytes + <usize>(n - 4)) == pack4(load<u64>(units + (<usize>(n - 4) << 1)));
}

/** utf8Equals with the string as n UTF-16 units at units. */
function utf8EqualsAt(ptr: usize, len: i32, units: usize, n: i32): bool {
  let j = 0;
  for (let i = 0; i < n; i++) {
    let c = <u32>load<u16>(units + (<usize>i << 1));
    if (c < 0x80) {
      if (j >= len || <u32>load<u8>(ptr + <usize>j) != c) return false;
      j++;
      continue;
    }
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < n) {
      const d = <u32>load<u16>(units + (<usize>(i + 1) << 1));
      if (d >= 0xdc00 && d < 0xe000) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    const size = c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    if (j + size > len) return false;
    const p = ptr + <usize>j;
    if (size == 2) {
      if (load<u8>(p) != <u8>(0xc0 | (c >> 6)) || load<u8>(p + 1) != <u8>(0x80 | (c & 0x3f))) return false;
    } else if (size == 3) {
      if (load<u8>(p) != <u8>(0xe0 | (c >> 12)) || load<u8>(p + 1) != <u8>(0x80 | ((c >> 6) & 0x3f)) ||
        load<u8>(p + 2) != <u8>(0x80 | (c & 0x3f))) return false;
    } else {
      if (load<u8>(p) != <u8>(0xf0 | (c >> 18)) || load<u8>(p + 1) != <u8>(0x80 | ((c >> 12) & 0x3f)) ||
        load<u8>(p + 2) != <u8>(0x80 | ((c >> 6) & 0x3f)) || load<u8>(p + 3) != <u8>(0x80 | (c & 0x3f))) return false;
    }
    j += size;
  }
  return j == len;
}

/** Whether two byte ranges are equal. */
// @ts-ignore: decorator
@inline export function bytesEqual(a: usize, an: i32, b: usize, bn: i32): bool {
  if (an != bn) return false;
  // names are short: two loads a side up to 16 bytes, within [a, a+n) and
  // [b, b+n); memory.compare is a byte loop in the guest
  const n = <usize>an;
  if (n >= 8) {
    if (n > 16) return memory.compare(a, b, n) == 0;
    return load<u64>(a) == load<u64>(b) && load<u64>(a + n - 8) == load<u64>(b + n - 8);
  }
  if (n >= 4) return load<u32>(a) == load<u32>(b) && load<u32>(a + n - 4) == load<u32>(b + n - 4);
  if (n >= 2) return load<u16>(a) == load<u16>(b) && load<u16>(a + n - 2) == load<u16>(b + n - 2);
  return n == 0 || load<u8>(a) == load<u8>(b);
}

/**
 * A view of one msgpack value: its raw bytes (ptr, len), never copied.
 * len == 0 means absent (a missing field, a nil envelope key). Views the
 * SDK hands out during a record are reused after it: copy what you keep.
 */
export class Value {
  ptr: usize = 0;
  len: i32 = 0;

  set(ptr: usize, len: i32): Value {
    this.ptr = ptr;
    this.len = len;
    return this;
  }

  get exists(): bool { return this.len > 0; }
  get type(): Type { return typeOf(this.ptr, this.len); }
  get isNil(): bool { return this.len > 0 && load<u8>(this.ptr) == 0xc0; }
  get isInt(): bool { return this.type == Type.Int; }
  get isFloat(): bool { return this.type == Type.Float; }
  get isStr(): bool { return this.type == Type.Str; }
  get isBool(): bool { return this.type == Type.Bool; }
  get isMap(): bool { return this.type == Type.Map; }
  get isArray(): bool { return this.type == Type.Array; }

  /** An integer of any width; 0 when not one (check isInt). A uint64 above i64.MAX_VALUE is 0. */
  asInt(): i64 {
    const p = this.ptr, n = this.len;
    if (n <= 0) return 0;
    const c = load<u8>(p);
    if (c <= 0x7f) return <i64>c;
    if (c >= 0xe0) return <i64><i8>c;
    switch (c) {
      case 0xcc: return n >= 2 ? <i64>load<u8>(p + 1) : 0;
      case 0xcd: return n >= 3 ? <i64>be16(p + 1) : 0;
      case 0xce: return n >= 5 ? <i64>be32(p + 1) : 0;
      case 0xcf: { const u = n >= 9 ? be64(p + 1) : 0; return u > <u64>i64.MAX_VALUE ? 0 : <i64>u; }
      case 0xd0: return n >= 2 ? <i64>load<i8>(p + 1) : 0;
      case 0xd1: return n >= 3 ? <i64><i16>be16(p + 1) : 0;
      case 0xd2: return n >= 5 ? <i64><i32>be32(p + 1) : 0;
      case 0xd3: return n >= 9 ? <i64>be64(p + 1) : 0;
    }
    return 0;
  }

  /** A float32 or float64, an integer converted; 0 otherwise. */
  asF64(): f64 {
    const p = this.ptr;
    if (this.len >= 5 && load<u8>(p) == 0xca) return <f64>reinterpret<f32>(be32(p + 1));
    if (this.len >= 9 && load<u8>(p) == 0xcb) return reinterpret<f64>(be64(p + 1));
    return <f64>this.asInt();
  }

  /** The Go SDK's Value.Int: an integer as is, a float truncated toward
   * zero (saturating, NaN is 0, as a Go plugin compiled to wasm does),
   * anything else 0. */
  int(): i64 {
    if (this.len > 0) { // a fixint, inline
      const c = load<u8>(this.ptr);
      if (isFixint(c)) return <i64><i8>c;
    }
    const t = this.type;
    if (t == Type.Int) return this.asInt();
    if (t == Type.Float) return <i64>this.asF64(); // i64.trunc_sat_f64_s
    return 0;
  }

  asBool(): bool {
    return this.len > 0 && load<u8>(this.ptr) == 0xc3;
  }

  /** The offset of a string's (or bin's) bytes from ptr; -1 when not one. */
  private bodyOffset(strType: bool): i32 {
    if (this.len <= 0) return -1;
    const c = load<u8>(this.ptr);
    let hdr = 0, n: u64 = 0;
    const c8: u8 = strType ? 0xd9 : 0xc4;
    if (strType && c >= 0xa0 && c <= 0xbf) { hdr = 1; n = <u64>(c & 0x1f); }
    else if (c == c8 && this.len >= 2) { hdr = 2; n = <u64>load<u8>(this.ptr + 1); }
    else if (c == c8 + 1 && this.len >= 3) { hdr = 3; n = <u64>be16(this.ptr + 1); }
    else if (c == c8 + 2 && this.len >= 5) { hdr = 5; n = <u64>be32(this.ptr + 1); }
    else return -1;
    return <u64>hdr + n <= <u64>this.len ? hdr : -1;
  }

  /** Where a string's UTF-8 bytes start (0 when not a string); see strLen. */
  get strPtr(): usize {
    const off = this.bodyOffset(true);
    return off < 0 ? 0 : this.ptr + <usize>off;
  }

  /** The length in bytes of a string (0 when not a string). */
  get strLen(): i32 {
    const off = this.bodyOffset(true);
    return off < 0 ? 0 : this.len - off;
  }

  /** Whether the value is the string s (no allocation). */
  strEquals(s: string): bool {
    const off = this.bodyOffset(true);
    return off >= 0 && utf8Equals(this.ptr + <usize>off, this.len - off, s);
  }

  /** A copy of a string as an AssemblyScript string ("" when not one).
   * It allocates: keep it out of per-record code with --runtime stub. */
  asString(): string {
    const off = this.bodyOffset(true);
    return off < 0 ? "" : String.UTF8.decodeUnsafe(this.ptr + <usize>off, <usize>(this.len - off));
  }

  /** Where a binary value's bytes start (0 when not binary); see binLen. */
  get binPtr(): usize {
    const off = this.bodyOffset(false);
    return off < 0 ? 0 : this.ptr + <usize>off;
  }

  get binLen(): i32 {
    const off = this.bodyOffset(false);
    return off < 0 ? 0 : this.len - off;
  }

  /** The value of the top-level string key `name` of a map, into `out`
   * (which is returned); out.exists is false when there is none. */
  // @ts-ignore: decorator
  @inline getInto(name: string, out: Value): Value {
    const key = nameKey(name); // the name's UTF-8 bytes, cached (names.ts)
    if (key == 0) return this.getUnitsInto(name, out);
    return this.lookup(key + 1, <i32>(load<u8>(key) & 0x1f), false, out);
  }

  /** getInto for a name of 32 UTF-8 bytes or more, compared unit by unit
   * (out of line: names are rarely so long). */
  private getUnitsInto(name: string, out: Value): Value {
    return this.lookup(changetype<usize>(name), name.length, true, out);
  }

  /** getInto with the name as UTF-8 bytes. */
  getBytesInto(name: usize, nameLen: i32, out: Value): Value {
    return this.lookup(name, nameLen, false, out);
  }

  /** The lookup of getInto (name: a string's UTF-16 units, n of them) and
   * of getBytesInto (name: n UTF-8 bytes). A fixstr key is compared in
   * place, a value whose header gives its size is skipped in place. */
  // @ts-ignore: decorator
  @inline private lookup(name: usize, n: i32, utf16: bool, out: Value): Value {
    out.len = 0;
    const p = this.ptr;
    if (this.len <= 0) return out;
    if (indexed(p, this.len)) {
      // an ASCII name of n units has n UTF-8 bytes and is compared by
      // words; any other has n to 3n and is encoded on the fly
      const ascii = utf16 && isAscii(name, n);
      for (let i = 0; i < fxN; i++) {
        const k = p + <usize>load<u32>(fxOff + (<usize>i << 2));
        const keyLen = <i32>(load<u8>(k) & 0x1f), key = k + 1;
        if (ascii ? keyLen == n && asciiEquals(key, name, n)
          : utf16 ? keyLen >= n && keyLen <= 3 * n && utf8EqualsAt(key, keyLen, name, n)
          : bytesEqual(key, keyLen, name, n)) {
          const val = key + <usize>keyLen;
          return out.set(val, <i32>(p + <usize>load<u32>(fxOff + (<usize>(i + 1) << 2)) - val));
        }
      }
      return out;
    }
    return this.walk(name, n, utf16, out);
  }

  /** lookup in a map the index does not describe, out of line: a record
   * loop's lookups take the index, and the walk inlined into every caller
   * made the `double` callback half again as large (1,241 instructions
   * against 808). */
  private walk(name: usize, n: i32, utf16: bool, out: Value): Value {
    const ascii = utf16 && isAscii(name, n); // as in lookup
    let p = this.ptr;
    const e = p + <usize>this.len;
    const c0 = load<u8>(p);
    let left: u64 = 0;
    if ((c0 & 0xf0) == 0x80) { left = <u64>(c0 & 0x0f); p++; }
    else if (c0 == 0xde && this.len >= 3) { left = <u64>be16(p + 1); p += 3; }
    else if (c0 == 0xdf && this.len >= 5) { left = <u64>be32(p + 1); p += 5; }
    else return out;
    while (left-- > 0) {
      if (p >= e) return out;
      const c = load<u8>(p);
      let key: usize = 0, keyLen = 0, val: usize;
      if ((c & 0xe0) == 0xa0) {
        key = p + 1;
        keyLen = <i32>(c & 0x1f);
        val = key + <usize>keyLen;
        if (val > e) return out;
      } else {
        val = skipAt(p, e, 1);
        if (val == 0) return out;
        const k = keyView.set(p, <i32>(val - p)), off = k.bodyOffset(true);
        if (off >= 0) { key = p + <usize>off; keyLen = k.len - off; }
      }
      const end = skipFast(val, e, 1);
      if (end == 0) return out;
      if (key != 0 && (ascii ? keyLen == n && asciiEquals(key, name, n)
        : utf16 ? keyLen >= n && keyLen <= 3 * n && utf8EqualsAt(key, keyLen, name, n)
        : bytesEqual(key, keyLen, name, n))) {
        return out.set(val, <i32>(end - val));
      }
      p = end;
    }
    return out;
  }
}

const keyView = new Value();

/**
 * Iterates a map's (key, value) pairs or an array's elements. Allocate one
 * and reuse it: `if (it.reset(v, true)) while (it.next()) use(it.key, it.value)`.
 * For an array only `value` is set.
 */
export class Iter {
  key: Value = new Value();
  value: Value = new Value();
  p: usize = 0;
  e: usize = 0;
  left: u64 = 0;
  isMap: bool = false;

  /** Starts iterating v; false when it is not a map (isMap) or an array. */
  reset(v: Value, isMap: bool): bool {
    this.left = 0;
    if (v.len <= 0) return false;
    const c = load<u8>(v.ptr);
    const fix: u8 = isMap ? 0x80 : 0x90, c16: u8 = isMap ? 0xde : 0xdc;
    let hdr = 1;
    if ((c & 0xf0) == fix) this.left = <u64>(c & 0x0f);
    else if (c == c16 && v.len >= 3) { this.left = <u64>be16(v.ptr + 1); hdr = 3; }
    else if (c == c16 + 1 && v.len >= 5) { this.left = <u64>be32(v.ptr + 1); hdr = 5; }
    else return false;
    this.isMap = isMap;
    this.p = v.ptr + <usize>hdr;
    this.e = v.ptr + <usize>v.len;
    return true;
  }

  /** The number of pairs (or elements) not yet read. */
  get remaining(): u64 { return this.left; }

  private read(into: Value): bool {
    const end = skipAt(this.p, this.e, 1);
    if (end == 0) { this.left = 0; return false; }
    into.set(this.p, <i32>(end - this.p));
    this.p = end;
    return true;
  }

  /** Advances; false at the end (or on malformed bytes). */
  next(): bool {
    if (this.left == 0) return false;
    this.left--;
    if (this.isMap && !this.read(this.key)) return false;
    return this.read(this.value);
  }
}
