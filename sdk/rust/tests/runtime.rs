//! The runtime behind the exports, run natively through the fake host.

use sluice::testing::{envelope, fake, Harness};
use sluice::*;

fn value(fields: &[(&str, i64)]) -> Vec<u8> {
    let mut v = Vec::new();
    v.put_map(fields.len() as u32);
    for &(k, x) in fields {
        v.put_str(k);
        v.put_int(x);
    }
    v
}

fn batch(records: &[(i64, i64)]) -> Vec<u8> {
    let mut b = Vec::new();
    for &(t, amount) in records {
        envelope(&mut b, Some(t), None, &value(&[("amount", amount), ("n", 1)]));
    }
    b
}

const EMPTY: &[u8] = &[0x80];

struct Positive;
impl Plugin for Positive {
    const NAME: &'static str = "positive";
    fn open(_: &Context, _: Value<'static>) -> Result<Self, Error> {
        Ok(Positive)
    }
}
impl Filter for Positive {
    fn filter(&mut self, r: &Record) -> Result<bool, Error> {
        Ok(r.int("amount") > 0)
    }
}

#[test]
fn filter_passes_records_byte_for_byte() {
    let mut h = Harness::<Positive>::new();
    assert_eq!(h.open(EMPTY), 0);
    assert_eq!(h.filter(&batch(&[(1, 5), (2, -3), (300, 200)]), 3), 0);
    assert_eq!(h.take_emits(), vec![(0, batch(&[(1, 5), (300, 200)]), 2)]);
    assert_eq!(h.filter(&[], 0), 0, "an empty batch");
    assert!(h.take_emits().is_empty());
}

#[test]
fn malformed_batches_get_a_status_and_a_text() {
    let mut h = Harness::<Positive>::new();
    h.open(EMPTY);
    let b = batch(&[(1, 5), (2, 6)]);
    assert_eq!(h.filter(&b, 1), -1);
    assert!(h.error().contains("bytes left after the last record"), "{}", h.error());
    assert_eq!(h.filter(&b, 3), -1);
    assert!(h.error().contains("fewer records than its count"), "{}", h.error());
    assert_eq!(h.filter(&b[..b.len() - 1], 2), -1);
    assert_eq!(h.filter(&[0x93, 0xa1, b'x', 0xc0, 0x80], 1), -1);
    assert!(h.error().contains("event time"), "{}", h.error());
    assert_eq!(h.filter(&b, -1), -1);
    assert_eq!(rt::process_filter(&mut None::<Positive>, 0, &b, 2), -4, "before open");
    assert_eq!(rt::process_filter(&mut None::<Positive>, 1, &b, 2), -4);
}

/// Kept neighbours go out as one run; the output must still be the
/// records one by one, in order, and a refused emit fails the call.
#[test]
fn filter_runs_of_kept_records() {
    let amounts = [1, 2, -1, 3, 7, 4, -2, -3, 7, 7, 5, -4, 6];
    let all: Vec<(i64, i64)> = amounts.iter().enumerate().map(|(i, &a)| (i as i64, a)).collect();
    let kept: Vec<(i64, i64)> = all.iter().copied().filter(|&(_, a)| a > 0).collect();
    let mut h = Harness::<Positive>::new();
    h.open(EMPTY);
    assert_eq!(h.filter(&batch(&all), all.len() as i32), 0);
    assert_eq!(h.take_emits(), vec![(0, batch(&kept), kept.len() as i32)]);
    // everything kept, past the 64 KiB flush threshold: the input, byte for byte
    let many: Vec<(i64, i64)> = (0..5000).map(|i| (i, 1 + i % 3)).collect();
    let b = batch(&many);
    assert_eq!(h.filter(&b, many.len() as i32), 0);
    let emits = h.take_emits();
    assert!(emits.len() > 1, "flushed at 64 KiB");
    assert_eq!(emits.iter().map(|e| e.2).sum::<i32>(), many.len() as i32);
    assert_eq!(emits.iter().flat_map(|e| e.1.iter().copied()).collect::<Vec<u8>>(), b);
    fake(|f| f.emit_status = Status::LIMIT.0);
    assert_eq!(h.filter(&b, many.len() as i32), Status::LIMIT.0);
    fake(|f| f.emit_status = 0);
}

