;; badkind: a map whose sluice_describe names a kind that does not exist,
;; "rm -rf". Hosts must refuse it as plugin check and pipelines do, and not
;; offer the string back as a name to write.
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  ;; {"kind":"rm -rf","name":"badkind"}
  (data (i32.const 1024) "\82\a4\6b\69\6e\64\a6\72\6d\20\2d\72\66\a4\6e\61\6d\65\a7\62\61\64\6b\69\6e\64")
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32)
    (if (i32.gt_u (local.get $n) (i32.const 65536)) (then (return (i32.const 0))))
    (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param $port i32) (param $p i32) (param $n i32) (param $count i32) (result i32)
    (call $emit (i32.const 0) (local.get $p) (local.get $n) (local.get $count)))
  (func (export "sluice_close") (result i32) (i32.const 0))
  (func (export "sluice_describe") (result i32)
    (call $emit (i32.const 0) (i32.const 1024) (i32.const 26) (i32.const 1))))
