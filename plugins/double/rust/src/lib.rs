//! double (Rust): filter and map in one operator: keeps the records whose
//! field "amount" is greater than zero and doubles it, as the Go plugin
//! (plugins/double/main.go): a float amount is truncated toward zero, a
//! missing or non-numeric one is 0 (dropped), the doubled amount is an int.

use sluice::{Context, Error, FlatMap, Output, Plugin, Record, Value, MAIN};

pub struct Double;

impl Plugin for Double {
    const NAME: &'static str = "double";
    fn open(_: &Context, _: Value<'static>) -> Result<Self, Error> {
        Ok(Double)
    }
}

impl FlatMap for Double {
    fn flat_map(&mut self, r: &Record, out: &mut Output) -> Result<(), Error> {
        let amount = r.int("amount");
        if amount <= 0 {
            return Ok(());
        }
        out.emit_edited(MAIN, r, |e| {
            e.set_int("amount", amount.wrapping_mul(2)); // wraps as Go's int64 does
            Ok(())
        })
    }
}

sluice::flat_map!(Double);

#[cfg(test)]
mod tests {
    use super::*;
    use sluice::testing::{envelope, Harness};
    use sluice::Write;

    fn record(b: &mut Vec<u8>, amount: Option<f64>, int: bool) {
        let mut v = Vec::new();
        v.put_map(if amount.is_some() { 2 } else { 1 });
        v.put_str("id");
        v.put_int(1);
        if let Some(a) = amount {
            v.put_str("amount");
            if int {
                v.put_int(a as i64);
            } else {
                v.put_f64(a);
            }
        }
        envelope(b, Some(7), None, &v);
    }

    #[test]
    fn doubles_positive_amounts() {
        let mut b = Vec::new();
        record(&mut b, Some(5.0), true);
        record(&mut b, Some(-3.0), true);
        record(&mut b, None, true);
        record(&mut b, Some(12.75), false);
        record(&mut b, Some(100.0), true);
        let mut h = Harness::<Double>::new();
        assert_eq!(h.open(&[0x80]), 0);
        assert_eq!(h.flat_map(&b, 5), 0);
        let mut want = Vec::new();
        record(&mut want, Some(10.0), true);
        record(&mut want, Some(24.0), true);
        record(&mut want, Some(200.0), true);
        assert_eq!(h.take_emits(), vec![(0, want, 3)]);
    }
}
