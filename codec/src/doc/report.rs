//! The one report model. `felix-storage inspect --json` prints it, the
//! browser renders and exports it; `docs/report-format.md` documents it.
//! Bump [`REPORT_VERSION`] on any change that could break a script.
//!
//! # Example
//!
//! ```
//! use felix_codec::format::file_name::FileKind;
//! use felix_codec::doc::report::{FileReport, Report, Status};
//! let file = FileReport::new("s/00000000000000000000.log".into(), FileKind::Segment, 32);
//! assert_eq!(file.status, Status::Clean);
//! let report = Report::new(vec![file]);
//! assert!(!report.has_damage());
//! assert!(report.to_text().contains("1 file, 0 findings"));
//! ```

use alloc::borrow::Cow;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::format::file_name::FileKind;
use crate::verdict::corruption::{Finding, Repair};

/// Version of the report's shape.
pub const REPORT_VERSION: u32 = 1;

/// A whole report: every file inspected, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Report {
    /// [`REPORT_VERSION`].
    pub report_version: u32,
    /// One entry per file.
    pub files: Vec<FileReport>,
    /// Notes about the inspection as a whole (a shard open for writing,
    /// directories not searched, …). Absent from the JSON when empty.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Vec::is_empty"))]
    pub notes: Vec<String>,
}

/// A file's overall verdict, for a badge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum Status {
    /// No findings.
    Clean,
    /// Every finding is repaired by recovery without an operator.
    Repairable,
    /// Some finding needs an operator (or `repair_checksum_tail`).
    Damaged,
}

/// What was found in one file.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileReport {
    /// The path as given (CLI) or as dropped (browser).
    pub path: String,
    /// What the file is.
    pub kind: FileKind,
    /// Size in bytes.
    pub size: u64,
    /// The file's identity: which hash, and its value, so a receiver of the
    /// report can tell whether they hold the same bytes. `None` when not
    /// computed (a stray file; reports made before the field existed).
    #[cfg_attr(feature = "serde", serde(default))]
    pub hash: Option<FileHash>,
    /// Lower-case hex SHA-256 of the file's bytes (what `sha256sum` prints),
    /// on request (`inspect --json --sha256`); older reports carry only this.
    /// `None` when not computed.
    pub sha256: Option<String>,
    /// The shard directory the file was in, when inspected as part of one.
    pub shard: Option<String>,
    /// The segment id from the file name (segment and index files).
    pub segment_id: Option<u64>,
    /// Base offset from the header (segment and index files).
    pub base_offset: Option<u64>,
    /// Records whose both checksums verified, including those after a resync (segments).
    pub records: u64,
    /// First intact record's offset (segments).
    pub first_offset: Option<u64>,
    /// Last intact record's offset (segments).
    pub last_offset: Option<u64>,
    /// The producer timestamps of the intact records, in microseconds since
    /// the Unix epoch: first and last in offset order, least and greatest
    /// (segments; `None` with no intact record, and in reports made before
    /// the field existed).
    #[cfg_attr(feature = "serde", serde(default))]
    pub time: Option<crate::read::time::TimeSpan>,
    /// Whole index entries read (index files).
    pub index_entries: Option<u64>,
    /// `[[generation, start_offset], …]` (epochs files; empty when damaged).
    pub entries: Option<Vec<[u64; 2]>>,
    /// Overall verdict.
    pub status: Status,
    /// Findings ordered by position.
    pub findings: Vec<FindingReport>,
    /// Findings past the per-file limit, counted only.
    pub findings_omitted: u64,
    /// Tolerated conditions, e.g. a torn final index entry.
    pub notes: Vec<String>,
    /// How the file changed while it was read (the CLI looks at its size and
    /// identity when the inspection begins and again when it ends); `None`
    /// when it did not, and in reports made before the field existed.
    #[cfg_attr(feature = "serde", serde(default))]
    pub changed_while_read: Option<FileChange>,
}

