// split (AssemblyScript): a flatMap that splits the field "line" into
// words and emits one record {"word": w} per word, lowercased, with
// punctuation trimmed from both ends ("Don't!" gives "don't"), exactly as
// the Go plugin (plugins/split/main.go): words are separated by Unicode
// white space, text is read as Go reads UTF-8 and lowercased with Go's
// tables. Each word carries the line's event time and no key (as
// sdk.NewRecord). A record without a line emits nothing.
import {
  Buf, MAIN, Record, Status, Type, begin, decodeLastRune, decodeRune, end, flatMap,
  isPunct, isSpace, putRune, runeSize, toLower,
} from "../../../sdk/assemblyscript/assembly/index";
export * from "../../../sdk/assemblyscript/assembly/operator";

const word = new Buf(); // the lowercased word being built: reused

function split(r: Record): i32 {
  const line = r.field("line");
  let p: usize, n: i32;
  if (line.isStr) { p = line.strPtr; n = line.strLen; }
  else if (line.type == Type.Bin) { p = line.binPtr; n = line.binLen; }
  else return Status.OK;
  while (n > 0) {
    // the next field: skip white space, take the run of other runes
    let i = 0;
    while (i < n && isSpace(decodeRune(p + <usize>i, n - i))) i += runeSize;
    let j = i;
    while (j < n && !isSpace(decodeRune(p + <usize>j, n - j))) j += runeSize;
    let w = p + <usize>i, wn = j - i;
    p += <usize>j;
    n -= j;
    // trim punctuation from both ends, then lowercase
    while (wn > 0 && isPunct(decodeRune(w, wn))) { w += <usize>runeSize; wn -= runeSize; }
    while (wn > 0 && isPunct(decodeLastRune(w, wn))) wn -= runeSize;
    if (wn == 0) continue;
    word.reset();
    for (let k = 0; k < wn; k += runeSize) putRune(word, toLower(decodeRune(w + <usize>k, wn - k)));
    const b = begin(MAIN, r); // the line's event time, no key
    b.putMap(1);
    b.putStr("word");
    b.putStrBytes(word.ptr, word.len);
    const st = end(MAIN);
    if (st < 0) return st;
  }
  return Status.OK;
}

flatMap("split", split);
