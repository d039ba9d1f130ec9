// A minimal ABI v1 host for node (abi/abi.go): enough to run any sluice
// plugin (AssemblyScript, C, Rust, WAT) in tests, before and besides the
// real host (host/plugin, wazero). It checks every (ptr, len) the guest
// passes, copies emitted bytes at once, keeps keyed state in a Map and
// never holds a memory view across a call into the guest.

import { readFileSync } from "node:fs";

export const Status = {
  OK: 0, Malformed: -1, OutOfMemory: -2, User: -3, Unsupported: -4,
  State: -5, Config: -6, Host: -7, Limit: -8,
};

export class Instance {
  /** Instantiates a module (a path or bytes). Every side output the module
   * declares (describe's "outputs") is routed, as Go's sdktest does:
   * outputs[i] gets port i + 1, so result().out[i + 1] holds what was
   * emitted to it. ports maps tags to other ports explicitly; unconsumed
   * lists tags that nothing consumes (port -1: the SDK drops their records). */
  static async load(module, { ports = {}, unconsumed = [], maxOutput = 64 << 20 } = {}) {
    const bytes = typeof module === "string" ? readFileSync(module) : module;
    const inst = new Instance({}, maxOutput);
    const { instance } = await WebAssembly.instantiate(bytes, inst.imports());
    inst.exports = instance.exports;
    if (inst.exports._initialize) inst.exports._initialize();
    inst.route(ports, unconsumed);
    return inst;
  }

  /** Maps the declared side outputs (inst.declared) to ports 1, 2, ...,
   * then applies the explicit ports and the unconsumed tags. */
  route(ports, unconsumed) {
    this.declared = [];
    if (this.exports.sluice_describe) {
      const d = this.describe();
      if (d.status === Status.OK && d.out[0]) {
        const outputs = decode(d.out[0].bytes).outputs;
        if (Array.isArray(outputs)) this.declared = outputs;
      }
      this.reset();
    }
    this.ports = {};
    this.declared.forEach((tag, i) => { this.ports[tag] = i + 1; });
    Object.assign(this.ports, ports);
    for (const tag of unconsumed) this.ports[tag] = -1;
  }

  constructor(ports, maxOutput) {
    this.ports = ports; // side-output tag -> port; a missing tag gets -1
    this.maxOutput = maxOutput;
    this.state = new Map();
    this.lists = new Map(); // key(slot, key) -> [Uint8Array]
    this.maps = new Map(); // key(slot, key) -> Map(hex user key -> Uint8Array)
    this.timers = new Map(); // "kind:ts:hex key" -> { kind, ts (BigInt), key (Uint8Array) }
    this.watermark = -(1n << 63n);
    this.processingTime = 0n;
    this.reset();
  }

  reset() {
    this.outputs = new Map(); // port -> { chunks, count }
    this.error = "";
    this.outBytes = 0;
  }

  mem() { return new Uint8Array(this.exports.memory.buffer); }

  /** The guest bytes at ptr/len, copied; throws on a bad range. */
  read(ptr, len) {
    const m = this.mem();
    ptr >>>= 0; len >>>= 0;
    if (ptr + len > m.length) throw new Error(`guest range [${ptr}, ${ptr + len}) is outside memory (${m.length})`);
    return m.slice(ptr, ptr + len);
  }

