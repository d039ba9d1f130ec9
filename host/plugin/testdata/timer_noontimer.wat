;; timer_noontimer: imports timer_register but exports no sluice_on_timer,
;; and imports timer_delete with a wrong signature.
(module
  (import "sluice_v1" "timer_register" (func (param i32 i32 i32 i64) (result i32)))
  (import "sluice_v1" "timer_delete" (func (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32) (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32) (i32.const 0)))
