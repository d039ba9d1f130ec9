//! Records (zero-copy envelope views) and edits (typed setters that rebuild
//! a record's value map).

use crate::index::{find, index_pairs, Found};
use crate::msgpack::{map_header_size, same_bytes, skip_at, skip_fast, skip_pairs, type_of, DecodeError, Type, Value, Write};

/// One envelope `[event_time|nil, key|nil, value]`: views into the batch.
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    /// The whole envelope.
    pub raw: &'a [u8],
    /// Event time in ms since the Unix epoch.
    pub time: Option<i64>,
    /// The raw msgpack key; `None` when nil (unkeyed).
    pub key: Option<Value<'a>>,
    /// The record, by convention a map str -> any.
    pub value: Value<'a>,
}

impl<'a> Record<'a> {
    /// A top-level field of the value map.
    #[inline]
    pub fn field(&self, name: &str) -> Option<Value<'a>> {
        self.value.get(name)
    }
    /// An integer field with the Go SDK's semantics (see [`Value::int`]).
    #[inline]
    pub fn int(&self, name: &str) -> i64 {
        self.field(name).map(|v| v.int()).unwrap_or(0)
    }
    /// A number field (see [`Value::float`]).
    #[inline]
    pub fn float(&self, name: &str) -> f64 {
        self.field(name).map(|v| v.float()).unwrap_or(0.0)
    }
    /// A string field, UTF-8 checked.
    #[inline]
    pub fn str(&self, name: &str) -> Option<&'a str> {
        self.field(name).and_then(|v| v.as_str())
    }
    /// A string field's bytes, unchecked.
    #[inline]
    pub fn str_bytes(&self, name: &str) -> Option<&'a [u8]> {
        self.field(name).and_then(|v| v.as_str_bytes())
    }
    /// A boolean field.
    #[inline]
    pub fn bool(&self, name: &str) -> Option<bool> {
        self.field(name).and_then(|v| v.as_bool())
    }
}

/// Why an envelope could not be read.
pub(crate) type ParseError = &'static str;

/// Reads the envelope at `b[off..]` (abi.ParseRecord); returns it and the
/// offset just past it. Inline fast paths for what writers produce: an
/// int64/uint64 or nil time, a nil key, a fixmap value.
#[inline]
pub(crate) fn parse_record(b: &[u8], off: usize) -> Result<(Record<'_>, usize), ParseError> {
    parse::<false>(b, off)
}

/// `parse_record` that also indexes a fixmap value's fields (crate::index):
/// for the engine's batch loops only, which clear the index when the call
/// ends.
#[inline]
pub(crate) fn parse_record_indexed(b: &[u8], off: usize) -> Result<(Record<'_>, usize), ParseError> {
    parse::<true>(b, off)
}

#[inline(always)]
fn parse<const INDEX: bool>(b: &[u8], off: usize) -> Result<(Record<'_>, usize), ParseError> {
    let text = DecodeError::text;
    match b.get(off) {
        None => return Err(text(DecodeError::Truncated)),
        Some(0x93) => {}
        Some(_) => return Err("record is not a [event_time, key, value] envelope"),
    }
    let mut p = off + 1;
    let time = match b.get(p..).and_then(|t| Some((*t.first()?, t.get(1..9)))) {
        None => return Err(text(DecodeError::Truncated)),
        Some((0xc0, _)) => {
            p += 1;
            None
        }
        Some((c @ (0xcf | 0xd3), Some(t))) => {
            let t = u64::from_be_bytes(t.try_into().map_err(|_| text(DecodeError::Truncated))?);
            if c == 0xcf && t > i64::MAX as u64 {
                return Err("event time out of range");
            }
            p += 9;
            Some(t as i64)
        }
        Some(_) if type_of(&b[p..]) == Type::Int => {
            let end = skip_at(b, p, 1).map_err(text)?;
            let t = Value::from_raw(&b[p..end]).as_int().ok_or("event time out of range")?;
            p = end;
            Some(t)
        }
        Some(_) => return Err("event time is not an int or nil"),
    };
    let (key, k_end) = match b.get(p) {
        Some(0xc0) => (None, p + 1),
        _ => {
            let end = skip_at(b, p, 1).map_err(text)?;
            (b.get(p..end).map(Value::from_raw), end)
        }
    };
    let end = match b.get(k_end) {
        Some(&c) if c & 0xf0 == 0x80 && INDEX => index_pairs(b, k_end, (c & 0x0f) as usize),
        Some(&c) if c & 0xf0 == 0x80 => skip_pairs(b, k_end + 1, (c & 0x0f) as usize, 1),
        _ => skip_at(b, k_end, 1),
    }
    .map_err(text)?;
    let (raw, value) = match (b.get(off..end), b.get(k_end..end)) {
        (Some(raw), Some(value)) => (raw, value),
        _ => return Err(text(DecodeError::Truncated)), // the scanner's ends are in range
    };
    Ok((Record { raw, time, key, value: Value::from_raw(value) }, end))
}

