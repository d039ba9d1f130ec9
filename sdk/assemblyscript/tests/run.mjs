// Tests of the AssemblyScript SDK: the modules in this folder are compiled
// like plugins (--runtime stub -O3, the SDK's abort handler) and run under
// node through testing/host.mjs, a fake ABI v1 host. Run: node tests/run.mjs
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { F64, Instance, Raw, Status, batch, decode, encode, f64, raw } from "../testing/host.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const sdk = join(here, "..");
const out = mkdtempSync(join(tmpdir(), "sluice-as-test-"));

function build(name) {
  const wasm = join(out, name + ".wasm");
  execFileSync(join(sdk, "node_modules/.bin/asc"), [
    `tests/${name}.ts`, "--runtime", "stub", "-O3",
    "--use", "abort=assembly/abort/sluiceAbort", "-o", wasm,
  ], { cwd: sdk, stdio: ["ignore", "inherit", "inherit"] });
  return wasm;
}

const tests = [];
const test = (name, fn) => tests.push([name, fn]);

test("codec: reading every type, writing the smallest forms", async () => {
  const inst = await Instance.load(build("codec"));
  assert.equal(inst.open().status, 0);
  const T = { Nil: 1, Bool: 2, Int: 3, Float: 4, Str: 5, Array: 7 };
  const cases = [
    // x, type, int(), asInt(), asF64(), copy
    [5, T.Int, 5, 5, f64(5), 5],
    [-33, T.Int, -33, -33, f64(-33), -33],
    [1n << 40n, T.Int, 1n << 40n, 1n << 40n, f64(2 ** 40), 1n << 40n],
    [-(1n << 40n), T.Int, -(1n << 40n), -(1n << 40n), f64(-(2 ** 40)), -(1n << 40n)],
    [f64(1.5), T.Float, 1, 0, f64(1.5), f64(1.5)],
    [f64(-0.5), T.Float, 0, 0, f64(-0.5), f64(-0.5)],
    [f64(NaN), T.Float, 0, 0, f64(NaN), f64(NaN)],
    [f64(1e300), T.Float, (1n << 63n) - 1n, 0, f64(1e300), f64(1e300)],
    [raw([0xca, 0x3f, 0xc0, 0, 0]), T.Float, 1, 0, f64(1.5), f64(1.5)],
    [raw([0xcf, 0xff, 0, 0, 0, 0, 0, 0, 0]), T.Int, 0, 0, f64(0), 0],
    [true, T.Bool, 0, 0, f64(0), true],
    [null, T.Nil, 0, 0, f64(0), null],
    [[1, "a"], T.Array, 0, 0, f64(0), [1, "a"]],
  ];
  for (const [x, type, int, asInt, asF64, copy] of cases) {
    const r = inst.process(batch([[7, null, { keep: 1, x }]]), 1);
    assert.equal(r.status, 0, r.error);
    const want = batch([[7, null, { keep: 1, type, int, asInt, f64: asF64, isStr: false, copy }]]);
    assert.deepEqual(r.out[0].bytes, want, `x = ${encode(x).toString("hex")}`);
  }
  for (const s of ["hello", "a".repeat(40), "é😀"]) {
    const r = inst.process(batch([[null, "k", { x: s }]]), 1);
    const want = batch([[null, "k", { type: T.Str, int: 0, asInt: 0, f64: f64(0), isStr: true, str: s, copy: s }]]);
    assert.deepEqual(r.out[0].bytes, want);
  }
  // Java's String.hashCode, also of malformed UTF-8: new String(bytes,
  // UTF_8).hashCode() in Java 17 (abi/testdata/java-strings.txt.gz holds
  // the host to thousands more)
  const malformed = [
    [[0xff], 65533], [[0xe2, 0x82, 0x41], 2031588], [[0xed, 0xa0, 0x80], 65533], [[0xf0, 0x9f, 0x98, 0x41], 2031588],
    [[0xe0, 0x80], 2097056], [[0xf0, 0x90, 0x80], 65533], [[0xf4, 0x90, 0x80, 0x80], 2017367872], [[0xc2, 0x41], 2031588],
    [[0xc2], 65533], [[0xe2], 65533], [[0xe2, 0x82], 65533], [[0xf0, 0x9f], 65533], [[0xf0, 0x9f, 0x98], 65533],
    [[0xf0, 0x9f, 0x41], 2031588], [[0xf5, 0x80, 0x80, 0x80], 2017367872], [[0xed, 0x9f, 0xbf], 55295], [[0x80], 65533],
    [[0xe0, 0xa0, 0x41], 2031588], [[0xf0, 0x90, 0x80, 0x41], 2031588], [[0x41, 0xff, 0x42], 2094054],
  ].map(([b, h]) => [raw([0xa0 | b.length, ...b]), h]);
  for (const [s, h] of [["hello", 99162322], ["😀", 31 * 0xd83d + 0xde00], ["NL", 2494], ...malformed]) {
    const r = inst.process(batch([[null, null, { s }]]), 1);
    assert.deepEqual(r.out[0].bytes, batch([[null, null, { type: 0, int: 0, asInt: 0, f64: f64(0), isStr: false, copy: raw([]), h }]]));
  }
  // a non-ASCII field name
  const r = inst.process(batch([[null, null, { "ünï": 1 }]]), 1);
  assert.ok(r.out[0].bytes.includes(Buffer.from("ünï ✓")));
});

