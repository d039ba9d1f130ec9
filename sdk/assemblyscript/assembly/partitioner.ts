// The ABI exports of a custom partitioner: a plugin re-exports them with
// `export * from "<sdk>/assembly/partitioner"`.
export { sluice_abi_v1, sluice_buffer, sluice_open, sluice_describe, sluice_partition } from "./runtime";
