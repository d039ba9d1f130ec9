;; unknown_import: imports the host does not provide, and emit with the
;; wrong signature.
(module
  (import "env" "abort" (func (param i32 i32 i32 i32)))
  (import "sluice_v1" "sleep" (func (param i32)))
  (import "sluice_v1" "emit" (func (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_listen" (func (param i32) (result i32)))
  (memory (export "memory") 2)
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32) (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32) (i32.const 0)))
