//! Why a link, a pasted text or an opened JSON file could not be opened, in
//! words a person can act on: what is wrong and where (the link's character,
//! the JSON's line and column, the field as a path such as
//! `report.files[3].size`) — never a parser's or a decompressor's own text.
//!
//! [`parse`] reads JSON into the model with the path of the field it is at
//! (`serde_path_to_error`), so a value of the wrong type is named by its
//! field, and turns serde's message into words ([`FieldProblem`]); nothing of
//! serde's wording, nor a Rust type name, reaches the page.

use std::fmt;

use serde::de::DeserializeOwned;

use crate::ui::message::{quote, short};

/// Where the text came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A report permalink (`#s=` or `#r=`).
    Link,
    /// A diff permalink (`#d=`).
    DiffLink,
    /// Text pasted into the page.
    Pasted,
    /// A JSON file dropped or picked (its name, as given).
    File(String),
}

impl Origin {
    /// How a message names it: "this link's report", "the pasted text", the file's name quoted.
    #[must_use]
    pub fn name(&self) -> String {
        match self {
            Self::Link => "this link's report".into(),
            Self::DiffLink => "this diff link".into(),
            Self::Pasted => "the pasted text".into(),
            Self::File(name) => quote(name),
        }
    }
}

/// What the text should have been.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Document {
    /// A report (`inspect --json`, or a link's envelope around one).
    Report,
    /// A replica diff (`diff --json`).
    Diff,
    /// A recovery plan (`recover --dry-run --json`).
    Plan,
}

impl Document {
    fn name(self) -> &'static str {
        match self {
            Self::Report => "report",
            Self::Diff => "diff",
            Self::Plan => "recovery plan",
        }
    }

    /// Its name in a refusal ("the plan is refused").
    fn short(self) -> &'static str {
        match self {
            Self::Report => "report",
            Self::Diff => "diff",
            Self::Plan => "plan",
        }
    }
}

/// Why a well-formed document's fields are refused: where (a field's path,
/// or a part of the document) and what is wrong, in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// One field (`shards[0].actions[2].file`) and what is wrong with it ("is 5000 bytes long; …").
    Field {
        /// The field, as a JSON path.
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// Fields of one part (a side `a`, an action `shards[0].actions[1]`) that do not hold together.
    Within {
        /// The part, as a JSON path.
        at: String,
        /// What is wrong with its fields.
        problem: String,
    },
    /// Fields of the whole document that do not hold together, each named in the sentence.
    Together(String),
}

impl Refusal {
    /// `field` and what is wrong with it.
    #[must_use]
    pub fn field(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self::Field { field: field.into(), problem: problem.into() }
    }

    /// The fields under `at` and what is wrong with them.
    #[must_use]
    pub fn within(at: impl Into<String>, problem: impl Into<String>) -> Self {
        Self::Within { at: at.into(), problem: problem.into() }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Field { field, problem } => write!(f, "{field} {problem}"),
            Self::Within { at, problem } => write!(f, "{at}: {problem}"),
            Self::Together(sentence) => f.write_str(sentence),
        }
    }
}

/// What is wrong with one field of the JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldProblem {
    /// It holds a value of another type: `expected` and `found`, in words ("a whole number", "a list").
    WrongType {
        /// What the field should be.
        expected: String,
        /// What it holds.
        found: String,
    },
    /// A field the document must have is absent.
    Missing,
    /// It names something this build does not know (`got`, quoted), not one of `expected`.
    Unknown {
        /// What it holds, quoted and shortened.
        got: String,
        /// The names it may hold, as the model lists them.
        expected: String,
    },
    /// A field the document does not have.
    NotAField,
    /// Given twice.
    Twice,
    /// A value the document never holds there (out of range, the wrong length).
    BadValue,
}

