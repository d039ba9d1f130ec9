;; undeclaredstate: a process that reads keyed state for every non-empty
;; batch while its describe says it is not keyed (keyed: false), as a Rust,
;; C or AssemblyScript plugin that forgot its keyed flag does. It returns
;; the refusal's status; for the kit's check that a plugin declares the
;; keyed state it uses.
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (import "sluice_v1" "state_get" (func $state_get (param i32 i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  ;; {"kind":"process","name":"undeclared","sdk":"wat","outputs":[],"keyed":false}
  (data (i32.const 1024) "\85\a4kind\a7process\a4name\aaundeclared\a3sdk\a3wat\a7outputs\90\a5keyed\c2")
  ;; the key "k"
  (data (i32.const 2048) "\a1k")
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
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32)
    (local $r i32)
    (if (i32.eqz (local.get 3)) (then (return (i32.const 0))))
    (local.set $r (call $state_get (i32.const 0) (i32.const 2048) (i32.const 2) (i32.const 3072) (i32.const 64)))
    (if (i32.lt_s (local.get $r) (i32.const -1)) (then (return (local.get $r))))
    (i32.const 0))
  (func (export "sluice_describe") (result i32)
    (call $emit (i32.const 0) (i32.const 1024) (i32.const 54) (i32.const 1))))
