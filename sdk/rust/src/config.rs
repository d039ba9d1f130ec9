//! Typed getters for an operator's config (the map `open` receives), as
//! the Go SDK's OpenContext.Config* give them: the value of a top-level
//! key, `def` when the key is missing or nil, and for a value of another
//! type an `Error::config("config NAME: want ..., got ...")`, whose
//! "config NAME:" the host reads to point at NAME's line in the pipeline.
//! Numbers accept what YAML and `host plugin run --operator-config k=v` give them:
//! an integer takes a whole float and a numeric string, a float an integer.
//!
//! ```ignore
//! fn open(_: &Context, config: Value<'static>) -> Result<Self, Error> {
//!     Ok(HighTemp { threshold: config.config_f64("threshold", 30.0)? })
//! }
//! ```

use std::borrow::Cow;

use crate::msgpack::{Type, Value};
use crate::Error;

impl<'a> Value<'a> {
    /// An integer config value.
    pub fn config_int(&self, name: &str, def: i64) -> Result<i64, Error> {
        let v = match self.present(name) {
            None => return Ok(def),
            Some(v) => v,
        };
        let got = match v.kind() {
            Type::Int => v.as_int(),
            Type::Float => v.as_f64().filter(|f| f.fract() == 0.0 && *f >= -9.223372036854776e18 && *f < 9.223372036854776e18).map(|f| f as i64),
            Type::Str => v.as_str().and_then(|s| s.trim().parse().ok()),
            _ => None,
        };
        got.ok_or_else(|| bad(name, "an integer (int64)", &v))
    }

    /// A number config value.
    pub fn config_f64(&self, name: &str, def: f64) -> Result<f64, Error> {
        let v = match self.present(name) {
            None => return Ok(def),
            Some(v) => v,
        };
        let got = match v.kind() {
            Type::Int | Type::Float => v.as_f64().or_else(|| uint64(&v).map(|u| u as f64)),
            Type::Str => v.as_str().and_then(|s| s.trim().parse().ok()),
            _ => None,
        };
        got.ok_or_else(|| bad(name, "a number", &v))
    }

    /// A boolean config value ("true" and "false" are taken too).
    pub fn config_bool(&self, name: &str, def: bool) -> Result<bool, Error> {
        let v = match self.present(name) {
            None => return Ok(def),
            Some(v) => v,
        };
        let got = match v.kind() {
            Type::Bool => v.as_bool(),
            // Go's strconv.ParseBool
            Type::Str => match v.as_str().map(str::trim) {
                Some("1" | "t" | "T" | "true" | "TRUE" | "True") => Some(true),
                Some("0" | "f" | "F" | "false" | "FALSE" | "False") => Some(false),
                _ => None,
            },
            _ => None,
        };
        got.ok_or_else(|| bad(name, "a boolean", &v))
    }

    /// A string config value: a view of the config (valid as long as it),
    /// or an integer, a float or a boolean formatted, as Go's ConfigString
    /// gives them.
    pub fn config_str(&self, name: &str, def: &'a str) -> Result<Cow<'a, str>, Error> {
        let v = match self.present(name) {
            None => return Ok(Cow::Borrowed(def)),
            Some(v) => v,
        };
        match v.kind() {
            Type::Str => v.as_str().map(Cow::Borrowed),
            Type::Int | Type::Float | Type::Bool => Some(Cow::Owned(describe(&v))),
            _ => None,
        }
        .ok_or_else(|| bad(name, "a string", &v))
    }

    /// The value of key name, None when it is missing or nil.
    fn present(&self, name: &str) -> Option<Value<'a>> {
        self.get(name).filter(|v| !v.is_nil())
    }
}

/// A uint64 past i64::MAX.
fn uint64(v: &Value) -> Option<u64> {
    let b = v.raw();
    if b.len() == 9 && b[0] == 0xcf {
        let mut u = 0u64;
        for &c in &b[1..] {
            u = u << 8 | c as u64;
        }
        return Some(u);
    }
    None
}

fn bad(name: &str, want: &str, v: &Value) -> Error {
    Error::config(format!("config {}: want {}, got {}", name, want, describe(v)))
}

