;; identity: the smallest complete ABI v1 operator. process emits every
;; batch unchanged; open keeps its arguments in exported globals and the
;; config at 4096 so tests can read them; describe reports kind "map".
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (global (export "open_subtask") (mut i32) (i32.const -1))
  (global (export "open_parallelism") (mut i32) (i32.const -1))
  (global (export "open_max_parallelism") (mut i32) (i32.const -1))
  (global (export "open_config_len") (mut i32) (i32.const -1))
  (global (export "opens") (mut i32) (i32.const 0))
  (global (export "closes") (mut i32) (i32.const 0))
  ;; {"kind":"map","name":"identity","sdk":"wat","outputs":["late"]}
  (data (i32.const 1024) "\84\a4\6b\69\6e\64\a3\6d\61\70\a4\6e\61\6d\65\a8\69\64\65\6e\74\69\74\79\a3\73\64\6b\a3\77\61\74\a7\6f\75\74\70\75\74\73\91\a4\6c\61\74\65")

  (func (export "sluice_abi_v1"))

  ;; The input area starts at 64 KiB; memory grows to hold n bytes.
  (func (export "sluice_buffer") (param $n i32) (result i32)
    (local $pages i32)
    (local.set $pages (i32.shr_u (i32.add (local.get $n) (i32.const 131071)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.lt_s (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const 0))
          (then (return (i32.const 0))))))
    (i32.const 65536))

  (func (export "sluice_open") (param $p i32) (param $n i32) (param $sub i32) (param $par i32) (param $max i32) (result i32)
    (memory.copy (i32.const 4096) (local.get $p)
      (select (local.get $n) (i32.const 8192) (i32.lt_u (local.get $n) (i32.const 8192))))
    (global.set 0 (local.get $sub))
    (global.set 1 (local.get $par))
    (global.set 2 (local.get $max))
    (global.set 3 (local.get $n))
    (global.set 4 (i32.add (global.get 4) (i32.const 1)))
    (i32.const 0))

  (func (export "sluice_process") (param $port i32) (param $p i32) (param $n i32) (param $count i32) (result i32)
    (call $emit (i32.const 0) (local.get $p) (local.get $n) (local.get $count)))

  (func (export "sluice_close") (result i32)
    (global.set 5 (i32.add (global.get 5) (i32.const 1)))
    (i32.const 0))

  (func (export "sluice_describe") (result i32)
    (call $emit (i32.const 0) (i32.const 1024) (i32.const 46) (i32.const 1))))