/// Why the text could not be opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenError {
    /// The fragment is not a link of this kind at all.
    NoDocument {
        /// The prefix expected (`#s=`).
        prefix: &'static str,
        /// What such a link carries.
        document: Document,
    },
    /// Nothing follows the prefix.
    Empty {
        /// Where.
        from: Origin,
    },
    /// Longer than such a link may be.
    TooLong {
        /// Where.
        from: Origin,
        /// Its length, in characters.
        chars: usize,
        /// The cap.
        max: usize,
    },
    /// A character that is not base64url, counted from the fragment's start.
    NotBase64 {
        /// Where.
        from: Origin,
        /// The character's position.
        at: usize,
        /// The character.
        character: char,
    },
    /// The compressed data ends before its end (the link was cut when copied).
    CutShort {
        /// Where.
        from: Origin,
    },
    /// The compressed data is not deflate (the link was changed).
    Damaged {
        /// Where.
        from: Origin,
    },
    /// It inflates past the cap.
    InflatesPast {
        /// Where.
        from: Origin,
        /// The cap, in bytes.
        max: usize,
    },
    /// Larger than a document may be.
    TooLarge {
        /// Where.
        from: Origin,
        /// What it should be.
        document: Document,
        /// Its size.
        bytes: u64,
        /// The cap.
        max: u64,
    },
    /// Not JSON: something unexpected at this place.
    NotJson {
        /// Where.
        from: Origin,
        /// Line (from 1).
        line: usize,
        /// Column (from 1).
        column: usize,
    },
    /// The JSON ends before it is complete.
    JsonCutShort {
        /// Where.
        from: Origin,
        /// Line of its end.
        line: usize,
        /// Column of its end.
        column: usize,
    },
    /// JSON, but one field is not what the document holds there.
    Field {
        /// Where.
        from: Origin,
        /// What it should be.
        document: Document,
        /// The field as a path (`report.files[3].size`); empty for the whole text.
        field: String,
        /// What is wrong with it.
        problem: FieldProblem,
    },
    /// The document is well formed but a field's value is refused (`shared::validate`, `diff_share::validate`, `plan_share::validate`).
    Refused {
        /// Where.
        from: Origin,
        /// What it is.
        document: Document,
        /// The field, and what is wrong with it.
        why: Refusal,
    },
}

impl fmt::Display for FieldProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::WrongType { expected, found } => write!(f, "should be {expected}, not {found}"),
            Self::Missing => write!(f, "is missing"),
            Self::Unknown { got, expected } => write!(f, "holds {got}, which is not one of {expected}"),
            Self::NotAField => write!(f, "is not a field this build knows there"),
            Self::Twice => write!(f, "is given twice"),
            Self::BadValue => write!(f, "holds a value it never holds"),
        }
    }
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoDocument { prefix, document } => write!(f, "the link carries no {} ({prefix}…)", document.name()),
            Self::Empty { from } => write!(f, "{} is empty: nothing follows the link's prefix (was the whole link copied?)", from.name()),
            Self::TooLong { from, chars, max } => write!(f, "{} is {chars} characters long; a link may carry at most {max}", from.name()),
            Self::NotBase64 { from, at, character } => {
                write!(f, "character {at} of {} ({}) is not base64url", from.name(), quote(&character.to_string()))
            }
            Self::CutShort { from } => {
                write!(f, "{} is cut short: its compressed data ends too early (was the whole link copied?)", from.name())
            }
            Self::Damaged { from } => write!(f, "{} is damaged: its compressed data is not valid (was the link changed?)", from.name()),
            Self::InflatesPast { from, max } => write!(f, "{} inflates past {max} bytes, more than a link may carry", from.name()),
            Self::TooLarge { from, document, bytes, max } => {
                write!(f, "{} is {bytes} bytes; a {} may be at most {max} bytes", from.name(), document.name())
            }
            Self::NotJson { from, line, column } => {
                write!(f, "{} is not JSON: something unexpected at line {line}, column {column}", from.name())
            }
            Self::JsonCutShort { from, line, column } => {
                write!(f, "{} is cut short: its JSON ends at line {line}, column {column}, before it is complete", from.name())
            }
            Self::Field { from, document, field, problem } => {
                let what = document.name();
                match (field.is_empty(), problem) {
                    (true, FieldProblem::WrongType { found, .. }) => {
                        write!(f, "{} is not a {what}: it holds {found} where a {what}'s JSON object should be", from.name())
                    }
                    (true, problem) => write!(f, "{} is not a {what}: the whole text {problem}", from.name()),
                    (false, problem) => write!(f, "{} is not a {what}: field `{field}` {problem}", from.name()),
                }
            }
            Self::Refused { from, document, why } => write!(f, "{}: the {} is refused: {why}", from.name(), document.short()),
        }
    }
}

impl std::error::Error for OpenError {}

/// `json` read as a `T`, the field at fault named by its path.
///
/// # Errors
/// Not JSON, cut short, or a field that is not what `document` holds there.
pub fn parse<T: DeserializeOwned>(json: &[u8], from: &Origin, document: Document) -> Result<T, OpenError> {
    // serde reads a list as a struct's fields in order; a document is an object.
    if json.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        let problem = FieldProblem::WrongType { expected: "a JSON object".into(), found: "a list".into() };
        return Err(OpenError::Field { from: from.clone(), document, field: String::new(), problem });
    }
    let mut de = serde_json::Deserializer::from_slice(json);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        in_words(e.into_inner(), if path == "." { "" } else { &path }, from, document)
    })?;
    // Text after the document.
    de.end().map_err(|e| in_words(e, "", from, document))?;
    Ok(value)
}

