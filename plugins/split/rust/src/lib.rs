//! split (Rust): a flatMap that splits the field "line" into words and
//! emits one record {"word": w} per word, lowercased, with punctuation
//! trimmed from both ends ("Don't!" gives "don't"), exactly as the Go plugin
//! (plugins/split/main.go): words are separated by Unicode white space,
//! text is read as Go reads UTF-8 and lowercased with Go's tables
//! (sluice::text). Each word carries the line's event time and no key (as
//! sdk.NewRecord). A record without a line emits nothing.

use sluice::text::{decode_last_rune, decode_rune, is_punct, is_space, push_rune, to_lower};
use sluice::{Context, Error, FlatMap, Output, Plugin, Record, Value, Write, MAIN};

pub struct Split {
    word: Vec<u8>, // the lowercased word being built: reused
}

impl Plugin for Split {
    const NAME: &'static str = "split";
    fn open(_: &Context, _: Value<'static>) -> Result<Self, Error> {
        Ok(Split { word: Vec::new() })
    }
}

/// The first run of non-space runes in `s`, and the rest.
fn next_field(s: &[u8]) -> (&[u8], &[u8]) {
    let mut i = 0;
    while i < s.len() {
        let (r, n) = decode_rune(&s[i..]);
        if !is_space(r) {
            break;
        }
        i += n;
    }
    let mut j = i;
    while j < s.len() {
        let (r, n) = decode_rune(&s[j..]);
        if is_space(r) {
            break;
        }
        j += n;
    }
    (&s[i..j], &s[j..])
}

/// `w` without the punctuation runes at either end.
fn trim_punct(mut w: &[u8]) -> &[u8] {
    while !w.is_empty() {
        let (r, n) = decode_rune(w);
        if !is_punct(r) {
            break;
        }
        w = &w[n..];
    }
    while !w.is_empty() {
        let (r, n) = decode_last_rune(w);
        if !is_punct(r) {
            break;
        }
        w = &w[..w.len() - n];
    }
    w
}

impl FlatMap for Split {
    fn flat_map(&mut self, r: &Record, out: &mut Output) -> Result<(), Error> {
        let mut line = match r.field("line").and_then(|v| v.as_str_bytes().or_else(|| v.as_bin())) {
            Some(line) => line,
            None => return Ok(()),
        };
        while !line.is_empty() {
            let (tok, rest) = next_field(line);
            line = rest;
            let mut w = trim_punct(tok);
            self.word.clear();
            while !w.is_empty() {
                let (c, n) = decode_rune(w);
                push_rune(&mut self.word, to_lower(c));
                w = &w[n..];
            }
            if self.word.is_empty() {
                continue;
            }
            let word = &self.word;
            out.emit_with(MAIN, Some(r), |b| {
                b.put_map(1);
                b.put_str("word");
                b.put_str_bytes(word);
            })?;
        }
        Ok(())
    }
}

sluice::flat_map!(Split);

#[cfg(test)]
mod tests {
    use super::*;
    use sluice::testing::{envelope, Harness};

    #[test]
    fn words_like_the_go_plugin() {
        let mut v = Vec::new();
        v.put_map(1);
        v.put_str("line");
        v.put_str("  Don't  PANIC!\t— “Ça va?” ");
        let mut b = Vec::new();
        envelope(&mut b, Some(3), Some(&[0xa1, b'k']), &v);
        let mut h = Harness::<Split>::new();
        assert_eq!(h.open(&[0x80]), 0);
        assert_eq!(h.flat_map(&b, 1), 0);
        let mut want = Vec::new();
        for w in ["don't", "panic", "ça", "va"] {
            let mut v = Vec::new();
            v.put_map(1);
            v.put_str("word");
            v.put_str(w);
            envelope(&mut want, Some(3), None, &v);
        }
        assert_eq!(h.take_emits(), vec![(0, want, 4)]);
    }
}
