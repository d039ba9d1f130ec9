;; initstate: _initialize reads keyed state, which the host refuses on an
;; unkeyed operator (a WASI reactor whose constructors touch state). The
;; refused call fails the instantiation; the instance must be closed, not
;; left open (TestRefusedInitializeClosesTheInstance).
(module
  (import "sluice_v1" "state_get" (func $state_get (param i32 i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (data (i32.const 2048) "\a1k")
  (func (export "_initialize")
    (drop (call $state_get (i32.const 0) (i32.const 2048) (i32.const 2) (i32.const 3072) (i32.const 64))))
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param i32) (result i32) (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32) (i32.const 0)))
