;; keyedproc: a process whose describe says it keeps keyed state, and
;; which does nothing; for the check that such a plugin has a key-by.
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  ;; {"kind":"process","name":"keyedproc","sdk":"wat","outputs":[],"keyed":true}
  (data (i32.const 1024) "\85\a4kind\a7process\a4name\a9keyedproc\a3sdk\a3wat\a7outputs\90\a5keyed\c3")
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
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_describe") (result i32)
    (call $emit (i32.const 0) (i32.const 1024) (i32.const 53) (i32.const 1))))
