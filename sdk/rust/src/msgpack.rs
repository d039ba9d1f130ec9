//! A minimal, allocation-free msgpack reader (zero-copy [`Value`] views)
//! and writer ([`Write`] on `Vec<u8>`), mirroring abi/msgpack.go and
//! abi/append.go: integers in their smallest encoding, floats as float64,
//! strings as fixstr/str8/str16/str32 by length.

/// The deepest nesting of arrays and maps accepted (abi.MaxDepth).
pub const MAX_DEPTH: usize = 64;

/// The msgpack family of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Invalid,
    Nil,
    Bool,
    Int,
    Float,
    Str,
    Bin,
    Array,
    Map,
    Ext,
}

/// Why bytes are not valid msgpack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    Truncated,
    Invalid,
    TooDeep,
}

impl DecodeError {
    /// The error's text, as the abi package words it.
    #[inline]
    pub fn text(self) -> &'static str {
        match self {
            DecodeError::Truncated => "truncated msgpack",
            DecodeError::Invalid => "invalid msgpack byte",
            DecodeError::TooDeep => "msgpack nested deeper than the limit",
        }
    }
}

/// The type of the value whose header is `b[0]` (Invalid when `b` is empty).
#[inline]
pub fn type_of(b: &[u8]) -> Type {
    let c = match b.first() {
        Some(&c) => c,
        None => return Type::Invalid,
    };
    match c {
        0x00..=0x7f | 0xe0..=0xff | 0xcc..=0xd3 => Type::Int,
        0x80..=0x8f | 0xde | 0xdf => Type::Map,
        0x90..=0x9f | 0xdc | 0xdd => Type::Array,
        0xa0..=0xbf | 0xd9..=0xdb => Type::Str,
        0xc0 => Type::Nil,
        0xc2 | 0xc3 => Type::Bool,
        0xc4..=0xc6 => Type::Bin,
        0xca | 0xcb => Type::Float,
        0xc1 => Type::Invalid,
        _ => Type::Ext, // 0xc7..=0xc9, 0xd4..=0xd8
    }
}

/// The N bytes at `b[at..]`, when they are there.
#[inline]
fn bytes<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at.checked_add(N)?)?.try_into().ok()
}

/// The big-endian unsigned integer of n (1, 2, 4 or 8) bytes at `b[at..]`:
/// one load each, for the constant n of every caller.
#[inline]
fn be(b: &[u8], at: usize, n: usize) -> Option<u64> {
    Some(match n {
        1 => bytes::<1>(b, at)?[0] as u64,
        2 => u16::from_be_bytes(bytes(b, at)?) as u64,
        4 => u32::from_be_bytes(bytes(b, at)?) as u64,
        _ => u64::from_be_bytes(bytes(b, at)?),
    })
}

/// `FIXED[c]` is the whole size of a value whose header byte `c` gives it
/// (fixint, fixstr, nil, bool, fixed-width numbers, fixext), else 0
/// (containers, str/bin/ext 8/16/32, 0xc1), as fixedSize in abi/msgpack.go:
/// the common case of every scan is one table load and one length check.
static FIXED: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = match c as u8 {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => 1,
            0xa0..=0xbf => 1 + (c as u8 & 0x1f),
            0xcc | 0xd0 => 2,
            0xcd | 0xd1 | 0xd4 => 3,
            0xd5 => 4,
            0xce | 0xd2 | 0xca => 5,
            0xd6 => 6,
            0xcf | 0xd3 | 0xcb => 9,
            0xd7 => 10,
            0xd8 => 18,
            _ => 0,
        };
        c += 1;
    }
    t
};

#[inline]
fn need(b: &[u8], off: usize, size: u64) -> Result<usize, DecodeError> {
    if size <= (b.len() - off) as u64 {
        Ok(off + size as usize)
    } else {
        Err(DecodeError::Truncated)
    }
}

/// Returns the offset just past the value that starts at `b[off]`. It never
/// allocates, nests at most [`MAX_DEPTH`] levels and checks every length
/// against the bytes left before trusting it.
pub fn skip(b: &[u8], off: usize) -> Result<usize, DecodeError> {
    skip_at(b, off, 0)
}

