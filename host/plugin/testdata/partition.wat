;; partition: a custom partitioner sending record i to channel i mod n. For
;; n = 7 it emits one index too few; for n = 99 it never returns.
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32) (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_partition") (param $p i32) (param $len i32) (param $count i32) (param $n i32) (result i32)
    (local $i i32)
    (if (i32.eq (local.get $n) (i32.const 99)) (then (loop $spin (br $spin))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (i32.store (i32.shl (local.get $i) (i32.const 2)) (i32.rem_u (local.get $i) (local.get $n)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (if (i32.eq (local.get $n) (i32.const 7)) (then (local.set $count (i32.sub (local.get $count) (i32.const 1)))))
    (call $emit (i32.const 0) (i32.const 0) (i32.shl (local.get $count) (i32.const 2)) (local.get $count))))
