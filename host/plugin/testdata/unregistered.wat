;; unregistered: what an SDK build gives when the plugin never registers
;; its operator: a memory and _initialize, none of the ABI's exports.
(module
  (memory (export "memory") 1)
  (func (export "_initialize")))
