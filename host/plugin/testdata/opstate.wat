;; opstate: an operator keeping operator state (abi.ExportSnapshot): a
;; running count of the records it was given, in a global. process emits
;; every batch unchanged and adds its count; snapshot emits the count as one
;; element, a msgpack bin of 8 little-endian bytes; restore adds the count
;; of each element it is given (several after a rescale). For the tests of
;; a failed snapshot, snapshot traps at a count of 13, returns a user error
;; at 7, and at 99 emits five 60000-byte elements (past a small memory limit).
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (import "sluice_v1" "error" (func $error (param i32 i32)))
  (memory (export "memory") 2)
  (global $count (mut i64) (i64.const 0))
  (data (i32.const 512) "no snapshot at seven")
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
  (func (export "sluice_process") (param $port i32) (param $p i32) (param $n i32) (param $c i32) (result i32)
    (global.set $count (i64.add (global.get $count) (i64.extend_i32_u (local.get $c))))
    (call $emit (i32.const 0) (local.get $p) (local.get $n) (local.get $c)))
  (func (export "sluice_snapshot") (result i32)
    (local $i i32)
    (if (i64.eq (global.get $count) (i64.const 13)) (then unreachable))
    (if (i64.eq (global.get $count) (i64.const 7))
      (then
        (call $error (i32.const 512) (i32.const 20))
        (return (i32.const -3))))
    (if (i64.eq (global.get $count) (i64.const 99))
      (then
        ;; bin16 of 60000 zero bytes at 2048, emitted five times
        (i32.store8 (i32.const 2048) (i32.const 0xc5))
        (i32.store8 (i32.const 2049) (i32.const 0xea))
        (i32.store8 (i32.const 2050) (i32.const 0x60))
        (block $done (loop $more
          (br_if $done (i32.eq (local.get $i) (i32.const 5)))
          (if (call $emit (i32.const 0) (i32.const 2048) (i32.const 60003) (i32.const 1))
            (then (return (i32.const -8))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $more)))
        (return (i32.const 0))))
    (i32.store8 (i32.const 1024) (i32.const 0xc4))
    (i32.store8 (i32.const 1025) (i32.const 8))
    (i64.store (i32.const 1026) (global.get $count))
    (call $emit (i32.const 0) (i32.const 1024) (i32.const 10) (i32.const 1)))
  (func (export "sluice_restore") (param $p i32) (param $n i32) (result i32)
    (if (i32.ne (local.get $n) (i32.const 10)) (then (return (i32.const -1))))
    (if (i32.ne (i32.load16_u (local.get $p)) (i32.const 0x08c4)) (then (return (i32.const -1))))
    (global.set $count (i64.add (global.get $count) (i64.load (i32.add (local.get $p) (i32.const 2)))))
    (i32.const 0)))