/// serde's error at the field `path`, in words.
fn in_words(e: serde_json::Error, path: &str, from: &Origin, document: Document) -> OpenError {
    let (line, column) = (e.line(), e.column());
    match e.classify() {
        serde_json::error::Category::Eof => OpenError::JsonCutShort { from: from.clone(), line, column },
        serde_json::error::Category::Syntax | serde_json::error::Category::Io => OpenError::NotJson { from: from.clone(), line, column },
        serde_json::error::Category::Data => {
            let message = e.to_string();
            let message = message.strip_suffix(&format!(" at line {line} column {column}")).unwrap_or(&message);
            let (field, problem) = field_problem(path, message);
            OpenError::Field { from: from.clone(), document, field, problem }
        }
    }
}

/// serde's message about the field at `path`, as the field and its problem in words.
fn field_problem(path: &str, message: &str) -> (String, FieldProblem) {
    let join = |name: &str| if path.is_empty() { name.to_string() } else { format!("{path}.{name}") };
    let named = |rest: &str| rest.split_once('`').map(|(name, _)| name.to_string());
    if let Some(rest) = message.strip_prefix("invalid type: ").or_else(|| message.strip_prefix("invalid value: ")) {
        let (found, expected) = rest.rsplit_once(", expected ").unwrap_or((rest, ""));
        return (path.to_string(), FieldProblem::WrongType { expected: expected_words(expected), found: found_words(found) });
    }
    if let Some(name) = message.strip_prefix("missing field `").and_then(named) {
        return (join(&name), FieldProblem::Missing);
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        if let Some((got, expected)) = rest.rsplit_once("`, expected ") {
            let expected =
                if expected.chars().all(|c| c.is_ascii_alphanumeric() || "`-_ ,".contains(c)) { expected } else { "the names it may hold" };
            return (path.to_string(), FieldProblem::Unknown { got: quote(&short(got, 40)), expected: expected.to_string() });
        }
    }
    if let Some(name) = message.strip_prefix("unknown field `").and_then(named) {
        return (if path.is_empty() { short(&name, 40) } else { path.to_string() }, FieldProblem::NotAField);
    }
    if let Some(name) = message.strip_prefix("duplicate field `").and_then(named) {
        return (join(&short(&name, 40)), FieldProblem::Twice);
    }
    (path.to_string(), FieldProblem::BadValue)
}

/// What serde says a field should be (`u32`, `struct FileReport`, `a string`), in words.
fn expected_words(expected: &str) -> String {
    let e = expected.trim();
    let number = |max: u64| format!("a whole number from 0 to {max}");
    match e {
        "u8" => number(u8::MAX.into()),
        "u16" => number(u16::MAX.into()),
        "u32" => number(u32::MAX.into()),
        "u64" | "usize" => number(u64::MAX),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".into(),
        "f32" | "f64" => "a number".into(),
        "a boolean" | "bool" => "true or false".into(),
        "a string" | "string" | "a borrowed string" | "a character" | "char" => "text".into(),
        _ if e.starts_with("struct ") || e.contains("map") => "a JSON object".into(),
        _ if e.contains("sequence") || e.contains("tuple") || e.contains("array") => "a list".into(),
        _ if e.contains("variant") || e.contains("enum") || e.contains("identifier") => "one of the names it may hold".into(),
        _ if e.contains("integer") || e.contains("number") => "a number".into(),
        _ => "something else".into(),
    }
}