pub(crate) fn skip_at(b: &[u8], off: usize, depth: usize) -> Result<usize, DecodeError> {
    let c = *b.get(off).ok_or(DecodeError::Truncated)?;
    let size = FIXED[c as usize];
    if size != 0 {
        return need(b, off, size as u64);
    }
    let len = |n: usize| be(b, off + 1, n).ok_or(DecodeError::Truncated);
    match c {
        0x80..=0x8f => skip_n(b, off + 1, 2 * (c & 0x0f) as u64, depth),
        0x90..=0x9f => skip_n(b, off + 1, (c & 0x0f) as u64, depth),
        0xc4 | 0xd9 => need(b, off, 2 + len(1)?),
        0xc7 => need(b, off, 3 + len(1)?),
        0xc5 | 0xda => need(b, off, 3 + len(2)?),
        0xc8 => need(b, off, 4 + len(2)?),
        0xc6 | 0xdb => need(b, off, 5 + len(4)?),
        0xc9 => need(b, off, 6 + len(4)?),
        0xdc => skip_n(b, off + 3, len(2)?, depth),
        0xde => skip_n(b, off + 3, 2 * len(2)?, depth),
        0xdd => skip_n(b, off + 5, len(4)?, depth),
        0xdf => skip_n(b, off + 5, 2 * len(4)?, depth),
        _ => Err(DecodeError::Invalid), // 0xc1
    }
}

/// Skips the n values of a container body at `b[off]` (`off <= b.len()`),
/// one level deeper. Only a nested container or a str/bin/ext 8/16/32
/// costs a call.
#[inline]
fn skip_n(b: &[u8], mut off: usize, mut n: u64, depth: usize) -> Result<usize, DecodeError> {
    if depth + 1 > MAX_DEPTH {
        return Err(DecodeError::TooDeep);
    }
    if n > (b.len() - off) as u64 {
        return Err(DecodeError::Truncated); // every value takes a byte
    }
    while n > 0 {
        n -= 1;
        off = skip_fast(b, off, depth + 1)?;
    }
    Ok(off)
}

/// `skip_n` for the n key/value pairs of a map body at `b[off]`, with a
/// fixstr key skipped without the table: the next load then waits on one
/// add, not on a second load.
#[inline]
pub(crate) fn skip_pairs(b: &[u8], mut off: usize, mut n: usize, depth: usize) -> Result<usize, DecodeError> {
    if depth + 1 > MAX_DEPTH {
        return Err(DecodeError::TooDeep);
    }
    while n > 0 {
        n -= 1;
        let c = *b.get(off).ok_or(DecodeError::Truncated)?;
        // the key: a fixstr's end is checked by the value's read
        off = if c & 0xe0 == 0xa0 { off + 1 + (c & 0x1f) as usize } else { skip_at(b, off, depth + 1)? };
        // the value: a fixint tested here again, before skip_fast, lays the
        // loop out 4% faster under wazero (measured)
        let c = *b.get(off).ok_or(DecodeError::Truncated)?;
        off = if c <= 0x7f || c >= 0xe0 { off + 1 } else { skip_fast(b, off, depth + 1)? };
    }
    Ok(off)
}

/// `skip_at` with its common cases inline: a fixint, a value whose header
/// gives its size.
#[inline]
pub(crate) fn skip_fast(b: &[u8], off: usize, depth: usize) -> Result<usize, DecodeError> {
    if let Some(&c) = b.get(off) {
        if c <= 0x7f || c >= 0xe0 {
            return Ok(off + 1);
        }
        let size = FIXED[c as usize] as usize;
        if size != 0 && size <= b.len() - off {
            return Ok(off + size);
        }
    }
    skip_at(b, off, depth)
}

/// Whether two byte strings are equal; for up to 16 bytes with at most two
/// loads per side (overlapping when the length is not a power of two),
/// constants for a literal, inlined.
#[inline]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    #[inline]
    fn word<const N: usize>(s: &[u8], at: usize) -> [u8; N] {
        bytes(s, at).unwrap_or([0; N]) // in range for every caller below
    }
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1 => a[0] == b[0],
        2..=3 => word::<2>(a, 0) == word::<2>(b, 0) && word::<2>(a, n - 2) == word::<2>(b, n - 2),
        4..=7 => word::<4>(a, 0) == word::<4>(b, 0) && word::<4>(a, n - 4) == word::<4>(b, n - 4),
        8..=16 => word::<8>(a, 0) == word::<8>(b, 0) && word::<8>(a, n - 8) == word::<8>(b, n - 8),
        _ => a == b,
    }
}

