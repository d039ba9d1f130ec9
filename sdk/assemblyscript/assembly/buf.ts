// Buf: a growable byte buffer with msgpack writers in their smallest
// encoding (abi/append.go): integers smallest, floats as float64, strings
// as fixstr/str8/str16/str32 by length. It grows geometrically with
// heap.realloc, so in steady state writing allocates nothing (with
// --runtime stub, memory is never freed: avoid per-record allocations).

export class Buf {
  ptr: usize = 0;
  len: i32 = 0;
  cap: i32 = 0;

  reset(): void {
    this.len = 0;
  }

  /** Appends n bytes and returns where they start. Inline while there is
   * room; only a reallocation is a call. */
  // @ts-ignore: decorator
  @inline grow(n: i32): usize {
    const need = this.len + n;
    if (need > this.cap) this.realloc(need);
    const at = this.ptr + <usize>this.len;
    this.len = need;
    return at;
  }

  private realloc(need: i32): void {
    let cap = this.cap > 0 ? this.cap : 256;
    while (cap < need) cap <<= 1;
    this.ptr = this.ptr == 0 ? heap.alloc(<usize>cap) : heap.realloc(this.ptr, <usize>cap);
    this.cap = cap;
  }

  // @ts-ignore: decorator
  @inline putByte(c: u8): void {
    store<u8>(this.grow(1), c);
  }

  // @ts-ignore: decorator
  @inline putRaw(ptr: usize, n: i32): void {
    if (n > 0) memory.copy(this.grow(n), ptr, <usize>n);
  }

  /** Appends header c then v as n big-endian bytes. */
  private putBE(c: u8, v: u64, n: i32): void {
    const at = this.grow(1 + n);
    store<u8>(at, c);
    for (let i = n; i >= 1; i--) {
      store<u8>(at + <usize>i, <u8>v);
      v >>= 8;
    }
  }

  putNil(): void {
    this.putByte(0xc0);
  }

  putBool(v: bool): void {
    this.putByte(v ? 0xc3 : 0xc2);
  }

  /** A fixint inline, a wider integer through putIntWide. */
  // @ts-ignore: decorator
  @inline putInt(v: i64): void {
    if (v >= -32 && v <= 0x7f) this.putByte(<u8>v);
    else this.putIntWide(v);
  }

  private putIntWide(v: i64): void {
    if (v >= 0 && v <= 0xff) this.putBE(0xcc, <u64>v, 1);
    else if (v >= 0 && v <= 0xffff) this.putBE(0xcd, <u64>v, 2);
    else if (v >= 0 && v <= 0xffffffff) this.putBE(0xce, <u64>v, 4);
    else if (v >= -128 && v <= 127) this.putBE(0xd0, <u64>v, 1);
    else if (v >= -32768 && v <= 32767) this.putBE(0xd1, <u64>v, 2);
    else if (v >= -2147483648 && v <= 2147483647) this.putBE(0xd2, <u64>v, 4);
    else this.putBE(v >= 0 ? 0xcf : 0xd3, <u64>v, 8);
  }

  /** Always a float64. */
  putF64(v: f64): void {
    this.putBE(0xcb, reinterpret<u64>(v), 8);
  }

  private putStrHeader(n: i32): void {
    if (n <= 31) this.putByte(<u8>(0xa0 | n));
    else if (n <= 0xff) this.putBE(0xd9, <u64>n, 1);
    else if (n <= 0xffff) this.putBE(0xda, <u64>n, 2);
    else this.putBE(0xdb, <u64>n, 4);
  }

  /** A string from UTF-8 bytes. */
  putStrBytes(ptr: usize, n: i32): void {
    this.putStrHeader(n);
    this.putRaw(ptr, n);
  }

  /** A string, encoded to UTF-8 in place (no allocation). */
  putStr(s: string): void {
    const n = String.UTF8.byteLength(s);
    this.putStrHeader(n);
    String.UTF8.encodeUnsafe(changetype<usize>(s), s.length, this.grow(n));
  }

  putBin(ptr: usize, n: i32): void {
    if (n <= 0xff) this.putBE(0xc4, <u64>n, 1);
    else if (n <= 0xffff) this.putBE(0xc5, <u64>n, 2);
    else this.putBE(0xc6, <u64>n, 4);
    this.putRaw(ptr, n);
  }

  putArray(n: i32): void {
    if (n <= 15) this.putByte(<u8>(0x90 | n));
    else if (n <= 0xffff) this.putBE(0xdc, <u64>n, 2);
    else this.putBE(0xdd, <u64>n, 4);
  }

  putMap(n: i32): void {
    if (n <= 15) this.putByte(<u8>(0x80 | n));
    else if (n <= 0xffff) this.putBE(0xde, <u64>n, 2);
    else this.putBE(0xdf, <u64>n, 4);
  }
}

/** The size of the smallest map header for n pairs. */
export function mapHeaderSize(n: i32): i32 {
  return n <= 15 ? 1 : n <= 0xffff ? 3 : 5;
}
