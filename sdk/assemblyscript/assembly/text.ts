// Text and keys as Go sees them, so that a plugin matches a Go one byte for
// byte: UTF-8 as Go's unicode/utf8 reads it (an invalid byte is U+FFFD of
// size 1), Go's Unicode tables (unicode_tables.ts, generated from Go) and
// abi.KeyHash. Nothing here allocates.

import { Buf } from "./buf";
import { LOWER_ROWS, PUNCT_ROWS, SPACE_ROWS, lowerTable, punctTable, spaceTable } from "./unicode_tables";
import { Iter, Type, Value, be32, be64 } from "./value";

/** utf8.RuneError, U+FFFD. */
export const RUNE_ERROR: u32 = 0xfffd;

/** The size in bytes of the rune the last decodeRune/decodeLastRune read. */
export let runeSize: i32 = 0;

/** utf8.DecodeRune: the first rune at ptr (size in runeSize); U+FFFD of
 * size 1 for an invalid, short, overlong or surrogate sequence. */
export function decodeRune(ptr: usize, len: i32): u32 {
  if (len <= 0) { runeSize = 0; return RUNE_ERROR; }
  const c = <u32>load<u8>(ptr);
  runeSize = 1;
  if (c < 0x80) return c;
  const n: i32 = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  const lo: u32 = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80; // no overlong forms
  const hi: u32 = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf; // no surrogates, nothing past U+10FFFF
  if (n == 0 || len < n) return RUNE_ERROR;
  const b1 = <u32>load<u8>(ptr + 1);
  if (b1 < lo || b1 > hi) return RUNE_ERROR;
  for (let i = 2; i < n; i++) {
    const b = <u32>load<u8>(ptr + <usize>i);
    if (b < 0x80 || b > 0xbf) return RUNE_ERROR;
  }
  runeSize = n;
  if (n == 2) return (c & 0x1f) << 6 | (b1 & 0x3f);
  const b2 = <u32>load<u8>(ptr + 2) & 0x3f;
  if (n == 3) return (c & 0x0f) << 12 | (b1 & 0x3f) << 6 | b2;
  return (c & 0x07) << 18 | (b1 & 0x3f) << 12 | b2 << 6 | (<u32>load<u8>(ptr + 3) & 0x3f);
}

/** utf8.DecodeLastRune: the last rune of ptr/len (size in runeSize). */
export function decodeLastRune(ptr: usize, len: i32): u32 {
  if (len <= 0) { runeSize = 0; return RUNE_ERROR; }
  const last = <u32>load<u8>(ptr + <usize>(len - 1));
  if (last < 0x80) { runeSize = 1; return last; }
  // back to a byte that can start a rune, at most 4 bytes
  const lim = len >= 4 ? len - 4 : 0;
  let start = len - 1;
  while (start > lim && (load<u8>(ptr + <usize>start) & 0xc0) == 0x80) start--;
  const r = decodeRune(ptr + <usize>start, len - start);
  if (start + runeSize != len) { runeSize = 1; return RUNE_ERROR; }
  return r;
}

/** utf8.AppendRune: the UTF-8 bytes of r (U+FFFD for a surrogate or a
 * value past U+10FFFF), no msgpack header. */
export function putRune(b: Buf, r: u32): void {
  if ((r >= 0xd800 && r <= 0xdfff) || r > 0x10ffff) r = RUNE_ERROR;
  if (r < 0x80) { b.putByte(<u8>r); return; }
  if (r < 0x800) {
    const at = b.grow(2);
    store<u8>(at, <u8>(0xc0 | r >> 6));
    store<u8>(at, <u8>(0x80 | (r & 0x3f)), 1);
  } else if (r < 0x10000) {
    const at = b.grow(3);
    store<u8>(at, <u8>(0xe0 | r >> 12));
    store<u8>(at, <u8>(0x80 | (r >> 6 & 0x3f)), 1);
    store<u8>(at, <u8>(0x80 | (r & 0x3f)), 2);
  } else {
    const at = b.grow(4);
    store<u8>(at, <u8>(0xf0 | r >> 18));
    store<u8>(at, <u8>(0x80 | (r >> 12 & 0x3f)), 1);
    store<u8>(at, <u8>(0x80 | (r >> 6 & 0x3f)), 2);
    store<u8>(at, <u8>(0x80 | (r & 0x3f)), 3);
  }
}

/** The row of r in a table of (lo, hi, x) triples, or -1 (binary search). */
function row(t: usize, rows: i32, r: u32): i32 {
  let lo = 0, hi = rows;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    const at = t + <usize>(12 * m);
    if (r < load<u32>(at)) hi = m;
    else if (r > load<u32>(at, 4)) lo = m + 1;
    else return m;
  }
  return -1;
}

function inTable(t: usize, rows: i32, r: u32): bool {
  const i = row(t, rows, r);
  if (i < 0) return false;
  const at = t + <usize>(12 * i);
  return (r - load<u32>(at)) % load<u32>(at, 8) == 0;
}

/** unicode.IsSpace. */
export function isSpace(r: u32): bool { return inTable(spaceTable(), SPACE_ROWS, r); }

/** unicode.IsPunct. */
export function isPunct(r: u32): bool { return inTable(punctTable(), PUNCT_ROWS, r); }