/// A view of one msgpack value: its raw bytes, never copied. Getters return
/// `None` for another type (or bytes that are cut short).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Value<'a> {
    raw: &'a [u8],
}

impl<'a> Value<'a> {
    /// Views raw bytes as a value. Values the SDK hands out are checked;
    /// hand-made ones are read with bounds checks, never trusted.
    #[inline]
    pub const fn from_raw(raw: &'a [u8]) -> Self {
        Value { raw }
    }

    /// The msgpack bytes.
    #[inline]
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    pub fn kind(&self) -> Type {
        type_of(self.raw)
    }

    pub fn is_nil(&self) -> bool {
        self.raw.first() == Some(&0xc0)
    }

    /// An integer of any width (a uint64 above i64::MAX is `None`).
    pub fn as_int(&self) -> Option<i64> {
        let b = self.raw;
        let c = *b.first()?;
        Some(match c {
            0x00..=0x7f => c as i64,
            0xe0..=0xff => c as i8 as i64,
            0xcc => be(b, 1, 1)? as i64,
            0xcd => be(b, 1, 2)? as i64,
            0xce => be(b, 1, 4)? as i64,
            0xcf => i64::try_from(be(b, 1, 8)?).ok()?,
            0xd0 => be(b, 1, 1)? as u8 as i8 as i64,
            0xd1 => be(b, 1, 2)? as u16 as i16 as i64,
            0xd2 => be(b, 1, 4)? as u32 as i32 as i64,
            0xd3 => be(b, 1, 8)? as i64,
            _ => return None,
        })
    }

    /// A float32 or float64, or an integer converted.
    pub fn as_f64(&self) -> Option<f64> {
        match self.raw.first()? {
            0xca => Some(f32::from_bits(be(self.raw, 1, 4)? as u32) as f64),
            0xcb => Some(f64::from_bits(be(self.raw, 1, 8)?)),
            _ => self.as_int().map(|i| i as f64),
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.raw.first()? {
            0xc2 => Some(false),
            0xc3 => Some(true),
            _ => None,
        }
    }

    /// A string's bytes (UTF-8 by convention, not checked).
    #[inline]
    pub fn as_str_bytes(&self) -> Option<&'a [u8]> {
        let b = self.raw;
        let (hdr, n) = match *b.first()? {
            c @ 0xa0..=0xbf => (1, (c & 0x1f) as u64),
            0xd9 => (2, be(b, 1, 1)?),
            0xda => (3, be(b, 1, 2)?),
            0xdb => (5, be(b, 1, 4)?),
            _ => return None,
        };
        b.get(hdr..hdr + n as usize)
    }

