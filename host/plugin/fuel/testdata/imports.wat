;; Two imported globals come first in the global index space (0, 1), then
;; two defined ones (2, 3): the counter must take index 4.
(module
  (import "env" "twice" (func $twice (param i32) (result i32)))
  (import "env" "g0" (global $g0 i32))
  (import "env" "g1" (global $g1 (mut i64)))
  (global $d0 (mut i32) (global.get $g0))
  (global $d1 (mut i64) (i64.const 5))
  (func (export "bump") (param $n i32) (result i64)
    (local $i i32)
    (loop $l
      (global.set $d0 (i32.add (global.get $d0) (call $twice (i32.const 1))))
      (global.set $g1 (i64.add (global.get $g1) (i64.const 1)))
      (global.set $d1 (i64.add (global.get $d1) (i64.extend_i32_u (global.get $d0))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (i64.add (global.get $d1) (global.get $g1)))
  (func (export "d0") (result i32) (global.get $d0)))
