;; wasiloop: WASI calls whose work is the host's, chosen by the batch's
;; record count (the records themselves are not read):
;;   1: random_get over 8 MiB, 100 times;
;;   2: fd_write to stderr with 1025 empty iovecs, which must fail with
;;      EINVAL (28), as writev past IOV_MAX does: it traps otherwise;
;;   3: poll_oneoff with one relative clock subscription of 3 s (a sleep),
;;      then a loop whose header is a metering site;
;;   4: 30 sleeps of 100 ms, one poll_oneoff each;
;;   5: poll_oneoff with two relative clock subscriptions of 3 s, then a
;;      loop;
;;   6: poll_oneoff with one relative clock subscription of 3 s, then a
;;      return: no metering site after the sleep.
(module
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
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
    (if (i32.eq (local.get $count) (i32.const 3))
      (then
        ;; the subscription at 8401000: userdata 7, tag 0 (clock), clock id
        ;; 1 (monotonic) at +16, timeout 3e9 ns at +24, flags 0 at +40
        (i64.store (i32.const 8401000) (i64.const 7))
        (i32.store8 (i32.const 8401008) (i32.const 0))
        (i32.store (i32.const 8401016) (i32.const 1))
        (i64.store (i32.const 8401024) (i64.const 3000000000))
        (i32.store16 (i32.const 8401040) (i32.const 0))
        (if (i32.ne (call $poll_oneoff (i32.const 8401000) (i32.const 8402000) (i32.const 1) (i32.const 8403000)) (i32.const 0))
          (then unreachable))
        ;; one event for userdata 7
        (if (i64.ne (i64.load (i32.const 8402000)) (i64.const 7))
          (then unreachable))
        (local.set $i (i32.const 0))
        (loop $l
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $l (i32.lt_u (local.get $i) (i32.const 10))))))
    (if (i32.eq (local.get $count) (i32.const 4))
      (then
        (i64.store (i32.const 8401000) (i64.const 7))
        (i32.store8 (i32.const 8401008) (i32.const 0))
        (i32.store (i32.const 8401016) (i32.const 1))
        (i64.store (i32.const 8401024) (i64.const 100000000))
        (i32.store16 (i32.const 8401040) (i32.const 0))
        (local.set $i (i32.const 0))
        (loop $l
          (drop (call $poll_oneoff (i32.const 8401000) (i32.const 8402000) (i32.const 1) (i32.const 8403000)))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $l (i32.lt_u (local.get $i) (i32.const 30))))))
    (if (i32.eq (local.get $count) (i32.const 5))
      (then
        ;; two subscriptions of 48 bytes at 8401000 and 8401048
        (i64.store (i32.const 8401000) (i64.const 7))
        (i32.store8 (i32.const 8401008) (i32.const 0))
        (i32.store (i32.const 8401016) (i32.const 1))
        (i64.store (i32.const 8401024) (i64.const 3000000000))
        (i32.store16 (i32.const 8401040) (i32.const 0))
        (i64.store (i32.const 8401048) (i64.const 8))
        (i32.store8 (i32.const 8401056) (i32.const 0))
        (i32.store (i32.const 8401064) (i32.const 1))
        (i64.store (i32.const 8401072) (i64.const 3000000000))
        (i32.store16 (i32.const 8401088) (i32.const 0))
        (if (i32.ne (call $poll_oneoff (i32.const 8401000) (i32.const 8402000) (i32.const 2) (i32.const 8403000)) (i32.const 0))
          (then unreachable))
        (local.set $i (i32.const 0))
        (loop $l
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $l (i32.lt_u (local.get $i) (i32.const 10))))))
    (if (i32.eq (local.get $count) (i32.const 6))
      (then
        (i64.store (i32.const 8401000) (i64.const 7))
        (i32.store8 (i32.const 8401008) (i32.const 0))
        (i32.store (i32.const 8401016) (i32.const 1))
        (i64.store (i32.const 8401024) (i64.const 3000000000))
        (i32.store16 (i32.const 8401040) (i32.const 0))
        (return (call $poll_oneoff (i32.const 8401000) (i32.const 8402000) (i32.const 1) (i32.const 8403000)))))
    (i32.const 0)))
