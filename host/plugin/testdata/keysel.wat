;; keysel: a key selector whose key for record i is the integer i (< 128).
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32) (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param $port i32) (param $p i32) (param $len i32) (param $count i32) (result i32)
    (local $i i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (i32.store8 (local.get $i) (local.get $i))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (call $emit (i32.const 0) (i32.const 0) (local.get $count) (local.get $count))))