/// Every event-time width and key; every cut of an envelope is malformed
/// (the envelope parser's inline paths check what the scanner does).
#[test]
fn envelopes_every_time_and_every_cut() {
    let mut h = Harness::<Positive>::new();
    h.open(EMPTY);
    let one = value(&[("amount", 1)]);
    for t in [None, Some(0), Some(5), Some(-1), Some(200), Some(70000), Some(-70000), Some(1 << 40), Some(-(1 << 40)), Some(i64::MAX), Some(i64::MIN)] {
        for key in [None, Some(&[0xa1, b'k'][..]), Some(&[0x92, 0x01, 0xa1, b'a'][..])] {
            let mut b = Vec::new();
            envelope(&mut b, t, key, &one);
            assert_eq!(h.filter(&b, 1), 0, "time {:?}, key {:?}: {}", t, key, h.error());
            assert_eq!(h.take_emits(), vec![(0, b, 1)]);
        }
    }
    assert_eq!(h.filter(&[0x93, 0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0, 0xc0, 0x80], 1), -1);
    assert!(h.error().contains("event time out of range"), "{}", h.error());
    let mut nested = Vec::new();
    nested.put_map(5);
    nested.put_str("txnId");
    nested.put_int(1000);
    nested.put_str("accountId");
    nested.put_str(&"x".repeat(40));
    nested.put_str("amount");
    nested.put_int(3);
    nested.put_str("nested");
    nested.put_map(1);
    nested.put_str("a");
    nested.put_f64(1.5);
    nested.put_str("currency");
    nested.put_str("EUR");
    let str8_key = [0x82, 0x07, 0x01, 0xd9, 6, b'a', b'm', b'o', b'u', b'n', b't', 0x03]; // {7: 1, "amount" (str8): 3}
    for v in [&value(&[("txnId", 5), ("amount", -3)])[..], &nested, &str8_key] {
        let mut b = Vec::new();
        envelope(&mut b, Some(1_700_000_000_000), None, v);
        assert_eq!(h.filter(&b, 1), 0);
        h.take_emits();
        for cut in 0..b.len() {
            assert_eq!(h.filter(&b[..cut], 1), -1, "cut at {} of {:x?}", cut, b);
        }
    }
}

struct Double;
impl Plugin for Double {
    const NAME: &'static str = "double";
    fn open(_: &Context, config: Value<'static>) -> Result<Self, Error> {
        if config.get("fail").is_some() {
            return Err("told to fail".into());
        }
        config.config_int("factor", 2)?;
        Ok(Double)
    }
}
impl Map for Double {
    fn map(&mut self, r: &Record, out: &mut Edit) -> Result<(), Error> {
        if r.int("amount") == 13 {
            return Err(Error::user("unlucky"));
        }
        out.set_int("amount", 2 * r.int("amount")).set_str("tag", "t").unset("n");
        Ok(())
    }
}

#[test]
fn map_edits_in_place_and_appends() {
    let mut h = Harness::<Double>::new();
    assert_eq!(h.open(EMPTY), 0);
    assert_eq!(h.map(&batch(&[(1, 100)]), 1), 0);
    let mut want = Vec::new();
    let mut v = Vec::new();
    v.put_map(2);
    v.put_str("amount");
    v.put_int(200);
    v.put_str("tag");
    v.put_str("t");
    envelope(&mut want, Some(1), None, &v);
    assert_eq!(h.take_emits(), vec![(0, want, 1)]);
    assert_eq!(h.map(&batch(&[(1, 1), (2, 13)]), 2), -3);
    assert_eq!(h.error(), "record 1: unlucky");
}

#[test]
fn open_failures() {
    let mut h = Harness::<Double>::new();
    assert_eq!(h.open(&[0x90]), -6);
    assert_eq!(h.error(), "the config is not a msgpack map");
    let mut cfg = Vec::new();
    cfg.put_map(1);
    cfg.put_str("fail");
    cfg.put_bool(true);
    assert_eq!(h.open(&cfg), -6, "a string error in open is a config error");
    assert_eq!(h.error(), "open: told to fail");
    // a config getter's refusal goes as Go's does, without "open: ", so
    // that the host reads its key
    let mut cfg = Vec::new();
    cfg.put_map(1);
    cfg.put_str("factor");
    cfg.put_str("x");
    assert_eq!(h.open(&cfg), -6);
    assert_eq!(h.error(), "config factor: want an integer (int64), got \"x\"");
    assert_eq!(h.open(EMPTY), 0);
    assert_eq!(h.open(EMPTY), -4, "twice");
}

