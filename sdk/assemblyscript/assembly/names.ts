// Field names as msgpack fixstrs, cached by the string's identity.
//
// A lookup or an edit names its field with a string, UTF-16 in memory,
// while records hold UTF-8. Converting the name on every call cost the
// `double` plugin about a quarter of its guest time under wazero
// (RATIONALE.md, "Why does the Rust SDK write edits out of line, and the
// AssemblyScript SDK cache field names?"). Plugins name fields with a few
// literals, so a small table keyed by the string's address keeps each
// name's encoded form: `0xa0 | n` and its n UTF-8 bytes, the very bytes of
// a fixstr key.
//
// The address is a safe key: AssemblyScript strings are immutable, no
// runtime moves objects, and the table holds a reference to every string
// it keeps, so under a collecting runtime no other string can take that
// address while the entry stands.

const SLOTS = 32; // a power of two
const SLOT_SIZE = 32; // the header byte and up to 31 bytes: a fixstr
const ids = memory.data(SLOTS * 4); // the address of the string in each slot; 0: empty
const keys = memory.data(SLOTS * SLOT_SIZE);
const held = new StaticArray<string | null>(SLOTS);

/** The fixstr form of name (its header byte at the address returned, its
 * UTF-8 bytes after it), or 0 when its UTF-8 form takes 32 bytes or more
 * and no fixstr can hold it. Valid until the next call. */
// @ts-ignore: decorator
@inline export function nameKey(name: string): usize {
  const id = changetype<usize>(name);
  const i = ((id >> 4) ^ (id >> 9)) & (SLOTS - 1);
  if (load<u32>(ids + (i << 2)) == <u32>id) return keys + i * SLOT_SIZE;
  return fill(name, i);
}

/** nameKey's miss: encodes name into slot i (WTF-8, as Edit's setters and
 * the lookups always have: a lone surrogate takes 3 bytes). */
function fill(name: string, i: usize): usize {
  const n = String.UTF8.byteLength(name);
  if (n >= SLOT_SIZE) return 0;
  const key = keys + i * SLOT_SIZE;
  store<u8>(key, <u8>(0xa0 | n));
  String.UTF8.encodeUnsafe(changetype<usize>(name), name.length, key + 1);
  unchecked(held[<i32>i] = name);
  store<u32>(ids + (i << 2), <u32>changetype<usize>(name));
  return key;
}

/** Copies n (< 32) bytes from src to dst, by words: no memory.copy, which
 * wazero runs as a call out of the guest. */
// @ts-ignore: decorator
@inline export function copySmall(dst: usize, src: usize, n: usize): void {
  if (n >= 8) {
    for (let i: usize = 0; i + 8 <= n; i += 8) store<u64>(dst + i, load<u64>(src + i));
    store<u64>(dst + n - 8, load<u64>(src + n - 8));
  } else if (n >= 4) {
    store<u32>(dst, load<u32>(src));
    store<u32>(dst + n - 4, load<u32>(src + n - 4));
  } else {
    for (let i: usize = 0; i < n; i++) store<u8>(dst + i, load<u8>(src + i));
  }
}