  imports() {
    const key = (slot, kp, kl) => slot + ":" + Buffer.from(this.read(kp, kl)).toString("hex");
    const hex = (p, l) => Buffer.from(this.read(p, l)).toString("hex");
    const wire = (items) => Buffer.concat(items.flatMap((b) => { const n = Buffer.alloc(4); n.writeUInt32LE(b.length); return [n, Buffer.from(b)]; }));
    const give = (v, bp, bc) => { if (v.length <= bc) { this.read(bp, bc); this.mem().set(v, bp); } return v.length; };
    const sluice_v1 = {
      emit: (port, ptr, len, count) => {
        if (this.outBytes + len > this.maxOutput) return Status.Limit;
        const b = this.read(ptr, len);
        this.outBytes += len;
        const o = this.outputs.get(port) || { chunks: [], count: 0, emits: 0 };
        o.chunks.push(b);
        o.count += count;
        o.emits++;
        this.outputs.set(port, o);
        return Status.OK;
      },
      // emit with each record's end (abi.ImportEmitEnds): a batch of
      // well-formed records must come with their true ends, as the host
      // requires (abi.CheckBatchEnds); a malformed one, which the host
      // would refuse anyway, is taken as emit takes it, for tests to look at
      emit_ends: (port, ptr, len, count, ends) => {
        const b = this.read(ptr, len), e = this.read(ends, 4 * count);
        const view = new DataView(e.buffer, e.byteOffset, e.byteLength);
        for (let i = 0, at = 0; i < count; i++) {
          const end = skip(b, at);
          if (end <= at) break; // not count records
          if (view.getUint32(4 * i, true) !== end) return Status.Malformed;
          at = end;
        }
        return sluice_v1.emit(port, ptr, len, count);
      },
      port: (ptr, len) => {
        const tag = Buffer.from(this.read(ptr, len)).toString("utf8");
        return tag === "" ? 0 : (tag in this.ports ? this.ports[tag] : -1);
      },
      error: (ptr, len) => { this.error = Buffer.from(this.read(ptr, Math.min(len, 4096))).toString("utf8"); },
      state_get: (slot, kp, kl, bp, bc) => {
        const v = this.state.get(key(slot, kp, kl));
        if (v === undefined) return -1;
        if (v.length <= bc) { this.read(bp, bc); this.mem().set(v, bp); }
        return v.length;
      },
      state_put: (slot, kp, kl, vp, vl) => { this.state.set(key(slot, kp, kl), this.read(vp, vl)); return Status.OK; },
      state_del: (slot, kp, kl) => { this.state.delete(key(slot, kp, kl)); return Status.OK; },
      state_list_get: (slot, kp, kl, bp, bc) => {
        const l = this.lists.get(key(slot, kp, kl));
        return l === undefined ? -1 : give(wire(l), bp, bc);
      },
      state_list_append: (slot, kp, kl, vp, vl) => {
        const k = key(slot, kp, kl);
        this.lists.set(k, [...(this.lists.get(k) || []), this.read(vp, vl)]);
        return Status.OK;
      },
      state_list_update: (slot, kp, kl, wp, wl) => {
        const w = this.read(wp, wl), l = [];
        const view = new DataView(w.buffer, w.byteOffset, w.byteLength);
        for (let at = 0; at < w.length;) {
          if (at + 4 > w.length) return Status.State;
          const n = view.getUint32(at, true);
          if (at + 4 + n > w.length) return Status.State;
          l.push(w.slice(at + 4, at + 4 + n));
          at += 4 + n;
        }
        const k = key(slot, kp, kl);
        if (l.length === 0) this.lists.delete(k); else this.lists.set(k, l);
        return Status.OK;
      },
      state_map_get: (slot, kp, kl, up, ul, bp, bc) => {
        const v = this.maps.get(key(slot, kp, kl))?.get(hex(up, ul));
        return v === undefined ? -1 : give(v, bp, bc);
      },
      state_map_put: (slot, kp, kl, up, ul, vp, vl) => {
        const k = key(slot, kp, kl);
        if (!this.maps.has(k)) this.maps.set(k, new Map());
        this.maps.get(k).set(hex(up, ul), this.read(vp, vl));
        return Status.OK;
      },
      state_map_del: (slot, kp, kl, up, ul) => {
        const k = key(slot, kp, kl), m = this.maps.get(k);
        if (m) { m.delete(hex(up, ul)); if (m.size === 0) this.maps.delete(k); }
        return Status.OK;
      },
      state_map_contains: (slot, kp, kl, up, ul) => (this.maps.get(key(slot, kp, kl))?.has(hex(up, ul)) ? 1 : 0),
      state_map_entries: (slot, kp, kl, bp, bc) => {
        const m = this.maps.get(key(slot, kp, kl));
        if (m === undefined) return -1;
        const items = [];
        for (const uk of [...m.keys()].sort()) items.push(Buffer.from(uk, "hex"), m.get(uk)); // hex sorts as the bytes
        return give(wire(items), bp, bc);
      },
      // timers (abi/timers.go): one per (kind, key, ts); ts is an i64 (BigInt)
      timer_register: (kind, kp, kl, ts) => {
        if (kind !== 0 && kind !== 1) return Status.State;
        const k = this.read(kp, kl);
        this.timers.set(`${kind}:${ts}:${Buffer.from(k).toString("hex")}`, { kind, ts, key: k });
        return Status.OK;
      },
      timer_delete: (kind, kp, kl, ts) => {
        if (kind !== 0 && kind !== 1) return Status.State;
        this.timers.delete(`${kind}:${ts}:${hex(kp, kl)}`);
        return Status.OK;
      },
      current_watermark: () => this.watermark,
      current_processing_time: () => this.processingTime,
      state_clear: (slot, kp, kl) => {
        const k = key(slot, kp, kl);
        this.state.delete(k); this.lists.delete(k); this.maps.delete(k);
        return Status.OK;
      },
    };
    // WASI: a plugin gets nothing; any call traps.
    const wasi = new Proxy({}, { get: (_, name) => () => { throw new Error(`wasi ${String(name)} called`); } });
    return { sluice_v1, wasi_snapshot_preview1: wasi, env: { abort: () => { throw new Error("env.abort called"); } } };
  }

