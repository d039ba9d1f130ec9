;; A start function that loops: it runs at instantiation on InitialFuel.
(module
  (global $g (export "g") (mut i32) (i32.const 0))
  (func $init
    (loop $l
      (global.set $g (i32.add (global.get $g) (i32.const 1)))
      (br_if $l (i32.lt_u (global.get $g) (i32.const 100)))))
  (start $init))
