;; Already exports the counter's name: refused.
(module
  (global $f (export "sluice_fuel") (mut i64) (i64.const 0))
  (func (export "f")))
