// double (AssemblyScript): filter and map in one operator: keeps the
// records whose field "amount" is greater than zero and doubles it, as the
// Go plugin (plugins/double/main.go): a float amount is truncated toward
// zero, a missing or non-numeric one is 0 (dropped), the doubled amount is
// an int.
import { MAIN, Record, Status, emitEdited, flatMap, startEdit } from "../../../sdk/assemblyscript/assembly/index";
export * from "../../../sdk/assemblyscript/assembly/operator";

function double(r: Record): i32 {
  const amount = r.int("amount");
  if (amount <= 0) return Status.OK;
  const e = startEdit();
  e.setInt("amount", amount * 2); // i64 wraps as Go's int64 does
  return emitEdited(MAIN, r, e);
}

flatMap("double", double);
