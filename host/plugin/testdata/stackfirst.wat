;; stackfirst: laid out as wasm-ld's --stack-first lays out a C module (the
;; C and Rust SDKs' builds): the first global is __stack_pointer, its stack
;; is [0, 16384) and the data starts at its top. process recurses with a
;; 4 KiB frame on that stack until it runs below address 0, an
;; out-of-bounds store: how a C stack overflow traps.
(module
  (memory (export "memory") 2)
  (global $sp (mut i32) (i32.const 16384))
  (data (i32.const 16384) "data above the stack")
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32)
    (local $pages i32)
    (local.set $pages (i32.shr_u (i32.add (local.get $n) (i32.const 131071)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.lt_s (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const 0))
          (then (return (i32.const 0))))))
    (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  ;; deep takes a 4 KiB frame, stores n in it and recurses n more times
  (func $deep (param $n i32)
    (global.set $sp (i32.sub (global.get $sp) (i32.const 4096)))
    (i32.store (global.get $sp) (local.get $n))
    (if (local.get $n) (then (call $deep (i32.sub (local.get $n) (i32.const 1)))))
    (global.set $sp (i32.add (global.get $sp) (i32.const 4096))))
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32)
    (call $deep (i32.const 1000))
    (i32.const 0)))