test("codec: a record edit past 15 fields gets a map16 header", async () => {
  const inst = await Instance.load(build("codec"));
  inst.open();
  const v = {};
  for (let i = 0; i < 10; i++) v["f" + i] = i;
  const r = inst.process(batch([[null, null, v]]), 1);
  assert.equal(r.status, 0, r.error);
  assert.deepEqual(r.out[0].bytes.subarray(3, 6), Buffer.of(0xde, 0, 16)); // 10 + 6 new
});

test("malformed input is a status and a text, never a trap", async () => {
  const inst = await Instance.load(build("codec"));
  inst.open();
  const b = batch([[1, null, { x: 1 }], [2, null, { x: 2 }]]);
  const cases = [
    [b, 1, "bytes left after the last record"],
    [b, 3, "fewer records than its count"],
    [b.subarray(0, b.length - 1), 2, "truncated msgpack"],
    [Buffer.of(0x93, 0xa1, 0x78, 0xc0, 0x80), 1, "event time"],
    [Buffer.of(0x92, 0xc0, 0x80), 1, "envelope"],
    [Buffer.concat([Buffer.of(0x93, 0xc0, 0xc0), Buffer.alloc(65, 0x91), Buffer.of(1)]), 1, "deeper than the limit"],
    [Buffer.of(0x93, 0xc0, 0xc0, 0xdf, 0xff, 0xff, 0xff, 0xff), 1, "truncated"],
    [b, -1, "negative"],
  ];
  for (const [bytes, count, text] of cases) {
    const r = inst.process(bytes, count);
    assert.equal(r.status, Status.Malformed, text);
    assert.match(r.error, new RegExp(text));
    assert.equal(r.out[0], undefined, "no output from a failed batch");
  }
  assert.equal(inst.process(Buffer.alloc(0), 0).status, 0, "an empty batch");
  assert.equal(inst.process(b, 2, 1).status, Status.Unsupported, "a map has no port 1");
  assert.equal(inst.open().status, Status.Unsupported, "open twice");
});

test("the abort handler reports through error and traps", async () => {
  const inst = await Instance.load(build("codec"));
  inst.open();
  assert.throws(() => inst.process(batch([[null, null, { boom: 1 }]]), 1), WebAssembly.RuntimeError);
  assert.match(inst.error, /^abort: boom \(tests\/codec\.ts:\d+\)$/);
});