  /** Writes bytes into a guest buffer; returns [ptr, len]. */
  write(bytes) {
    const ptr = this.exports.sluice_buffer(bytes.length);
    if (ptr === 0) throw new Error("sluice_buffer returned 0");
    this.mem().set(bytes, ptr >>> 0); // a fresh view: the call may have grown memory
    return [ptr, bytes.length];
  }

  /** The result of a call: status, error text and output per port. */
  result(status) {
    const out = {};
    for (const [port, o] of this.outputs) out[port] = { bytes: Buffer.concat(o.chunks), count: o.count, emits: o.emits };
    return { status, error: this.error, out };
  }

  open(config = Uint8Array.of(0x80), subtask = 0, parallelism = 1, maxParallelism = 128) {
    this.reset();
    const [p, n] = this.write(config);
    return this.result(this.exports.sluice_open(p, n, subtask, parallelism, maxParallelism));
  }

  process(batch, count, port = 0) {
    this.reset();
    const [p, n] = this.write(batch);
    return this.result(this.exports.sluice_process(port, p, n, count));
  }

  partition(batch, count, n) {
    this.reset();
    const [p, len] = this.write(batch);
    const r = this.result(this.exports.sluice_partition(p, len, count, n));
    const b = r.out[0] ? r.out[0].bytes : Buffer.alloc(0);
    r.channels = Array.from({ length: b.length / 4 }, (_, i) => b.readInt32LE(4 * i));
    return r;
  }

  /** Moves the watermark to wm (a BigInt) and fires the event-time timers
   * it passes, earliest first, each in a sluice_on_timer call; returns the
   * results. */
  advanceWatermark(wm) {
    if (wm > this.watermark) this.watermark = wm;
    const due = [...this.timers.values()].filter((t) => t.kind === 0 && t.ts <= wm).sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
    return due.map((t) => {
      this.timers.delete(`${t.kind}:${t.ts}:${Buffer.from(t.key).toString("hex")}`);
      this.reset();
      const [p, n] = this.write(t.key);
      return this.result(this.exports.sluice_on_timer(t.kind, t.ts, p, n));
    });
  }

  describe() {
    this.reset();
    return this.result(this.exports.sluice_describe());
  }

  close() {
    this.reset();
    return this.result(this.exports.sluice_close ? this.exports.sluice_close() : 0);
  }
}

// ---- msgpack encoding for tests (smallest forms, as abi/append.go) ----------

/** Marks a number to be encoded as a float64. */
export class F64 { constructor(v) { this.v = v; } }
export const f64 = (v) => new F64(v);
/** Raw msgpack bytes inserted as they are. */
export class Raw { constructor(b) { this.b = Uint8Array.from(b); } }
export const raw = (b) => new Raw(b);

function be(n, v) {
  const b = Buffer.alloc(n);
  if (n === 8) b.writeBigUInt64BE(BigInt.asUintN(64, BigInt(v)));
  else b.writeUIntBE(Number(v), 0, n);
  return b;
}

