;; Provides globals for imports.wat.
(module
  (global (export "g0") i32 (i32.const 7))
  (global (export "g1") (mut i64) (i64.const 100))
  (func (export "twice") (param i32) (result i32) (i32.mul (local.get 0) (i32.const 2))))
