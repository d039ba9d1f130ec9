;; Bulk memory and table instructions, charged by size at run time.
(module
  (memory 2 4)
  (table $t 1000 2000 funcref)

  ;; Region {i32.const, i32.const, local.get, memory.fill, end}: 4 + 32
  ;; (memory.fill weighs 32); at run time n>>3 more.
  (func (export "fill") (param $n i32)
    (memory.fill (i32.const 0) (i32.const 7) (local.get $n)))

  ;; Region {i32.const, ref.null, local.get, table.fill, end}: 4 + 32; at
  ;; run time n<<6 more.
  (func (export "tfill") (param $n i32)
    (table.fill $t (i32.const 0) (ref.null func) (local.get $n)))

  ;; Region {local.get, memory.grow, end}: 2 + 128.
  (func (export "grow") (param $n i32) (result i32)
    (memory.grow (local.get $n)))

  ;; A runaway that does its work in memory.fill: 64 KiB per iteration.
  (func (export "fillspin")
    (loop $l
      (memory.fill (i32.const 0) (i32.const 1) (i32.const 65536))
      (br $l)))

  ;; Parameters of two types and locals around a bulk instruction: the
  ;; scratch local must come after all of them.
  (func (export "params") (param $a i64) (param $n i32) (result i64)
    (local $x f64) (local $y i32)
    (local.set $y (i32.const 40))
    (local.set $x (f64.const 1.5))
    (memory.copy (i32.const 1000) (i32.const 0) (local.get $n))
    (i64.add (local.get $a)
      (i64.add (i64.extend_i32_u (i32.add (local.get $n) (local.get $y)))
        (i64.trunc_f64_s (local.get $x)))))
)
