;; Multi-value: functions and blocks with several results, a loop with
;; parameters (block types given as type indices: s33 in the binary).
(module
  (type $pair (func (param i32 i32) (result i32 i32)))
  (type $triple (func (param i32 i32 i32) (result i32 i32 i32)))

  ;; fib(n) for n >= 1, with (a, b, k) carried as loop parameters.
  (func (export "fib") (param $n i32) (result i32)
    (local $k i32)
    (i32.const 0) (i32.const 1) (local.get $n)
    (loop $l (type $triple) (param i32 i32 i32) (result i32 i32 i32)
      (local.set $k)
      (block (type $pair) (param i32 i32) (result i32 i32)
        (call $step))
      (local.set $k (i32.sub (local.get $k) (i32.const 1)))
      (local.get $k)
      (br_if $l (i32.gt_s (local.get $k) (i32.const 0))))
    (drop) (drop))

  ;; (a, b) -> (b, a+b)
  (func $step (param $a i32) (param $b i32) (result i32 i32)
    (local.get $b) (i32.add (local.get $a) (local.get $b)))

  (func (export "divmod") (param i32 i32) (result i32 i32)
    (i32.div_u (local.get 0) (local.get 1)) (i32.rem_u (local.get 0) (local.get 1))))
