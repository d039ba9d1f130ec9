;; startloop: a plugin whose start function never ends. A start function
;; runs during instantiation on a fixed budget (StartFuel), not the call's
;; whole one: its instantiation must fail within a fraction of a second.
(module
  (memory (export "memory") 2)
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32) (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32) (i32.const 0))
  (func $spin (loop $l (br $l)))
  (start $spin))
