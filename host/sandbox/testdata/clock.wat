;; clock: for each input record, emits {"t": wall clock ns, "m": monotonic
;; clock ns, "r": 8 random bytes as an int64}, read through WASI.
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock_time_get (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (memory (export "memory") 2)
  ;; the record: [nil, nil, {"t": int64, "m": int64, "r": int64}]
  (data (i32.const 256) "\93\c0\c0\83\a1t\d3\00\00\00\00\00\00\00\00\a1m\d3\00\00\00\00\00\00\00\00\a1r\d3\00\00\00\00\00\00\00\00")

  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32)
    (local $pages i32)
    (local.set $pages (i32.shr_u (i32.add (local.get $n) (i32.const 131071)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.lt_s (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const 0))
          (then (return (i32.const 0))))))
    (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))

  ;; be64 stores v big-endian at p.
  (func $be64 (param $p i32) (param $v i64)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (i32.const 8)))
        (i64.store8 (i32.add (local.get $p) (i32.sub (i32.const 7) (local.get $i))) (local.get $v))
        (local.set $v (i64.shr_u (local.get $v) (i64.const 8)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next))))

  (func (export "sluice_process") (param $port i32) (param $p i32) (param $n i32) (param $count i32) (result i32)
    (local $st i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $count)))
        (drop (call $clock_time_get (i32.const 0) (i64.const 1) (i32.const 128)))
        (call $be64 (i32.const 263) (i64.load (i32.const 128)))
        (drop (call $clock_time_get (i32.const 1) (i64.const 1) (i32.const 128)))
        (call $be64 (i32.const 274) (i64.load (i32.const 128)))
        (drop (call $random_get (i32.const 128) (i32.const 8)))
        (call $be64 (i32.const 285) (i64.load (i32.const 128)))
        (local.set $st (call $emit (i32.const 0) (i32.const 256) (i32.const 37) (i32.const 1)))
        (if (local.get $st) (then (return (local.get $st))))
        (local.set $count (i32.sub (local.get $count) (i32.const 1)))
        (br $next)))
    (i32.const 0)))