/// What serde says a field holds (`sequence`, ``integer `5` ``, `string "x"`), in words.
fn found_words(found: &str) -> String {
    let inner = |s: &str| s.split('`').nth(1).unwrap_or_default().to_string();
    match found {
        "sequence" => "a list".into(),
        "map" => "a JSON object".into(),
        "unit value" | "null" | "unit" => "null".into(),
        _ if found.starts_with("string ") => "text".into(),
        _ if found.starts_with("integer `") || found.starts_with("floating point `") => {
            let n = inner(found);
            if n.chars().all(|c| c.is_ascii_digit() || "-+.eE".contains(c)) && !n.is_empty() {
                format!("the number {n}")
            } else {
                "a number".into()
            }
        }
        "boolean `true`" => "true".into(),
        "boolean `false`" => "false".into(),
        _ => "another kind of value".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    #[allow(dead_code)]
    struct Inner {
        size: u32,
        kind: Kind,
    }

    #[derive(serde::Deserialize, Debug)]
    #[serde(rename_all = "lowercase")]
    enum Kind {
        Segment,
        Index,
    }

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        files: Vec<Inner>,
    }

    fn err(json: &str) -> OpenError {
        parse::<Outer>(json.as_bytes(), &Origin::Pasted, Document::Report).unwrap_err()
    }

    fn said(json: &str) -> String {
        err(json).to_string()
    }

    #[test]
    fn a_field_of_the_wrong_type_is_named_by_its_path_in_words() {
        let e = err(r#"{"files":[{"size":1,"kind":"index"},{"size":[1],"kind":"index"}]}"#);
        assert_eq!(
            e,
            OpenError::Field {
                from: Origin::Pasted,
                document: Document::Report,
                field: "files[1].size".into(),
                problem: FieldProblem::WrongType { expected: "a whole number from 0 to 4294967295".into(), found: "a list".into() },
            }
        );
        assert_eq!(
            e.to_string(),
            "the pasted text is not a report: field `files[1].size` should be a whole number from 0 to 4294967295, not a list"
        );
        assert_eq!(
            said(r#"{"files":[{"size":-3,"kind":"index"}]}"#),
            "the pasted text is not a report: field `files[0].size` should be a whole number from 0 to 4294967295, not the number -3"
        );
        assert_eq!(said(r#"{"files":5}"#), "the pasted text is not a report: field `files` should be a list, not the number 5");
        assert_eq!(said(r#"{"files":[null]}"#), "the pasted text is not a report: field `files[0]` should be a JSON object, not null");
    }

    #[test]
    fn the_whole_text_of_the_wrong_shape_says_what_it_holds() {
        assert_eq!(said("[1,2]"), "the pasted text is not a report: it holds a list where a report's JSON object should be");
        assert_eq!(said("\"hi\""), "the pasted text is not a report: it holds text where a report's JSON object should be");
    }

    #[test]
    fn missing_unknown_and_twice_given_fields_are_named() {
        assert_eq!(said(r#"{"files":[{"size":1}]}"#), "the pasted text is not a report: field `files[0].kind` is missing");
        assert_eq!(said("{}"), "the pasted text is not a report: field `files` is missing");
        assert_eq!(
            said(r#"{"files":[{"size":1,"kind":"b\u202Eog"}]}"#),
            "the pasted text is not a report: field `files[0].kind` holds \u{2068}b\\u{202e}og\u{2069}, which is not one of `segment` or `index`"
        );
        assert_eq!(
            said(r#"{"files":[],"extra":1}"#),
            "the pasted text is not a report: field `extra` is not a field this build knows there"
        );
        assert_eq!(said(r#"{"files":[],"files":[]}"#), "the pasted text is not a report: field `files` is given twice");
    }

    #[test]
    fn text_that_is_not_json_or_is_cut_short_says_where() {
        assert_eq!(err("{\"files\":[{\"size\":1,"), OpenError::JsonCutShort { from: Origin::Pasted, line: 1, column: 20 });
        assert_eq!(
            said("{\"files\":[{\"size\":1,"),
            "the pasted text is cut short: its JSON ends at line 1, column 20, before it is complete"
        );
        assert_eq!(said("{\n \"files\": [] }x"), "the pasted text is not JSON: something unexpected at line 2, column 15");
        assert_eq!(said("hello"), "the pasted text is not JSON: something unexpected at line 1, column 1");
        let from_file = parse::<Outer>(b"", &Origin::File("r.json".into()), Document::Diff).unwrap_err();
        assert_eq!(from_file.to_string(), "\u{2068}r.json\u{2069} is cut short: its JSON ends at line 1, column 0, before it is complete");
    }

    #[test]
    fn no_parser_wording_reaches_a_message() {
        let cases = [
            "[1]",
            "5",
            "null",
            r#"{"files":[{"size":1e400,"kind":"index"}]}"#,
            r#"{"files":[{"size":1.5,"kind":"index"}]}"#,
            r#"{"files":[{"size":true,"kind":"index"}]}"#,
            r#"{"files":[{"size":99999999999,"kind":"index"}]}"#,
            r#"{"files":[{"size":1,"kind":7}]}"#,
            r#"{"files":{"a":1}}"#,
        ];
        for json in cases {
            let s = said(json);
            for serde_word in ["invalid type", "expected u32", "struct", "sequence", "Outer", "Inner", "variant", "at line 1 column"] {
                assert!(!s.contains(serde_word), "{json}: {s}");
            }
        }
    }
}
