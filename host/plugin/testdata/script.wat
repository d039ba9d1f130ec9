;; script: a plugin driven by its input, for tests of every host function
;; and failure mode. Each of the count "records" of a batch is a command of
;; eight little-endian i32: op, a1..a5, unused, status. The command runs;
;; its result goes to the exported global "ret" and to memory at 16; a
;; non-zero status is returned at once, else the next command runs. Op 17
;; returns its own result (-6 when open was not called) when not 0.
;;
;;   op 1  emit(a1, a2, a3, a4)            op 9  environ_sizes_get(a1, a2)
;;   op 2  port(a1, a2)                    op 10 fd_prestat_get(a1, a2)
;;   op 3  error(a1, a2)                   op 11 proc_exit(a1)
;;   op 4  state_get(a1, a2, a3, a4, a5)   op 12 emit(port(a1, a2), a3, a4, a5)
;;   op 5  state_put(a1, a2, a3, a4, a5)   op 13 unreachable
;;   op 6  state_del(a1, a2, a3)           op 14 write a1/a2 to stderr a3 times
;;   op 7  random_get(a1, a2)              op 15 loop forever
;;   op 8  clock_time_get(a1, 0, a2)       op 16 grow memory until refused, then
;;   op 17 fail with -6 unless opened            trap (a1 = 0) or set error text
;;   op 18 recurse without end
;;
;; open loops forever when its subtask is 1 and fails with status -6
;; (config error) when it is 2.
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (import "sluice_v1" "port" (func $port (param i32 i32) (result i32)))
  (import "sluice_v1" "error" (func $error (param i32 i32)))
  (import "sluice_v1" "state_get" (func $state_get (param i32 i32 i32 i32 i32) (result i32)))
  (import "sluice_v1" "state_put" (func $state_put (param i32 i32 i32 i32 i32) (result i32)))
  (import "sluice_v1" "state_del" (func $state_del (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock_time_get (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $environ_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $fd_prestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 2)
  (global $ret (export "ret") (mut i32) (i32.const 0))
  (global $opened (export "opened") (mut i32) (i32.const 0))
  (data (i32.const 32) "config error: subtask 2 refuses to open")
  (data (i32.const 96) "out of memory")

  (func (export "sluice_abi_v1"))
  (func (export "_initialize"))

  (func (export "sluice_buffer") (param $n i32) (result i32)
    (local $pages i32)
    (local.set $pages (i32.shr_u (i32.add (local.get $n) (i32.const 131071)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.lt_s (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const 0))
          (then (return (i32.const 0))))))
    (i32.const 65536))

  (func (export "sluice_open") (param $p i32) (param $n i32) (param $sub i32) (param $par i32) (param $max i32) (result i32)
    (if (i32.eq (local.get $sub) (i32.const 1)) (then (loop $spin (br $spin))))
    (if (i32.eq (local.get $sub) (i32.const 2))
      (then (call $error (i32.const 32) (i32.const 39)) (return (i32.const -6))))
    (global.set $opened (i32.const 1))
    (i32.const 0))

  (func $run (param $c i32) (result i32)
    (local $op i32) (local $a1 i32) (local $a2 i32) (local $a3 i32) (local $a4 i32) (local $a5 i32) (local $i i32)
    (local.set $op (i32.load (local.get $c)))
    (local.set $a1 (i32.load offset=4 (local.get $c)))
    (local.set $a2 (i32.load offset=8 (local.get $c)))
    (local.set $a3 (i32.load offset=12 (local.get $c)))
    (local.set $a4 (i32.load offset=16 (local.get $c)))
    (local.set $a5 (i32.load offset=20 (local.get $c)))
    (if (i32.eq (local.get $op) (i32.const 1))
      (then (return (call $emit (local.get $a1) (local.get $a2) (local.get $a3) (local.get $a4)))))
    (if (i32.eq (local.get $op) (i32.const 2))
      (then (return (call $port (local.get $a1) (local.get $a2)))))
    (if (i32.eq (local.get $op) (i32.const 3))
      (then (call $error (local.get $a1) (local.get $a2)) (return (i32.const 0))))
    (if (i32.eq (local.get $op) (i32.const 4))
      (then (return (call $state_get (local.get $a1) (local.get $a2) (local.get $a3) (local.get $a4) (local.get $a5)))))
    (if (i32.eq (local.get $op) (i32.const 5))
      (then (return (call $state_put (local.get $a1) (local.get $a2) (local.get $a3) (local.get $a4) (local.get $a5)))))
    (if (i32.eq (local.get $op) (i32.const 6))
      (then (return (call $state_del (local.get $a1) (local.get $a2) (local.get $a3)))))
    (if (i32.eq (local.get $op) (i32.const 7))
      (then (return (call $random_get (local.get $a1) (local.get $a2)))))
    (if (i32.eq (local.get $op) (i32.const 8))
      (then (return (call $clock_time_get (local.get $a1) (i64.const 0) (local.get $a2)))))
    (if (i32.eq (local.get $op) (i32.const 9))
      (then (return (call $environ_sizes_get (local.get $a1) (local.get $a2)))))
    (if (i32.eq (local.get $op) (i32.const 10))
      (then (return (call $fd_prestat_get (local.get $a1) (local.get $a2)))))
    (if (i32.eq (local.get $op) (i32.const 11))
      (then (call $proc_exit (local.get $a1)) (return (i32.const 0))))
    (if (i32.eq (local.get $op) (i32.const 12))
      (then (return (call $emit (call $port (local.get $a1) (local.get $a2)) (local.get $a3) (local.get $a4) (local.get $a5)))))
    (if (i32.eq (local.get $op) (i32.const 13)) (then unreachable))
    (if (i32.eq (local.get $op) (i32.const 14))
      (then
        ;; iovec at 0: {a1, a2}; bytes written at 8
        (i32.store (i32.const 0) (local.get $a1))
        (i32.store (i32.const 4) (local.get $a2))
        (block $done
          (loop $more
            (br_if $done (i32.ge_u (local.get $i) (local.get $a3)))
            (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 8)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $more)))
        (return (i32.const 0))))
    (if (i32.eq (local.get $op) (i32.const 15)) (then (loop $spin (br $spin))))
    (if (i32.eq (local.get $op) (i32.const 16))
      (then
        (loop $grow (br_if $grow (i32.ge_s (memory.grow (i32.const 1)) (i32.const 0))))
        (if (i32.eqz (local.get $a1)) (then unreachable))
        (call $error (i32.const 96) (i32.const 13))
        (return (i32.const -2))))
    (if (i32.eq (local.get $op) (i32.const 17))
      (then (if (i32.eqz (global.get $opened)) (then (return (i32.const -6)))) (return (i32.const 0))))
    (if (i32.eq (local.get $op) (i32.const 18)) (then (return (call $recurse (i32.const 0)))))
    (i32.const -4))

  (func $recurse (param $n i32) (result i32)
    (i32.add (call $recurse (i32.add (local.get $n) (i32.const 1))) (i32.const 1)))

  (func (export "sluice_process") (param $port i32) (param $p i32) (param $n i32) (param $count i32) (result i32)
    (local $st i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $count)))
        (global.set $ret (call $run (local.get $p)))
        (i32.store (i32.const 16) (global.get $ret))
        (if (i32.and (i32.eq (i32.load (local.get $p)) (i32.const 17)) (i32.ne (global.get $ret) (i32.const 0)))
          (then (return (global.get $ret))))
        (local.set $st (i32.load offset=28 (local.get $p)))
        (if (local.get $st) (then (return (local.get $st))))
        (local.set $p (i32.add (local.get $p) (i32.const 32)))
        (local.set $count (i32.sub (local.get $count) (i32.const 1)))
        (br $next)))
    (i32.const 0)))
