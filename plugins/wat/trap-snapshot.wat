;; trap-snapshot.wat: a test plugin for checkpoint failures (issue 25). A
;; map operator that passes every batch on unchanged (no checks: it is for
;; tests of the host, see identity.wat for one that checks its input) and
;; keeps operator state through sluice_snapshot / sluice_restore. Its
;; second snapshot traps (`unreachable`) unless the instance was restored
;; from a checkpoint first: a job checkpointing through it completes its
;; first checkpoint, fails at the second, and after a restart from the
;; first runs to the end.
;;
;; Build: wat2wasm trap-snapshot.wat -o trap-snapshot.wasm

(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)

  (global $INPUT i32 (i32.const 1024))
  (global $snapshots (mut i32) (i32.const 0)) ;; snapshots taken by this instance
  (global $restored (mut i32) (i32.const 0))  ;; 1 once sluice_restore was called

  ;; offset 0: the one state element, msgpack fixint 0
  (data (i32.const 0) "\00")
  ;; the describe map (53 bytes):
  ;; {"kind": "map", "sdk": "wat", "name": "trap-snapshot", "outputs": [], "keyed": false}
  (data (i32.const 448)
    "\85"
    "\a4kind" "\a3map"
    "\a3sdk" "\a3wat"
    "\a4name" "\adtrap-snapshot"
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

  ;; snapshot: the second one of an instance never restored traps
  (func (export "sluice_snapshot") (result i32)
    (global.set $snapshots (i32.add (global.get $snapshots) (i32.const 1)))
    (if (i32.and (i32.eqz (global.get $restored)) (i32.eq (global.get $snapshots) (i32.const 2)))
      (then unreachable))
    (call $emit (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 1)))

  (func (export "sluice_restore") (param i32 i32) (result i32)
    (global.set $restored (i32.const 1))
    (i32.const 0))
)
