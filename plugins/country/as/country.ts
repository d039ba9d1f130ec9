// country (AssemblyScript): a custom partitioner keyed by a country code (a
// string). The hot country (config "hot", default "NL") always goes to
// channel 0; every other country to 1 + floorMod(javaHash(code), n-1), so
// the hot country has a channel to itself; with n == 1 everything goes to 0.
import { Context, Status, Value, bytesEqual, fail, javaStringHash, partitioner } from "../../../sdk/assemblyscript/assembly/index";
export * from "../../../sdk/assemblyscript/assembly/partitioner";

let hot: usize = memory.data<u8>([0x4e, 0x4c]); // "NL"
let hotLen: i32 = 2;

function open(ctx: Context, config: Value): i32 {
  const v = config.getInto("hot", new Value());
  if (!v.exists || v.isNil) return Status.OK;
  if (!v.isStr) return fail(Status.Config, "country: config hot: want a string");
  hot = v.strPtr; // a view into the config: valid for the instance's life
  hotLen = v.strLen;
  return Status.OK;
}

function country(key: Value, n: i32): i32 {
  if (!key.isStr) return fail(Status.User, "country: the key must be a country code string");
  if (n == 1 || bytesEqual(key.strPtr, key.strLen, hot, hotLen)) return 0;
  const m = n - 1;
  const c = javaStringHash(key.strPtr, key.strLen) % m;
  return 1 + (c < 0 ? c + m : c);
}

partitioner("country", country).onOpen(open);