test("text and keys as Go sees them", async () => {
  const inst = await Instance.load(build("text"));
  inst.open();
  const cases = [
    // s, lower, spaces, puncts, last rune, its size
    ["İSTANBUL Ça\u00a0Va—!", "istanbul ça\u00a0va—!", 2, 2, 0x21, 1],
    ["ΣΊΣΥΦΟΣ 𐐀 Ⰰ", "σίσυφοσ 𐐨 ⰰ", 2, 0, 0x2c00, 3],
    [raw([0xa5, 0xff, 0x41, 0xc3, 0x20, 0xe2]), "\ufffda\ufffd \ufffd", 1, 0, 0xfffd, 1],
  ];
  for (const [s, lower, spaces, puncts, last, lastSize] of cases) {
    const r = inst.process(batch([[null, null, { s }]]), 1);
    assert.equal(r.status, 0, r.error);
    assert.deepEqual(r.out[0].bytes, batch([[null, null, { s, lower, spaces, puncts, last, lastSize }]]), JSON.stringify(s));
  }
  // abi.KeyHash vectors (abi/keyhash_test.go)
  const keys = [["hello", 99162322], [42, 42], [-1, -1], [1n << 32n, 1], [-(1n << 63n), -2147483648], [f64(1.0), 1072693248],
    [f64(NaN), 2146959360], [true, 1231], [false, 1237], [["a", 1], 31 * 97 + 1], [raw([0xca, 0x7f, 0xc0, 0, 1]), 0x7fc00000]];
  for (const [k, kh] of keys) {
    const r = inst.process(batch([[null, null, { k }]]), 1);
    assert.deepEqual(r.out[0].bytes, batch([[null, null, { k, kh }]]), `key ${JSON.stringify(String(k))}`);
  }
  for (const [k, why] of [[null, "key must not be null"], [{}, "a map, binary or ext value is not a key"], [[], "unexpected msgpack type"], [[[1]], "nested composite key"]]) {
    const r = inst.process(batch([[null, null, { k }]]), 1);
    assert.deepEqual(r.out[0].bytes, batch([[null, null, { k, why }]]));
  }
});

test("config: the typed getters take what the Go SDK's take and name what they refuse", async () => {
  const wasm = build("config");
  const cfg = encode({ n: 7, text: " -42 ", half: f64(1.5), yes: "true", word: "hot", list: [] });
  let inst = await Instance.load(wasm);
  let r = inst.open(cfg);
  assert.equal(r.status, 0, r.error);
  r = inst.process(batch([[null, null, {}]]), 1);
  assert.equal(r.status, 0, r.error);
  assert.deepEqual(decode(r.out[0].bytes.subarray(3)), { n: 7, text: -42, half: 1.5, yes: true, word: "hot", num: "7" });
  // a value of another type fails open after it returned OK
  inst = await Instance.load(wasm);
  r = inst.open(encode({ n: f64(1.5), text: "x", half: "1-2", yes: 2, word: {} }));
  assert.deepEqual([r.status, r.error], [Status.Config,
    'config n: want an integer (int64), got 1.5; config text: want an integer (int64), got "x"; config half: want a number, got "1-2"; config yes: want a boolean, got 2; config word: want a string, got a map']);
  inst = await Instance.load(wasm);
  assert.equal(inst.open(encode({ half: " 2.5e1 ", yes: "T" })).status, 0);
  r = inst.process(batch([[null, null, {}]]), 1);
  assert.deepEqual([decode(r.out[0].bytes.subarray(3)).half, decode(r.out[0].bytes.subarray(3)).yes], [25, true]);
  // an open's own "config NAME: ..." is not prefixed "open: "
  inst = await Instance.load(wasm);
  r = inst.open(encode({ refuse: true }));
  assert.deepEqual([r.status, r.error], [Status.Config, "config refuse: told to"]);
});

test("list and map state: add, get, update, map get/put/del/contains/entries, clear", async () => {
  const inst = await Instance.load(build("kinds"));
  assert.equal(inst.open().status, 0);
  const steps = [
    [{ v: 1, m: "a" }, [1, 1, 1, true]],
    [{ v: 2, m: "b" }, [2, 3, 2, true]],
    [{ v: 3, m: "a" }, [2, 5, 2, true]], // the list keeps the last two
    [{ v: 4, m: "c", drop: 1 }, [2, 7, 2, false]],
    [{ clear: 1 }, [0, 0, 0, false]],
  ];
  for (const [rec, want] of steps) {
    const r = inst.process(batch([[null, "k", rec]]), 1);
    assert.equal(r.status, 0, r.error);
    assert.deepEqual(r.out[0].bytes, batch([[null, null, want]]));
  }
  assert.equal(inst.lists.size + inst.maps.size, 0, "cleared");
  const r = inst.process(batch([[null, "k", { v: 9, m: "z" }], [null, "j", { v: 8, m: "z" }]]), 2);
  assert.equal(r.status, 0, r.error);
  assert.equal(inst.lists.size, 2, "a list per key");
});

