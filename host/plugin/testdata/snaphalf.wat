;; snaphalf: exports sluice_snapshot without sluice_restore.
(module
  (memory (export "memory") 1)
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param i32) (result i32) (i32.const 1024))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_snapshot") (result i32) (i32.const 0)))
