//! split (Rust): a flatMap that turns the string field "line" into one
//! record {"word": w} per word, with the input's event time and key. Words
//! are separated by ASCII whitespace, lowercased (A-Z) and trimmed of ASCII
//! punctuation at both ends; words left empty are skipped. A record without
//! a string "line" gives no output.

use sluice::{Context, Error, FlatMap, Output, Plugin, Record, Value, Write, MAIN};

pub struct Split;

impl Plugin for Split {
    const NAME: &'static str = "split";
    fn open(_: &Context, _: Value<'static>) -> Result<Self, Error> {
        Ok(Split)
    }
}

fn is_space(c: &u8) -> bool {
    matches!(c, b' ' | b'\t'..=b'\r')
}

impl FlatMap for Split {
    fn flat_map(&mut self, r: &Record, out: &mut Output) -> Result<(), Error> {
        let line = match r.str_bytes("line") {
            Some(line) => line,
            None => return Ok(()),
        };
        for word in line.split(is_space) {
            let start = word.iter().position(|c| !c.is_ascii_punctuation()).unwrap_or(word.len());
            let end = word.iter().rposition(|c| !c.is_ascii_punctuation()).map_or(start, |i| i + 1);
            let word = &word[start..end.max(start)];
            if word.is_empty() {
                continue;
            }
            out.emit_with(MAIN, Some(r), |b| {
                b.put_map(1);
                b.put_str("word");
                b.put_str_bytes(word);
                let n = b.len();
                b[n - word.len()..].make_ascii_lowercase(); // in place, no copy
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
    fn words_lowercased_and_trimmed() {
        let mut v = Vec::new();
        v.put_map(1);
        v.put_str("line");
        v.put_str("  Hello, World!\t--  it's \"ÉTÉ\" ... ok");
        let mut b = Vec::new();
        envelope(&mut b, Some(3), None, &v);
        let mut h = Harness::<Split>::new();
        assert_eq!(h.open(&[0x80]), 0);
        assert_eq!(h.flat_map(&b, 1), 0);
        let mut want = Vec::new();
        for w in ["hello", "world", "it's", "ÉtÉ", "ok"] {
            let mut v = Vec::new();
            v.put_map(1);
            v.put_str("word");
            v.put_str(w);
            envelope(&mut want, Some(3), None, &v);
        }
        assert_eq!(h.take_emits(), vec![(0, want, 5)]);
    }
}