test("process: side outputs, keyed state, errors, limits, describe", async () => {
  const wasm = build("late");
  let inst = await Instance.load(wasm, { unconsumed: ["unused"] });
  assert.equal(inst.process(Buffer.alloc(0), 0).status, Status.Unsupported, "before open");
  assert.equal(inst.open().status, 0);
  const b = batch([[50, "k", { a: 1 }], [150, "k", { a: 2 }], [150, "j", {}]]);
  let r = inst.process(b, 3);
  assert.equal(r.status, 0, r.error);
  assert.deepEqual(r.out[0], { bytes: batch([[150, null, "x"], [150, null, "x"]]), count: 2, emits: 1 }); // new records: no key
  assert.deepEqual(r.out[1], { bytes: batch([[50, "k", { a: 1 }]]), count: 1, emits: 1 });
  assert.deepEqual(Object.keys(r.out), ["0", "1"], "nothing on the unconsumed output");
  assert.equal(inst.state.size, 2);
  r = inst.process(batch([[1, null, {}]]), 1);
  assert.equal(r.status, Status.State);
  assert.match(r.error, /key/);
  r = inst.process(batch([[200, "k", { fail: 1 }]]), 1);
  assert.deepEqual([r.status, r.error], [Status.User, "record 0: told to fail"]);
  r = inst.process(batch([[200, "k", { alerts: 1 }]]), 1);
  assert.deepEqual([r.status, r.error], [Status.User, 'unknown side output "alerts" (output): the plugin declares "late", "unused" in its .outputs([...])']);
  r = inst.process(batch([[200, "k", { seven: 1 }]]), 1);
  assert.deepEqual([r.status, r.error], [Status.User, "record 0: late: process returned 7, not a status: return Status.OK or a negative status (fail)"]);
  assert.equal(inst.process(b, 3, 1).status, 0, "a process has a second input");
  assert.equal(inst.process(b, 3, 2).status, Status.Unsupported);
  r = inst.describe();
  assert.deepEqual(r.out[0].bytes, encode({ kind: "process", sdk: "assemblyscript", name: "late", outputs: ["late", "unused"], keyed: true }));
  inst = await Instance.load(wasm, { ports: { late: 1 }, maxOutput: 10 });
  inst.open();
  r = inst.process(b, 3);
  assert.equal(r.status, Status.Limit);
  assert.match(r.error, /output limit/);
});

test("declared side outputs are routed by default, as Go's sdktest", async () => {
  const wasm = build("late");
  let inst = await Instance.load(wasm);
  assert.deepEqual(inst.declared, ["late", "unused"]);
  assert.deepEqual(inst.ports, { late: 1, unused: 2 });
  assert.equal(inst.open().status, 0);
  const b = batch([[50, "k", { a: 1 }], [60, "k", { a: 2 }]]);
  let r = inst.process(b, 2);
  assert.equal(r.status, 0, r.error);
  assert.deepEqual(r.out[1], { bytes: b, count: 2, emits: 1 });
  assert.deepEqual(r.out[2], { bytes: batch([[60, "k", { a: 2 }]]), count: 1, emits: 1 });
  inst = await Instance.load(wasm, { ports: { late: 7 } }); // an explicit port still wins
  inst.open();
  r = inst.process(b, 2);
  assert.deepEqual([r.out[7].count, r.out[2].count, r.out[1]], [2, 1, undefined]);
});

test("decode reads what encode writes", () => {
  const v = { a: [1, -33, 300, -70000, 1n << 60n, 2 ** 40, "é", null, true, f64(1.5)], b: Uint8Array.of(1, 2), "": {} };
  assert.deepEqual(decode(encode(v)), { ...v, a: [1, -33, 300, -70000, 1n << 60n, 2 ** 40, "é", null, true, 1.5] });
  assert.throws(() => decode(encode("abc").subarray(0, 2)), /truncated/);
});

