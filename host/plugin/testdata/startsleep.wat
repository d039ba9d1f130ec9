;; startsleep: a start function, which runs during instantiation, before
;; the host has a call to bound it, sleeps 3 s (poll_oneoff, one relative
;; clock subscription) and keeps in $slept the milliseconds the monotonic
;; clock saw pass: a plugin granted the clock must not sleep there
;; (nothing could cut the sleep short). See startrandom.wat.
(module
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (memory (export "memory") 200)
  (global $slept (export "slept") (mut i32) (i32.const -1))
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32) (i32.const 9000000))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32) (i32.const 0))
  (func $start
    (local $t0 i64)
    (drop (call $clock (i32.const 1) (i64.const 1) (i32.const 8404000)))
    (local.set $t0 (i64.load (i32.const 8404000)))
    ;; userdata 7, tag 0 (clock), clock id 1 (monotonic), timeout 3e9 ns, flags 0
    (i64.store (i32.const 8401000) (i64.const 7))
    (i32.store8 (i32.const 8401008) (i32.const 0))
    (i32.store (i32.const 8401016) (i32.const 1))
    (i64.store (i32.const 8401024) (i64.const 3000000000))
    (i32.store16 (i32.const 8401040) (i32.const 0))
    (drop (call $poll_oneoff (i32.const 8401000) (i32.const 8402000) (i32.const 1) (i32.const 8403000)))
    (drop (call $clock (i32.const 1) (i64.const 1) (i32.const 8404000)))
    (global.set $slept (i32.wrap_i64 (i64.div_u (i64.sub (i64.load (i32.const 8404000)) (local.get $t0)) (i64.const 1000000)))))
  (start $start))
