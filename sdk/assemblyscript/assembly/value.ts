// A minimal, allocation-free msgpack reader (abi/msgpack.go): skip a value
// with bounds and depth checks, and Value, a zero-copy view of one value.

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

/** Skips the n values of a container body at p, one level deeper. */
function skipN(p: usize, e: usize, n: u64, depth: i32): usize {
  if (depth + 1 > MAX_DEPTH) {
    why = "msgpack nested deeper than the limit";
    return 0;
  }
  if (n > <u64>(e - p)) return truncated(); // every value takes a byte
  while (n-- > 0) {
    if (p >= e) return truncated();
    const c = load<u8>(p);
    if (c <= 0x7f || c >= 0xe0) { p++; continue; }
    p = c >= 0xa0 && c <= 0xbf ? need(p, e, 1 + <u64>(c & 0x1f)) : skipAt(p, e, depth + 1);
    if (p == 0) return 0;
  }
  return p;
}

/** The end of the value at p (before e), or 0 when it is malformed. */
export function skipAt(p: usize, e: usize, depth: i32): usize {
  if (p >= e) return truncated();
  const c = load<u8>(p);
  if (c <= 0x7f || c >= 0xe0) return p + 1;
  if (c <= 0x8f) return skipN(p + 1, e, 2 * <u64>(c & 0x0f), depth);
  if (c <= 0x9f) return skipN(p + 1, e, <u64>(c & 0x0f), depth);
  if (c <= 0xbf) return need(p, e, 1 + <u64>(c & 0x1f));
  switch (c) {
    case 0xc0: case 0xc2: case 0xc3: return p + 1;
    case 0xcc: case 0xd0: return need(p, e, 2);
    case 0xcd: case 0xd1: case 0xd4: return need(p, e, 3);
    case 0xd5: return need(p, e, 4);
    case 0xce: case 0xd2: case 0xca: return need(p, e, 5);
    case 0xd6: return need(p, e, 6);
    case 0xcf: case 0xd3: case 0xcb: return need(p, e, 9);
    case 0xd7: return need(p, e, 10);
    case 0xd8: return need(p, e, 18);
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
  const n = s.length;
  let j = 0;
  for (let i = 0; i < n; i++) {
    let c = <u32>s.charCodeAt(i);
    if (c < 0x80) {
      if (j >= len || <u32>load<u8>(ptr + <usize>j) != c) return false;
      j++;
      continue;
    }
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < n) {
      const d = <u32>s.charCodeAt(i + 1);
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
export function bytesEqual(a: usize, an: i32, b: usize, bn: i32): bool {
  return an == bn && memory.compare(a, b, <usize>an) == 0;
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
  getInto(name: string, out: Value): Value {
    out.len = 0;
    const it = lookupIter;
    if (!it.reset(this, true)) return out;
    while (it.next()) {
      if (it.key.strEquals(name)) return out.set(it.value.ptr, it.value.len);
    }
    return out;
  }

  /** getInto with the name as UTF-8 bytes. */
  getBytesInto(name: usize, nameLen: i32, out: Value): Value {
    out.len = 0;
    const it = lookupIter;
    if (!it.reset(this, true)) return out;
    while (it.next()) {
      const k = it.key;
      const off = k.bodyOffset(true);
      if (off >= 0 && bytesEqual(k.ptr + <usize>off, k.len - off, name, nameLen)) return out.set(it.value.ptr, it.value.len);
    }
    return out;
  }
}

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

const lookupIter = new Iter();
