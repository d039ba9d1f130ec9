// A filter exercising the record loop's fast paths: it keeps records whose
// int "amount" is > 0 (kept neighbours go out as one run) and, for amount
// 7, first emits the record itself to the main output, so the output holds
// it twice, in order.
import { MAIN, Record, emit, filter } from "../assembly/index";
export * from "../assembly/operator";

function keep(r: Record): i32 {
  const amount = r.int("amount");
  if (amount == 7) {
    const st = emit(MAIN, r);
    if (st < 0) return st;
  }
  return amount > 0 ? 1 : 0;
}

filter("keep", keep);