/// A file that changed while it was inspected: its size, device, inode or
/// modification time differ between the start of the inspection and its
/// end, or a read found fewer bytes than the file held at the start.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileChange {
    /// Its size when the inspection began: no read went past it.
    pub size_at_start: u64,
    /// Its size when the inspection ended (`None`: nothing is at its path any more).
    pub size_at_end: Option<u64>,
    /// It only grew: the same file (device and inode), longer, and every read
    /// got the bytes it asked for. The report then describes its first
    /// `size_at_start` bytes, its hash included (a writer appending). Otherwise
    /// (it shrank, was replaced, or was written over) its size, hash and
    /// findings may describe different bytes, and no hash is given.
    pub only_grew: bool,
}

impl FileChange {
    /// The note a changed file's report carries, in words.
    #[must_use]
    pub fn note(&self) -> String {
        let end = self.size_at_end.map_or_else(|| "nothing is at its path any more".into(), |n| format!("{n} bytes at its end"));
        if self.only_grew {
            format!(
                "changed while it was read: {} bytes when the inspection began, {end}; this report describes its first {} bytes",
                self.size_at_start, self.size_at_start
            )
        } else {
            format!(
                "changed while it was read: {} bytes when the inspection began, {end}, and not only by growing \
                 (it shrank, was replaced, or was written to: an append moves its times as a write over \
                 the bytes read does, and nothing tells the two apart): its size and findings may describe different bytes, \
                 so no hash is given; inspect it again once nothing changes it",
                self.size_at_start
            )
        }
    }
}

/// The algorithm of a report's file identity ([`FileHash`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum HashAlgorithm {
    /// BLAKE3 with its default 32-byte output: what `inspect --json` and the page compute.
    Blake3,
    /// SHA-256 (what `sha256sum` prints).
    Sha256,
}

impl HashAlgorithm {
    /// The name a report writes (`"blake3"`, `"sha256"`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Blake3 => "blake3",
            Self::Sha256 => "sha256",
        }
    }

    /// Bytes of its digest.
    #[must_use]
    pub fn digest_len(self) -> usize {
        32
    }
}

/// A file's identity in a report: `{"algorithm": "blake3", "value": "…"}`.
/// Only the data: the codec computes no hash (the CLI and the page do, with
/// the same crate, and write the value with [`FileHash::new`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileHash {
    /// Which hash.
    pub algorithm: HashAlgorithm,
    /// Its digest in lower-case hex.
    pub value: String,
}

impl FileHash {
    /// The identity whose digest is `digest`, written as reports write it.
    #[must_use]
    pub fn new(algorithm: HashAlgorithm, digest: &[u8]) -> Self {
        Self { algorithm, value: hex(digest) }
    }

    /// Whether `value` is a digest of this algorithm as reports write it:
    /// lower-case hex of [`HashAlgorithm::digest_len`] bytes.
    #[must_use]
    pub fn is_well_formed(&self) -> bool {
        is_hex_digest(&self.value, self.algorithm.digest_len())
    }
}

/// Lower-case hex of `bytes`.
#[must_use]
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        for nibble in [b >> 4, b & 0xF] {
            out.push(char::from(DIGITS.get(usize::from(nibble)).copied().unwrap_or(b'0')));
        }
    }
    out
}

/// Whether `s` is `len` bytes in lower-case hex (`2 * len` digits `0-9a-f`).
#[must_use]
pub fn is_hex_digest(s: &str, len: usize) -> bool {
    s.len() == len * 2 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// One finding as reported.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FindingReport {
    /// The exact `CorruptionKind` name.
    pub kind: String,
    /// Where the damaged structure starts.
    pub position: u64,
    /// Exclusive end of the range to highlight.
    pub end: u64,
    /// Record offset, when known.
    pub offset: Option<u64>,
    /// `"always"`, `"opt-in"` or `"never"`.
    pub repair: Repair,
    /// The details and one plain sentence of what it means.
    pub message: String,
    /// A `SegmentDiscontinuity`'s two offsets, so words can name the
    /// offsets missing (or held twice) between the segments; absent for
    /// every other kind.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub discontinuity: Option<Discontinuity>,
}

/// Where a segment's offsets should start, and where they do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Discontinuity {
    /// The offset that would follow the previous segment.
    pub expected: u64,
    /// This segment's base offset.
    pub found: u64,
}