test("flatMap: large outputs are flushed early, memory stays flat", async () => {
  const inst = await Instance.load(build("words"));
  inst.open();
  const line = Array(30000).fill("w").join(" ");
  const b = batch([[3, "k", { line }]]);
  let r = inst.process(b, 1);
  assert.equal(r.status, 0, r.error);
  assert.equal(r.out[0].count, 30000);
  assert.ok(r.out[0].emits > 1, "flushed at 64 KiB");
  assert.deepEqual(r.out[0].bytes.subarray(0, 12), batch([[3, "k", { word: "w" }]]));
  const small = batch(Array.from({ length: 100 }, (_, i) => [i, null, { line: "a bb ccc" }]));
  for (let i = 0; i < 20; i++) inst.process(small, 100);
  const size = inst.exports.memory.buffer.byteLength;
  for (let i = 0; i < 2000; i++) r = inst.process(small, 100);
  assert.equal(r.out[0].count, 300);
  assert.equal(inst.exports.memory.buffer.byteLength, size, "no per-record allocation");
});

test("partitioner: little-endian channels, key errors, config errors", async () => {
  const wasm = build("bylen");
  let inst = await Instance.load(wasm);
  inst.open();
  let r = inst.partition(batch([[null, "a", {}], [null, "bbb", {}], [1, "cc", 5]]), 3, 2);
  assert.equal(r.status, 0, r.error);
  assert.deepEqual(r.channels, [1, 1, 0]);
  r = inst.partition(batch([[null, null, {}]]), 1, 2);
  assert.deepEqual([r.status, r.error], [Status.User, "record 0: key must be a string"]);
  assert.equal(inst.partition(batch([[null, "a", {}]]), 1, 0).status, Status.Malformed);
  assert.equal(inst.exports.sluice_process, undefined, "a partitioner exports no process");
  inst = await Instance.load(wasm);
  r = inst.open(encode({ fail: true }));
  assert.deepEqual([r.status, r.error], [Status.Config, "open: told to fail"]);
  assert.equal(inst.open(Uint8Array.of(0x90)).status, Status.Config, "a config that is not a map");
});

// The benchmark's records (plugins/langtest): {txnId, accountId, amount, currency}
const txn = (i, amount) => [1_700_000_000_000 + i, null, { txnId: i, accountId: `acct-${i % 97}`, amount, currency: "EUR" }];

test("filter: kept neighbours go out as runs, in order with the callback's own emits", async () => {
  const inst = await Instance.load(build("keep"));
  inst.open();
  const amounts = [1, 2, -1, 3, 7, 4, -2, -3, 7, 7, 5, -4, 6, f64(2.5), raw([0xd0, 0x05]), raw([0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0])];
  const recs = amounts.map((a, i) => txn(i * 50, a));
  const want = [];
  recs.forEach((r, i) => {
    const a = amounts[i];
    if (a === 7) want.push(r);
    if ((typeof a === "number" && a > 0) || a instanceof F64 || (a instanceof Raw && a.b[0] === 0xd0)) want.push(r);
  });
  let r = inst.process(batch(recs), recs.length);
  assert.equal(r.status, 0, r.error);
  assert.deepEqual(r.out[0], { bytes: batch(want), count: want.length, emits: 1 });
  // everything kept, past the 64 KiB flush threshold (runs break at 1,024
  // records, ~56 KiB here): the input, byte for byte
  const all = Array.from({ length: 4000 }, (_, i) => txn(i, 1 + (i % 3)));
  r = inst.process(batch(all), all.length);
  assert.equal(r.status, 0, r.error);
  assert.equal(r.out[0].count, all.length);
  assert.ok(r.out[0].emits > 1, "flushed at 64 KiB");
  assert.deepEqual(r.out[0].bytes, batch(all));
});

test("filter: event times of every width, keys, and every cut of an envelope", async () => {
  const inst = await Instance.load(build("keep"));
  inst.open();
  for (const t of [null, 0, 5, -1, 200, 70000, -70000, 1n << 40n, -(1n << 40n), (1n << 63n) - 1n, -(1n << 63n)]) {
    for (const k of [null, "key", [1, "a"]]) {
      const b = batch([[t, k, { amount: 1 }]]);
      const r = inst.process(b, 1);
      assert.equal(r.status, 0, r.error);
      assert.deepEqual(r.out[0].bytes, b, `time ${t}, key ${k}`);
    }
  }
  const big = Buffer.of(0x93, 0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0, 0xc0, 0x80); // 2^63
  assert.match(inst.process(big, 1).error, /event time out of range/);
  const values = [
    { txnId: 5, accountId: "acct-12", amount: 3, nested: { a: f64(1.5) }, currency: "EUR" },
    { txnId: 1000, accountId: "x".repeat(40), amount: -3 }, // a str8 value
    raw([0x82, 0x07, 0x01, 0xd9, 6, 0x61, 0x6d, 0x6f, 0x75, 0x6e, 0x74, 0x03]), // {7: 1, "amount" (a str8 key): 3}
  ];
  for (const v of values) {
    const b = Buffer.concat([Buffer.of(0x93), encode(1_700_000_000_000), encode(null), encode(v)]);
    assert.equal(inst.process(b, 1).status, 0);
    for (let cut = 0; cut < b.length; cut++) {
      const r = inst.process(b.subarray(0, cut), 1);
      assert.equal(r.status, Status.Malformed, `cut at ${cut} of ${b.toString("hex")}`);
    }
  }
});

