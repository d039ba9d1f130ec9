;; abiv2: a plugin built for a future ABI v2: its marker and import module
;; say v2.
(module
  (import "sluice_v2" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (func (export "sluice_abi_v2"))
  (func (export "sluice_buffer") (param $n i32) (result i32) (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32) (i32.const 0)))