function intBytes(v) {
  v = BigInt(v);
  if (v >= 0n && v <= 0x7fn) return [Buffer.of(Number(v))];
  if (v < 0n && v >= -32n) return [Buffer.of(Number(v) & 0xff)];
  if (v >= 0n && v <= 0xffn) return [Buffer.of(0xcc), be(1, v)];
  if (v >= 0n && v <= 0xffffn) return [Buffer.of(0xcd), be(2, v)];
  if (v >= 0n && v <= 0xffffffffn) return [Buffer.of(0xce), be(4, v)];
  if (v >= -128n && v <= 127n) return [Buffer.of(0xd0), be(1, Number(v) & 0xff)];
  if (v >= -32768n && v <= 32767n) return [Buffer.of(0xd1), be(2, Number(v) & 0xffff)];
  if (v >= -2147483648n && v <= 2147483647n) return [Buffer.of(0xd2), be(4, Number(BigInt.asUintN(32, v)))];
  return [Buffer.of(v >= 0n ? 0xcf : 0xd3), be(8, v)];
}

function header(n, fix, c16) {
  if (n <= 15) return Buffer.of(fix | n);
  if (n <= 0xffff) return Buffer.concat([Buffer.of(c16), be(2, n)]);
  return Buffer.concat([Buffer.of(c16 + 1), be(4, n)]);
}

/** Encodes a JS value: null, booleans, integers (numbers or BigInt),
 * f64(x), strings, arrays, plain objects (key order kept), Raw. */
/** The offset just past the msgpack value at b[off], or -1 when it is not
 * whole (abi.Skip, without its depth limit). */
export function skip(b, off) {
  if (off >= b.length) return -1;
  const c = b[off];
  const need = (n) => (off + n <= b.length ? off + n : -1);
  const len = (n) => (off + 1 + n <= b.length ? (n === 1 ? b[off + 1] : n === 2 ? (b[off + 1] << 8) | b[off + 2]
    : ((b[off + 1] << 24) | (b[off + 2] << 16) | (b[off + 3] << 8) | b[off + 4]) >>> 0) : -1);
  const items = (at, n) => {
    for (let i = 0; i < n && at >= 0; i++) at = skip(b, at);
    return at;
  };
  if (c <= 0x7f || c >= 0xe0 || c === 0xc0 || c === 0xc2 || c === 0xc3) return off + 1;
  if (c >= 0xa0 && c <= 0xbf) return need(1 + (c & 0x1f));
  if (c >= 0x80 && c <= 0x8f) return items(off + 1, 2 * (c & 0x0f));
  if (c >= 0x90 && c <= 0x9f) return items(off + 1, c & 0x0f);
  const fixed = { 0xcc: 2, 0xcd: 3, 0xce: 5, 0xcf: 9, 0xd0: 2, 0xd1: 3, 0xd2: 5, 0xd3: 9, 0xca: 5, 0xcb: 9, 0xd4: 3, 0xd5: 4, 0xd6: 6, 0xd7: 10, 0xd8: 18 };
  if (c in fixed) return need(fixed[c]);
  const sized = { 0xd9: [1, 0], 0xda: [2, 0], 0xdb: [4, 0], 0xc4: [1, 0], 0xc5: [2, 0], 0xc6: [4, 0], 0xc7: [1, 1], 0xc8: [2, 1], 0xc9: [4, 1] };
  if (c in sized) {
    const [w, t] = sized[c], n = len(w);
    return n < 0 ? -1 : need(1 + w + t + n);
  }
  const counted = { 0xdc: [2, 1], 0xdd: [4, 1], 0xde: [2, 2], 0xdf: [4, 2] };
  if (c in counted) {
    const [w, per] = counted[c], n = len(w);
    return n < 0 ? -1 : items(off + 1 + w, per * n);
  }
  return -1; // 0xc1
}

/** Decodes the msgpack value b holds (abi.Decode's types): null, booleans,
 * numbers (BigInt past 2^53), strings, Uint8Array (bin), arrays, objects;
 * an ext value is { ext: type, data }. Throws on malformed bytes. */
