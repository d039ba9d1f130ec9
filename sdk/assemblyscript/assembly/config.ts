// Typed getters for the config open receives, as the Go SDK's
// OpenContext.Config*: the value of a top-level key, def when the key is
// missing or nil. An integer takes a whole float and a numeric string, a
// float an integer, a boolean "true" and "false", a string a number or a
// boolean formatted. A value of another type returns def and records
// "config NAME: want T, got V": open then fails with Status.Config and
// that text once the plugin's open returns Status.OK (the host points at
// NAME's line in the pipeline file). They allocate: call them in open.
import { Type, Value } from "./value";

let problems = "";

/** The getters' refusals so far ("" when none); for the runtime. */
export function configProblems(): string { return problems; }

/** Forgets the refusals; for the runtime, before open. */
export function resetConfigProblems(): void { problems = ""; }


function present(config: Value, name: string): Value | null {
  const v = config.getInto(name, new Value());
  return v.exists && !v.isNil ? v : null;
}

function bigUint(v: Value): bool { return v.len == 9 && load<u8>(v.ptr) == 0xcf && load<u8>(v.ptr + 1) >= 0x80; }

function uint64Of(v: Value): u64 {
  let u: u64 = 0;
  for (let i = 1; i < 9; i++) u = (u << 8) | <u64>load<u8>(v.ptr + i);
  return u;
}

/** A value as the Go SDK names it in errors. */
function describe(v: Value): string {
  const t = v.type;
  if (t == Type.Str) {
    const s = v.asString();
    return s.length > 40 ? "\"" + s.substring(0, 40) + "\"..." : "\"" + s + "\"";
  }
  if (t == Type.Int) return bigUint(v) ? uint64Of(v).toString() : v.asInt().toString();
  if (t == Type.Float) {
    const f = v.asF64();
    if (f == Math.trunc(f) && Math.abs(f) < 1e15) return (<i64>f).toString();
    return f.toString();
  }
  if (t == Type.Bool) return v.asBool() ? "true" : "false";
  if (t == Type.Array) return "a list";
  if (t == Type.Map) return "a map";
  if (t == Type.Bin) return "binary";
  return "a value of another type";
}

function bad(name: string, want: string, v: Value): void {
  const p = "config " + name + ": want " + want + ", got " + describe(v);
  problems = problems.length > 0 ? problems + "; " + p : p;
}

/** Parses a decimal integer with spaces around it; ok in parsed[0]. */
function parseInt64(s: string, out: StaticArray<i64>): bool {
  s = s.trim();
  let i = 0;
  let neg = false;
  if (s.length > 0 && (s.charCodeAt(0) == 45 || s.charCodeAt(0) == 43)) { neg = s.charCodeAt(0) == 45; i = 1; }
  if (i == s.length) return false;
  let u: u64 = 0;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57 || u > 922337203685477580) return false;
    u = u * 10 + <u64>(c - 48);
  }
  if (u > (neg ? <u64>0x8000000000000000 : <u64>0x7fffffffffffffff)) return false;
  out[0] = neg ? <i64>(0 - u) : <i64>u;
  return true;
}

const parsed = new StaticArray<i64>(1);

/** Whether s is a decimal number: a sign, digits with at most one point,
 * and an exponent (parseFloat alone takes a prefix: "1-2" as 1). */
function isDecimal(s: string): bool {
  let i = 0, digits = 0;
  const n = s.length;
  if (i < n && (s.charCodeAt(i) == 43 || s.charCodeAt(i) == 45)) i++;
  for (; i < n && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57; i++) digits++;
  if (i < n && s.charCodeAt(i) == 46) for (i++; i < n && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57; i++) digits++;
  if (digits == 0) return false;
  if (i < n && (s.charCodeAt(i) == 101 || s.charCodeAt(i) == 69)) {
    i++;
    if (i < n && (s.charCodeAt(i) == 43 || s.charCodeAt(i) == 45)) i++;
    const start = i;
    for (; i < n && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57; i++) {}
    if (i == start) return false;
  }
  return i == n;
}

export function configInt(config: Value, name: string, def: i64): i64 {
  const v = present(config, name);
  if (v == null) return def;
  const t = v.type;
  if (t == Type.Int && !bigUint(v)) return v.asInt();
  if (t == Type.Float) {
    const f = v.asF64();
    if (f == Math.trunc(f) && f >= -9.223372036854776e18 && f < 9.223372036854776e18) return <i64>f;
  }
  if (t == Type.Str && parseInt64(v.asString(), parsed)) return parsed[0];
  bad(name, "an integer (int64)", v);
  return def;
}

export function configFloat(config: Value, name: string, def: f64): f64 {
  const v = present(config, name);
  if (v == null) return def;
  const t = v.type;
  if (t == Type.Int) return bigUint(v) ? <f64>uint64Of(v) : <f64>v.asInt();
  if (t == Type.Float) return v.asF64();
  if (t == Type.Str) {
    const s = v.asString().trim();
    if (isDecimal(s)) return parseFloat(s);
  }
  bad(name, "a number", v);
  return def;
}

export function configBool(config: Value, name: string, def: bool): bool {
  const v = present(config, name);
  if (v == null) return def;
  if (v.type == Type.Bool) return v.asBool();
  if (v.type == Type.Str) { // as Go's strconv.ParseBool
    const s = v.asString().trim();
    if (s == "1" || s == "t" || s == "T" || s == "true" || s == "TRUE" || s == "True") return true;
    if (s == "0" || s == "f" || s == "F" || s == "false" || s == "FALSE" || s == "False") return false;
  }
  bad(name, "a boolean", v);
  return def;
}

export function configStr(config: Value, name: string, def: string): string {
  const v = present(config, name);
  if (v == null) return def;
  const t = v.type;
  if (t == Type.Str) return v.asString();
  if (t == Type.Int || t == Type.Float || t == Type.Bool) return describe(v);
  bad(name, "a string", v);
  return def;
}