    /// A string, checked to be UTF-8.
    pub fn as_str(&self) -> Option<&'a str> {
        core::str::from_utf8(self.as_str_bytes()?).ok()
    }

    /// A binary value's bytes.
    pub fn as_bin(&self) -> Option<&'a [u8]> {
        let b = self.raw;
        let (hdr, n) = match *b.first()? {
            0xc4 => (2, be(b, 1, 1)?),
            0xc5 => (3, be(b, 1, 2)?),
            0xc6 => (5, be(b, 1, 4)?),
            _ => return None,
        };
        b.get(hdr..hdr + n as usize)
    }

    /// The Go SDK's Value.Int: an integer as is, a float truncated toward
    /// zero (saturating, NaN is 0, as a Go plugin compiled to wasm does),
    /// anything else 0.
    #[inline]
    pub fn int(&self) -> i64 {
        match self.raw.first() {
            Some(&c) if c <= 0x7f || c >= 0xe0 => c as i8 as i64, // fixint, inline
            _ => self.int_slow(),
        }
    }

    fn int_slow(&self) -> i64 {
        match self.kind() {
            Type::Int => self.as_int().unwrap_or(0),
            Type::Float => self.as_f64().map(|f| f as i64).unwrap_or(0),
            _ => 0,
        }
    }

    /// The Go SDK's Value.Float: a float, an integer converted, else 0.
    pub fn float(&self) -> f64 {
        self.as_f64().unwrap_or(0.0)
    }

    /// The value of the top-level string key `name` of a map.
    #[inline]
    pub fn get(&self, name: &str) -> Option<Value<'a>> {
        self.get_bytes(name.as_bytes())
    }

    /// `get` with the name as bytes.
    #[inline]
    pub fn get_bytes(&self, name: &[u8]) -> Option<Value<'a>> {
        let b = self.raw;
        match crate::index::find(b, name) {
            Some(crate::index::Found::At(at, end)) => return b.get(at..end).map(Value::from_raw),
            Some(crate::index::Found::Missing(_)) => return None,
            None => {}
        }
        let (mut left, mut off) = container(b, 0x80, 0xde)?;
        while left > 0 {
            left -= 1;
            // fast path: a fixstr key compared in place, a value whose
            // header gives its size skipped in place
            let (key, val) = match b.get(off) {
                Some(&c) if c & 0xe0 == 0xa0 => {
                    let val = off + 1 + (c & 0x1f) as usize;
                    (b.get(off + 1..val), val)
                }
                _ => {
                    let val = skip_at(b, off, 1).ok()?;
                    (b.get(off..val).and_then(|k| Value::from_raw(k).as_str_bytes()), val)
                }
            };
            let end = skip_fast(b, val, 1).ok()?;
            if key.map_or(false, |k| same_bytes(k, name)) {
                return b.get(val..end).map(Value::from_raw);
            }
            off = end;
        }
        None
    }

    /// Iterates a map's (key, value) pairs; `None` if not a map.
    #[inline]
    pub fn entries(&self) -> Option<Entries<'a>> {
        let (n, off) = container(self.raw, 0x80, 0xde)?;
        Some(Entries { b: self.raw, off, left: n })
    }

    /// Iterates an array's elements; `None` if not an array.
    pub fn items(&self) -> Option<Items<'a>> {
        let (n, off) = container(self.raw, 0x90, 0xdc)?;
        Some(Items(Entries { b: self.raw, off, left: n }))
    }
}

/// The element count and body offset of a map or array.
#[inline]
fn container(b: &[u8], fix: u8, c16: u8) -> Option<(u64, usize)> {
    let c = *b.first()?;
    if c & 0xf0 == fix {
        Some(((c & 0x0f) as u64, 1))
    } else if c == c16 {
        Some((be(b, 1, 2)?, 3))
    } else if c == c16 + 1 {
        Some((be(b, 1, 4)?, 5))
    } else {
        None
    }
}

/// An iterator over a map's (key, value) pairs.
pub struct Entries<'a> {
    b: &'a [u8],
    off: usize,
    left: u64,
}

impl<'a> Entries<'a> {
    /// The bytes of the pairs not read yet, and how many there are.
    pub(crate) fn rest(&self) -> (&'a [u8], u64) {
        (&self.b[self.off..], self.left)
    }

    fn value(&mut self) -> Option<Value<'a>> {
        match skip_at(self.b, self.off, 1) {
            Ok(end) => {
                let v = Value { raw: &self.b[self.off..end] };
                self.off = end;
                Some(v)
            }
            Err(_) => {
                self.left = 0;
                None
            }
        }
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = (Value<'a>, Value<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some((self.value()?, self.value()?))
    }
}

/// An iterator over an array's elements.
pub struct Items<'a>(Entries<'a>);

impl<'a> Iterator for Items<'a> {
    type Item = Value<'a>;
    fn next(&mut self) -> Option<Value<'a>> {
        if self.0.left == 0 {
            return None;
        }
        self.0.left -= 1;
        self.0.value()
    }
}

/// `put_int` for an integer that is not a fixint.
#[inline(never)]
fn put_int_wide(b: &mut Vec<u8>, v: i64) {
    match v {
        0x80..=0xff => b.extend_from_slice(&[0xcc, v as u8]),
        0x100..=0xffff => put_be(b, 0xcd, v as u64, 2),
        0x1_0000..=0xffff_ffff => put_be(b, 0xce, v as u64, 4),
        -128..=127 => b.extend_from_slice(&[0xd0, v as u8]),
        -32768..=32767 => put_be(b, 0xd1, v as u16 as u64, 2),
        -2147483648..=2147483647 => put_be(b, 0xd2, v as u32 as u64, 4),
        _ if v >= 0 => put_be(b, 0xcf, v as u64, 8),
        _ => put_be(b, 0xd3, v as u64, 8),
    }
}

