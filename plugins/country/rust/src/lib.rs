//! country (Rust): a custom partitioner keyed by a country code (a string).
//! The hot country (config "hot", default "NL") always goes to channel 0;
//! every other country to 1 + floorMod(javaHash(code), n-1), so the hot
//! country has a channel to itself; with n == 1 everything goes to 0.

use sluice::{java_string_hash, Context, Error, Partitioner, Plugin, Value};

pub struct Country {
    hot: &'static [u8], // a view into the config
}

impl Plugin for Country {
    const NAME: &'static str = "country";
    fn open(_: &Context, config: Value<'static>) -> Result<Self, Error> {
        let hot = match config.get("hot") {
            Some(v) if !v.is_nil() => v.as_str_bytes().ok_or_else(|| Error::config("country: config hot: want a string"))?,
            _ => b"NL",
        };
        Ok(Country { hot })
    }
}

impl Partitioner for Country {
    fn partition(&mut self, key: Option<Value>, n: i32) -> Result<i32, Error> {
        let code = key.and_then(|k| k.as_str_bytes()).ok_or_else(|| Error::user("country: the key must be a country code string"))?;
        if n == 1 || code == self.hot {
            return Ok(0);
        }
        Ok(1 + java_string_hash(code).rem_euclid(n - 1))
    }
}

sluice::partitioner!(Country);

#[cfg(test)]
mod tests {
    use super::*;
    use sluice::testing::{envelope, Harness};
    use sluice::Write;

    fn channels(cfg: &[u8], codes: &[&str], n: i32) -> Vec<i32> {
        let mut b = Vec::new();
        for c in codes {
            let mut k = Vec::new();
            k.put_str(c);
            envelope(&mut b, None, Some(&k), &[0x80]);
        }
        let mut h = Harness::<Country>::new();
        assert_eq!(h.open(cfg), 0);
        assert_eq!(h.partition(&b, codes.len() as i32, n), 0, "{}", h.error());
        let out = h.take_emits().remove(0).1;
        out.chunks(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }

    #[test]
    fn hot_country_alone_on_channel_zero() {
        // "DE".hashCode() = 2177, "FR" = 2252, "NL" = 2494
        assert_eq!(channels(&[0x80], &["NL", "DE", "FR"], 4), vec![0, 1 + 2177 % 3, 1 + 2252 % 3]);
        assert_eq!(channels(&[0x80], &["NL", "DE"], 1), vec![0, 0]);
        let mut cfg = Vec::new();
        cfg.put_map(1);
        cfg.put_str("hot");
        cfg.put_str("DE");
        assert_eq!(channels(&cfg, &["DE", "NL"], 3), vec![0, 1 + 2494 % 2]);
    }
}
