//! Messages the page shows in its own words (an error banner, a refusal)
//! that name something from outside: a file, a folder, a shard, a report's
//! file name, a field of a link.
//!
//! A name goes into a message through [`quote`], never `{:?}` or `{}`: it is
//! escaped by the codec's one rule for text from outside
//! (`felix_codec::doc::report::one_line`, what the CLI prints and every other view
//! of the page shows) and wrapped in the Unicode isolates FSI … PDI, the
//! plain-text form of `<bdi>`. A message stays a `String` (it crosses the
//! worker protocol, a `Result`, the reducer), and the page turns it into
//! words and isolated fields with [`pieces`]: each field in its own `<bdi>`,
//! so no name can reorder the words around it. Both words and fields are
//! guarded once more (`report::guard_line`), so a name that reached a message
//! without [`quote`] — or a browser's message quoting one — still shows its
//! controls escaped, never interpreted.

use std::borrow::Cow;

use felix_codec::doc::report::{guard_line, one_line};

/// Opens a quoted field (U+2068 FIRST STRONG ISOLATE).
pub const OPEN: char = '\u{2068}';
/// Closes a quoted field (U+2069 POP DIRECTIONAL ISOLATE).
pub const CLOSE: char = '\u{2069}';

/// `name`, from outside, as a message quotes it: escaped by the one rule and
/// isolated. `one_line` escapes every isolate, so `name` cannot close or open
/// a field itself.
#[must_use]
pub fn quote(name: &str) -> String {
    format!("{OPEN}{}{CLOSE}", one_line(name))
}

/// A part of a message as the page shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// The page's own words (guarded: anything hostile in them escaped).
    Words(Cow<'a, str>),
    /// A name from outside, escaped: shown isolated (`<bdi>`).
    Field(Cow<'a, str>),
}

/// `message` as words and fields, in order; nothing in any piece can
/// reorder, hide or break the line (an unclosed field is words, its
/// isolate escaped).
#[must_use]
pub fn pieces(message: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = message;
    while !rest.is_empty() {
        let Some((words, after)) = rest.split_once(OPEN) else {
            out.push(Piece::Words(guard_line(rest)));
            break;
        };
        let Some((field, next)) = after.split_once(CLOSE) else {
            out.push(Piece::Words(guard_line(rest)));
            break;
        };
        if !words.is_empty() {
            out.push(Piece::Words(guard_line(words)));
        }
        out.push(Piece::Field(guard_line(field)));
        rest = next;
    }
    out
}

/// What the page shows of `message`, as one string (a `title`, a test).
#[must_use]
pub fn shown(message: &str) -> String {
    pieces(message)
        .into_iter()
        .map(|p| match p {
            Piece::Words(w) | Piece::Field(w) => w,
        })
        .collect()
}

/// A string shortened to `n` characters (never cut inside a character), with `…` when cut.
#[must_use]
pub fn short(s: &str, n: usize) -> String {
    let mut it = s.chars();
    let head: String = it.by_ref().take(n).collect();
    if it.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use felix_codec::doc::report::is_hostile;
    use proptest::prelude::*;

    #[test]
    fn a_quoted_name_is_shown_escaped_and_isolated() {
        let m = format!("{}: reading the report: NotReadableError", quote("x\u{202e}nosj.json"));
        assert_eq!(pieces(&m), [Piece::Field("x\\u{202e}nosj.json".into()), Piece::Words(": reading the report: NotReadableError".into())]);
        assert_eq!(shown(&m), "x\\u{202e}nosj.json: reading the report: NotReadableError");
        // A name cannot close its own field, nor open one.
        let m = format!("drop one report at a time, not {}, {}", quote("a\u{2069}b\n"), quote("\u{2068}c"));
        assert_eq!(
            pieces(&m),
            [
                Piece::Words("drop one report at a time, not ".into()),
                Piece::Field("a\\u{2069}b\\n".into()),
                Piece::Words(", ".into()),
                Piece::Field("\\u{2068}c".into()),
            ]
        );
        // A name that reached a message unquoted still shows its controls escaped.
        assert_eq!(pieces("x\u{202e}y: gone\n"), [Piece::Words("x\\u{202e}y: gone\\n".into())]);
        assert_eq!(pieces("open \u{2068}unclosed"), [Piece::Words("open \\u{2068}unclosed".into())]);
    }

    proptest! {
        #[test]
        fn nothing_in_a_message_is_hostile_and_a_quote_shows_what_the_cli_prints(name in "\\PC*|[\u{0}-\u{7f}\u{2028}-\u{202e}\u{2066}-\u{2069}]*", words in "\\PC*") {
            let m = format!("{words}{}{words}", quote(&name));
            let all = pieces(&m);
            for p in &all {
                let (Piece::Words(t) | Piece::Field(t)) = p;
                prop_assert!(!t.chars().any(is_hostile), "{:?}", p);
            }
            prop_assert!(all.contains(&Piece::Field(one_line(&name))));
        }
    }
}
