;; wasi: for each input record, tries the WASI calls that reach outside
;; the sandbox and emits what they returned:
;;   {"f": errno of fd_prestat_get(3) (a preopened folder),
;;    "o": errno of path_open(3, "etc/passwd"),
;;    "w": errno of fd_write(3) (a file descriptor past stdio),
;;    "s": errno of sock_accept(3) (a preopened socket),
;;    "e": number of environment variables, "a": number of arguments}
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_prestat_get" (func $fd_prestat_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sock_accept" (func $sock_accept (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $environ_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (memory (export "memory") 2)
  (data (i32.const 64) "etc/passwd")
  ;; the record: [nil, nil, {"f": _, "o": _, "w": _, "s": _, "e": _, "a": _}]
  (data (i32.const 256) "\93\c0\c0\86\a1f\00\a1o\00\a1w\00\a1s\00\a1e\00\a1a\00")

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

  (func (export "sluice_process") (param $port i32) (param $p i32) (param $n i32) (param $count i32) (result i32)
    (local $st i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $count)))
        (i32.store8 (i32.const 262) (call $fd_prestat_get (i32.const 3) (i32.const 128)))
        (i32.store8 (i32.const 265)
          (call $path_open (i32.const 3) (i32.const 0) (i32.const 64) (i32.const 10) (i32.const 0)
                           (i64.const -1) (i64.const -1) (i32.const 0) (i32.const 128)))
        ;; iovec at 160: {64, 10}
        (i32.store (i32.const 160) (i32.const 64))
        (i32.store (i32.const 164) (i32.const 10))
        (i32.store8 (i32.const 268) (call $fd_write (i32.const 3) (i32.const 160) (i32.const 1) (i32.const 128)))
        (i32.store8 (i32.const 271) (call $sock_accept (i32.const 3) (i32.const 0) (i32.const 128)))
        (drop (call $environ_sizes_get (i32.const 128) (i32.const 132)))
        (i32.store8 (i32.const 274) (i32.load (i32.const 128)))
        (drop (call $args_sizes_get (i32.const 128) (i32.const 132)))
        (i32.store8 (i32.const 277) (i32.load (i32.const 128)))
        (local.set $st (call $emit (i32.const 0) (i32.const 256) (i32.const 22) (i32.const 1)))
        (if (local.get $st) (then (return (local.get $st))))
        (local.set $count (i32.sub (local.get $count) (i32.const 1)))
        (br $next)))
    (i32.const 0)))
