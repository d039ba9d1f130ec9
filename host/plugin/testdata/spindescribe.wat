;; spindescribe: an operator whose sluice_describe never returns; for the
;; check that an upload stops it at the upload's own short call-timeout.
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32) (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_describe") (result i32) (loop $spin (br $spin)) (i32.const 0)))
