;; partitioner: a custom partitioner whose behaviour its config names
;; (any value of the msgpack config holding the word):
;;
;;   neg1  channel -1 for the 3rd record of each call
;;   big_  channel n for the 3rd record of each call
;;   flip  every record of call k goes to channel k mod n: the same key
;;         gets different channels from call to call
;;   pspn  loop forever
;;   otherwise record i of a call goes to channel i mod n
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (global $mode (mut i32) (i32.const 0))
  (global $calls (mut i32) (i32.const 0))

  (func (export "sluice_abi_v1"))

  (func (export "sluice_buffer") (param $n i32) (result i32)
    (local $pages i32)
    (local.set $pages (i32.shr_u (i32.add (local.get $n) (i32.const 131071)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.lt_s (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const 0))
          (then (return (i32.const 0))))))
    (i32.const 65536))

  (func (export "sluice_open") (param $p i32) (param $n i32) (param $sub i32) (param $par i32) (param $max i32) (result i32)
    (local $end i32) (local $w i32)
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    (block $done
      (loop $scan
        (br_if $done (i32.gt_u (i32.add (local.get $p) (i32.const 4)) (local.get $end)))
        (local.set $w (i32.load align=1 (local.get $p)))
        (if (i32.or (i32.or (i32.eq (local.get $w) (i32.const 0x3167656e))   ;; neg1
                            (i32.eq (local.get $w) (i32.const 0x5f676962)))  ;; big_
                    (i32.or (i32.eq (local.get $w) (i32.const 0x70696c66))   ;; flip
                            (i32.eq (local.get $w) (i32.const 0x6e707370)))) ;; pspn
          (then (global.set $mode (local.get $w)) (br $done)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $scan)))
    (i32.const 0))

  (func (export "sluice_partition") (param $p i32) (param $len i32) (param $count i32) (param $n i32) (result i32)
    (local $i i32) (local $ch i32)
    (if (i32.eq (global.get $mode) (i32.const 0x6e707370)) (then (loop $spin (br $spin))))
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $ch (i32.rem_u (local.get $i) (local.get $n)))
        (if (i32.eq (global.get $mode) (i32.const 0x70696c66))
          (then (local.set $ch (i32.rem_u (global.get $calls) (local.get $n)))))
        (if (i32.eq (local.get $i) (i32.const 2))
          (then
            (if (i32.eq (global.get $mode) (i32.const 0x3167656e)) (then (local.set $ch (i32.const -1))))
            (if (i32.eq (global.get $mode) (i32.const 0x5f676962)) (then (local.set $ch (local.get $n))))))
        (i32.store (i32.shl (local.get $i) (i32.const 2)) (local.get $ch))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (call $emit (i32.const 0) (i32.const 0) (i32.shl (local.get $count) (i32.const 2)) (local.get $count))))
