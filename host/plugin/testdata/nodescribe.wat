;; nodescribe: exports sluice_describe but answers StatusUnsupported (-4):
;; describe is optional, so the host describes it from its exports.
(module
  (memory (export "memory") 2)
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32) (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_describe") (result i32) (i32.const -4))
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32) (i32.const 0)))
