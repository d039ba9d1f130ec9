//! country (Rust): a custom partitioner keyed by a country code, as the Go
//! plugin (plugins/country/main.go): the hot country (config "hot", default
//! "NL") always goes to channel 0, every other key hashes (Java hashCode, as
//! Flink: abi.KeyHash) over channels 1..n-1; with one channel everything
//! goes to 0. A key without a hash (nil, a map...) fails the batch.

use sluice::{key_hash, Context, Error, Partitioner, Plugin, Value};

pub struct Country {
    hot: Vec<u8>,
}

impl Plugin for Country {
    const NAME: &'static str = "country";
    fn open(_: &Context, config: Value<'static>) -> Result<Self, Error> {
        // as Go's ConfigString: a string, or an integer or boolean formatted
        let hot = config.config_str("hot", "NL")?.as_bytes().to_vec();
        Ok(Country { hot })
    }
}

impl Partitioner for Country {
    fn partition(&mut self, key: Option<Value>, n: i32) -> Result<i32, Error> {
        if n == 1 {
            return Ok(0);
        }
        // the key's bytes when it is a string (or binary), as Go's StrBytes
        let code = key.and_then(|k| k.as_str_bytes().or_else(|| k.as_bin())).unwrap_or(&[]);
        if code == self.hot.as_slice() {
            return Ok(0);
        }
        let h = key_hash(key).map_err(|why| Error::user(format!("country: {}", why)))?;
        Ok(1 + h.rem_euclid(n - 1))
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
