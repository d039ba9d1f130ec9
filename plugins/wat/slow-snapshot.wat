;; slow-snapshot.wat: a test plugin for checkpoint timeouts (issue 25). A
;; map operator that passes every batch on unchanged (no checks: it is for
;; tests of the host) and keeps operator state through sluice_snapshot /
;; sluice_restore. The first snapshot of each instance takes 500 ms on
;; the clock (WASI's clock_time_get, monotonic), so a checkpoint with a
;; shorter timeout expires at it; later snapshots are immediate.
;;
;; Build: wat2wasm slow-snapshot.wat -o slow-snapshot.wasm

(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock (param i32 i64 i32) (result i32)))
  (memory (export "memory") 1)

  (global $INPUT i32 (i32.const 1024))
  (global $snapshots (mut i32) (i32.const 0))

  ;; offset 0: the one state element, msgpack fixint 0; offset 8: the clock
  (data (i32.const 0) "\00")
  ;; {"kind": "map", "sdk": "wat", "name": "slow-snapshot", "outputs": [], "keyed": false}
  (data (i32.const 448)
    "\85"
    "\a4kind" "\a3map"
    "\a3sdk" "\a3wat"
    "\a4name" "\adslow-snapshot"
    "\a7outputs" "\90"
    "\a5keyed" "\c2")

  (func (export "sluice_abi_v1"))

  (func (export "sluice_buffer") (param $size i32) (result i32)
    (local $pages i32)
    (local.set $pages (i32.wrap_i64 (i64.shr_u
      (i64.add (i64.add (i64.extend_i32_u (global.get $INPUT)) (i64.extend_i32_u (local.get $size)))
               (i64.const 65535))
      (i64.const 16))))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.eq (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const -1))
          (then (return (i32.const 0))))))
    (global.get $INPUT))

  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32)
    (i32.const 0))

  (func (export "sluice_process") (param $port i32) (param $ptr i32) (param $len i32) (param $count i32) (result i32)
    (if (i32.eqz (local.get $len)) (then (return (i32.const 0))))
    (call $emit (i32.const 0) (local.get $ptr) (local.get $len) (local.get $count)))

  (func (export "sluice_close") (result i32)
    (i32.const 0))

  (func (export "sluice_describe") (result i32)
    (call $emit (i32.const 0) (i32.const 448) (i32.const 53) (i32.const 1)))

  ;; now: the monotonic clock in ns
  (func $now (result i64)
    (drop (call $clock (i32.const 1) (i64.const 1) (i32.const 8)))
    (i64.load (i32.const 8)))

  ;; snapshot: the instance's first one waits 500 ms
  (func (export "sluice_snapshot") (result i32)
    (local $until i64)
    (if (i32.eqz (global.get $snapshots))
      (then
        (local.set $until (i64.add (call $now) (i64.const 500000000)))
        (block $done
          (loop $spin
            (br_if $done (i64.ge_u (call $now) (local.get $until)))
            (br $spin)))))
    (global.set $snapshots (i32.add (global.get $snapshots) (i32.const 1)))
    (call $emit (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 1)))

  (func (export "sluice_restore") (param i32 i32) (result i32)
    (i32.const 0))
)
