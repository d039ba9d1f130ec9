;; filter: keep the records whose value map has an integer "amount" > 0
;; and double it (the benchmark operator of ../shared/design/abi.md). A
;; hand-written msgpack scanner: the envelope must be a fixarray of 3 and
;; the value a fixmap; any other value type is skipped generically.
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (global $int (mut i64) (i64.const 0))
  ;; total size of each msgpack value starting with 0xc0 + i; 0 = variable
  (data (i32.const 0) "\01\00\01\01\00\00\00\00\00\00\05\09\02\03\05\09\02\03\05\09\03\04\06\0a\12\00\00\00\00\00\00\00")

  (func (export "sluice_abi_v1"))

  ;; The input starts at 64 KiB; room for twice the input follows it for
  ;; the output.
  (func (export "sluice_buffer") (param $n i32) (result i32)
    (local $pages i32)
    (if (i32.gt_u (local.get $n) (i32.const 0x3fff0000)) (then (return (i32.const 0))))
    (local.set $pages (i32.shr_u (i32.add (i32.shl (local.get $n) (i32.const 1)) (i32.const 196607)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.lt_s (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const 0))
          (then (return (i32.const 0))))))
    (i32.const 65536))

  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))

  (func $be16 (param $p i32) (result i32)
    (i32.or (i32.shl (i32.load8_u (local.get $p)) (i32.const 8)) (i32.load8_u offset=1 (local.get $p))))
  (func $be32 (param $p i32) (result i32)
    (i32.or (i32.shl (call $be16 (local.get $p)) (i32.const 16)) (call $be16 (i32.add (local.get $p) (i32.const 2)))))
  (func $be64 (param $p i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (call $be32 (local.get $p))) (i64.const 32))
            (i64.extend_i32_u (call $be32 (i32.add (local.get $p) (i32.const 4))))))

  ;; skip returns the offset just past the value at p.
  (func $skip (param $p i32) (result i32)
    (local $c i32) (local $size i32)
    (local.set $c (i32.load8_u (local.get $p)))
    (if (i32.or (i32.le_u (local.get $c) (i32.const 0x7f)) (i32.ge_u (local.get $c) (i32.const 0xe0)))
      (then (return (i32.add (local.get $p) (i32.const 1)))))
    (if (i32.le_u (local.get $c) (i32.const 0x8f))
      (then (return (call $skipn (i32.add (local.get $p) (i32.const 1))
                                 (i32.shl (i32.and (local.get $c) (i32.const 15)) (i32.const 1))))))
    (if (i32.le_u (local.get $c) (i32.const 0x9f))
      (then (return (call $skipn (i32.add (local.get $p) (i32.const 1)) (i32.and (local.get $c) (i32.const 15))))))
    (if (i32.le_u (local.get $c) (i32.const 0xbf))
      (then (return (i32.add (local.get $p) (i32.add (i32.const 1) (i32.and (local.get $c) (i32.const 31)))))))
    (local.set $size (i32.load8_u (i32.sub (local.get $c) (i32.const 0xc0))))
    (if (local.get $size) (then (return (i32.add (local.get $p) (local.get $size)))))
    (if (i32.eq (local.get $c) (i32.const 0xc1)) (then unreachable))
    ;; bin8/str8, bin16/str16, bin32/str32
    (if (i32.or (i32.eq (local.get $c) (i32.const 0xc4)) (i32.eq (local.get $c) (i32.const 0xd9)))
      (then (return (i32.add (local.get $p) (i32.add (i32.const 2) (i32.load8_u offset=1 (local.get $p)))))))
    (if (i32.or (i32.eq (local.get $c) (i32.const 0xc5)) (i32.eq (local.get $c) (i32.const 0xda)))
      (then (return (i32.add (local.get $p) (i32.add (i32.const 3) (call $be16 (i32.add (local.get $p) (i32.const 1))))))))
    (if (i32.or (i32.eq (local.get $c) (i32.const 0xc6)) (i32.eq (local.get $c) (i32.const 0xdb)))
      (then (return (i32.add (local.get $p) (i32.add (i32.const 5) (call $be32 (i32.add (local.get $p) (i32.const 1))))))))
    ;; ext8, ext16, ext32
    (if (i32.eq (local.get $c) (i32.const 0xc7))
      (then (return (i32.add (local.get $p) (i32.add (i32.const 3) (i32.load8_u offset=1 (local.get $p)))))))
    (if (i32.eq (local.get $c) (i32.const 0xc8))
      (then (return (i32.add (local.get $p) (i32.add (i32.const 4) (call $be16 (i32.add (local.get $p) (i32.const 1))))))))
    (if (i32.eq (local.get $c) (i32.const 0xc9))
      (then (return (i32.add (local.get $p) (i32.add (i32.const 6) (call $be32 (i32.add (local.get $p) (i32.const 1))))))))
    ;; array16, array32, map16, map32
    (if (i32.eq (local.get $c) (i32.const 0xdc))
      (then (return (call $skipn (i32.add (local.get $p) (i32.const 3)) (call $be16 (i32.add (local.get $p) (i32.const 1)))))))
    (if (i32.eq (local.get $c) (i32.const 0xdd))
      (then (return (call $skipn (i32.add (local.get $p) (i32.const 5)) (call $be32 (i32.add (local.get $p) (i32.const 1)))))))
    (if (i32.eq (local.get $c) (i32.const 0xde))
      (then (return (call $skipn (i32.add (local.get $p) (i32.const 3))
                                 (i32.shl (call $be16 (i32.add (local.get $p) (i32.const 1))) (i32.const 1))))))
    (call $skipn (i32.add (local.get $p) (i32.const 5))
                 (i32.shl (call $be32 (i32.add (local.get $p) (i32.const 1))) (i32.const 1))))

  (func $skipn (param $p i32) (param $n i32) (result i32)
    (block $done
      (loop $more
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $p (call $skip (local.get $p)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $more)))
    (local.get $p))

  ;; readInt reads the integer at p into $int; 0 when it is not an int64.
  (func $readInt (param $p i32) (result i32)
    (local $c i32)
    (local.set $c (i32.load8_u (local.get $p)))
    (if (i32.le_u (local.get $c) (i32.const 0x7f))
      (then (global.set $int (i64.extend_i32_u (local.get $c))) (return (i32.const 1))))
    (if (i32.ge_u (local.get $c) (i32.const 0xe0))
      (then (global.set $int (i64.extend_i32_s (i32.extend8_s (local.get $c)))) (return (i32.const 1))))
    (block $no
      (block $i64 (block $i32 (block $i16 (block $i8 (block $u64 (block $u32 (block $u16 (block $u8
        (br_table $u8 $u16 $u32 $u64 $i8 $i16 $i32 $i64 $no (i32.sub (local.get $c) (i32.const 0xcc))))
        (global.set $int (i64.load8_u offset=1 (local.get $p))) (return (i32.const 1)))
        (global.set $int (i64.extend_i32_u (call $be16 (i32.add (local.get $p) (i32.const 1))))) (return (i32.const 1)))
        (global.set $int (i64.extend_i32_u (call $be32 (i32.add (local.get $p) (i32.const 1))))) (return (i32.const 1)))
        (global.set $int (call $be64 (i32.add (local.get $p) (i32.const 1))))
        (return (i64.ge_s (global.get $int) (i64.const 0))))
        (global.set $int (i64.load8_s offset=1 (local.get $p))) (return (i32.const 1)))
        (global.set $int (i64.extend_i32_s (i32.extend16_s (call $be16 (i32.add (local.get $p) (i32.const 1))))))
        (return (i32.const 1)))
        (global.set $int (i64.extend_i32_s (call $be32 (i32.add (local.get $p) (i32.const 1))))) (return (i32.const 1)))
        (global.set $int (call $be64 (i32.add (local.get $p) (i32.const 1)))) (return (i32.const 1)))
    (i32.const 0))

  (func $store32 (param $o i32) (param $v i32)
    (i32.store8 (local.get $o) (i32.shr_u (local.get $v) (i32.const 24)))
    (i32.store8 offset=1 (local.get $o) (i32.shr_u (local.get $v) (i32.const 16)))
    (i32.store8 offset=2 (local.get $o) (i32.shr_u (local.get $v) (i32.const 8)))
    (i32.store8 offset=3 (local.get $o) (local.get $v)))

  ;; writeInt writes v > 0 in its smallest msgpack form at o.
  (func $writeInt (param $o i32) (param $v i64) (result i32)
    (if (i64.le_u (local.get $v) (i64.const 0x7f))
      (then (i64.store8 (local.get $o) (local.get $v)) (return (i32.add (local.get $o) (i32.const 1)))))
    (if (i64.le_u (local.get $v) (i64.const 0xff))
      (then (i32.store8 (local.get $o) (i32.const 0xcc)) (i64.store8 offset=1 (local.get $o) (local.get $v))
            (return (i32.add (local.get $o) (i32.const 2)))))
    (if (i64.le_u (local.get $v) (i64.const 0xffff))
      (then (i32.store8 (local.get $o) (i32.const 0xcd))
            (i64.store8 offset=1 (local.get $o) (i64.shr_u (local.get $v) (i64.const 8)))
            (i64.store8 offset=2 (local.get $o) (local.get $v))
            (return (i32.add (local.get $o) (i32.const 3)))))
    (if (i64.le_u (local.get $v) (i64.const 0xffffffff))
      (then (i32.store8 (local.get $o) (i32.const 0xce))
            (call $store32 (i32.add (local.get $o) (i32.const 1)) (i32.wrap_i64 (local.get $v)))
            (return (i32.add (local.get $o) (i32.const 5)))))
    (i32.store8 (local.get $o) (i32.const 0xcf))
    (call $store32 (i32.add (local.get $o) (i32.const 1)) (i32.wrap_i64 (i64.shr_u (local.get $v) (i64.const 32))))
    (call $store32 (i32.add (local.get $o) (i32.const 5)) (i32.wrap_i64 (local.get $v)))
    (i32.add (local.get $o) (i32.const 9)))

  ;; isAmount: is the value at k the fixstr "amount"?
  (func $isAmount (param $k i32) (result i32)
    (i32.and
      (i32.and (i32.eq (i32.load8_u (local.get $k)) (i32.const 0xa6))
               (i32.eq (i32.load offset=1 align=1 (local.get $k)) (i32.const 0x756f6d61)))
      (i32.eq (i32.load16_u offset=5 align=1 (local.get $k)) (i32.const 0x746e))))

  (func (export "sluice_process") (param $port i32) (param $p i32) (param $len i32) (param $count i32) (result i32)
    (local $rec i32) (local $q i32) (local $end i32) (local $out i32) (local $o i32) (local $kept i32)
    (local $pairs i32) (local $c i32) (local $found i32) (local $apos i32) (local $aend i32)
    (local.set $out (i32.and (i32.add (i32.add (local.get $p) (local.get $len)) (i32.const 7)) (i32.const -8)))
    (local.set $o (local.get $out))
    (local.set $rec (local.get $p))
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $count)))
        (local.set $count (i32.sub (local.get $count) (i32.const 1)))
        (if (i32.ne (i32.load8_u (local.get $rec)) (i32.const 0x93)) (then (return (i32.const -1))))
        (local.set $q (call $skip (call $skip (i32.add (local.get $rec) (i32.const 1)))))
        (local.set $c (i32.load8_u (local.get $q)))
        (if (i32.ne (i32.and (local.get $c) (i32.const 0xf0)) (i32.const 0x80)) (then (return (i32.const -1))))
        (local.set $pairs (i32.and (local.get $c) (i32.const 15)))
        (local.set $q (i32.add (local.get $q) (i32.const 1)))
        (local.set $found (i32.const 0))
        (block $mapdone
          (loop $pair
            (br_if $mapdone (i32.eqz (local.get $pairs)))
            (local.set $pairs (i32.sub (local.get $pairs) (i32.const 1)))
            (if (call $isAmount (local.get $q))
              (then
                (local.set $apos (i32.add (local.get $q) (i32.const 7)))
                (local.set $aend (call $skip (local.get $apos)))
                (local.set $found (call $readInt (local.get $apos)))
                (local.set $q (local.get $aend)))
              (else
                (local.set $q (call $skip (call $skip (local.get $q))))))
            (br $pair)))
        (local.set $end (local.get $q))
        (if (i32.and (local.get $found) (i64.gt_s (global.get $int) (i64.const 0)))
          (then
            (memory.copy (local.get $o) (local.get $rec) (i32.sub (local.get $apos) (local.get $rec)))
            (local.set $o (i32.add (local.get $o) (i32.sub (local.get $apos) (local.get $rec))))
            (local.set $o (call $writeInt (local.get $o) (i64.shl (global.get $int) (i64.const 1))))
            (memory.copy (local.get $o) (local.get $aend) (i32.sub (local.get $end) (local.get $aend)))
            (local.set $o (i32.add (local.get $o) (i32.sub (local.get $end) (local.get $aend))))
            (local.set $kept (i32.add (local.get $kept) (i32.const 1)))))
        (local.set $rec (local.get $end))
        (br $next)))
    (call $emit (i32.const 0) (local.get $out) (i32.sub (local.get $o) (local.get $out)) (local.get $kept))))
