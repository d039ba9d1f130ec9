;; starttrap: a plugin whose start function traps; its instantiation must
;; fail in one line that names the start function, not an export.
(module
  (memory (export "memory") 2)
  (func (export "sluice_abi_v1"))
  (func (export "sluice_buffer") (param $n i32) (result i32) (i32.const 65536))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32) (i32.const 0))
  (func $boom unreachable)
  (start $boom))
