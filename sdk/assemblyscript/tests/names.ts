// A map over 40 literal field names, more than names.ts has slots, so that
// names share slots and push each other out from one record to the next:
// for each name i whose field is present, it sets "out_<name i>" (also
// literals) to the field's int times i + 1, and "sum" to the sum of those.
// Some names are past the 31 bytes a slot holds, some are not ASCII, and
// "q" is built when the module starts, so it lies outside the literals.
import { Edit, Record, Status, map } from "../assembly/index";
export * from "../assembly/operator";

const IN: StaticArray<string> = [
  "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p",
  "amount", "currency", "txnId", "accountId", "é", "ünï", "é😀", "name with spaces",
  "x".repeat(0) + "q", "thirty-one-bytes-long-name-0123", "thirty-two-bytes-long-name-01234",
  "a-name-of-forty-bytes-which-is-long-0123", "ééééééééééééééé!", "éééééééééééééééé",
  "r", "s", "t", "u", "v", "w", "y", "z", "aa", "bb",
];
const OUT: StaticArray<string> = [
  "out_a", "out_b", "out_c", "out_d", "out_e", "out_f", "out_g", "out_h", "out_i", "out_j", "out_k", "out_l",
  "out_m", "out_n", "out_o", "out_p", "out_amount", "out_currency", "out_txnId", "out_accountId", "out_é",
  "out_ünï", "out_é😀", "out_name with spaces", "out_q", "out_thirty-one-bytes-long-name-0123",
  "out_thirty-two-bytes-long-name-01234", "out_a-name-of-forty-bytes-which-is-long-0123", "out_ééééééééééééééé!",
  "out_éééééééééééééééé", "out_r", "out_s", "out_t", "out_u", "out_v", "out_w", "out_y", "out_z", "out_aa", "out_bb",
];

function names(r: Record, out: Edit): i32 {
  let sum: i64 = 0;
  for (let i = 0; i < IN.length; i++) {
    const name = unchecked(IN[i]);
    if (!r.has(name)) continue;
    const v = r.int(name) * <i64>(i + 1);
    sum += v;
    out.setInt(unchecked(OUT[i]), v);
  }
  out.setInt("sum", sum);
  return Status.OK;
}

map("names", names);
