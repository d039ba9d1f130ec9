;; hiddenmem: a plugin that does not export its memory as "memory" (ABI
;; v1 requires it) but exports a table under that name.
(module
  (memory 2)
  (table (export "memory") 1 funcref)
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32) (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32) (i32.const 0)))
