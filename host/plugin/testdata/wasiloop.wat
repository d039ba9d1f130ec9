;; wasiloop: WASI calls whose work is the host's, chosen by the batch's
;; record count (the records themselves are not read):
;;   1: random_get over 8 MiB, 100 times;
;;   2: fd_write to stderr with 1025 empty iovecs, which must fail with
;;      EINVAL (28), as writev past IOV_MAX does: it traps otherwise.
(module
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 200)
  (func (export "sluice_abi_v1"))
  ;; input batches go at 9 MB, past the 8 MiB the calls use
  (func (export "sluice_buffer") (param $n i32) (result i32) (i32.const 9000000))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param $port i32) (param $ptr i32) (param $len i32) (param $count i32) (result i32)
    (local $i i32)
    (if (i32.eq (local.get $count) (i32.const 1))
      (then
        (loop $l
          (drop (call $random_get (i32.const 0) (i32.const 8388608)))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $l (i32.lt_u (local.get $i) (i32.const 100))))))
    (if (i32.eq (local.get $count) (i32.const 2))
      (then
        ;; iovecs at 0 (zeroed memory: each {ptr 0, len 0}), nwritten at 8400000
        (if (i32.ne (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1025) (i32.const 8400000)) (i32.const 28))
          (then unreachable))
        ;; 1024 is allowed
        (if (i32.ne (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1024) (i32.const 8400000)) (i32.const 0))
          (then unreachable))))
    (i32.const 0)))
