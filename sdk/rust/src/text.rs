//! Text as Go sees it, so that a Rust plugin matches a Go one byte for
//! byte: UTF-8 as Go's unicode/utf8 reads it (an invalid byte is U+FFFD of
//! size 1) and Go's Unicode tables (unicode_tables.rs, generated from Go).
//! Runes are u32 so that U+FFFD stands in for anything invalid, as in Go.

use crate::unicode_tables::{LOWER, PUNCT, SPACE};

/// utf8.RuneError, U+FFFD.
pub const RUNE_ERROR: u32 = 0xfffd;

/// utf8.DecodeRune: the first rune of `p` and its size; (RUNE_ERROR, 1) for
/// an invalid, short, overlong or surrogate sequence; (RUNE_ERROR, 0) when
/// `p` is empty.
pub fn decode_rune(p: &[u8]) -> (u32, usize) {
    let c = match p.first() {
        None => return (RUNE_ERROR, 0),
        Some(&c) if c < 0x80 => return (c as u32, 1),
        Some(&c) => c,
    };
    let n = match c {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return (RUNE_ERROR, 1),
    };
    let (lo, hi) = match c {
        0xe0 => (0xa0, 0xbf), // no overlong forms
        0xed => (0x80, 0x9f), // no surrogates
        0xf0 => (0x90, 0xbf),
        0xf4 => (0x80, 0x8f), // nothing past U+10FFFF
        _ => (0x80, 0xbf),
    };
    if p.len() < n || p[1] < lo || p[1] > hi || p[2..n].iter().any(|&b| !(0x80..=0xbf).contains(&b)) {
        return (RUNE_ERROR, 1);
    }
    let r = match n {
        2 => (c as u32 & 0x1f) << 6 | (p[1] as u32 & 0x3f),
        3 => (c as u32 & 0x0f) << 12 | (p[1] as u32 & 0x3f) << 6 | (p[2] as u32 & 0x3f),
        _ => (c as u32 & 0x07) << 18 | (p[1] as u32 & 0x3f) << 12 | (p[2] as u32 & 0x3f) << 6 | (p[3] as u32 & 0x3f),
    };
    (r, n)
}

/// abi.javaStep: the first character of `p` (not empty) as Java's UTF-8
/// decoder (`new String(bytes, UTF_8)`) reads it, and the bytes it takes: a
/// valid sequence gives its code point; a malformed one RUNE_ERROR for the
/// bytes Java takes as one malformed sequence (E2 82 41 is U+FFFD 'A', ED A0
/// 80 one U+FFFD), which is neither one per byte nor Unicode's maximal
/// subparts.
pub fn java_step(p: &[u8]) -> (u32, usize) {
    let (r, n) = decode_rune(p);
    if r != RUNE_ERROR || n != 1 {
        return (r, n);
    }
    let cont = |i: usize| p.get(i).map_or(false, |&b| b & 0xc0 == 0x80);
    let (b1, rest) = (p[0], p.len() - 1);
    let b2 = p.get(1).copied().unwrap_or(0);
    let size = match b1 {
        0xe0..=0xef => {
            if rest == 0 || (b1 == 0xe0 && b2 & 0xe0 == 0x80) || !cont(1) {
                1
            } else if rest == 1 || !cont(2) {
                2
            } else {
                3 // well formed but a surrogate (ED A0..BF xx)
            }
        }
        0xf0..=0xf7 => {
            if b1 > 0xf4 || rest == 0 || (b1 == 0xf0 && !(0x90..=0xbf).contains(&b2)) || (b1 == 0xf4 && b2 & 0xf0 != 0x80) || !cont(1) {
                1
            } else if rest == 1 || !cont(2) {
                2
            } else {
                3
            }
        }
        _ => 1,
    };
    (RUNE_ERROR, size)
}

