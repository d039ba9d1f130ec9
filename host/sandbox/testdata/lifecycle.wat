;; lifecycle: an identity map that fails in the export its operator config
;; names (the config is a msgpack map; any value holding the word counts):
;;
;;   otrp  open traps                  oerr  open returns -6 (config error)
;;   ospn  open loops forever
;;   ptrp  process traps               perr  process returns -3 (user error)
;;   ctrp  close traps                 cerr  close returns -3
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (import "sluice_v1" "error" (func $error (param i32 i32)))
  (memory (export "memory") 2)
  (global $mode (mut i32) (i32.const 0))
  (data (i32.const 32) "refused in open")
  (data (i32.const 64) "refused in process")
  (data (i32.const 96) "refused in close")

  (func (export "sluice_abi_v1"))

  (func (export "sluice_buffer") (param $n i32) (result i32)
    (local $pages i32)
    (local.set $pages (i32.shr_u (i32.add (local.get $n) (i32.const 131071)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.lt_s (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const 0))
          (then (return (i32.const 0))))))
    (i32.const 65536))

  ;; word finds one of the mode words in [p, p+n), 0 when there is none.
  (func $word (param $p i32) (param $n i32) (result i32)
    (local $end i32) (local $w i32)
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    (block $done
      (loop $scan
        (br_if $done (i32.gt_u (i32.add (local.get $p) (i32.const 4)) (local.get $end)))
        (local.set $w (i32.load align=1 (local.get $p)))
        (if (i32.or (i32.or (i32.or (i32.eq (local.get $w) (i32.const 0x7072746f))   ;; otrp
                                    (i32.eq (local.get $w) (i32.const 0x7272656f)))  ;; oerr
                            (i32.or (i32.eq (local.get $w) (i32.const 0x6e70736f))   ;; ospn
                                    (i32.eq (local.get $w) (i32.const 0x70727470)))) ;; ptrp
                    (i32.or (i32.or (i32.eq (local.get $w) (i32.const 0x72726570))   ;; perr
                                    (i32.eq (local.get $w) (i32.const 0x70727463)))  ;; ctrp
                            (i32.eq (local.get $w) (i32.const 0x72726563))))         ;; cerr
          (then (return (local.get $w))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $scan)))
    (i32.const 0))

  (func (export "sluice_open") (param $p i32) (param $n i32) (param $sub i32) (param $par i32) (param $max i32) (result i32)
    (global.set $mode (call $word (local.get $p) (local.get $n)))
    (if (i32.eq (global.get $mode) (i32.const 0x7072746f)) (then unreachable))
    (if (i32.eq (global.get $mode) (i32.const 0x6e70736f)) (then (loop $spin (br $spin))))
    (if (i32.eq (global.get $mode) (i32.const 0x7272656f))
      (then (call $error (i32.const 32) (i32.const 15)) (return (i32.const -6))))
    (i32.const 0))

  (func (export "sluice_process") (param $port i32) (param $p i32) (param $n i32) (param $count i32) (result i32)
    (if (i32.eq (global.get $mode) (i32.const 0x70727470)) (then unreachable))
    (if (i32.eq (global.get $mode) (i32.const 0x72726570))
      (then (call $error (i32.const 64) (i32.const 18)) (return (i32.const -3))))
    (call $emit (i32.const 0) (local.get $p) (local.get $n) (local.get $count)))

  (func (export "sluice_close") (result i32)
    (if (i32.eq (global.get $mode) (i32.const 0x70727463)) (then unreachable))
    (if (i32.eq (global.get $mode) (i32.const 0x72726563))
      (then (call $error (i32.const 96) (i32.const 16)) (return (i32.const -3))))
    (i32.const 0)))