/// Appends the head of an envelope: `[`, the time and the key.
pub(crate) fn put_envelope(b: &mut Vec<u8>, time: Option<i64>, key: Option<Value>) {
    b.push(0x93);
    match time {
        Some(t) => b.put_int(t),
        None => b.put_nil(),
    }
    match key {
        Some(k) => b.put_raw(k.raw()),
        None => b.put_nil(),
    }
}

/// One pending change of a field: its name and value are stored in the
/// edit's scratch bytes.
struct Op {
    name: (usize, usize),
    val: (usize, usize),
    unset: bool,
    found: bool,
}

/// The length of `r`'s envelope before its value, when `r.value` ends
/// `r.raw` (as for every record the SDK reads).
#[inline]
fn envelope_head(r: &Record) -> Option<usize> {
    let (raw, v) = (r.raw.as_ptr() as usize, r.value.raw().as_ptr() as usize);
    let head = v.checked_sub(raw)?;
    if head.checked_add(r.value.raw().len())? == r.raw.len() {
        Some(head)
    } else {
        None
    }
}

/// Typed setters on a record's value map. Existing fields keep their order
/// (edited in place), new fields are appended in the order first set, a
/// field set twice keeps the last value, and the map header is rewritten in
/// its smallest form. With no change the record is passed on byte for byte.
#[derive(Default)]
pub struct Edit {
    ops: Vec<Op>,
    scratch: Vec<u8>,
}

impl Edit {
    #[inline]
    pub(crate) fn clear(&mut self) {
        self.ops.clear();
        self.scratch.clear();
    }

    /// The index of the op for name, added when missing; its value starts
    /// at the end of scratch, where the caller writes it.
    #[inline]
    fn op(&mut self, name: &[u8], unset: bool) -> usize {
        let scratch = &self.scratch;
        let i = match self.ops.iter().position(|o| &scratch[o.name.0..o.name.1] == name) {
            Some(i) => i,
            None => {
                let at = self.scratch.len();
                self.scratch.extend_from_slice(name);
                self.ops.push(Op { name: (at, at + name.len()), val: (0, 0), unset: false, found: false });
                self.ops.len() - 1
            }
        };
        let at = self.scratch.len();
        let op = &mut self.ops[i];
        op.val = (at, at);
        op.unset = unset;
        i
    }

    #[inline]
    fn set_with(&mut self, name: &[u8], f: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        let i = self.op(name, false);
        f(&mut self.scratch);
        self.ops[i].val.1 = self.scratch.len();
        self
    }

