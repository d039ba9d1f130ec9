// country (AssemblyScript): a custom partitioner keyed by a country code,
// as the Go plugin (plugins/country/main.go): the hot country (config
// "hot", default "NL") always goes to channel 0, every other key hashes
// (Java hashCode, as Flink: abi.KeyHash) over channels 1..n-1; with one
// channel everything goes to 0. A key without a hash (nil, a map...) fails
// the batch.
import { Context, KeyHash, Status, Type, Value, bytesEqual, fail, keyHash, partitioner } from "../../../sdk/assemblyscript/assembly/index";
export * from "../../../sdk/assemblyscript/assembly/partitioner";

let hot: usize = memory.data<u8>([0x4e, 0x4c]); // "NL"
let hotLen: i32 = 2;
let hotText: ArrayBuffer = new ArrayBuffer(0); // keeps a formatted "hot" alive
const hash = new KeyHash();

function open(ctx: Context, config: Value): i32 {
  const v = config.getInto("hot", new Value());
  if (!v.exists || v.isNil) return Status.OK;
  if (v.isStr) {
    hot = v.strPtr; // a view into the config: valid for the instance's life
    hotLen = v.strLen;
    return Status.OK;
  }
  // as Go's ConfigString: an integer or a boolean formatted (this allocates, once)
  let s: string;
  if (v.isInt && !(load<u8>(v.ptr) == 0xcf && load<u8>(v.ptr + 1) >= 0x80)) s = v.asInt().toString();
  else if (v.isBool) s = v.asBool() ? "true" : "false";
  else return fail(Status.Config, "config hot: want a string");
  hotText = String.UTF8.encode(s);
  hot = changetype<usize>(hotText);
  hotLen = hotText.byteLength;
  return Status.OK;
}

function country(key: Value, n: i32): i32 {
  if (n == 1) return 0;
  // the key's bytes when it is a string (or binary), as Go's StrBytes
  const isBin = key.type == Type.Bin;
  const code = isBin ? key.binPtr : key.strPtr, codeLen = isBin ? key.binLen : key.strLen;
  if (bytesEqual(code, codeLen, hot, hotLen)) return 0;
  if (!keyHash(key, hash)) return fail(Status.User, "country: " + hash.why);
  const m = n - 1;
  const c = hash.hash % m;
  return 1 + (c < 0 ? c + m : c);
}

partitioner("country", country).onOpen(open);
