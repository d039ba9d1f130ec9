;; statehog: a keyed process plugin that stores 1 MiB of keyed state for
;; every record it is given, each under a key of its own making (the
;; msgpack fixints 0 to 127, in turn), and emits nothing: the state of an
;; operator's subtask grows by 1 MiB a record until the host's
;; state-memory limit refuses a state_put, whose status it returns.
(module
  (import "sluice_v1" "state_put" (func $put (param i32 i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 17)
  (global $n (mut i32) (i32.const 0))
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32)
    (local $pages i32)
    (local.set $pages (i32.shr_u (i32.add (local.get $n) (i32.const 131071)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then (if (i32.lt_s (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const 0))
        (then (return (i32.const 0))))))
    (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param $port i32) (param $ptr i32) (param $len i32) (param $count i32) (result i32)
    (local $i i32) (local $st i32)
    (block $done (loop $each
      (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
      ;; the key: one byte at 0, a fixint; the value: the first MiB of memory
      (i32.store8 (i32.const 0) (i32.and (global.get $n) (i32.const 127)))
      (global.set $n (i32.add (global.get $n) (i32.const 1)))
      (local.set $st (call $put (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 0) (i32.const 1048576)))
      (if (local.get $st) (then (return (local.get $st))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $each)))
    (i32.const 0)))