export function decode(b) {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let off = 0;
  const need = (n) => { if (off + n > b.length) throw new Error("decode: truncated msgpack"); const at = off; off += n; return at; };
  const uint = (n) => { const at = need(n); return n === 1 ? view.getUint8(at) : n === 2 ? view.getUint16(at) : n === 4 ? view.getUint32(at) : view.getBigUint64(at); };
  const int = (n) => { const at = need(n); return n === 1 ? view.getInt8(at) : n === 2 ? view.getInt16(at) : n === 4 ? view.getInt32(at) : view.getBigInt64(at); };
  const small = (v) => (typeof v === "bigint" && v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v);
  const str = (n) => Buffer.from(b.subarray(need(n), off)).toString("utf8");
  const bin = (n) => new Uint8Array(b.subarray(need(n), off));
  const arr = (n) => Array.from({ length: n }, () => value());
  const map = (n) => { const o = {}; for (let i = 0; i < n; i++) { const k = value(); o[k] = value(); } return o; };
  const ext = (n) => { const type = int(1); return { ext: type, data: bin(n) }; };
  const value = () => {
    const c = uint(1);
    if (c <= 0x7f) return c;
    if (c >= 0xe0) return c - 0x100;
    if (c >= 0x80 && c <= 0x8f) return map(c & 0x0f);
    if (c >= 0x90 && c <= 0x9f) return arr(c & 0x0f);
    if (c >= 0xa0 && c <= 0xbf) return str(c & 0x1f);
    switch (c) {
      case 0xc0: return null;
      case 0xc2: return false;
      case 0xc3: return true;
      case 0xc4: case 0xc5: case 0xc6: return bin(uint(1 << (c - 0xc4)));
      case 0xc7: case 0xc8: case 0xc9: return ext(uint(1 << (c - 0xc7)));
      case 0xca: return view.getFloat32(need(4));
      case 0xcb: return view.getFloat64(need(8));
      case 0xcc: case 0xcd: case 0xce: case 0xcf: return small(uint(1 << (c - 0xcc)));
      case 0xd0: case 0xd1: case 0xd2: case 0xd3: return small(int(1 << (c - 0xd0)));
      case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8: return ext(1 << (c - 0xd4));
      case 0xd9: case 0xda: case 0xdb: return str(uint(1 << (c - 0xd9)));
      case 0xdc: case 0xdd: return arr(uint(2 << (c - 0xdc)));
      case 0xde: case 0xdf: return map(uint(2 << (c - 0xde)));
    }
    throw new Error(`decode: byte 0x${c.toString(16)} starts no msgpack value`);
  };
  const v = value();
  if (off !== b.length) throw new Error("decode: bytes after the value");
  return v;
}

export function encode(v) {
  const parts = [];
  const put = (v) => {
    if (v === null || v === undefined) parts.push(Buffer.of(0xc0));
    else if (v === true || v === false) parts.push(Buffer.of(v ? 0xc3 : 0xc2));
    else if (v instanceof Raw) parts.push(Buffer.from(v.b));
    else if (v instanceof F64) { const b = Buffer.alloc(9); b[0] = 0xcb; b.writeDoubleBE(v.v, 1); parts.push(b); }
    else if (typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v))) parts.push(...intBytes(v));
    else if (typeof v === "number") put(new F64(v));
    else if (typeof v === "string") {
      const s = Buffer.from(v, "utf8"), n = s.length;
      if (n <= 31) parts.push(Buffer.of(0xa0 | n));
      else if (n <= 0xff) parts.push(Buffer.of(0xd9, n));
      else if (n <= 0xffff) parts.push(Buffer.of(0xda), be(2, n));
      else parts.push(Buffer.of(0xdb), be(4, n));
      parts.push(s);
    } else if (Array.isArray(v)) { parts.push(header(v.length, 0x90, 0xdc)); v.forEach(put); }
    else if (v instanceof Uint8Array) { parts.push(Buffer.of(0xc4, v.length), Buffer.from(v)); }
    else { const ks = Object.keys(v); parts.push(header(ks.length, 0x80, 0xde)); for (const k of ks) { put(k); put(v[k]); } }
  };
  put(v);
  return Buffer.concat(parts);
}

/** A batch of envelopes: records are [time|null, key|null, value]. */
export function batch(records) {
  return Buffer.concat(records.map(([t, k, v]) => Buffer.concat([Buffer.of(0x93), encode(t), encode(k), encode(v)])));
}