impl Discontinuity {
    /// "offsets 190..=236 are missing between two segments", or "offsets
    /// 150..=189 are held by two segments": what the gap means, in words.
    #[must_use]
    pub fn words(self) -> String {
        let verb = |a: u64, b: u64| if a == b { "is" } else { "are" };
        let (a, b) = match self.missing() {
            Some(missing) => (*missing.start(), *missing.end()),
            None => (self.found, self.expected.saturating_sub(1).max(self.found)),
        };
        let what = if self.found > self.expected { "missing between" } else { "held by" };
        format!("{} {} {what} two segments", offsets_words(a, b), verb(a, b))
    }

    /// The offsets missing between the two segments, when some are (none
    /// when they overlap instead).
    #[must_use]
    pub fn missing(self) -> Option<core::ops::RangeInclusive<u64>> {
        (self.found > self.expected).then(|| self.expected..=self.found - 1)
    }
}

/// "offset 5" or "offsets 190..=236": a range of offsets, both ends included.
#[must_use]
pub fn offsets_words(first: u64, last: u64) -> String {
    if first == last {
        format!("offset {first}")
    } else {
        format!("offsets {first}..={last}")
    }
}

impl From<&Finding> for FindingReport {
    fn from(f: &Finding) -> Self {
        let discontinuity = match f.kind {
            crate::CorruptionKind::SegmentDiscontinuity { expected, found } => Some(Discontinuity { expected, found }),
            _ => None,
        };
        Self {
            kind: f.kind.name().into(),
            position: f.position(),
            end: f.end,
            offset: f.offset,
            repair: f.repair,
            message: format!("{}; {}", f.kind, f.kind.meaning()),
            discontinuity,
        }
    }
}

impl FileReport {
    /// An empty report for `path`, filled in by the inspection.
    #[must_use]
    pub fn new(path: String, kind: FileKind, size: u64) -> Self {
        Self {
            path,
            kind,
            size,
            hash: None,
            sha256: None,
            shard: None,
            segment_id: None,
            base_offset: None,
            records: 0,
            first_offset: None,
            last_offset: None,
            time: None,
            index_entries: None,
            entries: None,
            status: Status::Clean,
            findings: Vec::new(),
            findings_omitted: 0,
            notes: Vec::new(),
            changed_while_read: None,
        }
    }

    /// Says the file changed while it was read: the note, the field, and —
    /// unless it only grew — no hash (none describes the bytes the scan read).
    pub fn set_changed(&mut self, change: FileChange) {
        self.notes.push(change.note());
        if !change.only_grew {
            self.hash = None;
            self.sha256 = None;
        }
        self.changed_while_read = Some(change);
    }

    /// Adds findings, keeps them ordered by position and updates the status.
    pub fn add_findings<'a>(&mut self, findings: impl IntoIterator<Item = &'a Finding>) {
        self.findings.extend(findings.into_iter().map(FindingReport::from));
        self.findings.sort_by_key(|f| (f.position, f.end));
        self.status = status_of(&self.findings);
    }
}

/// The verdict a file's findings give: what [`FileReport::status`] must say.
/// A report from elsewhere is checked against it.
#[must_use]
pub fn status_of(findings: &[FindingReport]) -> Status {
    if findings.is_empty() {
        Status::Clean
    } else if findings.iter().all(|f| f.repair == Repair::Always) {
        Status::Repairable
    } else {
        Status::Damaged
    }
}

/// Every name a finding's `kind` may carry ([`crate::CorruptionKind::name`]),
/// so a report that came from elsewhere can be checked for unknown kinds.
pub const FINDING_KIND_NAMES: [&str; 23] = [
    "SegmentMagic",
    "IndexMagic",
    "SegmentVersion",
    "IndexVersion",
    "SegmentFlags",
    "IndexFlags",
    "SegmentHeaderChecksum",
    "Truncated",
    "RecordHeaderChecksum",
    "RecordChecksum",
    "RecordTooLarge",
    "OffsetOutOfOrder",
    "IndexBaseOffset",
    "IndexOutOfOrder",
    "IndexEntryMismatch",
    "EpochsMagic",
    "EpochsVersion",
    "EpochsChecksum",
    "EpochsLength",
    "EpochsTooMany",
    "EpochsOrder",
    "EpochsBeyondLog",
    "SegmentDiscontinuity",
];