test("lookups: keys of every length, ASCII or not, as strings and as bytes", async () => {
  const inst = await Instance.load(build("lookup"));
  inst.open();
  const obj = {}, names = [], want = {};
  for (let n = 1; n <= 22; n++) {
    const name = Array.from({ length: n }, (_, i) => String.fromCharCode(97 + ((n + i) % 26))).join("");
    obj[name] = n % 3 === 0 ? n : n % 3 === 1 ? "s".repeat(n) : [n, null];
    names.push(name, name.slice(0, -1) + "!", "!" + name.slice(1)); // present, differs at the end, at the start
  }
  obj["ünï"] = 1; obj["é😀"] = 2; obj["aé"] = 3;
  names.push("ünï", "é😀", "aé", "ae", "é", "ünï!", "");
  // around the 31 UTF-8 bytes a fixstr holds, where names.ts stops caching
  for (const name of ["x".repeat(31), "y".repeat(32), "z".repeat(40), "é".repeat(15) + "a", "é".repeat(16), "😀".repeat(8)]) {
    obj[name] = name.length;
    names.push(name, name.slice(0, -1));
  }
  names.forEach((name, i) => { want["v" + i] = name in obj ? obj[name] : null; want["same" + i] = true; });
  // keys the fast path does not take: a str8 key, an int key, a map16 body
  const odd = raw([0x83, 0xd9, 3, 0x6b, 0x65, 0x79, 1, 7, 2, 0xa1, 0x7a, 3]); // {"key" (str8): 1, 7: 2, "z": 3}
  const map16 = raw([0xde, 0, 2, 0xa1, 0x61, 1, 0xa1, 0x62, 2]);              // {"a": 1, "b": 2} as a map16
  let r = inst.process(batch([[null, null, { obj, names }], [null, null, { obj: odd, names: ["key", "z", "7"] }],
    [null, null, { obj: map16, names: ["a", "b", "c"] }]]), 3);
  assert.equal(r.status, 0, r.error);
  assert.deepEqual(r.out[0].bytes, batch([[null, null, want],
    [null, null, { v0: 1, same0: true, v1: 3, same1: true, v2: null, same2: true }],
    [null, null, { v0: 1, same0: true, v1: 2, same1: true, v2: null, same2: true }]]));
});

test("lookups in the record's own value, which the SDK indexes", async () => {
  const inst = await Instance.load(build("lookup"));
  inst.open();
  // a fixmap of 14 fields: keys of 1 to 17 bytes, ASCII or not, one twice
  const rec = raw([0x8e, ...[["a", 1], ["bc", "x"], ["def", [1, 2]], ["ghij", null], ["klmnopq", 300],
    ["rstuvwxy", -5], ["zabcdefghijklmno", "s"], ["zabcdefghijklmnop", 7], ["ünï", 2], ["é😀", 3], ["a", 99],
    ["k", {}], ["zz", 1.5]].flatMap(([k, v]) => [...encode(k), ...encode(v)]), ...encode("names"),
    ...encode(["a", "bc", "def", "ghij", "klmnopq", "rstuvwxy", "zabcdefghijklmno", "zabcdefghijklmnop", "ünï", "é😀",
      "k", "zz", "names", "b", "ab", "defg", "zabcdefghijklmnoq", "ün", "", "A"])]);
  const vals = { a: 1, bc: "x", def: [1, 2], ghij: null, klmnopq: 300, rstuvwxy: -5, zabcdefghijklmno: "s",
    zabcdefghijklmnop: 7, "ünï": 2, "é😀": 3, k: {}, zz: 1.5 };
  const names = ["a", "bc", "def", "ghij", "klmnopq", "rstuvwxy", "zabcdefghijklmno", "zabcdefghijklmnop", "ünï",
    "é😀", "k", "zz", "names", "b", "ab", "defg", "zabcdefghijklmnoq", "ün", "", "A"];
  const want = {};
  names.forEach((name, i) => {
    want["v" + i] = name === "names" ? names : name in vals ? vals[name] : null;
    want["same" + i] = true;
  });
  const r = inst.process(batch([[null, null, rec]]), 1);
  assert.equal(r.status, 0, r.error);
  assert.deepEqual(r.out[0].bytes, batch([[null, null, want]]));
});

