;; multi: several problems at once: no marker, no sluice_buffer, an
;; unknown import, a command, and too much initial memory.
(module
  (import "env" "now" (func (result i64)))
  (memory (export "memory") 300)
  (func (export "_start"))
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))
  (func (export "sluice_process") (param i32 i32 i32 i32) (result i32) (i32.const 0)))
