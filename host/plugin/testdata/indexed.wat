;; indexed: an operator that takes the host's batch index
;; (sluice_process_indexed). It emits every batch unchanged and keeps in
;; exported globals what the last call received, so tests can check where
;; the host put the index and read it back from memory.
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (global (export "indexed_calls") (mut i32) (i32.const 0))
  (global (export "plain_calls") (mut i32) (i32.const 0))
  (global (export "batch_ptr") (mut i32) (i32.const 0))
  (global (export "batch_len") (mut i32) (i32.const 0))
  (global (export "index_ptr") (mut i32) (i32.const 0))
  (global (export "index_len") (mut i32) (i32.const 0))

  (func (export "sluice_abi_v1"))

  ;; The input area starts at 64 KiB + 1, so that the index needs aligning.
  (func (export "sluice_buffer") (param $n i32) (result i32)
    (local $pages i32)
    (local.set $pages (i32.shr_u (i32.add (local.get $n) (i32.const 131072)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.lt_s (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const 0))
          (then (return (i32.const 0))))))
    (i32.const 65537))

  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))

  (func (export "sluice_process") (param $port i32) (param $p i32) (param $n i32) (param $count i32) (result i32)
    (global.set 1 (i32.add (global.get 1) (i32.const 1)))
    (call $emit (i32.const 0) (local.get $p) (local.get $n) (local.get $count)))

  (func (export "sluice_process_indexed") (param $port i32) (param $p i32) (param $n i32) (param $count i32)
      (param $ip i32) (param $il i32) (result i32)
    (global.set 0 (i32.add (global.get 0) (i32.const 1)))
    (global.set 2 (local.get $p))
    (global.set 3 (local.get $n))
    (global.set 4 (local.get $ip))
    (global.set 5 (local.get $il))
    (call $emit (i32.const 0) (local.get $p) (local.get $n) (local.get $count))))
