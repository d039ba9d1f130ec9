//! The field index of the record the engine's loop read last, as the C
//! SDK's g_fx (RATIONALE.md, "Why is the per-language benchmark a
//! filter+map"): `parse_record` already walks every field of a fixmap
//! value to find the record's end; it notes where each key starts, so that
//! a lookup or an edit on that map reads keys in place instead of walking
//! the map again.
//!
//! The index names its map by address and length. It is set only by the
//! engine's batch loops, over the batch of the call in progress (which no
//! one writes during the call), and cleared when each call begins and
//! ends, so it never describes bytes other than the ones it was built
//! from.

use crate::msgpack::{same_bytes, skip_fast, skip_pairs, DecodeError};

/// off[i] is where the key of field i starts, from the map's header;
/// off[n] is the map's size. map is 0 when there is no index.
pub(crate) struct FieldIndex {
    map: usize,
    n: usize,
    off: [u32; 16],
}

impl FieldIndex {
    const EMPTY: FieldIndex = FieldIndex { map: 0, n: 0, off: [0; 16] };
}

#[cfg(target_arch = "wasm32")]
#[inline(always)]
fn with<R>(f: impl FnOnce(&mut FieldIndex) -> R) -> R {
    static mut FX: FieldIndex = FieldIndex::EMPTY;
    // Safety: one call at a time on one thread, and no caller re-enters.
    unsafe { f(&mut FX) }
}

#[cfg(not(target_arch = "wasm32"))]
#[inline(always)]
fn with<R>(f: impl FnOnce(&mut FieldIndex) -> R) -> R {
    use std::cell::RefCell;
    thread_local!(static FX: RefCell<FieldIndex> = RefCell::new(FieldIndex::EMPTY));
    FX.with(|fx| f(&mut fx.borrow_mut()))
}

/// Forgets the index (at the start and end of every call).
#[inline]
pub(crate) fn clear() {
    with(|fx| fx.map = 0);
}

/// `skip_pairs` over the n (<= 15) pairs of the fixmap whose header is at
/// `b[map]`, indexing them; at a key that is not a fixstr it leaves no
/// index and `skip_pairs` reads the rest. Returns the offset past the map.
#[inline]
pub(crate) fn index_pairs(b: &[u8], map: usize, n: usize) -> Result<usize, DecodeError> {
    with(|fx| {
        fx.map = 0;
        let mut off = map + 1;
        for i in 0..n {
            let c = *b.get(off).ok_or(DecodeError::Truncated)?;
            if c & 0xe0 != 0xa0 {
                return skip_pairs(b, off, n - i, 1);
            }
            if let Some(o) = fx.off.get_mut(i) {
                *o = (off - map) as u32;
            }
            off += 1 + (c & 0x1f) as usize; // the key's end is checked by the value's read
            let c = *b.get(off).ok_or(DecodeError::Truncated)?;
            off = if c <= 0x7f || c >= 0xe0 { off + 1 } else { skip_fast(b, off, 2)? };
        }
        if n < 16 && off - map <= u32::MAX as usize {
            fx.off[n] = (off - map) as u32;
            fx.n = n;
            fx.map = b.as_ptr() as usize + map;
        }
        Ok(off)
    })
}

/// Where a field is in an indexed map.
pub(crate) enum Found {
    /// The value of the first field named so: `map[at..end]`.
    At(usize, usize),
    /// No field of that name; the map has this many fields.
    Missing(usize),
}

/// Looks `name` up in `map` when the index describes it (`None` when it
/// does not: the caller walks the map).
#[inline]
pub(crate) fn find(map: &[u8], name: &[u8]) -> Option<Found> {
    with(|fx| {
        if fx.map != map.as_ptr() as usize || fx.off.get(fx.n).map_or(true, |&e| e as usize != map.len()) {
            return None;
        }
        let n = fx.n;
        for i in 0..n {
            let k = fx.off[i] as usize;
            let len = (*map.get(k)? & 0x1f) as usize;
            if len != name.len() {
                continue;
            }
            let at = k + 1 + len;
            if map.get(k + 1..at).map_or(false, |key| same_bytes(key, name)) {
                return Some(Found::At(at, fx.off[i + 1] as usize));
            }
        }
        Some(Found::Missing(n))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgpack::{Value, Write};

    /// A fixmap of the given keys, each with a value of a different size.
    fn map(keys: &[&str]) -> Vec<u8> {
        let mut b = Vec::new();
        b.put_map(keys.len() as u32);
        for (i, k) in keys.iter().enumerate() {
            b.put_str(k);
            match i % 3 {
                0 => b.put_int(i as i64),
                1 => b.put_str("some text"),
                _ => b.put_int(-1_000_000 * i as i64),
            }
        }
        b
    }

    /// What a walk of the map finds, as find reports it.
    fn walk(m: &[u8], name: &str) -> Option<(usize, usize)> {
        let v = Value::from_raw(m);
        let mut it = v.entries().unwrap();
        while let Some((k, val)) = it.next() {
            if k.as_str_bytes() == Some(name.as_bytes()) {
                let at = val.raw().as_ptr() as usize - m.as_ptr() as usize;
                return Some((at, at + val.raw().len()));
            }
        }
        None
    }

    #[test]
    fn finds_what_a_walk_finds() {
        for keys in [&["a", "amount", "b", "amount"][..], &["x"][..], &[][..], &["k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "ka", "kb", "kc", "kd", "ke"][..]] {
            let m = map(keys);
            assert_eq!(index_pairs(&m, 0, keys.len()), Ok(m.len()));
            for name in keys.iter().copied().chain(["missing", "", "amoun", "amountt"]) {
                let got = match find(&m, name.as_bytes()) {
                    Some(Found::At(at, end)) => Some((at, end)),
                    Some(Found::Missing(n)) => {
                        assert_eq!(n, keys.len());
                        None
                    }
                    None => panic!("{:?}: not indexed", keys),
                };
                assert_eq!(got, walk(&m, name), "{:?} {}", keys, name);
                assert_eq!(Value::from_raw(&m).get(name).map(|v| v.raw().to_vec()), walk(&m, name).map(|(a, e)| m[a..e].to_vec()));
            }
        }
    }

    #[test]
    fn describes_only_its_own_map() {
        let m = map(&["a", "b"]);
        index_pairs(&m, 0, 2).unwrap();
        let copy = m.clone(); // the same bytes elsewhere
        assert!(find(&copy, b"a").is_none());
        assert!(find(&m[..m.len() - 1], b"a").is_none()); // a prefix of it
        clear();
        assert!(find(&m, b"a").is_none());
    }

    #[test]
    fn no_index_for_other_keys_or_bad_bytes() {
        // an int key: skip_pairs reads the rest, no index
        let mut m = Vec::new();
        m.put_map(2);
        m.put_str("a");
        m.put_int(1);
        m.put_int(7);
        m.put_int(2);
        assert_eq!(index_pairs(&m, 0, 2), Ok(m.len()));
        assert!(find(&m, b"a").is_none());
        // truncated: an error, no index
        let m = map(&["a", "b"]);
        assert!(index_pairs(&m[..m.len() - 1], 0, 2).is_err());
        assert!(find(&m[..m.len() - 1], b"a").is_none());
        // a key whose length runs past the end
        assert!(index_pairs(&[0x81, 0xa5, b'a'], 0, 1).is_err());
    }
}
