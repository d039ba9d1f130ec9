;; Functions with loops keep the counter in a local: these check it is
;; stored back at every way out (return, branches to the function's label,
;; br_table, calls) and reloaded after calls. Region counts below.
(module
  (import "host" "charge" (func $charge (param i64)))
  (memory 1)

  ;; {local.get, i32.const, i32.add, end} = 4
  (func $leaf (param $x i32) (result i32) (i32.add (local.get $x) (i32.const 1)))

  ;; function {block, loop, end(block), local.get, end} = 5; loop
  ;; {local.get ×2, i32.ge_u, br_if, local.get, call, local.set, local.get,
  ;; i32.const, i32.add, local.set, br, end} = 13: 5 + 13(n+1) + 4n.
  (func (export "calls") (param $n i32) (result i32)
    (local $i i32) (local $s i32)
    (block $done
      (loop $l
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $s (call $leaf (local.get $s)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $l)))
    (local.get $s))

  ;; function {loop, unreachable, end} = 3; loop {local.get ×2, i32.eq, if,
  ;; local.get, return, end(if), local.get, i32.const, i32.add, local.set,
  ;; br, end} = 13: 3 + 13(n+1).
  (func (export "early") (param $n i32) (result i32)
    (local $i i32)
    (loop $l
      (if (i32.eq (local.get $i) (local.get $n)) (then (return (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l))
    (unreachable))

  ;; br_if to the function's label. function {loop, unreachable, end} = 3;
  ;; loop {local.get ×3, i32.eq, br_if, drop, local.get, i32.const,
  ;; i32.add, local.set, br, end} = 12: 3 + 12(n+1).
  (func (export "brout") (param $n i32) (result i32)
    (local $i i32)
    loop $l
      local.get $i
      local.get $i
      local.get $n
      i32.eq
      br_if 1
      drop
      local.get $i
      i32.const 1
      i32.add
      local.set $i
      br $l
    end
    unreachable)

  ;; br_table to the function's label. function {loop, end} = 2; loop
  ;; {local.get, i32.const, i32.add, local.set, local.get ×2, i32.ge_u,
  ;; br_table, end} = 9: 2 + 9n for n >= 1.
  (func (export "tableout") (param $n i32)
    (local $i i32)
    loop $l
      local.get $i
      i32.const 1
      i32.add
      local.set $i
      local.get $i
      local.get $n
      i32.ge_u
      br_table $l 1
    end)

  ;; A host function that charges 1000 per call. function {loop, end} = 2;
  ;; loop {i64.const, call, local.get, i32.const, i32.add, local.set,
  ;; local.get ×2, i32.lt_u, br_if, end} = 11: 2 + 1011n for n >= 1.
  (func (export "hostcharge") (param $n i32)
    (local $i i32)
    (loop $l
      (call $charge (i64.const 1000))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n)))))

  ;; Traps out of bounds on its second iteration: not a fuel trap.
  (func (export "oob")
    (local $i i32)
    (loop $l
      (drop (i32.load (i32.mul (local.get $i) (i32.const 65536))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
)
