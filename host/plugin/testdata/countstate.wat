;; countstate: a keyed map that adds the count of every batch it is given
;; to a state counter (slot 0, key "k") and emits the batch as it is, but
;; emits nothing for a batch holding the word "drop" (a map breaking its
;; count). The counter holds the records of the calls that stood: the
;; state writes of a call the host fails must be undone, also when only
;; the output's count fails it (TestCountFailureUndoesState).
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (import "sluice_v1" "state_get" (func $get (param i32 i32 i32 i32 i32) (result i32)))
  (import "sluice_v1" "state_put" (func $put (param i32 i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (data (i32.const 2048) "\a1k")
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32)
    (local $pages i32)
    (local.set $pages (i32.shr_u (i32.add (local.get $n) (i32.const 131071)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then (drop (memory.grow (i32.sub (local.get $pages) (memory.size))))))
    (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param $port i32) (param $ptr i32) (param $len i32) (param $count i32) (result i32)
    (local $i i32)
    ;; counter += count (a missing counter reads as 0)
    (i32.store (i32.const 3000) (i32.const 0))
    (drop (call $get (i32.const 0) (i32.const 2048) (i32.const 2) (i32.const 3000) (i32.const 4)))
    (i32.store (i32.const 3000) (i32.add (i32.load (i32.const 3000)) (local.get $count)))
    (drop (call $put (i32.const 0) (i32.const 2048) (i32.const 2) (i32.const 3000) (i32.const 4)))
    ;; "drop" anywhere in the batch: emit nothing
    (local.set $i (local.get $ptr))
    (block $done (loop $scan
      (br_if $done (i32.gt_u (i32.add (local.get $i) (i32.const 4)) (i32.add (local.get $ptr) (local.get $len))))
      (if (i32.eq (i32.load (local.get $i)) (i32.const 0x706f7264)) (then (return (i32.const 0))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $scan)))
    (call $emit (i32.const 0) (local.get $ptr) (local.get $len) (local.get $count))))
