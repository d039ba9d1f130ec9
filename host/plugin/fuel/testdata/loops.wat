;; Loops and calls whose fuel is checked exactly (CostRegion counts below).
(module $loops
  ;; An infinite loop. Regions: function {loop, end} = 2; loop {br, end} = 2.
  (func (export "spin")
    (loop $l (br $l)))

  ;; Counts to n. Regions: function {block, loop, end(block), local.get,
  ;; end} = 5; loop {local.get, local.get, i32.ge_u, br_if, local.get,
  ;; i32.const, i32.add, local.set, br, end} = 10. The header runs n+1
  ;; times: fuel = 5 + 10(n+1).
  (func (export "count") (param $n i32) (result i32)
    (local $i i32)
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (local.get $i))

  ;; n*n iterations of an inner loop. Regions: function {i32.const 0,
  ;; local.set, block, loop, end(block), local.get, end} = 7; outer loop
  ;; {local.get, local.get, i32.ge_u, br_if, i32.const, local.set, block,
  ;; loop, end(block), local.get, i32.const, i32.add, local.set, br,
  ;; end(loop)} = 15; inner loop {local.get, local.get, i32.ge_u, br_if,
  ;; local.get, i32.const, i32.add, local.set, local.get, i32.const,
  ;; i32.add, local.set, br, end} = 14. Fuel = 7 + 15(n+1) + 14 n(n+1).
  (func (export "nested") (param $n i32) (result i32)
    (local $i i32) (local $j i32) (local $s i32)
    (local.set $s (i32.const 0))
    (block $do
      (loop $lo
        (br_if $do (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $j (i32.const 0))
        (block $di
          (loop $li
            (br_if $di (i32.ge_u (local.get $j) (local.get $n)))
            (local.set $s (i32.add (local.get $s) (i32.const 1)))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $li)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $lo)))
    (local.get $s))

  ;; sum(0..n) by recursion, no loop. Region: {local.get, i32.eqz, if,
  ;; i32.const, else, local.get, local.get, i32.const, i32.sub, call,
  ;; i32.add, end(if), end} = 13 per call; n+1 calls: fuel = 13(n+1).
  (func $rec (export "rec") (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (i32.add (local.get $n) (call $rec (i32.sub (local.get $n) (i32.const 1)))))))

  ;; Unbounded recursion: fuel must stop it before the stack does when the
  ;; budget is small. Region: {local.get, i32.const, i32.add, call, end} = 5.
  (func $deep (export "deep") (param $n i32) (result i32)
    (call $deep (i32.add (local.get $n) (i32.const 1))))
)