    /// Sets a field to a raw msgpack value (copied), the name as bytes.
    pub fn set_raw_bytes(&mut self, name: &[u8], v: Value) -> &mut Self {
        self.set_with(name, |b| b.put_raw(v.raw()))
    }
    pub fn set_raw(&mut self, name: &str, v: Value) -> &mut Self {
        self.set_raw_bytes(name.as_bytes(), v)
    }
    pub fn set_nil(&mut self, name: &str) -> &mut Self {
        self.set_with(name.as_bytes(), |b| b.put_nil())
    }
    pub fn set_bool(&mut self, name: &str, v: bool) -> &mut Self {
        self.set_with(name.as_bytes(), |b| b.put_bool(v))
    }
    #[inline]
    pub fn set_int(&mut self, name: &str, v: i64) -> &mut Self {
        self.set_with(name.as_bytes(), |b| b.put_int(v))
    }
    pub fn set_f64(&mut self, name: &str, v: f64) -> &mut Self {
        self.set_with(name.as_bytes(), |b| b.put_f64(v))
    }
    pub fn set_str(&mut self, name: &str, v: &str) -> &mut Self {
        self.set_with(name.as_bytes(), |b| b.put_str(v))
    }
    pub fn set_str_bytes(&mut self, name: &str, v: &[u8]) -> &mut Self {
        self.set_with(name.as_bytes(), |b| b.put_str_bytes(v))
    }
    /// Removes a field (a no-op when missing).
    pub fn unset(&mut self, name: &str) -> &mut Self {
        self.op(name.as_bytes(), true);
        self
    }

    /// The common edit, one field set, when `r`'s value is a fixmap whose
    /// keys up to that field are fixstrs: the field's value is spliced in
    /// (or the field appended, the header counting it) and every other
    /// byte copied as it is. `false`, with nothing written, for any other
    /// record, which the general path takes.
    #[inline]
    fn splice(&self, r: &Record, head: usize, dst: &mut Vec<u8>) -> bool {
        let op = &self.ops[0];
        let (name, val) = (&self.scratch[op.name.0..op.name.1], &self.scratch[op.val.0..op.val.1]);
        let (raw, v) = (r.raw, r.value.raw());
        match find(v, name) {
            Some(Found::At(at, end)) => {
                splice_at(dst, raw, head + at, head + end, val);
                return true;
            }
            Some(Found::Missing(n)) if n < 15 => {
                append_field(dst, raw, head, n, name, val);
                return true;
            }
            Some(Found::Missing(_)) => return false,
            None => {}
        }
        let n = match v.first() {
            Some(&c) if c & 0xf0 == 0x80 => (c & 0x0f) as usize,
            _ => return false,
        };
        let mut off = 1;
        for _ in 0..n {
            let c = match v.get(off) {
                Some(&c) if c & 0xe0 == 0xa0 => c,
                _ => return false,
            };
            let at = off + 1 + (c & 0x1f) as usize;
            let end = match skip_fast(v, at, 1) {
                Ok(end) => end,
                Err(_) => return false,
            };
            if v.get(off + 1..at).map_or(false, |k| same_bytes(k, name)) {
                // the first field of that name, as the general path
                splice_at(dst, raw, head + at, head + end, val);
                return true;
            }
            off = end;
        }
        if n == 15 || off != v.len() {
            return false;
        }
        append_field(dst, raw, head, n, name, val);
        true
    }

