;; poison: a map that passes each record through (one emit per record, so
;; a later failure leaves emitted output behind), unless the record holds
;; one of these 4-byte command words, which misbehaves instead:
;;
;;   trap  unreachable                 spin  loop forever
;;   grow  grow memory until refused, then trap
;;   fail  error text "bad record" and status -3 (user error)
;;   deep  recurse without end         exit  proc_exit(3)
;;   oobe  emit(0, 0xfffffff0, 0x20, 1): ptr+len wraps around 32 bits
;;   logs  write 2000 lines to stderr, then pass the record through
;;   huge  emit 2 MiB of zeros as one record
;;   trun  emit a truncated record     type  emit an event time that is a string
;;   h232  emit an array header claiming 2^32-1 elements
;;   nest  emit a record nested 100,000 arrays deep
(module
  (import "sluice_v1" "emit" (func $emit (param i32 i32 i32 i32) (result i32)))
  (import "sluice_v1" "error" (func $error (param i32 i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  ;; total size of each msgpack value starting with 0xc0 + i; 0 = variable
  (data (i32.const 0) "\01\00\01\01\00\00\00\00\00\00\05\09\02\03\05\09\02\03\05\09\03\04\06\0a\12\00\00\00\00\00\00\00")
  (data (i32.const 32) "bad record")
  (data (i32.const 64) "guest log line.\n")
  (data (i32.const 256) "\93\c0\c0\82\a1a")           ;; trun: 6 bytes
  (data (i32.const 272) "\93\a4time\c0\c0")           ;; type: 8 bytes
  (data (i32.const 288) "\93\c0\c0\dd\ff\ff\ff\ff")   ;; h232: 8 bytes

  (func (export "sluice_abi_v1"))

  ;; The input area starts at 64 KiB; memory grows to hold n bytes.
  (func (export "sluice_buffer") (param $n i32) (result i32)
    (local $pages i32)
    (local.set $pages (i32.shr_u (i32.add (local.get $n) (i32.const 131071)) (i32.const 16)))
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then
        (if (i32.lt_s (memory.grow (i32.sub (local.get $pages) (memory.size))) (i32.const 0))
          (then (return (i32.const 0))))))
    (i32.const 65536))

  (func (export "sluice_open") (param i32 i32 i32 i32 i32) (result i32) (i32.const 0))

  (func $be16 (param $p i32) (result i32)
    (i32.or (i32.shl (i32.load8_u (local.get $p)) (i32.const 8)) (i32.load8_u offset=1 (local.get $p))))
  (func $be32 (param $p i32) (result i32)
    (i32.or (i32.shl (call $be16 (local.get $p)) (i32.const 16)) (call $be16 (i32.add (local.get $p) (i32.const 2)))))

  ;; skip returns the offset just past the msgpack value at p.
  (func $skip (param $p i32) (result i32)
    (local $c i32) (local $size i32)
    (local.set $c (i32.load8_u (local.get $p)))
    (if (i32.or (i32.le_u (local.get $c) (i32.const 0x7f)) (i32.ge_u (local.get $c) (i32.const 0xe0)))
      (then (return (i32.add (local.get $p) (i32.const 1)))))
    (if (i32.le_u (local.get $c) (i32.const 0x8f))
      (then (return (call $skipn (i32.add (local.get $p) (i32.const 1))
                                 (i32.shl (i32.and (local.get $c) (i32.const 15)) (i32.const 1))))))
    (if (i32.le_u (local.get $c) (i32.const 0x9f))
      (then (return (call $skipn (i32.add (local.get $p) (i32.const 1)) (i32.and (local.get $c) (i32.const 15))))))
    (if (i32.le_u (local.get $c) (i32.const 0xbf))
      (then (return (i32.add (local.get $p) (i32.add (i32.const 1) (i32.and (local.get $c) (i32.const 31)))))))
    (local.set $size (i32.load8_u (i32.sub (local.get $c) (i32.const 0xc0))))
    (if (local.get $size) (then (return (i32.add (local.get $p) (local.get $size)))))
    (if (i32.eq (local.get $c) (i32.const 0xc1)) (then unreachable))
    (if (i32.or (i32.eq (local.get $c) (i32.const 0xc4)) (i32.eq (local.get $c) (i32.const 0xd9)))
      (then (return (i32.add (local.get $p) (i32.add (i32.const 2) (i32.load8_u offset=1 (local.get $p)))))))
    (if (i32.or (i32.eq (local.get $c) (i32.const 0xc5)) (i32.eq (local.get $c) (i32.const 0xda)))
      (then (return (i32.add (local.get $p) (i32.add (i32.const 3) (call $be16 (i32.add (local.get $p) (i32.const 1))))))))
    (if (i32.or (i32.eq (local.get $c) (i32.const 0xc6)) (i32.eq (local.get $c) (i32.const 0xdb)))
      (then (return (i32.add (local.get $p) (i32.add (i32.const 5) (call $be32 (i32.add (local.get $p) (i32.const 1))))))))
    (if (i32.eq (local.get $c) (i32.const 0xc7))
      (then (return (i32.add (local.get $p) (i32.add (i32.const 3) (i32.load8_u offset=1 (local.get $p)))))))
    (if (i32.eq (local.get $c) (i32.const 0xc8))
      (then (return (i32.add (local.get $p) (i32.add (i32.const 4) (call $be16 (i32.add (local.get $p) (i32.const 1))))))))
    (if (i32.eq (local.get $c) (i32.const 0xc9))
      (then (return (i32.add (local.get $p) (i32.add (i32.const 6) (call $be32 (i32.add (local.get $p) (i32.const 1))))))))
    (if (i32.eq (local.get $c) (i32.const 0xdc))
      (then (return (call $skipn (i32.add (local.get $p) (i32.const 3)) (call $be16 (i32.add (local.get $p) (i32.const 1)))))))
    (if (i32.eq (local.get $c) (i32.const 0xdd))
      (then (return (call $skipn (i32.add (local.get $p) (i32.const 5)) (call $be32 (i32.add (local.get $p) (i32.const 1)))))))
    (if (i32.eq (local.get $c) (i32.const 0xde))
      (then (return (call $skipn (i32.add (local.get $p) (i32.const 3))
                                 (i32.shl (call $be16 (i32.add (local.get $p) (i32.const 1))) (i32.const 1))))))
    (call $skipn (i32.add (local.get $p) (i32.const 5))
                 (i32.shl (call $be32 (i32.add (local.get $p) (i32.const 1))) (i32.const 1))))

  (func $skipn (param $p i32) (param $n i32) (result i32)
    (block $done
      (loop $more
        (br_if $done (i32.eqz (local.get $n)))
        (local.set $p (call $skip (local.get $p)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $more)))
    (local.get $p))

  ;; known returns w when it is a command word, else 0.
  (func $known (param $w i32) (result i32)
    (if (i32.or (i32.or (i32.or (i32.eq (local.get $w) (i32.const 0x70617274))   ;; trap
                                (i32.eq (local.get $w) (i32.const 0x6e697073)))  ;; spin
                        (i32.or (i32.eq (local.get $w) (i32.const 0x776f7267))   ;; grow
                                (i32.eq (local.get $w) (i32.const 0x6c696166)))) ;; fail
                (i32.or (i32.or (i32.eq (local.get $w) (i32.const 0x70656564))   ;; deep
                                (i32.eq (local.get $w) (i32.const 0x74697865)))  ;; exit
                        (i32.or (i32.eq (local.get $w) (i32.const 0x65626f6f))   ;; oobe
                                (i32.eq (local.get $w) (i32.const 0x73676f6c))))) ;; logs
      (then (return (local.get $w))))
    (if (i32.or (i32.or (i32.eq (local.get $w) (i32.const 0x65677568))           ;; huge
                        (i32.eq (local.get $w) (i32.const 0x6e757274)))          ;; trun
                (i32.or (i32.or (i32.eq (local.get $w) (i32.const 0x65707974))   ;; type
                                (i32.eq (local.get $w) (i32.const 0x32333268)))  ;; h232
                        (i32.eq (local.get $w) (i32.const 0x7473656e))))         ;; nest
      (then (return (local.get $w))))
    (i32.const 0))

  ;; command finds a command word in [p, end), 0 when there is none.
  (func $command (param $p i32) (param $end i32) (result i32)
    (local $w i32)
    (block $done
      (loop $scan
        (br_if $done (i32.gt_u (i32.add (local.get $p) (i32.const 4)) (local.get $end)))
        (local.set $w (call $known (i32.load align=1 (local.get $p))))
        (if (local.get $w) (then (return (local.get $w))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $scan)))
    (i32.const 0))

  (func $recurse (param $n i32) (result i32)
    (i32.add (call $recurse (i32.add (local.get $n) (i32.const 1))) (i32.const 1)))

  ;; fresh grows memory by n pages and returns the address of the new pages.
  (func $fresh (param $n i32) (result i32)
    (local $old i32)
    (local.set $old (memory.grow (local.get $n)))
    (if (i32.lt_s (local.get $old) (i32.const 0)) (then unreachable))
    (i32.shl (local.get $old) (i32.const 16)))

  ;; run misbehaves as command w says and returns the status to return.
  (func $run (param $w i32) (result i32)
    (local $i i32) (local $at i32)
    (if (i32.eq (local.get $w) (i32.const 0x70617274)) (then unreachable))
    (if (i32.eq (local.get $w) (i32.const 0x6e697073)) (then (loop $spin (br $spin))))
    (if (i32.eq (local.get $w) (i32.const 0x776f7267))
      (then (loop $grow (br_if $grow (i32.ge_s (memory.grow (i32.const 1)) (i32.const 0)))) unreachable))
    (if (i32.eq (local.get $w) (i32.const 0x6c696166))
      (then (call $error (i32.const 32) (i32.const 10)) (return (i32.const -3))))
    (if (i32.eq (local.get $w) (i32.const 0x70656564)) (then (return (call $recurse (i32.const 0)))))
    (if (i32.eq (local.get $w) (i32.const 0x74697865)) (then (call $proc_exit (i32.const 3)) (return (i32.const 0))))
    (if (i32.eq (local.get $w) (i32.const 0x65626f6f))
      (then (return (call $emit (i32.const 0) (i32.const 0xfffffff0) (i32.const 0x20) (i32.const 1)))))
    (if (i32.eq (local.get $w) (i32.const 0x73676f6c))
      (then
        ;; iovec at 128: {64, 16}; bytes written at 136
        (i32.store (i32.const 128) (i32.const 64))
        (i32.store (i32.const 132) (i32.const 16))
        (block $done
          (loop $more
            (br_if $done (i32.ge_u (local.get $i) (i32.const 2000)))
            (drop (call $fd_write (i32.const 2) (i32.const 128) (i32.const 1) (i32.const 136)))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $more)))
        (return (i32.const 0))))
    (if (i32.eq (local.get $w) (i32.const 0x65677568))
      (then (return (call $emit (i32.const 0) (call $fresh (i32.const 32)) (i32.const 0x200000) (i32.const 1)))))
    (if (i32.eq (local.get $w) (i32.const 0x6e757274))
      (then (return (call $emit (i32.const 0) (i32.const 256) (i32.const 6) (i32.const 1)))))
    (if (i32.eq (local.get $w) (i32.const 0x65707974))
      (then (return (call $emit (i32.const 0) (i32.const 272) (i32.const 8) (i32.const 1)))))
    (if (i32.eq (local.get $w) (i32.const 0x32333268))
      (then (return (call $emit (i32.const 0) (i32.const 288) (i32.const 8) (i32.const 1)))))
    ;; nest: [nil, nil, [[[...nil...]]]] 100,000 arrays deep
    (local.set $at (call $fresh (i32.const 2)))
    (i32.store8 (local.get $at) (i32.const 0x93))
    (i32.store8 offset=1 (local.get $at) (i32.const 0xc0))
    (i32.store8 offset=2 (local.get $at) (i32.const 0xc0))
    (memory.fill (i32.add (local.get $at) (i32.const 3)) (i32.const 0x91) (i32.const 100000))
    (i32.store8 offset=100003 (local.get $at) (i32.const 0xc0))
    (call $emit (i32.const 0) (local.get $at) (i32.const 100004) (i32.const 1)))

  (func (export "sluice_process") (param $port i32) (param $p i32) (param $n i32) (param $count i32) (result i32)
    (local $end i32) (local $w i32) (local $st i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $count)))
        (local.set $end (call $skip (local.get $p)))
        (local.set $w (call $command (local.get $p) (local.get $end)))
        (if (local.get $w)
          (then
            (local.set $st (call $run (local.get $w)))
            ;; logs then passes the record through, as a map must
            (if (i32.and (i32.eqz (local.get $st)) (i32.eq (local.get $w) (i32.const 0x73676f6c)))
              (then (local.set $st (call $emit (i32.const 0) (local.get $p) (i32.sub (local.get $end) (local.get $p)) (i32.const 1))))))
          (else (local.set $st (call $emit (i32.const 0) (local.get $p) (i32.sub (local.get $end) (local.get $p)) (i32.const 1)))))
        (if (local.get $st) (then (return (local.get $st))))
        (local.set $p (local.get $end))
        (local.set $count (i32.sub (local.get $count) (i32.const 1)))
        (br $next)))
    (i32.const 0)))
