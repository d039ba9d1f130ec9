;; forger: a map that passes its records on and writes to stdout and
;; stderr what would drive a terminal: clear the screen, home the cursor,
;; a NUL, then a forged host line ending in a carriage return.
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  ;; the iovec at 128: 33 bytes at 512
  (data (i32.const 128) "\00\02\00\00\21\00\00\00")
  (data (i32.const 512) "\1b[2J\1b[H\00job finished: 0 records\r\n")
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32)
    (if (i32.gt_u (local.get $n) (i32.const 65536)) (then (return (i32.const 0))))
    (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param $port i32) (param $p i32) (param $n i32) (param $count i32) (result i32)
    (drop (call $fd_write (i32.const 1) (i32.const 128) (i32.const 1) (i32.const 136)))
    (drop (call $fd_write (i32.const 2) (i32.const 128) (i32.const 1) (i32.const 136)))
    (call $emit (i32.const 0) (local.get $p) (local.get $n) (local.get $count)))
  (func (export "sluice_close") (result i32) (i32.const 0)))
