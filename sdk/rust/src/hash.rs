//! Java's hashCode of keys, the hash Flink partitions by (abi.KeyHash).

use crate::msgpack::{Type, Value};
use crate::text::java_step;

/// Java's String.hashCode over the UTF-16 code units of the UTF-8 bytes `s`
/// (abi.StringHash): a malformed sequence counts as the one U+FFFD Java's
/// decoder replaces it with (text::java_step).
pub fn java_string_hash(s: &[u8]) -> i32 {
    let mut h: i32 = 0;
    let mut i = 0;
    while i < s.len() {
        let (r, size) = java_step(&s[i..]);
        i += size;
        if r >= 0x10000 {
            let r = r - 0x10000;
            h = h.wrapping_mul(31).wrapping_add((0xd800 + (r >> 10)) as i32);
            h = h.wrapping_mul(31).wrapping_add((0xdc00 + (r & 0x3ff)) as i32);
        } else {
            h = h.wrapping_mul(31).wrapping_add(r as i32);
        }
    }
    h
}

/// abi.KeyHash: Java's hashCode of a key (string, int, float, bool, or a
/// non-empty array of them), or why the key has none (nil, a map...).
pub fn key_hash(key: Option<Value>) -> Result<i32, &'static str> {
    let key = match key {
        Some(k) if !k.is_nil() && !k.raw().is_empty() => k,
        _ => return Err("key must not be null"),
    };
    let raw = key.raw();
    match key.kind() {
        Type::Str => key.as_str_bytes().map(java_string_hash).ok_or("truncated msgpack"),
        Type::Int => {
            // Integer.hashCode, or Long.hashCode past 32 bits
            let v = key.as_int().ok_or("integer out of range")?;
            Ok(if v >= i32::MIN as i64 && v <= i32::MAX as i64 { v as i32 } else { (v as u64 ^ (v as u64) >> 32) as i32 })
        }
        Type::Float if raw[0] == 0xca => {
            // Float.hashCode
            let b = raw.get(1..5).ok_or("truncated msgpack")?;
            let f = f32::from_be_bytes([b[0], b[1], b[2], b[3]]);
            Ok(if f.is_nan() { 0x7fc00000 } else { f.to_bits() as i32 })
        }
        Type::Float => {
            // Double.hashCode of doubleToLongBits
            let f = key.as_f64().ok_or("truncated msgpack")?;
            let bits = if f.is_nan() { 0x7ff8000000000000 } else { f.to_bits() };
            Ok((bits ^ bits >> 32) as i32)
        }
        Type::Bool => Ok(if raw[0] == 0xc3 { 1231 } else { 1237 }),
        Type::Array => {
            // a composite key, Flink's Tuple: 31 * h + hash(field)
            let items = key.items().ok_or("unexpected msgpack type")?;
            let mut h: i32 = 0;
            let mut n = 0;
            for e in items {
                if e.kind() == Type::Array {
                    return Err("nested composite key");
                }
                h = h.wrapping_mul(31).wrapping_add(key_hash(Some(e))?);
                n += 1;
            }
            if n == 0 {
                return Err("unexpected msgpack type");
            }
            Ok(h)
        }
        _ => Err("a map, binary or ext value is not a key"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_vectors() {
        // abi/keyhash_test.go, plus malformed UTF-8
        let cases: &[(&[u8], i32)] = &[
            (b"hello", 99162322),
            (b"", 0),
            (b"a", 97),
            ("é".as_bytes(), 233),
            ("😀".as_bytes(), 31 * 0xD83D + 0xDE00),
            (b"NL", 2494),
        ];
        for &(s, want) in cases.iter().chain(JAVA_MALFORMED) {
            assert_eq!(java_string_hash(s), want, "{:?}", s);
        }
    }

    /// new String(bytes, UTF_8).hashCode() in Java 17, for malformed UTF-8
    /// (abi/testdata/java-strings.txt.gz holds the host to thousands more).
    const JAVA_MALFORMED: &[(&[u8], i32)] = &[
        (b"\xff", 65533),
        (b"\xe2\x82\x41", 2031588),
        (b"\xed\xa0\x80", 65533),
        (b"\xf0\x9f\x98\x41", 2031588),
        (b"\xe0\x80", 2097056),
        (b"\xf0\x90\x80", 65533),
        (b"\xf4\x90\x80\x80", 2017367872),
        (b"\xc2\x41", 2031588),
        (b"\xc2", 65533),
        (b"\xe2", 65533),
        (b"\xe2\x82", 65533),
        (b"\xf0\x9f", 65533),
        (b"\xf0\x9f\x98", 65533),
        (b"\xf0\x9f\x41", 2031588),
        (b"\xf5\x80\x80\x80", 2017367872),
        (b"\xed\x9f\xbf", 55295),
        (b"\x80", 65533),
        (b"\xe0\xa0\x41", 2031588),
        (b"\xf0\x90\x80\x41", 2031588),
        (b"\x41\xff\x42", 2094054),
    ];


    #[test]
    fn key_hash_vectors() {
        let h = |b: &[u8]| key_hash(Some(Value::from_raw(b)));
        assert_eq!(h(&[0xa5, b'h', b'e', b'l', b'l', b'o']), Ok(99162322));
        assert_eq!(h(&[0x2a]), Ok(42));
        assert_eq!(h(&[0xff]), Ok(-1));
        assert_eq!(h(&[0xcf, 0, 0, 0, 1, 0, 0, 0, 0]), Ok(1));
        assert_eq!(h(&[0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0]), Ok(i32::MIN));
        assert_eq!(h(&[0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0]), Ok(1072693248));
        assert_eq!(h(&[0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 1]), Ok(2146959360));
        assert_eq!(h(&[0xc3]), Ok(1231));
        assert_eq!(h(&[0x92, 0xa1, b'a', 0x01]), Ok(31 * 97 + 1));
        assert!(h(&[0xc0]).is_err() && h(&[0x80]).is_err() && h(&[0x90]).is_err() && h(&[0x91, 0x91, 1]).is_err());
        assert!(key_hash(None).is_err());
    }
}