/// Whether `name` is a kind this build reports.
#[must_use]
pub fn is_finding_kind(name: &str) -> bool {
    FINDING_KIND_NAMES.contains(&name)
}

impl Report {
    /// A report over `files`.
    #[must_use]
    pub fn new(files: Vec<FileReport>) -> Self {
        Self { report_version: REPORT_VERSION, files, notes: Vec::new() }
    }

    /// Whether any file has a finding.
    #[must_use]
    pub fn has_damage(&self) -> bool {
        self.files.iter().any(|f| !f.findings.is_empty() || f.findings_omitted > 0)
    }

    /// Number of findings across all files.
    #[must_use]
    pub fn finding_count(&self) -> u64 {
        self.files.iter().map(|f| f.findings.len() as u64 + f.findings_omitted).sum()
    }
}

/// A file's verdict as a person reads it: its [`Status`], except that a file
/// that is not a Felix file (kind unknown: none of the format's structures
/// was judged in it) is never called clean. The CLI's summary line and the
/// page's badge both say [`Verdict::as_str`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// A Felix file with no findings.
    Clean,
    /// Every finding is repaired by recovery without an operator.
    Repairable,
    /// Some finding needs an operator.
    Damaged,
    /// Not a Felix file (by its name and first bytes): nothing in it was
    /// judged; its notes say what it is.
    NotJudged,
}

impl Verdict {
    /// `"clean"`, `"repairable"`, `"damaged"` or `"not judged"`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Clean => "clean",
            Self::Repairable => "repairable",
            Self::Damaged => "damaged",
            Self::NotJudged => "not judged",
        }
    }
}

impl FileReport {
    /// The file's verdict in words ([`Verdict`]).
    #[must_use]
    pub fn verdict(&self) -> Verdict {
        match (self.kind, self.status) {
            (FileKind::Unknown, Status::Clean) => Verdict::NotJudged,
            (_, Status::Clean) => Verdict::Clean,
            (_, Status::Repairable) => Verdict::Repairable,
            (_, Status::Damaged) => Verdict::Damaged,
        }
    }

    /// The verdict word the text summary line starts with (damage shouted).
    pub(crate) fn status_word(&self) -> &'static str {
        match self.verdict() {
            Verdict::Damaged => "DAMAGED",
            v => v.as_str(),
        }
    }
}

/// One field of a text report, safe to print on one line: every control
/// character (newline and tab too), every Unicode bidirectional control,
/// line and paragraph separator and zero-width character ([`is_hostile`]),
/// and the backslash itself are shown escaped (`\n`, `\u{202e}`, `\\`), so
/// a hostile file name, note or message can neither forge a line of the
/// report nor reorder or hide what a terminal shows — and a name holding a
/// literal `\n` is told from one holding a newline. Text with none is
/// borrowed as is.
///
/// This is the one escaper for a terminal: the CLI passes every field it
/// prints that carries text from a path or a file through it, once (or,
/// writing a payload in pieces, [`escapes`] and [`char::escape_default`], the
/// same rule). A line made of fields already escaped is guarded with
/// [`guard_line`], which escapes what is hostile and leaves the escapes be.
#[must_use]
pub fn one_line(text: &str) -> Cow<'_, str> {
    escape_if(text, escapes)
}

/// A line whose fields [`one_line`] already escaped (a rendered report, a
/// message), guarded once more: what is still hostile ([`is_hostile`]: a
/// field someone forgot) is escaped, and the backslashes of the escapes
/// already made are left as they are.
#[must_use]
pub fn guard_line(text: &str) -> Cow<'_, str> {
    escape_if(text, is_hostile)
}