    /// Appends `r` with the edits applied as an envelope to `dst`. Out of
    /// line: inlined into the record loop, it made that loop too large for
    /// wazero to keep its values in registers, and `double` ran ~5 % slower
    /// (RATIONALE.md, "Why does the Rust SDK write edits out of line, and the
    /// AssemblyScript SDK cache field names?").
    #[inline(never)]
    pub(crate) fn write(&mut self, r: &Record, dst: &mut Vec<u8>) -> Result<(), &'static str> {
        if self.ops.is_empty() {
            dst.extend_from_slice(r.raw); // unchanged: byte for byte, whatever the value
            return Ok(());
        }
        let head = envelope_head(r);
        if self.ops.len() == 1 && !self.ops[0].unset {
            if let Some(head) = head {
                if self.splice(r, head, dst) {
                    return Ok(());
                }
            }
        }
        self.write_general(r, head, dst)
    }

    /// `write`'s path for every edit that is not a splice, out of line so
    /// that the splice's code stays small.
    #[inline(never)]
    fn write_general(&mut self, r: &Record, head: Option<usize>, dst: &mut Vec<u8>) -> Result<(), &'static str> {
        let mut it = r.value.entries().ok_or("record value is not a map")?;
        match head {
            Some(h) => dst.extend_from_slice(&r.raw[..h]), // the envelope as it was encoded
            None => put_envelope(dst, r.time, r.key),
        }
        let at = dst.len();
        dst.extend_from_slice(&[0; 5]); // room for the largest map header
        for op in self.ops.iter_mut() {
            op.found = false;
        }
        let mut unseen = self.ops.len();
        let mut count: u32 = 0;
        while let Some((k, v)) = it.next() {
            let scratch = &self.scratch;
            let name = k.as_str_bytes();
            let op = name.and_then(|n| self.ops.iter_mut().find(|o| &scratch[o.name.0..o.name.1] == n));
            let mut unset = false;
            match op {
                Some(op) => {
                    if !op.found {
                        op.found = true;
                        unseen -= 1;
                    }
                    unset = op.unset;
                    if !unset {
                        dst.put_raw(k.raw());
                        dst.put_raw(&scratch[op.val.0..op.val.1]);
                    }
                }
                None => {
                    dst.put_raw(k.raw());
                    dst.put_raw(v.raw());
                }
            }
            if !unset {
                count += 1;
            }
            if unseen == 0 {
                // every edit applied: the rest is copied as it is (as sdk/go)
                let (rest, left) = it.rest();
                dst.put_raw(rest);
                count += left as u32;
                break;
            }
        }
        for op in self.ops.iter().filter(|o| !o.found && !o.unset) {
            dst.put_str_bytes(&self.scratch[op.name.0..op.name.1]);
            dst.put_raw(&self.scratch[op.val.0..op.val.1]);
            count += 1;
        }
        // write the smallest header and close the gap
        let h = map_header_size(count);
        let mut hdr = Vec::with_capacity(5);
        hdr.put_map(count);
        dst.copy_within(at + 5.., at + h);
        dst[at..at + h].copy_from_slice(&hdr);
        dst.truncate(dst.len() - (5 - h));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn envelope(time: Option<i64>, fields: &[(&str, i64)]) -> Vec<u8> {
        let mut b = Vec::new();
        put_envelope(&mut b, time, None);
        b.put_map(fields.len() as u32);
        for &(k, v) in fields {
            b.put_str(k);
            b.put_int(v);
        }
        b
    }

    #[test]
    fn parse_envelopes() {
        let b = envelope(Some(1000), &[("a", 1)]);
        let (r, end) = parse_record(&b, 0).unwrap();
        assert_eq!((r.time, r.key, end), (Some(1000), None, b.len()));
        assert_eq!(r.int("a"), 1);
        assert_eq!(parse_record(&[0x92, 0xc0, 0xc0], 0).unwrap_err(), "record is not a [event_time, key, value] envelope");
        assert_eq!(parse_record(&[0x93, 0xa1, b'x', 0xc0, 0x80], 0).unwrap_err(), "event time is not an int or nil");
        assert_eq!(parse_record(&[0x93, 0xc0, 0xc0], 0).unwrap_err(), "truncated msgpack");
    }

    #[test]
    fn edit_keeps_order_and_appends() {
        let b = envelope(Some(1), &[("amount", 5), ("name", 1), ("x", 2)]);
        let (r, _) = parse_record(&b, 0).unwrap();
        let mut e = Edit::default();
        e.set_int("amount", 10).set_str("tag", "t").unset("name").set_int("tag", 3).set_int("amount", 200);
        let mut out = Vec::new();
        e.write(&r, &mut out).unwrap();
        let mut want = Vec::new();
        put_envelope(&mut want, Some(1), None);
        want.put_map(3);
        want.put_str("amount");
        want.put_int(200);
        want.put_str("x");
        want.put_int(2);
        want.put_str("tag");
        want.put_int(3);
        assert_eq!(out, want);
        e.clear();
        out.clear();
        e.write(&r, &mut out).unwrap();
        assert_eq!(out, b, "no edit: the record byte for byte");
    }

    #[test]
    fn one_set_is_a_splice() {
        // the time as an int64 whatever its size: an edit keeps the envelope
        let mut b = vec![0x93, 0xd3, 0, 0, 0, 0, 0, 0, 0, 7, 0xc0];
        b.put_map(3);
        for (k, v) in [("id", 1000), ("amount", 5), ("amount", 6)] {
            b.put_str(k);
            b.put_int(v);
        }
        let (r, _) = parse_record(&b, 0).unwrap();
        let mut e = Edit::default();
        let mut out = Vec::new();
        e.set_int("amount", 300);
        e.write(&r, &mut out).unwrap();
        let mut want = b[..11].to_vec();
        want.put_map(3);
        for (k, v) in [("id", 1000), ("amount", 300), ("amount", 6)] {
            want.put_str(k);
            want.put_int(v); // only the first "amount" is edited, as sdk/go
        }
        assert_eq!(out, want);
        // a new field: appended, counted by the header
        e.clear();
        out.clear();
        e.set_int("tag", 1);
        e.write(&r, &mut out).unwrap();
        want.truncate(11);
        want.put_map(4);
        for (k, v) in [("id", 1000), ("amount", 5), ("amount", 6), ("tag", 1)] {
            want.put_str(k);
            want.put_int(v);
        }
        assert_eq!(out, want);
        // an int key before the field: the general path, same result
        let mut b = vec![0x93, 0xc0, 0xc0, 0x82, 0x01, 0x02];
        b.put_str("amount");
        b.put_int(1);
        let (r, _) = parse_record(&b, 0).unwrap();
        e.clear();
        out.clear();
        e.set_int("amount", 2);
        e.write(&r, &mut out).unwrap();
        assert_eq!(out, [&b[..b.len() - 1], &[2]].concat());
    }

    #[test]
    fn edit_grows_the_header() {
        let fields: Vec<(String, i64)> = (0..15).map(|i| (format!("f{}", i), i)).collect();
        let refs: Vec<(&str, i64)> = fields.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let b = envelope(None, &refs);
        let (r, _) = parse_record(&b, 0).unwrap();
        let mut e = Edit::default();
        e.set_int("new", 1);
        let mut out = Vec::new();
        e.write(&r, &mut out).unwrap();
        assert_eq!(&out[3..6], &[0xde, 0, 16]);
        let (r2, end) = parse_record(&out, 0).unwrap();
        assert_eq!((end, r2.int("new"), r2.int("f14")), (out.len(), 1, 14));
    }
}

/// Appends `raw` with `raw[at..end]` replaced by `val`. A value of the same
/// size is written over its own after one copy of the whole record: each
/// copy is a `memory.copy` that the host runs as a call out of the guest.
#[inline]
fn splice_at(dst: &mut Vec<u8>, raw: &[u8], at: usize, end: usize, val: &[u8]) {
    if end - at == val.len() {
        let start = dst.len();
        dst.extend_from_slice(raw);
        dst[start + at..start + end].copy_from_slice(val);
        return;
    }
    dst.extend_from_slice(&raw[..at]);
    dst.extend_from_slice(val);
    dst.extend_from_slice(&raw[end..]);
}

/// Appends `raw`, whose value (a fixmap of `n` < 15 fields) starts at
/// `head` and ends it, with the field `name`: `val` added last: one copy of
/// the record, its header then counting one field more.
#[inline]
fn append_field(dst: &mut Vec<u8>, raw: &[u8], head: usize, n: usize, name: &[u8], val: &[u8]) {
    let start = dst.len();
    dst.extend_from_slice(raw);
    dst[start + head] = 0x81 + n as u8;
    dst.put_str_bytes(name);
    dst.extend_from_slice(val);
}
