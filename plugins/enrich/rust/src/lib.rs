//! enrich (Rust): a map that adds every config key as a field: with config
//! {bank: NBI} each record gets "bank": "NBI". A field the record already
//! has is overwritten in place; new fields are appended in the config's key
//! order, sorted bytewise (the host sorts them too). Values are copied as
//! the host encoded them.

use sluice::{Context, Edit, Error, Map, Plugin, Record, Value};

pub struct Enrich {
    fields: Vec<(&'static [u8], Value<'static>)>, // views into the config
}

impl Plugin for Enrich {
    const NAME: &'static str = "enrich";
    fn open(_: &Context, config: Value<'static>) -> Result<Self, Error> {
        let mut fields = Vec::new();
        for (k, v) in config.entries().into_iter().flatten() {
            let name = k.as_str_bytes().ok_or_else(|| Error::config("enrich: config keys must be strings"))?;
            fields.push((name, v));
        }
        fields.sort_by(|a, b| a.0.cmp(b.0)); // stable: equal keys keep their order
        Ok(Enrich { fields })
    }
}

impl Map for Enrich {
    fn map(&mut self, _: &Record, out: &mut Edit) -> Result<(), Error> {
        for (name, v) in &self.fields {
            out.set_raw_bytes(name, *v);
        }
        Ok(())
    }
}

sluice::map!(Enrich);

#[cfg(test)]
mod tests {
    use super::*;
    use sluice::testing::{envelope, Harness};
    use sluice::Write;

    #[test]
    fn adds_config_fields_in_key_order() {
        let mut cfg = Vec::new();
        cfg.put_map(2);
        cfg.put_str("zone");
        cfg.put_int(7);
        cfg.put_str("bank");
        cfg.put_str("NBI");
        let mut v = Vec::new();
        v.put_map(2);
        v.put_str("zone");
        v.put_int(1);
        v.put_str("amount");
        v.put_int(5);
        let mut b = Vec::new();
        envelope(&mut b, Some(9), Some(&[0x01]), &v);
        let mut h = Harness::<Enrich>::new();
        assert_eq!(h.open(&cfg), 0);
        assert_eq!(h.map(&b, 1), 0);
        let mut want_v = Vec::new();
        want_v.put_map(3);
        want_v.put_str("zone");
        want_v.put_int(7);
        want_v.put_str("amount");
        want_v.put_int(5);
        want_v.put_str("bank");
        want_v.put_str("NBI");
        let mut want = Vec::new();
        envelope(&mut want, Some(9), Some(&[0x01]), &want_v);
        assert_eq!(h.take_emits(), vec![(0, want, 1)]);
    }
}
