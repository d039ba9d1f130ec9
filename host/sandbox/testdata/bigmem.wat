;; bigmem: declares 300 pages (18.75 MiB) of initial memory.
(module
  (memory (export "memory") 300)
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32) (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32) (i32.const 0)))
