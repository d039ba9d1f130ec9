// A flatMap emitting one edited record per space-separated word of "line".
import { MAIN, Record, Status, emitEdited, flatMap, startEdit } from "../assembly/index";
export * from "../assembly/operator";

function words(r: Record): i32 {
  const line = r.field("line");
  const p = line.strPtr, n = line.strLen;
  let from = 0;
  for (let i = 0; i <= n; i++) {
    if (i < n && load<u8>(p + <usize>i) != 0x20) continue;
    const e = startEdit();
    e.setStrBytes("word", p + <usize>from, i - from).unset("line");
    const st = emitEdited(MAIN, r, e);
    if (st < 0) return st;
    from = i + 1;
  }
  return Status.OK;
}

flatMap("words", words);
