//! timeout (Rust): the Go plugin plugins/timeout/main.go with the same
//! output, Flink's CountWithTimeoutFunction. Keyed; each record counts
//! (slot 1), notes its event time (slot 0) and registers an event-time
//! timer at that time + timeout-ms (default 10 s); a timer that finds no
//! later record of its key emits {"key", "count", "last", "message"}
//! stamped with the timer's time.

use sluice::{Context, Error, OnTimer, Output, Plugin, Process, Record, TimeDomain, Value, Write, MAIN};

const SLOT_LAST: i32 = 0;
const SLOT_COUNT: i32 = 1;

pub struct Timeout {
    timeout: i64,
}

impl Plugin for Timeout {
    const NAME: &'static str = "timeout";
    const KEYED: bool = true;
    fn open(_: &Context, config: Value<'static>) -> Result<Self, Error> {
        let timeout = config.config_int("timeout-ms", 10_000)?;
        if timeout <= 0 {
            return Err(Error::config(format!("config timeout-ms: want a positive number of milliseconds, got {}", timeout)));
        }
        Ok(Timeout { timeout })
    }
}

fn int_state(out: &mut Output, slot: i32, key: Option<Value>) -> Result<i64, Error> {
    Ok(match out.state_get(slot, key)? {
        Some(raw) => Value::from_raw(raw).as_int().unwrap_or(0),
        None => 0,
    })
}

fn put_int(out: &mut Output, slot: i32, key: Option<Value>, v: i64) -> Result<(), Error> {
    let mut b = Vec::new();
    b.put_int(v);
    out.state_put(slot, key, &b)
}

impl Process for Timeout {
    fn process(&mut self, _port: i32, r: &Record, out: &mut Output) -> Result<(), Error> {
        let ts = match r.time {
            Some(ts) => ts,
            None => return Ok(()), // no event time: nothing to time out
        };
        let n = int_state(out, SLOT_COUNT, r.key)?;
        put_int(out, SLOT_COUNT, r.key, n + 1)?;
        put_int(out, SLOT_LAST, r.key, ts)?;
        out.register_event_time_timer(r.key, ts + self.timeout)
    }
}

impl OnTimer for Timeout {
    fn on_timer(&mut self, _: TimeDomain, ts: i64, key: Value, out: &mut Output) -> Result<(), Error> {
        let last = int_state(out, SLOT_LAST, Some(key))?;
        if ts != last + self.timeout {
            return Ok(()); // a later record of the key set a later timer
        }
        let n = int_state(out, SLOT_COUNT, Some(key))?;
        let k = key.as_str().unwrap_or("");
        let secs = if self.timeout % 1000 == 0 { format!("{} s", self.timeout / 1000) } else { format!("{} s", self.timeout as f64 / 1000.0) };
        let msg = format!("key {} silent for {}", k, secs);
        out.emit_new(MAIN, Some(ts), None, |b| {
            b.put_map(4);
            b.put_str("key");
            b.put_str(k);
            b.put_str("count");
            b.put_int(n);
            b.put_str("last");
            b.put_int(last);
            b.put_str("message");
            b.put_str(&msg);
        })
    }
}

sluice::process!(Timeout);
sluice::on_timer!(Timeout);

#[cfg(test)]
mod tests {
    use super::*;
    use sluice::testing::{envelope, Harness};

    fn rec(batch: &mut Vec<u8>, k: &str, ts: i64) {
        let mut key = Vec::new();
        key.put_str(k);
        let mut v = Vec::new();
        v.put_map(1);
        v.put_str("k");
        v.put_str(k);
        envelope(batch, Some(ts), Some(&key), &v);
    }

    // As the Go plugin's TestSilentKeys: a's first timer finds a later
    // record; b fires at 12000, a at 14000 once the watermark passes them.
    #[test]
    fn silent_keys() {
        let mut h = Harness::<Timeout>::new();
        assert_eq!(h.open(&[0x80]), 0);
        let mut b = Vec::new();
        rec(&mut b, "a", 1000);
        rec(&mut b, "b", 2000);
        rec(&mut b, "a", 4000);
        assert_eq!(h.process(0, &b, 3), 0);
        assert_eq!(h.watermark(11_999), 0);
        assert!(h.take_emits().is_empty(), "a's first timer found a later record");
        assert_eq!(h.watermark(14_000), 0);
        let emits = h.take_emits();
        assert_eq!(emits.len(), 2);
        let b = &emits[0].1;
        assert!(b.windows(b"key b silent for 10 s".len()).any(|w| w == b"key b silent for 10 s"));
        assert_eq!(b[0], 0x93);
        assert_eq!(Value::from_raw(&b[1..]).as_int(), Some(12_000), "stamped with the timer's time");
        let a = &emits[1].1;
        assert!(a.windows(b"key a silent for 10 s".len()).any(|w| w == b"key a silent for 10 s"));
        assert_eq!(h.watermark(i64::MAX), 0);
        assert!(h.take_emits().is_empty(), "every timer fired once");
    }
}
