// The ABI exports of an operator (map, filter, flatMap, process): a plugin
// re-exports them with `export * from "<sdk>/assembly/operator"`.
export { sluice_abi_v1, sluice_buffer, sluice_open, sluice_describe, sluice_process, sluice_close, sluice_snapshot, sluice_restore, sluice_on_timer } from "./runtime";