/// A config value as the Go SDK names it in errors: a scalar as written
/// (a string quoted, cut at 40 bytes), a list or map by its kind.
fn describe(v: &Value) -> String {
    match v.kind() {
        Type::Str => match v.as_str() {
            Some(s) if s.len() > 40 => {
                let mut cut = 40;
                while !s.is_char_boundary(cut) {
                    cut -= 1;
                }
                format!("{:?}...", &s[..cut])
            }
            Some(s) => format!("{:?}", s),
            None => "a string that is not UTF-8".to_string(),
        },
        Type::Int => match v.as_int() {
            Some(i) => i.to_string(),
            None => uint64(v).map(|u| u.to_string()).unwrap_or_default(),
        },
        Type::Float => format!("{}", v.as_f64().unwrap_or(0.0)),
        Type::Bool => format!("{}", v.as_bool().unwrap_or(false)),
        Type::Array => "a list".to_string(),
        Type::Map => "a map".to_string(),
        Type::Bin => "binary".to_string(),
        _ => "an unknown value".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use crate::msgpack::{Value, Write};
    use crate::Status;

    fn config() -> Vec<u8> {
        let mut b = Vec::new();
        b.put_map(9);
        b.put_str("n");
        b.put_int(7);
        b.put_str("whole");
        b.put_f64(3.0);
        b.put_str("half");
        b.put_f64(1.5);
        b.put_str("text");
        b.put_str(" 42 ");
        b.put_str("word");
        b.put_str("hot");
        b.put_str("yes");
        b.put_bool(true);
        b.put_str("no");
        b.put_str("false");
        b.put_str("list");
        b.put_array(0);
        b.put_str("none");
        b.put_nil();
        b
    }

    #[test]
    fn typed_getters_take_what_go_takes() {
        let raw = config();
        let c = Value::from_raw(&raw);
        assert_eq!(c.config_int("n", 0), Ok(7));
        assert_eq!(c.config_int("whole", 0), Ok(3));
        assert_eq!(c.config_int("text", 0), Ok(42));
        assert_eq!(c.config_int("missing", 5), Ok(5));
        assert_eq!(c.config_int("none", 5), Ok(5));
        assert_eq!(c.config_f64("n", 0.0), Ok(7.0));
        assert_eq!(c.config_f64("half", 0.0), Ok(1.5));
        assert_eq!(c.config_bool("yes", false), Ok(true));
        assert_eq!(c.config_bool("no", true), Ok(false));
        assert_eq!(c.config_str("word", "").unwrap(), "hot");
        assert_eq!(c.config_str("missing", "d").unwrap(), "d");
        assert_eq!(c.config_str("n", "").unwrap(), "7");
        assert_eq!(c.config_str("yes", "").unwrap(), "true");
        let mut big = Vec::new();
        big.put_map(2);
        big.put_str("u");
        big.put_raw(&[0xcf, 0x80, 0, 0, 0, 0, 0, 0, 1]);
        big.put_str("b");
        big.put_str("T");
        let big = Value::from_raw(&big);
        assert_eq!(big.config_str("u", "").unwrap(), "9223372036854775809", "exact, not through a float");
        assert_eq!(big.config_bool("b", false), Ok(true));
    }

    #[test]
    fn a_wrong_type_names_the_key_and_what_it_got() {
        let raw = config();
        let c = Value::from_raw(&raw);
        for (got, want) in [
            (c.config_int("half", 0).unwrap_err(), "config half: want an integer (int64), got 1.5"),
            (c.config_int("word", 0).unwrap_err(), "config word: want an integer (int64), got \"hot\""),
            (c.config_f64("list", 0.0).unwrap_err(), "config list: want a number, got a list"),
            (c.config_bool("n", false).unwrap_err(), "config n: want a boolean, got 7"),
            (c.config_str("list", "").unwrap_err(), "config list: want a string, got a list"),
        ] {
            assert_eq!(got.status, Status::CONFIG);
            assert_eq!(got.text, want);
        }
    }
}
