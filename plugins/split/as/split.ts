// split (AssemblyScript): a flatMap that turns the string field "line" into
// one record {"word": w} per word, with the input's event time and key.
// Words are separated by ASCII whitespace, lowercased (A-Z) and trimmed of
// ASCII punctuation at both ends; words left empty are skipped. A record
// without a string "line" gives no output.
import { MAIN, Record, Status, begin, end, flatMap } from "../../../sdk/assemblyscript/assembly/index";
export * from "../../../sdk/assemblyscript/assembly/operator";

function isSpace(c: u8): bool { return c == 0x20 || (c >= 0x09 && c <= 0x0d); }

function isPunct(c: u8): bool {
  return (c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e);
}

function split(r: Record): i32 {
  const line = r.field("line");
  if (!line.isStr) return Status.OK;
  const p = line.strPtr, n = line.strLen;
  for (let i = 0; i < n;) {
    while (i < n && isSpace(load<u8>(p + <usize>i))) i++;
    let from = i;
    while (i < n && !isSpace(load<u8>(p + <usize>i))) i++;
    let to = i;
    while (from < to && isPunct(load<u8>(p + <usize>from))) from++;
    while (to > from && isPunct(load<u8>(p + <usize>(to - 1)))) to--;
    if (from == to) continue;
    const b = begin(MAIN, r);
    b.putMap(1);
    b.putStr("word");
    b.putStrBytes(p + <usize>from, to - from);
    for (let at = b.ptr + <usize>(b.len - (to - from)), e = b.ptr + <usize>b.len; at < e; at++) {
      const c = load<u8>(at); // lowercase where it was written
      if (c >= 0x41 && c <= 0x5a) store<u8>(at, c + 0x20);
    }
    const st = end(MAIN);
    if (st < 0) return st;
  }
  return Status.OK;
}

flatMap("split", split);
