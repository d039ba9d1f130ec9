// The AssemblyScript SDK for sluice plugins (ABI v1, see abi/doc.go).
//
// A plugin registers one operator at its top level and re-exports the ABI
// functions (operator.ts for map/filter/flatMap/process, partitioner.ts for
// a custom partitioner):
//
//   import { Record, filter } from "<sdk>/assembly/index";
//   export * from "<sdk>/assembly/operator";
//   function valid(r: Record): i32 { return r.int("amount") > 0 ? 1 : 0; }
//   filter("valid", valid);
//
// Build: asc op.ts --runtime stub -O3 --use abort=<sdk>/assembly/abort/sluiceAbort
// With --runtime stub memory is never freed: the SDK's views and buffers
// are reused, keep `new`, string concatenation and asString() out of
// per-record code.

import "./abort"; // the abort handler (see abort.ts) must be compiled in
export { Buf } from "./buf";
export { Iter, MAX_DEPTH, Type, Value, bytesEqual, skip, typeOf, utf8Equals } from "./value";
export { Edit, Record } from "./record";
export { configBool, configFloat, configInt, configStr } from "./config";
export { KeyHash, RUNE_ERROR, decodeLastRune, decodeRune, isPunct, isSpace, javaStringHash, keyHash, putRune, runeSize, toLower } from "./text";
export {
  Context, Kind, MAIN, NO_OUTPUT, Plugin, Status, output,
  filter, map, flatMap, process, reduce, partitioner,
  emit, emitValue, begin, beginWith, end, startEdit, emitEdited,
  stateGet, statePut, stateDel, context, fail,
  listGet, listAdd, listUpdate, wireNext, putWire, mapGet, mapPut, mapDel, mapContains, mapEntries, stateClear,
  EVENT_TIME, PROCESSING_TIME, registerTimer, deleteTimer, currentWatermark, currentProcessingTime,
} from "./runtime";
