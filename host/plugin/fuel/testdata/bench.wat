;; Loop-heavy workloads for the benchmarks.
(module
  (memory (export "memory") 2)

  ;; sum of the n bytes at address 0: one loop iteration per byte.
  (func (export "sum") (param $n i32) (result i32)
    (local $i i32) (local $s i32)
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $s (i32.add (local.get $s) (i32.load8_u (local.get $i))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (local.get $s))

  ;; n*n iterations of a tight inner loop.
  (func (export "nested") (param $n i32) (result i32)
    (local $i i32) (local $j i32) (local $s i32)
    (block $do
      (loop $lo
        (br_if $do (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $j (i32.const 0))
        (block $di
          (loop $li
            (br_if $di (i32.ge_u (local.get $j) (local.get $n)))
            (local.set $s (i32.add (local.get $s) (i32.xor (i32.mul (local.get $i) (local.get $j)) (local.get $s))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $li)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $lo)))
    (local.get $s))
)
