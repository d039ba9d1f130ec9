;; badsig: sluice_buffer takes an i64 and sluice_process has two parameters.
(module
  (memory (export "memory") 2)
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param i64) (result i32) (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param i32 i32) (result i32) (i32.const 0)))
