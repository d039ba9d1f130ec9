// The abort handler. The host may not provide env.abort, so plugins are
// built with --use abort=<sdk>/assembly/abort/sluiceAbort: an assertion or
// a failed allocation sends its text through the `error` import and traps
// (the host then replaces the instance). It must not allocate (allocating
// can abort), so the text goes through static memory, non-ASCII as '?'.

import { hostError } from "./host";

const SIZE = 512;

export function sluiceAbort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  const text = memory.data(SIZE);
  let n = putAscii(text, 0, "abort: ");
  n = putAscii(text, n, message != null ? message : "no message");
  n = putAscii(text, n, " (");
  n = putAscii(text, n, fileName != null ? fileName : "?");
  n = putAscii(text, n, ":");
  n = putDecimal(text, n, line);
  n = putAscii(text, n, ")");
  hostError(text, n);
  unreachable();
}

/** Appends s at text+n; returns the new length. */
function putAscii(text: usize, n: i32, s: string): i32 {
  for (let i = 0, l = s.length; i < l && n < SIZE; i++, n++) {
    const c = s.charCodeAt(i);
    store<u8>(text + <usize>n, c < 0x80 ? <u8>c : 0x3f);
  }
  return n;
}

function putDecimal(text: usize, n: i32, v: u32): i32 {
  let d: u32 = 1;
  while (v / d >= 10) d *= 10;
  for (; d > 0 && n < SIZE; d /= 10, n++) store<u8>(text + <usize>n, <u8>(0x30 + (v / d) % 10));
  return n;
}
