;; startrandom: a start function, which runs during instantiation, before
;; the host has a call to bound it, calls random_get over 8 MiB 300 times:
;; the host bills those calls against StartFuel (2^30 units, ~256 such
;; calls), so it traps. See startsleep.wat.
(module
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (memory (export "memory") 200)
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32) (i32.const 9000000))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32) (i32.const 0))
  (func $start
    (local $i i32)
    (loop $l
      (drop (call $random_get (i32.const 0) (i32.const 8388608)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 300)))))
  (start $start))
