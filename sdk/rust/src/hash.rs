//! Java's String.hashCode, the hash Flink partitions string keys by.

/// Java's String.hashCode over the UTF-16 code units of the UTF-8 bytes `s`
/// (abi.StringHash): invalid bytes count as U+FFFD, one per byte, as Go's
/// utf8.DecodeRune reads them.
pub fn java_string_hash(s: &[u8]) -> i32 {
    let mut h: i32 = 0;
    let mut i = 0;
    while i < s.len() {
        if s[i] < 0x80 {
            h = h.wrapping_mul(31).wrapping_add(s[i] as i32);
            i += 1;
            continue;
        }
        let (r, size) = decode_rune(&s[i..]);
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

/// Decodes one non-ASCII rune like Go's utf8.DecodeRune: an invalid, short,
/// overlong or surrogate sequence is (U+FFFD, 1).
fn decode_rune(p: &[u8]) -> (u32, usize) {
    let c = p[0];
    let n = match c {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return (0xfffd, 1),
    };
    let (lo, hi) = match c {
        0xe0 => (0xa0, 0xbf),
        0xed => (0x80, 0x9f),
        0xf0 => (0x90, 0xbf),
        0xf4 => (0x80, 0x8f),
        _ => (0x80, 0xbf),
    };
    if p.len() < n || p[1] < lo || p[1] > hi || p[2..n].iter().any(|&b| !(0x80..=0xbf).contains(&b)) {
        return (0xfffd, 1);
    }
    let r = match n {
        2 => (c as u32 & 0x1f) << 6 | (p[1] as u32 & 0x3f),
        3 => (c as u32 & 0x0f) << 12 | (p[1] as u32 & 0x3f) << 6 | (p[2] as u32 & 0x3f),
        _ => (c as u32 & 0x07) << 18 | (p[1] as u32 & 0x3f) << 12 | (p[2] as u32 & 0x3f) << 6 | (p[3] as u32 & 0x3f),
    };
    (r, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_vectors() {
        // abi/keyhash_test.go, plus invalid UTF-8
        let cases: &[(&[u8], i32)] = &[
            (b"hello", 99162322),
            (b"", 0),
            (b"a", 97),
            ("é".as_bytes(), 233),
            ("😀".as_bytes(), 31 * 0xD83D + 0xDE00),
            (b"NL", 2494),
            (b"\xff", 0xfffd),
            (b"\xed\xa0\x80", (0xfffd * 31 + 0xfffd) * 31 + 0xfffd),
        ];
        for &(s, want) in cases {
            assert_eq!(java_string_hash(s), want, "{:?}", s);
        }
    }
}