/// Appending msgpack values in their smallest encoding (abi/append.go).
pub trait Write {
    fn put_raw(&mut self, raw: &[u8]);
    fn put_nil(&mut self);
    fn put_bool(&mut self, v: bool);
    fn put_int(&mut self, v: i64);
    /// Always a float64.
    fn put_f64(&mut self, v: f64);
    fn put_str(&mut self, s: &str);
    fn put_str_bytes(&mut self, s: &[u8]);
    fn put_bin(&mut self, b: &[u8]);
    fn put_array(&mut self, n: u32);
    fn put_map(&mut self, n: u32);
}

impl Write for Vec<u8> {
    #[inline]
    fn put_raw(&mut self, raw: &[u8]) {
        self.extend_from_slice(raw);
    }
    fn put_nil(&mut self) {
        self.push(0xc0);
    }
    fn put_bool(&mut self, v: bool) {
        self.push(if v { 0xc3 } else { 0xc2 });
    }
    #[inline]
    fn put_int(&mut self, v: i64) {
        if (-32..=0x7f).contains(&v) {
            self.push(v as u8); // a fixint, inline: most integers in a stream
        } else {
            put_int_wide(self, v);
        }
    }
    fn put_f64(&mut self, v: f64) {
        put_be(self, 0xcb, v.to_bits(), 8);
    }
    fn put_str(&mut self, s: &str) {
        self.put_str_bytes(s.as_bytes());
    }
    fn put_str_bytes(&mut self, s: &[u8]) {
        let n = s.len();
        match n {
            0..=31 => self.push(0xa0 | n as u8),
            32..=0xff => self.extend_from_slice(&[0xd9, n as u8]),
            0x100..=0xffff => put_be(self, 0xda, n as u64, 2),
            _ => put_be(self, 0xdb, n as u64, 4),
        }
        self.extend_from_slice(s);
    }
    fn put_bin(&mut self, b: &[u8]) {
        let n = b.len();
        match n {
            0..=0xff => self.extend_from_slice(&[0xc4, n as u8]),
            0x100..=0xffff => put_be(self, 0xc5, n as u64, 2),
            _ => put_be(self, 0xc6, n as u64, 4),
        }
        self.extend_from_slice(b);
    }
    fn put_array(&mut self, n: u32) {
        put_header(self, 0x90, 0xdc, n);
    }
    fn put_map(&mut self, n: u32) {
        put_header(self, 0x80, 0xde, n);
    }
}

fn put_be(b: &mut Vec<u8>, c: u8, v: u64, n: usize) {
    b.push(c);
    b.extend_from_slice(&v.to_be_bytes()[8 - n..]);
}

fn put_header(b: &mut Vec<u8>, fix: u8, c16: u8, n: u32) {
    match n {
        0..=15 => b.push(fix | n as u8),
        16..=0xffff => put_be(b, c16, n as u64, 2),
        _ => put_be(b, c16 + 1, n as u64, 4),
    }
}