fn escape_if(text: &str, escape: fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escape(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` (a path) as one word a POSIX shell reads back as `text`, for a
/// command to paste: as it is when it holds only `A-Z a-z 0-9 / . _ - + , :
/// = @`, else in single quotes (a `'` written `'\''`). `None` when no word
/// is safe to show: `text` is empty or holds anything [`one_line`] escapes
/// (a control, bidirectional or zero-width character, a backslash) — shown
/// escaped, the word pasted would name another path; shown as it is, it
/// could reorder or hide the command around it. Then say which directory in
/// words (its name escaped) instead of printing a command. The one rule for
/// a suggested command, the CLI's and the page's.
#[must_use]
pub fn shell_word(text: &str) -> Option<String> {
    if text.is_empty() || text.chars().any(escapes) {
        return None;
    }
    if text.bytes().all(|b| b.is_ascii_alphanumeric() || b"/._-+,:=@".contains(&b)) {
        return Some(text.into());
    }
    Some(format!("'{}'", text.replace('\'', r"'\''")))
}

/// Whether [`one_line`] escapes `c`: what [`is_hostile`], and the backslash.
#[must_use]
pub fn escapes(c: char) -> bool {
    c == '\\' || is_hostile(c)
}

/// Whether `c` could forge a line, move the cursor, reorder or hide text on
/// a terminal: a control character (newline and tab included); a Unicode
/// bidirectional control — the marks U+200E, U+200F and U+061C, the
/// embeddings and overrides U+202A–U+202E, the isolates U+2066–U+2069; the
/// line and paragraph separators U+2028, U+2029; the zero-width characters
/// U+200B–U+200D and U+FEFF.
#[must_use]
pub fn is_hostile(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200b}'..='\u{200f}' | '\u{061c}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}'
        )
}

