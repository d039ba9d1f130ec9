//! valid (Rust): a filter that keeps the records whose field "amount" is
//! greater than zero. Like the Go plugin (r.Int("amount") > 0), a float
//! amount is truncated toward zero and a missing or non-numeric one is 0.

use sluice::{Context, Error, Filter, Plugin, Record, Value};

pub struct Valid;

impl Plugin for Valid {
    const NAME: &'static str = "valid";
    fn open(_: &Context, _: Value<'static>) -> Result<Self, Error> {
        Ok(Valid)
    }
}

impl Filter for Valid {
    fn filter(&mut self, r: &Record) -> Result<bool, Error> {
        Ok(r.int("amount") > 0)
    }
}

sluice::filter!(Valid);

#[cfg(test)]
mod tests {
    use super::*;
    use sluice::testing::{envelope, Harness};
    use sluice::Write;

    #[test]
    fn keeps_positive_amounts() {
        let mut b = Vec::new();
        for amount in [5.0, -3.0, 0.5, 1.5] {
            let mut v = Vec::new();
            v.put_map(1);
            v.put_str("amount");
            v.put_f64(amount);
            envelope(&mut b, Some(1), None, &v);
        }
        let mut h = Harness::<Valid>::new();
        assert_eq!(h.open(&[0x80]), 0);
        assert_eq!(h.filter(&b, 4), 0);
        assert_eq!(h.take_emits()[0].2, 2, "5.0 and 1.5");
    }
}