struct Late;
impl Plugin for Late {
    const NAME: &'static str = "late";
    const OUTPUTS: &'static [&'static str] = &["late", "unused"];
    const KEYED: bool = true;
    fn open(_: &Context, _: Value<'static>) -> Result<Self, Error> {
        Ok(Late)
    }
}
impl Process for Late {
    fn process(&mut self, _port: i32, r: &Record, out: &mut Output) -> Result<(), Error> {
        let seen = out.state_get(0, r.key)?.map(|v| v.to_vec());
        out.state_put(0, r.key, b"1")?;
        if seen.is_some() {
            out.emit(out.side("unused")?, r)?; // nothing consumes it, dropped
        }
        if r.time == Some(7) {
            out.emit(out.side("alerts")?, r)?; // not declared
        }
        let h = if r.time.unwrap_or(0) < 100 { out.side("late")? } else { MAIN };
        out.emit_with(h, Some(r), |b| b.put_str("x"))
    }
}

#[test]
fn process_side_outputs_and_state() {
    let mut h = Harness::<Late>::new().unconsumed(&["unused"]);
    assert_eq!(h.open(EMPTY), 0);
    let mut b = Vec::new();
    envelope(&mut b, Some(50), Some(&[0xa1, b'k']), EMPTY);
    envelope(&mut b, Some(150), Some(&[0xa1, b'k']), EMPTY);
    assert_eq!(h.process(0, &b, 2), 0);
    let emits = h.take_emits();
    assert_eq!(emits.iter().map(|e| (e.0, e.2)).collect::<Vec<_>>(), vec![(0, 1), (1, 1)]);
    let mut want = Vec::new();
    envelope(&mut want, Some(150), None, &[0xa1, b'x']); // a new record: the time, no key
    assert_eq!(emits[0].1, want);
    assert_eq!(fake(|f| f.state.len()), 1);
    let mut unkeyed = Vec::new();
    envelope(&mut unkeyed, None, None, EMPTY);
    assert_eq!(h.process(0, &unkeyed, 1), -5);
    assert!(h.error().contains("key"), "{}", h.error());
    // a side output by a tag the plugin does not declare
    let mut seven = Vec::new();
    envelope(&mut seven, Some(7), Some(&[0xa1, b'k']), EMPTY);
    assert_eq!(h.process(0, &seven, 1), -3);
    assert!(h.error().contains(r#"unknown side output "alerts": the plugin declares "late", "unused" in its OUTPUTS"#), "{}", h.error());
    fake(|f| f.emit_status = -8);
    assert_eq!(h.process(0, &b, 2), -8);
    assert!(h.error().contains("output limit"), "{}", h.error());
    assert_eq!(rt::describe::<Late>(Kind::Process), -8);
    fake(|f| f.emit_status = 0);
    assert_eq!(rt::describe::<Late>(Kind::Process), 0);
    let d = h.take_emits().remove(0).1;
    let d = Value::from_raw(&d);
    assert_eq!(d.get("kind").and_then(|v| v.as_str()), Some("process"));
    assert_eq!(d.get("sdk").and_then(|v| v.as_str()), Some("rust"));
    assert_eq!(d.get("outputs").and_then(|v| v.items()).map(|i| i.count()), Some(2));
    assert_eq!(d.get("keyed").and_then(|v| v.as_bool()), Some(true));
}

/// A keyed running count, registered as a reduce (sluice::reduce! in a
/// plugin; Harness::reduce here).
struct Count;
impl Plugin for Count {
    const NAME: &'static str = "count";
    fn open(_: &Context, _: Value<'static>) -> Result<Self, Error> {
        Ok(Count)
    }
}
impl Process for Count {
    fn process(&mut self, _: i32, r: &Record, out: &mut Output) -> Result<(), Error> {
        let n = out.state_get(0, r.key)?.map_or(0, |b| Value::from_raw(b).int()) + 1;
        let mut b = Vec::new();
        b.put_int(n);
        out.state_put(0, r.key, &b)?;
        out.emit_new(MAIN, r.time, r.key, |v| v.put_raw(&b))
    }
}

#[test]
fn reduce_is_keyed_on_input_0_and_describes_itself() {
    let mut h = Harness::<Count>::new();
    assert_eq!(h.open(EMPTY), 0);
    let mut b = Vec::new();
    for k in [b'a', b'b', b'a'] {
        envelope(&mut b, Some(1), Some(&[0xa1, k]), EMPTY);
    }
    assert_eq!(h.reduce(&b, 3), 0);
    let mut want = Vec::new();
    for (k, n) in [(b'a', 1), (b'b', 1), (b'a', 2)] {
        envelope(&mut want, Some(1), Some(&[0xa1, k]), &[n]);
    }
    assert_eq!(h.take_emits()[0].1, want);
    let mut op = None;
    assert_eq!(rt::open(&mut op, EMPTY, 0, 1, 128), 0);
    assert_eq!(rt::process_reduce::<Count>(&mut op, 1, &b, 3), -4, "a reduce has one input");
    h.take_emits();
    assert_eq!(rt::describe::<Count>(Kind::Reduce), 0);
    let d = h.take_emits().remove(0).1;
    let d = Value::from_raw(&d);
    assert_eq!(d.get("kind").and_then(|v| v.as_str()), Some("reduce"));
    assert_eq!(d.get("keyed").and_then(|v| v.as_bool()), Some(true), "a reduce is keyed");
}

#[test]
fn declared_side_outputs_are_routed_by_default() {
    // no mapping: OUTPUTS[i] is port i + 1, as in Go's sdktest
    let mut h = Harness::<Late>::new();
    assert_eq!(h.open(EMPTY), 0);
    let mut b = Vec::new();
    envelope(&mut b, Some(50), Some(&[0xa1, b'k']), EMPTY);
    envelope(&mut b, Some(60), Some(&[0xa1, b'k']), EMPTY);
    assert_eq!(h.process(0, &b, 2), 0, "{}", h.error());
    let ports: Vec<_> = h.take_emits().iter().map(|e| (e.0, e.2)).collect();
    assert_eq!(ports, vec![(1, 2), (2, 1)], "late twice, unused once");
    // an explicit mapping still wins
    let mut h = Harness::<Late>::new();
    fake(|f| f.ports.insert("late".into(), 7));
    assert_eq!(h.open(EMPTY), 0);
    assert_eq!(h.process(0, &b, 2), 0, "{}", h.error());
    let ports: Vec<_> = h.take_emits().iter().map(|e| (e.0, e.2)).collect();
    assert_eq!(ports, vec![(7, 2), (2, 1)]);
}

struct Words;
impl Plugin for Words {
    const NAME: &'static str = "words";
    fn open(_: &Context, _: Value<'static>) -> Result<Self, Error> {
        Ok(Words)
    }
}
impl FlatMap for Words {
    fn flat_map(&mut self, r: &Record, out: &mut Output) -> Result<(), Error> {
        for w in r.str("line").unwrap_or("").split(' ') {
            out.emit_edited(MAIN, r, |e| {
                e.set_str("word", w).unset("line");
                Ok(())
            })?;
        }
        Ok(())
    }
}

#[test]
fn flat_map_flushes_large_outputs_early() {
    let mut h = Harness::<Words>::new();
    h.open(EMPTY);
    let line = vec!["w"; 30_000].join(" ");
    let mut v = Vec::new();
    v.put_map(1);
    v.put_str("line");
    v.put_str(&line);
    let mut b = Vec::new();
    envelope(&mut b, None, None, &v);
    assert_eq!(h.flat_map(&b, 1), 0);
    let emits = h.take_emits();
    assert!(emits.len() > 1, "flushed at 64 KiB");
    assert_eq!(emits.iter().map(|e| e.2).sum::<i32>(), 30_000);
}

struct ByLen;
impl Plugin for ByLen {
    const NAME: &'static str = "len";
    fn open(_: &Context, _: Value<'static>) -> Result<Self, Error> {
        Ok(ByLen)
    }
}
impl Partitioner for ByLen {
    fn partition(&mut self, key: Option<Value>, n: i32) -> Result<i32, Error> {
        let s = key.and_then(|k| k.as_str_bytes()).ok_or("key must be a string")?;
        Ok(s.len() as i32 % n)
    }
}

#[test]
fn partition_emits_little_endian_channels() {
    let mut h = Harness::<ByLen>::new();
    h.open(EMPTY);
    let mut b = Vec::new();
    envelope(&mut b, None, Some(&[0xa1, b'a']), EMPTY);
    envelope(&mut b, None, Some(&[0xa3, b'b', b'b', b'b']), EMPTY);
    assert_eq!(h.partition(&b, 2, 2), 0);
    assert_eq!(h.take_emits(), vec![(0, vec![1, 0, 0, 0, 1, 0, 0, 0], 2)]);
    let mut nil = Vec::new();
    envelope(&mut nil, None, None, EMPTY);
    assert_eq!(h.partition(&nil, 1, 2), -3);
    assert_eq!(h.error(), "record 0: key must be a string");
    assert_eq!(h.partition(&b, 2, 0), -1);
}

struct Counter(i64);
impl Plugin for Counter {
    const NAME: &'static str = "counter";
    const OPERATOR_STATE: bool = true;
    fn open(_: &Context, _: Value<'static>) -> Result<Self, Error> {
        Ok(Counter(0))
    }
    fn snapshot(&self) -> Result<Vec<u8>, Error> {
        Ok(self.0.to_le_bytes().to_vec())
    }
    fn restore(&mut self, state: &[u8]) -> Result<(), Error> {
        self.0 += i64::from_le_bytes(state.try_into().map_err(|_| Error::malformed("8 bytes"))?);
        Ok(())
    }
}
impl Filter for Counter {
    fn filter(&mut self, _: &Record) -> Result<bool, Error> {
        self.0 += 1;
        Ok(true)
    }
}

#[test]
fn operator_state_snapshot_and_restore() {
    let mut h = Harness::<Counter>::new();
    assert_eq!(h.snapshot(), -4, "before open");
    assert_eq!(h.open(EMPTY), 0);
    assert_eq!(h.filter(&batch(&[(1, 1), (2, 1), (3, 1)]), 3), 0);
    h.take_emits();
    assert_eq!(h.snapshot(), 0);
    let emits = h.take_emits();
    let mut want = vec![0xc4, 8];
    want.extend_from_slice(&3i64.to_le_bytes());
    assert_eq!(emits, vec![(0, want.clone(), 1)]);
    let mut h2 = Harness::<Counter>::new();
    assert_eq!(h2.open(EMPTY), 0);
    assert_eq!(h2.restore(&want), 0);
    assert_eq!(h2.restore(&want), 0); // a rescale's second element: merged
    assert_eq!(h2.operator().map(|c| c.0), Some(6));
    assert_eq!(h2.restore(&[0xa1, b'x']), -1);
    assert!(h2.error().contains("not the msgpack bin"), "{}", h2.error());
    // an operator without operator state answers unsupported
    let mut p = Harness::<Positive>::new();
    assert_eq!(p.open(EMPTY), 0);
    assert_eq!(p.snapshot(), -4);
    assert!(p.error().contains("declares no operator state"), "{}", p.error());
}

/// Kinds: per record, appends v to list slot 0 (keeping the last two) and
/// counts per "m" field in map slot 1; on "clear" clears both.
struct Kinds;
impl Plugin for Kinds {
    const NAME: &'static str = "kinds";
    const KEYED: bool = true;
    fn open(_: &Context, _: Value<'static>) -> Result<Self, Error> {
        Ok(Kinds)
    }
}
impl Process for Kinds {
    fn process(&mut self, _port: i32, r: &Record, out: &mut Output) -> Result<(), Error> {
        if r.bool("clear") == Some(true) {
            out.state_clear(0, r.key)?;
            return out.state_clear(1, r.key);
        }
        let mut v = Vec::new();
        v.put_int(r.int("v"));
        out.list_add(0, r.key, &v)?;
        let l = out.list_get(0, r.key)?;
        if l.len() > 2 {
            out.list_update(0, r.key, &l[l.len() - 2..])?;
        }
        let m = r.str_bytes("m").unwrap_or(b"");
        let n = match out.map_get(1, r.key, m)? {
            Some(raw) => Value::from_raw(raw).as_int().unwrap_or(0),
            None => 0,
        };
        let mut c = Vec::new();
        c.put_int(n + 1);
        out.map_put(1, r.key, m, &c)?;
        if r.bool("drop") == Some(true) {
            out.map_del(1, r.key, b"a")?;
        }
        let has_a = out.map_contains(1, r.key, b"a")?;
        let entries = out.map_entries(1, r.key)?;
        let list = out.list_get(0, r.key)?;
        out.emit_with(MAIN, Some(r), |b| {
            b.put_map(3);
            b.put_str("list");
            b.put_int(list.len() as i64);
            b.put_str("entries");
            b.put_int(entries.len() as i64);
            b.put_str("a");
            b.put_bool(has_a);
        })
    }
}

#[test]
fn list_and_map_state() {
    let mut h = Harness::<Kinds>::new();
    assert_eq!(h.open(EMPTY), 0);
    let key: &[u8] = &[0xa1, b'k'];
    let rec = |v: i64, m: &str, extra: Option<&str>| {
        let mut val = Vec::new();
        val.put_map(if extra.is_some() { 3 } else { 2 });
        val.put_str("v");
        val.put_int(v);
        val.put_str("m");
        val.put_str(m);
        if let Some(e) = extra {
            val.put_str(e);
            val.put_bool(true);
        }
        let mut b = Vec::new();
        envelope(&mut b, None, Some(key), &val);
        b
    };
    for (r, want) in [
        (rec(1, "a", None), (1, 1, true)),
        (rec(2, "b", None), (2, 2, true)),
        (rec(3, "a", None), (2, 2, true)),
        (rec(4, "c", Some("drop")), (2, 2, false)),
    ] {
        assert_eq!(h.process(0, &r, 1), 0, "{}", h.error());
        let e = h.take_emits();
        let mut w = Vec::new();
        w.put_map(3);
        w.put_str("list");
        w.put_int(want.0);
        w.put_str("entries");
        w.put_int(want.1);
        w.put_str("a");
        w.put_bool(want.2);
        let mut env = Vec::new();
        envelope(&mut env, None, None, &w);
        assert_eq!(e[0].1, env);
    }
    // the list keeps the last two: 3 and 4; the map b=1, c=1 (a deleted)
    let k = (0, key.to_vec());
    let l = fake(|f| f.lists.get(&k).cloned()).unwrap();
    assert_eq!(l, vec![vec![3u8], vec![4u8]]);
    let m = fake(|f| f.maps.get(&(1, key.to_vec())).cloned()).unwrap();
    assert_eq!(m.keys().cloned().collect::<Vec<_>>(), vec![b"b".to_vec(), b"c".to_vec()]);
    let mut clear = Vec::new();
    let mut val = Vec::new();
    val.put_map(1);
    val.put_str("clear");
    val.put_bool(true);
    envelope(&mut clear, None, Some(key), &val);
    assert_eq!(h.process(0, &clear, 1), 0);
    assert!(fake(|f| f.lists.is_empty() && f.maps.is_empty()));
}

/// The highest "v" of a window, as plugins/top-bids (n 1) emits it.
struct Top;
impl Plugin for Top {
    const NAME: &'static str = "top";
    fn open(_: &Context, _: Value<'static>) -> Result<Self, Error> {
        Ok(Top)
    }
}
impl ProcessWindow for Top {
    fn process_window(&mut self, w: &Window, records: &[Record], out: &mut Output) -> Result<(), Error> {
        if w.max_timestamp() != w.end - 1 || w.key.is_none() {
            return Err(Error::new(Status::USER, "window"));
        }
        let mut best: Option<&Record> = None;
        for r in records {
            if r.int("v") < 0 {
                return Err(Error::new(Status::USER, "negative"));
            }
            if best.map_or(true, |b| r.int("v") > b.int("v")) {
                best = Some(r);
            }
        }
        match best {
            Some(r) => out.emit(MAIN, r),
            None => Ok(()),
        }
    }
}

/// The header [max timestamp, key, {"start", "end"}] of a window.
fn window_header(b: &mut Vec<u8>, start: i64, end: i64) {
    let mut v = Vec::new();
    v.put_map(2);
    v.put_str("start");
    v.put_int(start);
    v.put_str("end");
    v.put_int(end);
    envelope(b, Some(end - 1), Some(&[0xa1, b'k']), &v);
}

fn v_record(b: &mut Vec<u8>, t: i64, n: i64) -> (usize, usize) {
    let mut v = Vec::new();
    v.put_map(1);
    v.put_str("v");
    v.put_int(n);
    let from = b.len();
    envelope(b, Some(t), Some(&[0xa1, b'k']), &v);
    (from, b.len())
}

#[test]
fn process_window_gets_the_window_and_its_records() {
    let mut h = Harness::<Top>::new();
    assert_eq!(h.open(EMPTY), 0);
    let mut b = Vec::new();
    window_header(&mut b, -10, 20);
    v_record(&mut b, -3, 4);
    let (from, to) = v_record(&mut b, 5, 9);
    v_record(&mut b, 19, 9);
    assert_eq!(h.process_window(&b, 4), 0, "{}", h.error());
    let emits = h.take_emits();
    assert_eq!(emits.len(), 1);
    assert_eq!((emits[0].0, emits[0].2), (0, 1));
    assert_eq!(emits[0].1, b[from..to].to_vec(), "the first of the highest, as it came");
    // a header alone: no records, nothing out
    let mut only = Vec::new();
    window_header(&mut only, 0, 5);
    assert_eq!(h.process_window(&only, 1), 0, "{}", h.error());
    assert!(h.take_emits().iter().all(|e| e.2 == 0));
    // a call whose first record is no header is malformed
    let mut bad = Vec::new();
    v_record(&mut bad, 1, 1);
    assert_eq!(h.process_window(&bad, 1), -1);
    assert!(h.error().contains("window header"), "{}", h.error());
    // the function's error names the window
    let mut neg = Vec::new();
    window_header(&mut neg, 0, 5);
    v_record(&mut neg, 1, -1);
    assert_eq!(h.process_window(&neg, 2), -3);
    assert!(h.error().contains("window [0, 5): negative"), "{}", h.error());
    h.take_emits();
    assert_eq!(rt::describe::<Top>(Kind::ProcessWindow), 0);
    let d = h.take_emits().remove(0).1;
    let d = Value::from_raw(&d);
    assert_eq!(d.get("kind").and_then(|v| v.as_str()), Some("process-window"));
}

// Timers: a record registers an event-time timer at its time + 10 (twice:
// one timer) and a processing-time one, deleted again when its amount is
// 0; on_timer emits {"at": ts, "wm": current watermark} under the key.
struct Timed;
impl Plugin for Timed {
    const NAME: &'static str = "timed";
    const KEYED: bool = true;
    fn open(_: &Context, _: Value<'static>) -> Result<Self, Error> {
        Ok(Timed)
    }
}
impl Process for Timed {
    fn process(&mut self, _: i32, r: &Record, out: &mut Output) -> Result<(), Error> {
        let t = r.time.unwrap_or(0);
        out.register_event_time_timer(r.key, t + 10)?;
        out.register_event_time_timer(r.key, t + 10)?;
        out.register_processing_time_timer(r.key, 500)?;
        if r.int("amount") == 0 {
            out.delete_processing_time_timer(r.key, 500)?;
        }
        Ok(())
    }
}
impl OnTimer for Timed {
    fn on_timer(&mut self, d: TimeDomain, ts: i64, key: Value, out: &mut Output) -> Result<(), Error> {
        let wm = out.current_watermark();
        out.emit_new(MAIN, Some(ts), Some(key), |b| {
            b.put_map(3);
            b.put_str("at");
            b.put_int(ts);
            b.put_str("wm");
            b.put_int(wm);
            b.put_str("event");
            b.put_bool(d == TimeDomain::EventTime);
        })
    }
}

#[test]
fn timers_fire_once_with_their_key() {
    let mut h = Harness::<Timed>::new();
    assert_eq!(h.open(EMPTY), 0);
    let mut key = Vec::new();
    key.put_str("k");
    let mut b = Vec::new();
    envelope(&mut b, Some(100), Some(&key), &value(&[("amount", 0)]));
    assert_eq!(h.process(0, &b, 1), 0);
    assert_eq!(fake(|f| f.timers.len()), 1, "one event-time timer, the processing-time one deleted");
    assert_eq!(h.watermark(109), 0);
    assert!(h.take_emits().is_empty());
    assert_eq!(h.watermark(110), 0);
    let emits = h.take_emits();
    assert_eq!(emits.len(), 1);
    let mut want = Vec::new();
    envelope(&mut want, Some(110), Some(&key), &{
        let mut v = Vec::new();
        v.put_map(3);
        v.put_str("at");
        v.put_int(110);
        v.put_str("wm");
        v.put_int(110);
        v.put_str("event");
        v.put_bool(true);
        v
    });
    assert_eq!(emits[0].1, want);
    assert_eq!(h.processing_time(1000), 0);
    assert!(h.take_emits().is_empty());
    // an unkeyed record cannot register one
    let mut b = Vec::new();
    envelope(&mut b, Some(1), None, &value(&[("amount", 1)]));
    assert_ne!(h.process(0, &b, 1), 0);
}
