// A map exercising the Go-compatible text helpers: for the string "s" it
// sets "lower" (rune by rune), the white space and punctuation rune counts,
// the last rune; for "k" the key hash ("kh") or why there is none ("why").
import {
  Buf, Edit, KeyHash, Record, Status, decodeLastRune, decodeRune, isPunct, isSpace, keyHash, map, putRune,
  runeSize, toLower,
} from "../assembly/index";
export * from "../assembly/operator";

const lower = new Buf();
const hash = new KeyHash();

function text(r: Record, out: Edit): i32 {
  const s = r.field("s");
  if (s.isStr) {
    const p = s.strPtr, n = s.strLen;
    lower.reset();
    let spaces = 0, puncts = 0;
    for (let i = 0; i < n; i += runeSize) {
      const c = decodeRune(p + <usize>i, n - i);
      if (isSpace(c)) spaces++;
      if (isPunct(c)) puncts++;
      putRune(lower, toLower(c));
    }
    out.setStrBytes("lower", lower.ptr, lower.len);
    out.setInt("spaces", spaces);
    out.setInt("puncts", puncts);
    out.setInt("last", decodeLastRune(p, n));
    out.setInt("lastSize", runeSize);
  }
  const k = r.field("k");
  if (k.exists) {
    if (keyHash(k, hash)) out.setInt("kh", hash.hash);
    else out.setStr("why", hash.why);
  }
  return Status.OK;
}

map("text", text);
