// A partitioner: the channel is the key's length modulo n.
import { Context, Status, Value, fail, partitioner } from "../assembly/index";
export * from "../assembly/partitioner";

function byLen(key: Value, n: i32): i32 {
  if (!key.isStr) return fail(Status.User, "key must be a string");
  return key.strLen % n;
}

function open(ctx: Context, config: Value): i32 {
  return config.getInto("fail", new Value()).exists ? fail(Status.Config, "told to fail") : Status.OK;
}

partitioner("bylen", byLen).onOpen(open);
