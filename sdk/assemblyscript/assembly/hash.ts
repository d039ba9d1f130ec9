// Java's String.hashCode, the hash Flink partitions string keys by.

/** Java's String.hashCode over the UTF-16 code units of the UTF-8 bytes at
 * ptr (abi.StringHash): invalid bytes count as U+FFFD, one per byte, as
 * Go's utf8.DecodeRune reads them. */
export function javaStringHash(ptr: usize, len: i32): i32 {
  let h: i32 = 0;
  let i = 0;
  while (i < len) {
    const c = <u32>load<u8>(ptr + <usize>i);
    if (c < 0x80) {
      h = 31 * h + <i32>c;
      i++;
      continue;
    }
    const n: i32 = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    const lo: u32 = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    const hi: u32 = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    let r: u32 = 0xfffd, size = 1;
    if (n > 0 && i + n <= len) {
      const p = ptr + <usize>i;
      const b1 = <u32>load<u8>(p + 1);
      let ok = b1 >= lo && b1 <= hi;
      for (let k = 2; k < n && ok; k++) {
        const b = <u32>load<u8>(p + <usize>k);
        ok = b >= 0x80 && b <= 0xbf;
      }
      if (ok) {
        size = n;
        if (n == 2) r = (c & 0x1f) << 6 | (b1 & 0x3f);
        else if (n == 3) r = (c & 0x0f) << 12 | (b1 & 0x3f) << 6 | (<u32>load<u8>(p + 2) & 0x3f);
        else r = (c & 0x07) << 18 | (b1 & 0x3f) << 12 | (<u32>load<u8>(p + 2) & 0x3f) << 6 | (<u32>load<u8>(p + 3) & 0x3f);
      }
    }
    i += size;
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
