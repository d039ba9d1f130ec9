// A map whose open reads its config through the typed getters and whose
// records carry what they read: n, text, half, yes, word and num.
import { Context, Edit, Record, Status, Value, configBool, configFloat, configInt, configStr, fail, map } from "../assembly/index";
export * from "../assembly/operator";

let n: i64 = 0;
let text: i64 = 0;
let half: f64 = 0;
let yes = false;
let word = "";
let num = "";

function open(ctx: Context, config: Value): i32 {
  if (config.getInto("refuse", new Value()).exists) return fail(Status.Config, "config refuse: told to");
  n = configInt(config, "n", -1);
  text = configInt(config, "text", -1);
  half = configFloat(config, "half", 0);
  yes = configBool(config, "yes", false);
  word = configStr(config, "word", "def");
  num = configStr(config, "n", "");
  configInt(config, "missing", 5);
  return Status.OK;
}

function read(r: Record, e: Edit): i32 {
  e.setInt("n", n);
  e.setInt("text", text);
  e.setF64("half", half);
  e.setBool("yes", yes);
  e.setStr("word", word);
  e.setStr("num", num);
  return Status.OK;
}

map("config", read).onOpen(open);