/** unicode.ToLower. */
export function toLower(r: u32): u32 {
  if (r < 0x80) return r >= 0x41 && r <= 0x5a ? r + 32 : r;
  const t = lowerTable();
  const i = row(t, LOWER_ROWS, r);
  if (i < 0) return r;
  const at = t + <usize>(12 * i);
  const lo = load<u32>(at), delta = load<u32>(at, 8);
  if (delta == 0x110000) return lo + (((r - lo) & ~1) | 1); // alternating upper/lower pairs
  return r + delta; // the delta, an int32
}

/** abi.javaStep: the first character at ptr (len > 0) as Java's UTF-8
 * decoder (new String(bytes, UTF_8)) reads it, its size in runeSize: a valid
 * sequence gives its code point; a malformed one U+FFFD for the bytes Java
 * takes as one malformed sequence (E2 82 41 is U+FFFD 'A', ED A0 80 one
 * U+FFFD): neither one per byte nor Unicode's maximal subparts. */
export function javaStep(ptr: usize, len: i32): u32 {
  const r = decodeRune(ptr, len);
  if (r != RUNE_ERROR || runeSize != 1) return r;
  const b1 = <u32>load<u8>(ptr);
  const b2: u32 = len > 1 ? <u32>load<u8>(ptr + 1) : 0;
  const c1 = len > 1 && (b2 & 0xc0) == 0x80;
  const c2 = len > 2 && (<u32>load<u8>(ptr + 2) & 0xc0) == 0x80;
  if (b1 >= 0xe0 && b1 <= 0xef) {
    if (len == 1 || (b1 == 0xe0 && (b2 & 0xe0) == 0x80) || !c1) runeSize = 1;
    else if (len == 2 || !c2) runeSize = 2;
    else runeSize = 3; // well formed but a surrogate (ED A0..BF xx)
  } else if (b1 >= 0xf0 && b1 <= 0xf7) {
    if (b1 > 0xf4 || len == 1 || (b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) || (b1 == 0xf4 && (b2 & 0xf0) != 0x80) || !c1) runeSize = 1;
    else if (len == 2 || !c2) runeSize = 2;
    else runeSize = 3;
  }
  return RUNE_ERROR;
}

/** Java's String.hashCode over the UTF-16 code units of the UTF-8 bytes at
 * ptr (abi.StringHash): a malformed sequence counts as the one U+FFFD Java's
 * decoder replaces it with (javaStep). */
export function javaStringHash(ptr: usize, len: i32): i32 {
  let h: i32 = 0;
  for (let i = 0; i < len; i += runeSize) {
    let r = javaStep(ptr + <usize>i, len - i);
    if (r >= 0x10000) {
      r -= 0x10000;
      h = 31 * h + <i32>(0xd800 + (r >> 10));
      h = 31 * h + <i32>(0xdc00 + (r & 0x3ff));
    } else {
      h = 31 * h + <i32>r;
    }
  }
  return h;
}

/** The outcome of keyHash: the hash, or why the key has none. */
export class KeyHash {
  hash: i32 = 0;
  why: string = "";
}

const keyItems = new Iter();

/** abi.KeyHash: Java's hashCode of a key (string, int, float, bool, or a
 * non-empty array of them). False, with out.why, when it has none. */
export function keyHash(key: Value, out: KeyHash): bool {
  const p = key.ptr;
  switch (key.type) {
    case Type.Str: out.hash = javaStringHash(key.strPtr, key.strLen); return true;
    case Type.Int: {
      // Integer.hashCode, or Long.hashCode past 32 bits
      if (load<u8>(p) == 0xcf && load<u8>(p + 1) >= 0x80) { out.why = "integer out of range"; return false; }
      const v = key.asInt();
      out.hash = v >= i32.MIN_VALUE && v <= i32.MAX_VALUE ? <i32>v : <i32>(v ^ (v >>> 32));
      return true;
    }
    case Type.Float: {
      if (load<u8>(p) == 0xca) { // Float.hashCode
        const bits = be32(p + 1);
        out.hash = isNaN(reinterpret<f32>(bits)) ? 0x7fc00000 : <i32>bits;
        return true;
      }
      const bits = isNaN(key.asF64()) ? 0x7ff8000000000000 : be64(p + 1); // Double.hashCode
      out.hash = <i32>(bits ^ (bits >>> 32));
      return true;
    }
    case Type.Bool: out.hash = load<u8>(p) == 0xc3 ? 1231 : 1237; return true;
    case Type.Array: {
      // a composite key, Flink's Tuple: 31 * h + hash(field); no nesting
      const it = keyItems;
      if (!it.reset(key, false) || it.remaining == 0) { out.why = "unexpected msgpack type"; return false; }
      let h: i32 = 0;
      while (it.next()) {
        if (it.value.type == Type.Array) { out.why = "nested composite key"; return false; }
        if (!keyHash(it.value, out)) return false;
        h = 31 * h + out.hash;
      }
      out.hash = h;
      return true;
    }
    case Type.Nil: case Type.Invalid: out.why = "key must not be null"; return false;
  }
  out.why = "a map, binary or ext value is not a key";
  return false;
}