/// utf8.DecodeLastRune: the last rune of `p` and its size.
pub fn decode_last_rune(p: &[u8]) -> (u32, usize) {
    let n = p.len();
    match p.last() {
        None => return (RUNE_ERROR, 0),
        Some(&c) if c < 0x80 => return (c as u32, 1),
        _ => {}
    }
    // back to a byte that can start a rune, at most 4 bytes
    let lim = n.saturating_sub(4);
    let mut start = n - 1;
    while start > lim && p[start] & 0xc0 == 0x80 {
        start -= 1;
    }
    let (r, size) = decode_rune(&p[start..]);
    if start + size != n {
        return (RUNE_ERROR, 1);
    }
    (r, size)
}

/// utf8.AppendRune: the UTF-8 bytes of `r` (U+FFFD for a surrogate or a
/// value past U+10FFFF).
pub fn push_rune(b: &mut Vec<u8>, r: u32) {
    let c = char::from_u32(r).unwrap_or('\u{fffd}');
    let mut u = [0; 4];
    b.extend_from_slice(c.encode_utf8(&mut u).as_bytes());
}

/// Whether `r` is in a (lo, hi, stride) table (binary search).
fn in_table(t: &[(u32, u32, u32)], r: u32) -> bool {
    match t.binary_search_by(|&(lo, hi, _)| if r < lo { core::cmp::Ordering::Greater } else if r > hi { core::cmp::Ordering::Less } else { core::cmp::Ordering::Equal }) {
        Ok(i) => (r - t[i].0) % t[i].2 == 0,
        Err(_) => false,
    }
}

/// unicode.IsSpace.
pub fn is_space(r: u32) -> bool {
    in_table(&SPACE, r)
}

/// unicode.IsPunct.
pub fn is_punct(r: u32) -> bool {
    in_table(&PUNCT, r)
}

/// unicode.ToLower.
pub fn to_lower(r: u32) -> u32 {
    if r < 0x80 {
        return if (b'A' as u32..=b'Z' as u32).contains(&r) { r + 32 } else { r };
    }
    let i = LOWER.binary_search_by(|&(lo, hi, _)| if r < lo { core::cmp::Ordering::Greater } else if r > hi { core::cmp::Ordering::Less } else { core::cmp::Ordering::Equal });
    match i {
        Ok(i) => {
            let (lo, _, delta) = LOWER[i];
            if delta == 0x110000 {
                lo + (((r - lo) & !1) | 1) // alternating upper/lower pairs
            } else {
                r.wrapping_add(delta) // the delta, an int32
            }
        }
        Err(_) => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_like_go() {
        assert_eq!(decode_rune("é".as_bytes()), (0xe9, 2));
        assert_eq!(decode_rune(b"\xc3"), (RUNE_ERROR, 1));
        assert_eq!(decode_rune(b"\xe0\x80\x80"), (RUNE_ERROR, 1));
        assert_eq!(decode_rune(b""), (RUNE_ERROR, 0));
        assert_eq!(decode_last_rune("a—".as_bytes()), (0x2014, 3));
        assert_eq!(decode_last_rune(b"a\x80"), (RUNE_ERROR, 1));
        let mut b = Vec::new();
        push_rune(&mut b, 0xe9);
        push_rune(&mut b, 0xd800);
        assert_eq!(b, "é\u{fffd}".as_bytes());
    }

    #[test]
    fn unicode_like_go() {
        assert!(is_space(' ' as u32) && is_space(0x85) && is_space(0x3000) && !is_space('a' as u32) && !is_space(0x200b));
        assert!(is_punct('!' as u32) && is_punct(0x2014) && is_punct(0x201c) && !is_punct('$' as u32));
        let cases = [('A', 'a'), ('Ç', 'ç'), ('\u{100}', '\u{101}'), ('\u{101}', '\u{101}'), ('İ', 'i'), ('Α', 'α'), ('𐐀', '𐐨'), ('Ⰰ', 'ⰰ')];
        for (u, l) in cases {
            assert_eq!(to_lower(u as u32), l as u32, "{}", u);
        }
    }
}
