;; Post-MVP instructions toolchains emit: SIMD (v128.const, shuffle, lanes,
;; loads and stores with memargs and lanes), bulk memory, reference types,
;; typed select, saturating truncation, sign extension, call_indirect, and
;; extreme constants; each export gives the same result before and after
;; instrumentation.
(module
  (memory (export "memory") 1)
  (data $d "\01\02\03\04\05\06\07\08\09\0a\0b\0c\0d\0e\0f\10")
  (table $t 4 funcref)
  (table $ext 2 externref)
  (elem (table $t) (i32.const 0) func $seven $eight)
  (elem $passive func $seven)
  (type $v (func (result i32)))
  (func $seven (result i32) (i32.const 7))
  (func $eight (result i32) (i32.const 8))

  (func (export "simd") (result i64)
    (local $v v128) (local $i i32) (local $acc i64)
    (v128.store (i32.const 32)
      (i8x16.shuffle 15 14 13 12 11 10 9 8 7 6 5 4 3 2 1 0
        (v128.const i8x16 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
        (v128.const i64x2 0 0)))
    (local.set $v (v128.load offset=32 align=16 (i32.const 0)))
    (local.set $v (i32x4.add (local.get $v) (v128.load32_splat (i32.const 32))))
    (local.set $v (v128.load8_lane 3 (i32.const 40) (local.get $v)))
    (v128.store64_lane 1 (i32.const 64) (local.get $v))
    (local.set $v (f64x2.replace_lane 0 (local.get $v) (f64.const 2.5)))
    (loop $l
      (local.set $acc (i64.add (local.get $acc)
        (i64.extend_i32_u (i8x16.extract_lane_u 3 (local.get $v)))))
      (local.set $v (i8x16.add (local.get $v) (v128.load32_zero (i32.const 32))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 10))))
    (i64.add (local.get $acc)
      (i64.add (i64x2.extract_lane 1 (local.get $v)) (i64.load (i32.const 64)))))

  (func (export "bulk") (result i32)
    (local $i i32) (local $s i32)
    (memory.init $d (i32.const 100) (i32.const 0) (i32.const 16))
    (data.drop $d)
    (memory.fill (i32.const 200) (i32.const 9) (i32.const 8))
    (memory.copy (i32.const 300) (i32.const 100) (i32.const 16))
    (table.init $t $passive (i32.const 2) (i32.const 0) (i32.const 1))
    (elem.drop $passive)
    (table.copy $t $t (i32.const 3) (i32.const 0) (i32.const 1))
    (drop (table.grow $t (ref.null func) (i32.const 1)))
    (table.fill $t (i32.const 4) (ref.func $eight) (i32.const 1))
    (table.set $ext (i32.const 1) (ref.null extern))
    (loop $l
      (local.set $s (i32.add (local.get $s) (i32.load8_u offset=300 (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 16))))
    (i32.add (local.get $s)
      (i32.add (i32.load8_u (i32.const 207))
        (i32.add (call_indirect (type $v) (i32.const 2))
          (i32.add (call_indirect (type $v) (i32.const 3))
            (i32.add (call_indirect (type $v) (i32.const 4))
              (i32.add (table.size $t)
                (i32.add (ref.is_null (table.get $ext (i32.const 1)))
                  (select (result i32) (i32.const 1) (i32.const 2) (memory.size))))))))))

  (func (export "numeric") (result i64)
    (i64.add
      (i64.add
        (i64.extend_i32_s (i32.trunc_sat_f32_s (f32.const 1e10)))
        (i64.trunc_sat_f64_u (f64.const -5)))
      (i64.add
        (i64.add (i64.extend8_s (i64.const 0xff)) (i64.extend32_s (i64.const 0x80000000)))
        (i64.add
          (i64.extend_i32_u (i32.extend16_s (i32.const 0x8000)))
          (i64.add (i64.const -9223372036854775808)
            (i64.extend_i32_s (i32.const -2147483648)))))))
)
