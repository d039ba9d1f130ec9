;; slow-map.wat: a test plugin for unaligned checkpoints (issue 25): the
;; map of identity.wat (every record passed on unchanged, malformed input
;; answered with a status), which spins 50 000 loop iterations per
;; record before it emits a batch: a slow operator that back-pressures
;; its input, so that queued data piles up in front of it. It keeps no
;; state. cmd/host's unaligned crash test uses it.
;;
;; Build: wat2wasm slow-map.wat -o slow-map.wasm
;;
;; Memory layout (one 64 KiB page to start):
;;   [0, 1024)     static data: error texts and the describe map
;;   [1024, ...)   the input buffer handed out by sluice_buffer (grows)

(module
  ;; ---- host imports: module "sluice_v1" (abi.ImportModule) ----------------

  ;; emit(port, ptr, len, count) -> status: hands count records to the host,
  ;; which copies them before it returns.
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  ;; error(ptr, len): the text of the current call's error.
  (import "sluice_v1" "error" (func $error (param i32 i32)))

  ;; The guest owns its memory and exports it as "memory".
  (memory (export "memory") 1)

  ;; ---- constants -------------------------------------------------------------

  (global $INPUT i32 (i32.const 1024))   ;; where the input buffer starts
  (global $MAX_DEPTH i32 (i32.const 64)) ;; abi.MaxDepth: deepest nesting
  ;; statuses (abi.Status)
  (global $OK i32 (i32.const 0))
  (global $MALFORMED i32 (i32.const -1))
  (global $UNSUPPORTED i32 (i32.const -4))

  ;; Total sizes of the values whose header is 0xc0..0xdf and whose size
  ;; does not depend on what follows (0: it does, or 0xc1, never used).
  ;;          c0 c1 c2 c3 c4 c5 c6 c7 c8 c9 ca cb cc cd ce cf
  (data (i32.const 0) "\01\00\01\01\00\00\00\00\00\00\05\09\02\03\05\09"
  ;;          d0 d1 d2 d3 d4 d5 d6 d7 d8 d9 da db dc dd de df
                      "\02\03\05\09\03\04\06\0a\12\00\00\00\00\00\00\00")

  ;; Error texts: (offset, length) pairs are passed to $fail.
  (data (i32.const 64) "malformed input: a record is not a [event_time, key, value] envelope") ;; 68
  (data (i32.const 160) "malformed input: truncated or invalid msgpack")                          ;; 45
  (data (i32.const 224) "malformed input: bytes left after the last record")                      ;; 49
  (data (i32.const 288) "malformed input: the event time is not an int or nil")                  ;; 52
  (data (i32.const 352) "slow-map has one input port, 0")                                         ;; 30
  (data (i32.const 384) "malformed input: negative record count")                                 ;; 38

  ;; The describe map, pre-encoded msgpack (48 bytes):
  ;; {"kind": "map", "sdk": "wat", "name": "slow-map", "outputs": [], "keyed": false}
  (data (i32.const 448)
    "\85"                                   ;; fixmap, 5 pairs
    "\a4kind" "\a3map"                      ;; fixstr 4, fixstr 3
    "\a3sdk" "\a3wat"
    "\a4name" "\a8slow-map"
    "\a7outputs" "\90"                      ;; fixarray, 0 elements
    "\a5keyed" "\c2")                       ;; false

  ;; ---- exports ---------------------------------------------------------------

  ;; The ABI v1 marker: the host checks it exists and never calls it.
  (func (export "sluice_abi_v1"))

  ;; buffer(size) -> ptr: room for the host to write the next input. The
  ;; buffer always starts at $INPUT; memory grows to hold it. 0 on failure.
  (func (export "sluice_buffer") (param $size i32) (result i32)
    (local $pages i32)
    ;; pages needed to hold [0, INPUT + size), rounded up (in 64 bits: size may be huge)
    (local.set $pages (i32.wrap_i64 (i64.shr_u
      (i64.add (i64.add (i64.extend_i32_u (global.get $INPUT)) (i64.extend_i32_u (local.get $size)))
               (i64.const 65535))
      (i64.const 16))))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        ;; memory.grow returns -1 when it cannot grow: then return 0
        (if (i32.eq (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const -1))
          (then (return (i32.const 0))))))
    (global.get $INPUT))

  ;; open(config ptr, len, subtask, parallelism, max parallelism) -> status.
  ;; slow-map has no configuration: anything is accepted.
  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32)
    (global.get $OK))

  ;; process(port, ptr, len, count) -> status: check the batch, then emit it
  ;; whole on the main output (port 0).
  (func (export "sluice_process") (param $port i32) (param $ptr i32) (param $len i32) (param $count i32) (result i32)
    (local $p i32) (local $end i32) (local $c i32) (local $left i32)
    ;; a map has one input: port 0
    (if (local.get $port)
      (then (return (call $fail (global.get $UNSUPPORTED) (i32.const 352) (i32.const 30)))))
    (if (i32.lt_s (local.get $count) (i32.const 0))
      (then (return (call $fail (global.get $MALFORMED) (i32.const 384) (i32.const 38)))))
    (local.set $p (local.get $ptr))
    (local.set $end (i32.add (local.get $ptr) (local.get $len)))
    (local.set $left (local.get $count))
    ;; for each of the count records
    (block $done
      (loop $record
        (br_if $done (i32.eqz (local.get $left)))
        ;; fewer bytes than records: truncated
        (if (i32.ge_u (local.get $p) (local.get $end))
          (then (return (call $fail (global.get $MALFORMED) (i32.const 160) (i32.const 45)))))
        ;; the envelope header: a fixarray of 3 (0x93), the only form writers produce
        (if (i32.ne (i32.load8_u (local.get $p)) (i32.const 0x93))
          (then (return (call $fail (global.get $MALFORMED) (i32.const 64) (i32.const 68)))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        ;; element 0, the event time: nil or an int no larger than MaxInt64
        (if (i32.ge_u (local.get $p) (local.get $end))
          (then (return (call $fail (global.get $MALFORMED) (i32.const 160) (i32.const 45)))))
        (local.set $c (i32.load8_u (local.get $p)))
        (if (i32.eqz (call $time_ok (local.get $p) (local.get $end) (local.get $c)))
          (then (return (call $fail (global.get $MALFORMED) (i32.const 288) (i32.const 52)))))
        ;; elements 0, 1 and 2 (time, key, value): skip each, depth 1
        (local.set $p (call $skip (local.get $p) (local.get $end) (i32.const 1)))
        (if (local.get $p) (then (local.set $p (call $skip (local.get $p) (local.get $end) (i32.const 1)))))
        (if (local.get $p) (then (local.set $p (call $skip (local.get $p) (local.get $end) (i32.const 1)))))
        (if (i32.eqz (local.get $p))
          (then (return (call $fail (global.get $MALFORMED) (i32.const 160) (i32.const 45)))))
        (local.set $left (i32.sub (local.get $left) (i32.const 1)))
        (br $record)))
    ;; every byte must belong to a record
    (if (i32.ne (local.get $p) (local.get $end))
      (then (return (call $fail (global.get $MALFORMED) (i32.const 224) (i32.const 49)))))
    ;; the slowness: 50 000 iterations per record
    (local.set $left (i32.mul (local.get $count) (i32.const 50000)))
    (block $spun
      (loop $spin
        (br_if $spun (i32.eqz (local.get $left)))
        (local.set $left (i32.sub (local.get $left) (i32.const 1)))
        (br $spin)))
    ;; the identity: the input is the output. An empty batch emits nothing.
    (if (i32.eqz (local.get $len)) (then (return (global.get $OK))))
    ;; emit's status (OK, or e.g. StatusLimit) is the call's status
    (call $emit (i32.const 0) (local.get $ptr) (local.get $len) (local.get $count)))

  ;; close() -> status: nothing to flush.
  (func (export "sluice_close") (result i32)
    (global.get $OK))

  ;; describe() -> status: the pre-encoded map, one value on port 0.
  (func (export "sluice_describe") (result i32)
    (call $emit (i32.const 0) (i32.const 448) (i32.const 48) (i32.const 1)))

  ;; ---- helpers ---------------------------------------------------------------

  ;; fail sends the text at ptr/len as the call's error and returns status.
  (func $fail (param $status i32) (param $ptr i32) (param $len i32) (result i32)
    (call $error (local.get $ptr) (local.get $len))
    (local.get $status))

  ;; time_ok: is the value at p (header byte c) nil or an int64?
  (func $time_ok (param $p i32) (param $end i32) (param $c i32) (result i32)
    ;; nil, positive fixint 0x00-0x7f, negative fixint 0xe0-0xff
    (if (i32.or (i32.eq (local.get $c) (i32.const 0xc0))
          (i32.or (i32.le_u (local.get $c) (i32.const 0x7f)) (i32.ge_u (local.get $c) (i32.const 0xe0))))
      (then (return (i32.const 1))))
    ;; uint64 (0xcf): only up to MaxInt64, its top byte below 0x80
    (if (i32.eq (local.get $c) (i32.const 0xcf))
      (then (return (i32.and
        (i32.lt_u (i32.add (local.get $p) (i32.const 1)) (local.get $end))
        (i32.lt_u (i32.load8_u offset=1 (local.get $p)) (i32.const 0x80))))))
    ;; uint8..uint32, int8..int64: 0xcc..0xd3
    (i32.and (i32.ge_u (local.get $c) (i32.const 0xcc)) (i32.le_u (local.get $c) (i32.const 0xd3))))

  ;; need returns p + size when size bytes remain before end, else 0.
  (func $need (param $p i32) (param $end i32) (param $size i64) (result i32)
    (if (result i32) (i64.le_u (local.get $size) (i64.extend_i32_u (i32.sub (local.get $end) (local.get $p))))
      (then (i32.add (local.get $p) (i32.wrap_i64 (local.get $size))))
      (else (i32.const 0))))

  ;; be reads an n-byte big-endian unsigned integer at p.
  (func $be (param $p i32) (param $n i32) (result i64)
    (local $v i64)
    (block $done
      (loop $byte
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $v (i64.or (i64.shl (local.get $v) (i64.const 8)) (i64.load8_u (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $byte)))
    (local.get $v))

  ;; sized skips a str/bin/ext whose length (lenbytes wide) follows the
  ;; header byte, hdr bytes of header in all.
  (func $sized (param $p i32) (param $end i32) (param $hdr i32) (param $lenbytes i32) (result i32)
    (if (i32.eqz (call $need (local.get $p) (local.get $end) (i64.extend_i32_u (local.get $hdr))))
      (then (return (i32.const 0))))
    (call $need (local.get $p) (local.get $end)
      (i64.add (i64.extend_i32_u (local.get $hdr))
               (call $be (i32.add (local.get $p) (i32.const 1)) (local.get $lenbytes)))))

  ;; skip_n skips n values (a container's body) one level deeper.
  (func $skip_n (param $p i32) (param $end i32) (param $n i64) (param $depth i32) (result i32)
    (if (i32.gt_u (i32.add (local.get $depth) (i32.const 1)) (global.get $MAX_DEPTH))
      (then (return (i32.const 0))))
    ;; every value takes at least one byte: a huge count costs nothing
    (if (i64.gt_u (local.get $n) (i64.extend_i32_u (i32.sub (local.get $end) (local.get $p))))
      (then (return (i32.const 0))))
    (block $done
      (loop $value
        (br_if $done (i64.eqz (local.get $n)))
        (local.set $p (call $skip (local.get $p) (local.get $end) (i32.add (local.get $depth) (i32.const 1))))
        (br_if $done (i32.eqz (local.get $p)))
        (local.set $n (i64.sub (local.get $n) (i64.const 1)))
        (br $value)))
    (local.get $p))

  ;; skip returns the end of the msgpack value at p (before end), or 0 when
  ;; it is truncated, invalid or nested deeper than MAX_DEPTH.
  (func $skip (param $p i32) (param $end i32) (param $depth i32) (result i32)
    (local $c i32) (local $size i32)
    (if (i32.ge_u (local.get $p) (local.get $end)) (then (return (i32.const 0))))
    (local.set $c (i32.load8_u (local.get $p)))
    ;; fixint (0x00-0x7f, 0xe0-0xff): one byte
    (if (i32.or (i32.le_u (local.get $c) (i32.const 0x7f)) (i32.ge_u (local.get $c) (i32.const 0xe0)))
      (then (return (i32.add (local.get $p) (i32.const 1)))))
    ;; fixmap (0x80-0x8f): 2n values follow
    (if (i32.le_u (local.get $c) (i32.const 0x8f))
      (then (return (call $skip_n (i32.add (local.get $p) (i32.const 1)) (local.get $end)
        (i64.extend_i32_u (i32.shl (i32.and (local.get $c) (i32.const 0x0f)) (i32.const 1))) (local.get $depth)))))
    ;; fixarray (0x90-0x9f): n values follow
    (if (i32.le_u (local.get $c) (i32.const 0x9f))
      (then (return (call $skip_n (i32.add (local.get $p) (i32.const 1)) (local.get $end)
        (i64.extend_i32_u (i32.and (local.get $c) (i32.const 0x0f))) (local.get $depth)))))
    ;; fixstr (0xa0-0xbf): 1 + n bytes
    (if (i32.le_u (local.get $c) (i32.const 0xbf))
      (then (return (call $need (local.get $p) (local.get $end)
        (i64.extend_i32_u (i32.add (i32.const 1) (i32.and (local.get $c) (i32.const 0x1f))))))))
    ;; 0xc0-0xdf with a fixed size: from the table at address 0
    (local.set $size (i32.load8_u (i32.sub (local.get $c) (i32.const 0xc0))))
    (if (local.get $size)
      (then (return (call $need (local.get $p) (local.get $end) (i64.extend_i32_u (local.get $size))))))
    ;; bin8 0xc4, str8 0xd9: a 1-byte length; ext8 0xc7: length and type
    (if (i32.or (i32.eq (local.get $c) (i32.const 0xc4)) (i32.eq (local.get $c) (i32.const 0xd9)))
      (then (return (call $sized (local.get $p) (local.get $end) (i32.const 2) (i32.const 1)))))
    (if (i32.eq (local.get $c) (i32.const 0xc7))
      (then (return (call $sized (local.get $p) (local.get $end) (i32.const 3) (i32.const 1)))))
    ;; bin16 0xc5, str16 0xda: a 2-byte length; ext16 0xc8
    (if (i32.or (i32.eq (local.get $c) (i32.const 0xc5)) (i32.eq (local.get $c) (i32.const 0xda)))
      (then (return (call $sized (local.get $p) (local.get $end) (i32.const 3) (i32.const 2)))))
    (if (i32.eq (local.get $c) (i32.const 0xc8))
      (then (return (call $sized (local.get $p) (local.get $end) (i32.const 4) (i32.const 2)))))
    ;; bin32 0xc6, str32 0xdb: a 4-byte length; ext32 0xc9
    (if (i32.or (i32.eq (local.get $c) (i32.const 0xc6)) (i32.eq (local.get $c) (i32.const 0xdb)))
      (then (return (call $sized (local.get $p) (local.get $end) (i32.const 5) (i32.const 4)))))
    (if (i32.eq (local.get $c) (i32.const 0xc9))
      (then (return (call $sized (local.get $p) (local.get $end) (i32.const 6) (i32.const 4)))))
    ;; array16 0xdc, map16 0xde: a 2-byte count (map: pairs, 2 values each)
    (if (i32.or (i32.eq (local.get $c) (i32.const 0xdc)) (i32.eq (local.get $c) (i32.const 0xde)))
      (then
        (if (i32.eqz (call $need (local.get $p) (local.get $end) (i64.const 3))) (then (return (i32.const 0))))
        (return (call $skip_n (i32.add (local.get $p) (i32.const 3)) (local.get $end)
          (i64.shl (call $be (i32.add (local.get $p) (i32.const 1)) (i32.const 2))
                   (i64.extend_i32_u (i32.eq (local.get $c) (i32.const 0xde)))) ;; x2 for a map
          (local.get $depth)))))
    ;; array32 0xdd, map32 0xdf: a 4-byte count
    (if (i32.or (i32.eq (local.get $c) (i32.const 0xdd)) (i32.eq (local.get $c) (i32.const 0xdf)))
      (then
        (if (i32.eqz (call $need (local.get $p) (local.get $end) (i64.const 5))) (then (return (i32.const 0))))
        (return (call $skip_n (i32.add (local.get $p) (i32.const 5)) (local.get $end)
          (i64.shl (call $be (i32.add (local.get $p) (i32.const 1)) (i32.const 4))
                   (i64.extend_i32_u (i32.eq (local.get $c) (i32.const 0xdf))))
          (local.get $depth)))))
    ;; 0xc1: never used
    (i32.const 0))
)
