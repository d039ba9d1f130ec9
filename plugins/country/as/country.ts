// country (AssemblyScript): a custom partitioner keyed by a country code,
// as the Go plugin (plugins/country/main.go): the hot country (config
// "hot", default "NL") always goes to channel 0, every other key hashes
// (Java hashCode, as Flink: abi.KeyHash) over channels 1..n-1; with one
// channel everything goes to 0. A key without a hash (nil, a map...) fails
// the batch.
import { Context, KeyHash, Status, Type, Value, bytesEqual, configStr, fail, keyHash, partitioner } from "../../../sdk/assemblyscript/assembly/index";
export * from "../../../sdk/assemblyscript/assembly/partitioner";

let hot: usize = 0;
let hotLen: i32 = 0;
let hotText: ArrayBuffer = new ArrayBuffer(0); // keeps "hot" alive
const hash = new KeyHash();

function open(ctx: Context, config: Value): i32 {
  // as Go's ConfigString: a string, or a number or boolean formatted (this
  // allocates, once)
  hotText = String.UTF8.encode(configStr(config, "hot", "NL"));
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