test("names: more literal names than the cache has slots, from record to record", async () => {
  const inst = await Instance.load(build("names"));
  inst.open();
  const IN = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p",
    "amount", "currency", "txnId", "accountId", "é", "ünï", "é😀", "name with spaces",
    "q", "thirty-one-bytes-long-name-0123", "thirty-two-bytes-long-name-01234",
    "a-name-of-forty-bytes-which-is-long-0123", "ééééééééééééééé!", "éééééééééééééééé",
    "r", "s", "t", "u", "v", "w", "y", "z", "aa", "bb"];
  const recs = [], wants = [];
  let seed = 7;
  const rand = (n) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  for (let k = 0; k < 60; k++) {
    const v = {}, want = {};
    let sum = 0;
    for (let f = 0; f < 6; f++) v[IN[rand(IN.length)]] = rand(100) - 50;
    for (const name of Object.keys(v)) want[name] = v[name];
    IN.forEach((name, i) => {
      if (!(name in v)) return;
      want["out_" + name] = v[name] * (i + 1);
      sum += v[name] * (i + 1);
    });
    want.sum = sum;
    recs.push([null, null, v]);
    wants.push([null, null, want]);
  }
  const r = inst.process(batch(recs), recs.length);
  assert.equal(r.status, 0, r.error);
  assert.deepEqual(r.out[0].bytes, batch(wants));
});

test("reduce: keyed, one input, describes itself as a keyed reduce", async () => {
  const inst = await Instance.load(build("count"));
  assert.equal(inst.open().status, 0);
  const b = batch([[1, "a", {}], [2, "b", {}], [3, "a", {}]]);
  const r = inst.process(b, 3);
  assert.equal(r.status, 0, r.error);
  assert.deepEqual(r.out[0].bytes, batch([[1, "a", 1], [2, "b", 1], [3, "a", 2]]));
  assert.equal(inst.process(b, 3, 1).status, Status.Unsupported, "a reduce has one input");
  assert.deepEqual(inst.describe().out[0].bytes, encode({ kind: "reduce", sdk: "assemblyscript", name: "count", outputs: [], keyed: true }));
});

test("timers: registered once per (kind, key, ts), fired with the key, its state and the watermark", async () => {
  const inst = await Instance.load(build("timers"));
  assert.equal(inst.open().status, 0);
  const r = inst.process(batch([[100, "k", {}]]), 1);
  assert.equal(r.status, 0, r.error);
  assert.equal(inst.timers.size, 1, "one event-time timer; the processing-time one deleted");
  assert.deepEqual(inst.advanceWatermark(109n), []);
  const fired = inst.advanceWatermark(110n);
  assert.equal(fired.length, 1);
  assert.equal(fired[0].status, 0, fired[0].error);
  assert.deepEqual(fired[0].out[0].bytes, batch([[110, null, { wm: 110, seen: 1 }]]));
  assert.equal(inst.process(batch([[1, null, {}]]), 1).status, Status.State, "an unkeyed record has no timers");
  const [p, n] = inst.write(Uint8Array.of(0xc1));
  assert.equal(inst.exports.sluice_on_timer(0, 1n, p, n), Status.Malformed);
});

let failed = 0;
for (const [name, fn] of tests) {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}\n${e.stack}`);
  }
}
rmSync(out, { recursive: true, force: true });
console.log(failed ? `FAIL: ${failed} of ${tests.length}` : `ok: sdk/assemblyscript, ${tests.length} tests`);
process.exit(failed ? 1 : 0);
