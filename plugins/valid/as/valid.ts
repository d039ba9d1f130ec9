// valid (AssemblyScript): a filter that keeps the records whose field
// "amount" is greater than zero. Like the Go plugin (r.Int("amount") > 0),
// a float amount is truncated toward zero and a missing or non-numeric one
// is 0.
import { Record, filter } from "../../../sdk/assemblyscript/assembly/index";
export * from "../../../sdk/assemblyscript/assembly/operator";

function valid(r: Record): i32 {
  return r.int("amount") > 0 ? 1 : 0; // 1 keeps the record, 0 drops it
}

filter("valid", valid);
