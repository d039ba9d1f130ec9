//! last-n (Rust): the Go plugin plugins/last-n/main.go with the same
//! output. Keyed by account, each transaction goes out with "last" (the
//! account's last n amounts, oldest first: list state, slot 0),
//! "merchant_count" (map state, slot 1) and "merchants" (the map's size).
//! Config: n (default 3).

use sluice::{Context, Error, Output, Plugin, Process, Record, Value, Write, MAIN};

pub struct LastN {
    n: usize,
}

impl Plugin for LastN {
    const NAME: &'static str = "last-n";
    const KEYED: bool = true;
    fn open(_: &Context, config: Value<'static>) -> Result<Self, Error> {
        let n = config.config_int("n", 3)?;
        if n < 1 {
            return Err(Error::config("config n: want at least 1"));
        }
        Ok(LastN { n: n as usize })
    }
}

impl Process for LastN {
    fn process(&mut self, _port: i32, r: &Record, out: &mut Output) -> Result<(), Error> {
        let mut v = Vec::new();
        v.put_int(r.int("amount"));
        out.list_add(0, r.key, &v)?;
        let mut l = out.list_get(0, r.key)?;
        if l.len() > self.n {
            l.drain(..l.len() - self.n);
            out.list_update(0, r.key, &l)?;
        }
        let mut arr = Vec::new();
        arr.put_array(l.len() as u32);
        for e in &l {
            arr.extend_from_slice(e);
        }
        let m = r.str_bytes("merchant").unwrap_or(b"");
        let seen = match out.map_get(1, r.key, m)? {
            Some(raw) => Value::from_raw(raw).as_int().unwrap_or(0) + 1,
            None => 1,
        };
        let mut c = Vec::new();
        c.put_int(seen);
        out.map_put(1, r.key, m, &c)?;
        let merchants = out.map_entries(1, r.key)?.len() as i64;
        out.emit_edited(MAIN, r, |e| {
            e.set_raw("last", Value::from_raw(&arr));
            e.set_int("merchant_count", seen);
            e.set_int("merchants", merchants);
            Ok(())
        })
    }
}

sluice::process!(LastN);