pub(crate) fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CorruptionKind as K;

    #[test]
    fn a_shell_word_reads_back_as_the_path_or_is_refused() {
        assert_eq!(shell_word("/srv/felix/acme_default_payments_0-1f").as_deref(), Some("/srv/felix/acme_default_payments_0-1f"));
        assert_eq!(shell_word("<root>/a b").as_deref(), Some("'<root>/a b'"));
        assert_eq!(shell_word("it's $HOME `x`").as_deref(), Some(r"'it'\''s $HOME `x`'"));
        assert_eq!(shell_word("caf\u{e9}").as_deref(), Some("'caf\u{e9}'"));
        // Nothing a shell could not be given as it is shown: the escape would name another path.
        for hostile in ["", "x\u{202e}txt.log", "a\nb", "a\\n", "tab\there", "\u{2066}q", "zero\u{200b}width", "\u{1b}[2J"] {
            assert_eq!(shell_word(hostile), None, "{hostile:?}");
        }
    }

    #[test]
    fn a_hostile_path_note_or_message_cannot_forge_a_line_of_the_text_report() {
        let mut file = FileReport::new("evil\nfake.log: clean segment\u{202e}gol.x\t\u{1b}[2J".into(), FileKind::Segment, 0);
        file.notes.push("note\rwith\ncontrol".into());
        let text = Report::new(alloc::vec![file]).to_text();
        assert_eq!(text.lines().count(), 4, "{text}");
        assert!(text.contains("clean segment\\u{202e}gol.x\\t\\u{1b}[2J: verdict: clean: nothing to do\n"), "{text}");
        assert!(text.contains("evil\\nfake.log: clean segment\\u{202e}gol.x\\t\\u{1b}[2J: clean segment, 0 bytes"), "{text}");
        // A file that is not a Felix file is never called clean.
        let stray = FileReport::new("server.log".into(), FileKind::Unknown, 12);
        assert_eq!((stray.status, stray.verdict()), (Status::Clean, Verdict::NotJudged));
        assert!(Report::new(alloc::vec![stray]).to_text().contains("server.log: not judged unknown, 12 bytes"));
        assert!(text.contains("note: note\\rwith\\ncontrol"), "{text}");
        assert!(matches!(one_line("plain é 東"), Cow::Borrowed(_)));
        for c in ['\u{200e}', '\u{200f}', '\u{061c}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}', '\r', '\u{1b}', '\u{85}'] {
            assert!(is_hostile(c) && !one_line(&alloc::format!("a{c}b")).contains(c), "{c:?}");
        }
        // Line and paragraph separators, zero-width characters; the backslash.
        for c in ['\u{2028}', '\u{2029}', '\u{200b}', '\u{200c}', '\u{200d}', '\u{feff}'] {
            assert!(is_hostile(c) && !one_line(&alloc::format!("a{c}b")).contains(c), "{c:?}");
            assert!(!guard_line(&alloc::format!("a{c}b")).contains(c), "{c:?}");
        }
        assert_eq!(one_line("a\\nb"), "a\\\\nb", "a literal backslash-n is not an escaped newline");
        assert_ne!(one_line("a\\nb"), one_line("a\nb"));
        assert_eq!(guard_line(&one_line("a\\nb\n")), "a\\\\nb\\n", "a guard leaves escapes be");
    }

    /// One value of every kind: the `match` fails to compile when a kind is added,
    /// so [`FINDING_KIND_NAMES`] cannot fall behind.
    fn one_of_each() -> Vec<K> {
        let all = [
            K::SegmentMagic { found: [0; 4] },
            K::IndexMagic { found: [0; 4] },
            K::SegmentVersion { found: 1 },
            K::IndexVersion { found: 1 },
            K::SegmentFlags { found: 1 },
            K::IndexFlags { found: 1 },
            K::SegmentHeaderChecksum { stored: 0, computed: 1 },
            K::Truncated { needed: 2, available: 1 },
            K::RecordHeaderChecksum { stored: 0, computed: 1 },
            K::RecordChecksum { stored: 0, computed: 1 },
            K::RecordTooLarge { payload_len: 2, limit: 1 },
            K::OffsetOutOfOrder { expected: Some(1), found: 2 },
            K::IndexBaseOffset { index: 1, segment: 2 },
            K::IndexOutOfOrder { previous_offset: 2, offset: 1, previous_position: 2, position: 1 },
            K::IndexEntryMismatch { offset: 1, position: 2 },
            K::EpochsMagic { found: [0; 4] },
            K::EpochsVersion { found: 2 },
            K::EpochsChecksum { stored: 0, computed: 1 },
            K::EpochsLength { expected: 1, actual: 2 },
            K::EpochsTooMany { count: 2, limit: 1 },
            K::EpochsOrder { entry: 1 },
            K::EpochsBeyondLog { generation: 1, start_offset: 2, log_end: 1 },
            K::SegmentDiscontinuity { expected: 1, found: 2 },
        ];
        for k in &all {
            match k {
                K::SegmentMagic { .. }
                | K::IndexMagic { .. }
                | K::SegmentVersion { .. }
                | K::IndexVersion { .. }
                | K::SegmentFlags { .. }
                | K::IndexFlags { .. }
                | K::SegmentHeaderChecksum { .. }
                | K::Truncated { .. }
                | K::RecordHeaderChecksum { .. }
                | K::RecordChecksum { .. }
                | K::RecordTooLarge { .. }
                | K::OffsetOutOfOrder { .. }
                | K::IndexBaseOffset { .. }
                | K::IndexOutOfOrder { .. }
                | K::IndexEntryMismatch { .. }
                | K::EpochsMagic { .. }
                | K::EpochsVersion { .. }
                | K::EpochsChecksum { .. }
                | K::EpochsLength { .. }
                | K::EpochsTooMany { .. }
                | K::EpochsOrder { .. }
                | K::EpochsBeyondLog { .. }
                | K::SegmentDiscontinuity { .. } => {}
            }
        }
        all.to_vec()
    }

    #[test]
    fn hashes_are_written_in_lower_case_hex() {
        let h = FileHash::new(HashAlgorithm::Blake3, &[0x00, 0x9f, 0xa0, 0xff]);
        assert_eq!(h.value, "009fa0ff");
        assert!(!h.is_well_formed(), "4 bytes are not a 32-byte digest");
        let h = FileHash::new(HashAlgorithm::Sha256, &[0xab; 32]);
        assert!(h.is_well_formed());
        assert!(!is_hex_digest(&"AB".repeat(32), 32) && !is_hex_digest(&"é".repeat(32), 32) && !is_hex_digest("", 32));
        assert_eq!((HashAlgorithm::Blake3.as_str(), HashAlgorithm::Sha256.as_str()), ("blake3", "sha256"));
    }

    #[test]
    fn every_kind_name_is_listed_once() {
        let names: Vec<&str> = one_of_each().iter().map(K::name).collect();
        assert_eq!(names, FINDING_KIND_NAMES);
        assert!(is_finding_kind("Truncated"));
        assert!(!is_finding_kind("truncated") && !is_finding_kind("<img>"));
    }
}
