;; Invalid: global.set 1 with one global. Index 1 is where the counter would
;; go, so instrumenting would let the guest refill its own fuel: refused.
;; (Assembled with wat2wasm --no-check.)
(module
  (global $g (mut i64) (i64.const 0))
  (func (export "refill") (global.set 1 (i64.const 1000000))))