/// The size of the smallest map header for n pairs.
pub(crate) fn map_header_size(n: u32) -> usize {
    match n {
        0..=15 => 1,
        16..=0xffff => 3,
        _ => 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(f: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut b = Vec::new();
        f(&mut b);
        b
    }

    #[test]
    fn put_int_smallest_form() {
        let cases: &[(i64, &[u8])] = &[
            (0, &[0x00]),
            (127, &[0x7f]),
            (-1, &[0xff]),
            (-32, &[0xe0]),
            (128, &[0xcc, 0x80]),
            (256, &[0xcd, 1, 0]),
            (65536, &[0xce, 0, 1, 0, 0]),
            (-33, &[0xd0, 0xdf]),
            (-129, &[0xd1, 0xff, 0x7f]),
            (-32769, &[0xd2, 0xff, 0xff, 0x7f, 0xff]),
            (1 << 32, &[0xcf, 0, 0, 0, 1, 0, 0, 0, 0]),
            (i64::MIN, &[0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0]),
        ];
        for &(v, want) in cases {
            let b = enc(|b| b.put_int(v));
            assert_eq!(b, want, "put_int({})", v);
            assert_eq!(Value::from_raw(&b).as_int(), Some(v));
            assert_eq!(skip(&b, 0), Ok(b.len()));
        }
    }

    #[test]
    fn scalars() {
        let f = enc(|b| b.put_f64(1.5));
        assert_eq!(f[0], 0xcb);
        assert_eq!(Value::from_raw(&f).as_f64(), Some(1.5));
        assert_eq!(Value::from_raw(&[0xca, 0x3f, 0xc0, 0, 0]).as_f64(), Some(1.5));
        assert_eq!(Value::from_raw(&[0xc3]).as_bool(), Some(true));
        assert!(Value::from_raw(&[0xc0]).is_nil());
        assert_eq!(Value::from_raw(&[0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).as_int(), None);
        let s31 = "a".repeat(31);
        assert_eq!(enc(|b| b.put_str(&s31))[0], 0xbf);
        let s32 = enc(|b| b.put_str(&"a".repeat(32)));
        assert_eq!(&s32[..2], &[0xd9, 32]);
        assert_eq!(Value::from_raw(&s32).as_str().map(str::len), Some(32));
        let s300 = enc(|b| b.put_str(&"a".repeat(300)));
        assert_eq!(s300[0], 0xda);
        assert_eq!(Value::from_raw(&s300[..10]).as_str_bytes(), None);
        let bin = enc(|b| b.put_bin(b"ab"));
        assert_eq!(Value::from_raw(&bin).as_bin(), Some(&b"ab"[..]));
        assert_eq!(type_of(&[0xd4, 1, 2]), Type::Ext);
        assert_eq!(type_of(&[0xc1]), Type::Invalid);
    }

    #[test]
    fn lenient_int_like_go() {
        let f = |v: f64| Value::from_raw(&enc(|b| b.put_f64(v))).int();
        assert_eq!(f(1.5), 1);
        assert_eq!(f(-0.5), 0);
        assert_eq!(f(f64::NAN), 0);
        assert_eq!(f(f64::INFINITY), i64::MAX);
        assert_eq!(Value::from_raw(&[0xa1, b'5']).int(), 0);
        assert_eq!(Value::default().int(), 0);
    }

    #[test]
    fn skip_errors() {
        assert_eq!(skip(&[0x92, 0x01], 0), Err(DecodeError::Truncated));
        assert_eq!(skip(&[0xc1], 0), Err(DecodeError::Invalid));
        assert_eq!(skip(&[0xdd, 0xff, 0xff, 0xff, 0xff], 0), Err(DecodeError::Truncated));
        assert_eq!(skip(&[0xd9, 5, b'a'], 0), Err(DecodeError::Truncated));
        let mut deep = vec![0x91u8; 69];
        deep.push(0x01);
        assert_eq!(skip(&deep[5..], 0), Ok(65)); // 64 levels: accepted
        assert_eq!(skip(&deep, 0), Err(DecodeError::TooDeep));
    }

    /// The msgpack spec's size of a value of header c followed by zero
    /// bytes (lengths and counts 0): the oracle of the scanner's table.
    fn spec_size(c: u8) -> Option<usize> {
        Some(match c {
            0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 | 0x80 | 0x90 => 1,
            0xa0..=0xbf => 1 + (c & 0x1f) as usize,
            0xcc | 0xd0 | 0xc4 | 0xd9 => 2,
            0xcd | 0xd1 | 0xd4 | 0xc7 | 0xc5 | 0xda | 0xdc | 0xde => 3,
            0xd5 | 0xc8 => 4,
            0xce | 0xd2 | 0xca | 0xc6 | 0xdb | 0xdd | 0xdf => 5,
            0xd6 | 0xc9 => 6,
            0xcf | 0xd3 | 0xcb => 9,
            0xd7 => 10,
            0xd8 => 18,
            _ => return None, // 0xc1, and fixmaps/fixarrays with elements
        })
    }

    #[test]
    fn skip_every_header() {
        for c in 0..=255u8 {
            let mut b = [0u8; 64];
            b[0] = c;
            let want = spec_size(c);
            if matches!(c, 0x81..=0x8f | 0x91..=0x9f) {
                continue; // elements follow: below
            }
            assert_eq!(skip(&b, 0).ok(), want, "header {:#x}", c);
            if let Some(n) = want.filter(|&n| n > 1) {
                assert_eq!(skip(&b[..n - 1], 0), Err(DecodeError::Truncated), "header {:#x}, one byte short", c);
            }
            // {"a": the value} as a map
            if let Some(n) = want {
                let mut m = vec![0x81, 0xa1, b'a'];
                m.extend_from_slice(&b[..n]);
                assert_eq!(skip(&m, 0), Ok(m.len()), "map of {:#x}", c);
                assert!(skip(&m[..m.len() - 1], 0).is_err());
                assert_eq!(Value::from_raw(&m).get("a").map(|v| v.raw().len()), Some(n));
            }
        }
        assert_eq!(skip(&[0x81, 0xa1, b'a', 0x91, 0x01], 0), Ok(5));
    }

    #[test]
    fn lookup_every_length() {
        let name = |n: usize| -> String { (0..n).map(|i| (b'a' + ((n + i) % 26) as u8) as char).collect() };
        let mut m = Vec::new();
        m.put_map(22);
        for n in 1..=22 {
            m.put_str(&name(n));
            match n % 6 {
                0 => m.put_int(n as i64),
                1 => m.put_int(100_000 + n as i64),
                2 => m.put_str(&name(n)),
                3 => m.put_str(&"x".repeat(40)), // str8
                4 => {
                    m.put_array(2);
                    m.put_int(n as i64);
                    m.put_nil();
                }
                _ => m.put_f64(n as f64),
            }
        }
        let v = Value::from_raw(&m);
        assert_eq!(skip(&m, 0), Ok(m.len()));
        for n in 1..=22 {
            let k = name(n);
            let got = v.get(&k).unwrap_or_else(|| panic!("{} not found", k));
            assert_eq!(skip(got.raw(), 0), Ok(got.raw().len()));
            match n % 6 {
                0 => assert_eq!(got.int(), n as i64),
                1 => assert_eq!(got.int(), 100_000 + n as i64),
                5 => assert_eq!(got.float(), n as f64),
                _ => {}
            }
            let first = format!("!{}", &k[1..]);
            let last = format!("{}!", &k[..n - 1]);
            assert_eq!(v.get(&first), None, "{}", first);
            assert_eq!(v.get(&last), None, "{}", last);
        }
        assert_eq!(v.get(""), None);
        // truncated after a key, inside a value, in the middle of a key
        assert_eq!(Value::from_raw(&[0x82, 0xa1, b'a', 0x01, 0xa1, b'b']).get("b"), None);
        assert_eq!(Value::from_raw(&[0x81, 0xa1, b'b', 0xcd, 0x01]).get("b"), None);
        assert_eq!(Value::from_raw(&[0x82, 0xa1, b'a', 0xcd, 0x01]).get("b"), None);
        assert_eq!(Value::from_raw(&[0x81, 0xa6, b'a', b'm', b'o']).get("amo"), None);
    }

    #[test]
    fn map_lookup() {
        let m = enc(|b| {
            b.put_map(3);
            b.put_int(1);
            b.put_int(2);
            b.put_str("amount");
            b.put_int(7);
            b.put_raw(&[0xd9, 3, b'k', b'e', b'y']);
            b.put_str("v");
        });
        let v = Value::from_raw(&m);
        assert_eq!(v.get("amount").and_then(|v| v.as_int()), Some(7));
        assert_eq!(v.get("key").and_then(|v| v.as_str()), Some("v"));
        assert_eq!(v.get("amoun"), None);
        assert_eq!(Value::from_raw(&[0x91, 1]).get("a"), None);
        assert_eq!(v.entries().unwrap().count(), 3);
        let arr = enc(|b| {
            b.put_array(2);
            b.put_str("x");
            b.put_nil();
        });
        assert_eq!(Value::from_raw(&arr).items().unwrap().count(), 2);
    }
}
