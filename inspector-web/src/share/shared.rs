//! Reports that came from someone else — a permalink, a dropped or pasted
//! JSON report (`felix-storage inspect --json`) — and what they claim about
//! who shared them, when, and with which build.
//!
//! A shared report is input from strangers. Before the page shows one, every
//! field is checked: the version, bounded counts and lengths, hashes that
//! are 64 lower-case hex digits (`hash.value`, and `sha256` — all an older
//! report has), kinds the codec knows, positions within the file's
//! size, and a status that is the codec's verdict on the findings listed.
//! A report that fails is refused with a sentence naming the field.

use std::fmt;

use felix_codec::doc::report::{is_finding_kind, is_hex_digest, status_of, FileReport, FindingReport, Report, REPORT_VERSION};
use felix_codec::format::file_name::{FileKind, MAX_EVIDENCE_ATTEMPTS};
use felix_codec::read::scan::{MAX_FINDINGS_PER_FILE, MAX_NOTES_PER_FILE};
use serde::{Deserialize, Serialize};

use super::open_error::{parse, Document, OpenError, Origin, Refusal};
use crate::ui::message::quote;

/// Largest JSON report the page opens from a file or a paste: 64 MiB.
pub const MAX_JSON_BYTES: u64 = 64 << 20;
/// Most files a report may list: enough for a shard folder in which every
/// name one piece of evidence could take, and each name's note, is taken —
/// the folder recovery refuses until the operator moves evidence out, and
/// the one whose report an operator most needs to share — with 10,000
/// files to spare.
pub const MAX_FILES: usize = 2 * MAX_EVIDENCE_ATTEMPTS as usize + 10_000;
/// Most findings across all files of a report opened from a file or a paste.
pub const MAX_FINDINGS: usize = 200_000;
/// Longest path, shard name or build text, in bytes.
pub const MAX_NAME_BYTES: usize = 4096;
/// Longest finding message or note, in bytes.
pub const MAX_TEXT_BYTES: usize = 4096;
/// Longest "shared by" text, in characters.
pub const MAX_BY_CHARS: usize = 200;

/// How many of each thing a report may carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Files.
    pub files: usize,
    /// Findings across all files.
    pub findings: usize,
}

/// The limits for a report opened from a JSON file or a paste.
pub const FILE_LIMITS: Limits = Limits { files: MAX_FILES, findings: MAX_FINDINGS };

/// Where a shared report came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A permalink's fragment.
    Link,
    /// A JSON file dropped or picked (its name, as given).
    JsonFile(String),
    /// JSON pasted into the page.
    Pasted,
}

impl Source {
    /// How an error names it.
    #[must_use]
    pub fn origin(&self) -> Origin {
        match self {
            Self::Link => Origin::Link,
            Self::JsonFile(name) => Origin::File(name.clone()),
            Self::Pasted => Origin::Pasted,
        }
    }
}

/// What a shared report says about itself. None of it can be verified: the
/// page shows it as the sender's claim.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// Who shared it, in their words (≤ [`MAX_BY_CHARS`] characters).
    pub shared_by: Option<String>,
    /// When the link was made, microseconds since the epoch (the sender's clock).
    pub made_at_micros: Option<u64>,
    /// The build that made it (`felix-inspector 0.1.0`).
    pub build: Option<String>,
    /// The bytes the sender points at ("look at byte 1692 of …01.log"):
    /// selected once the files are dropped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<At>,
}

/// Bytes a link points at: a file its report lists, by path, and a byte range in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct At {
    /// The file's path, as the report lists it.
    pub file: String,
    /// The first byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
}

/// Checks where a link points: a file its report lists, and a range of at
/// least one byte inside that file's size.
///
/// # Errors
/// The field refused, in words.
pub fn validate_at(report: &Report, at: &At) -> Result<(), Refused> {
    text("at.file", &at.file, MAX_NAME_BYTES)?;
    let Some(f) = report.files.iter().find(|f| f.path == at.file) else {
        return Err(refuse("at.file", format!("names {}, a file its report does not list", quote(&short(&at.file, 200)))));
    };
    if at.end <= at.start {
        return Err(refuse("at.end", format!("is {}, not past at.start ({}): a range holds at least one byte", at.end, at.start)));
    }
    if at.end > f.size {
        return Err(refuse("at.end", format!("is {}, past the end of {} ({} bytes)", at.end, quote(&f.path), f.size)));
    }
    Ok(())
}

/// A report from elsewhere, checked, with where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedReport {
    /// The report.
    pub report: Report,
    /// Where it came from.
    pub source: Source,
    /// What it says about itself.
    pub provenance: Provenance,
}

/// This build, as a link names it.
#[must_use]
pub fn this_build() -> String {
    format!("felix-inspector {}", env!("CARGO_PKG_VERSION"))
}

/// Why a report was refused: the field (`files[2].sha256`) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The field, as a JSON path.
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the report is refused: {} {}", self.field, self.problem)
    }
}

impl From<Refused> for Refusal {
    fn from(r: Refused) -> Self {
        Self::Field { field: r.field, problem: r.problem }
    }
}

fn refuse(field: impl Into<String>, problem: impl Into<String>) -> Refused {
    Refused { field: field.into(), problem: problem.into() }
}

fn text(field: &str, s: &str, max: usize) -> Result<(), Refused> {
    if s.len() > max {
        return Err(refuse(field, format!("is {} bytes long; at most {max} are accepted", s.len())));
    }
    if let Some((i, c)) = s.char_indices().find(|(_, c)| c.is_control() && *c != '\n' && *c != '\t') {
        return Err(refuse(field, format!("holds the control character U+{:04X} at byte {i}", u32::from(c))));
    }
    Ok(())
}

/// Checks a file's hashes as reports write them: the identity (`hash`:
/// its algorithm is one serde knows, its value lower-case hex of that
/// algorithm's digest) and `sha256` (64 lower-case hex digits; a report made
/// before the `hash` field has only this one).
///
/// # Errors
/// The hash field that is wrong.
pub fn check_hashes(at: &str, f: &FileReport) -> Result<(), Refused> {
    let digits = |field: &str, v: &str, len: usize| {
        if is_hex_digest(v, len) {
            Ok(())
        } else {
            Err(refuse(
                format!("{at}.{field}"),
                format!("is not {} lower-case hex digits (it holds {} characters)", len * 2, v.chars().count()),
            ))
        }
    };
    if let Some(h) = &f.hash {
        digits("hash.value", &h.value, h.algorithm.digest_len())?;
    }
    if let Some(sha) = &f.sha256 {
        digits("sha256", sha, 32)?;
    }
    Ok(())
}

/// Checks what a report says of a file that changed while it was read: no
/// read went past its size at the start, a file that "only grew" is there
/// at the end and larger, and a file that did not only grow carries no hash
/// (none describes the bytes its findings come from).
fn check_change(at: &str, f: &FileReport) -> Result<(), Refused> {
    let Some(change) = &f.changed_while_read else { return Ok(()) };
    if change.only_grew && change.size_at_end.is_none_or(|end| end <= change.size_at_start) {
        let end = change.size_at_end.map_or_else(|| "null".to_string(), |n| n.to_string());
        return Err(refuse(
            format!("{at}.changed_while_read.only_grew"),
            format!(
                "is true, but size_at_end is {end} and size_at_start {}: a file that only grew is there and larger at the end",
                change.size_at_start
            ),
        ));
    }
    if f.size > change.size_at_start {
        return Err(refuse(
            format!("{at}.size"),
            format!("is {}, past changed_while_read.size_at_start {}: no read goes past it", f.size, change.size_at_start),
        ));
    }
    if !change.only_grew && (f.hash.is_some() || f.sha256.is_some()) {
        return Err(refuse(format!("{at}.hash"), "is given for a file that did not only grow while it was read"));
    }
    Ok(())
}

/// Checks every field of `report` against `limits`.
///
/// # Errors
/// The first field that is wrong.
pub fn validate(report: &Report, limits: Limits) -> Result<(), Refused> {
    if report.report_version != REPORT_VERSION {
        return Err(refuse("report_version", format!("is {}; this page reads version {REPORT_VERSION}", report.report_version)));
    }
    if report.files.len() > limits.files {
        return Err(refuse("files", format!("lists {} files; at most {} are accepted", report.files.len(), limits.files)));
    }
    let total: usize = report.files.iter().map(|f| f.findings.len()).sum();
    if total > limits.findings {
        return Err(refuse("files[*].findings", format!("hold {total} findings in all; at most {} are accepted here", limits.findings)));
    }
    for (i, f) in report.files.iter().enumerate() {
        validate_file(&format!("files[{i}]"), f)?;
    }
    times_given_together(&report.files)?;
    listed_once(&report.files)
}

/// Refuses a report that lists one file (by path) twice: the files dropped
/// to check it could pair with either row.
fn listed_once(files: &[FileReport]) -> Result<(), Refused> {
    let mut seen = std::collections::HashMap::with_capacity(files.len());
    for (i, f) in files.iter().enumerate() {
        if let Some(first) = seen.insert(f.path.as_str(), i) {
            return Err(refuse(
                format!("files[{i}].path"),
                format!("lists {} again (first as files[{first}]): a report lists each file once", quote(&f.path)),
            ));
        }
    }
    Ok(())
}

/// What is wrong with a finding's `discontinuity`, in words: the codec
/// gives one to a `SegmentDiscontinuity` only, and only where the two
/// offsets differ (equal ones are no gap; the words would name a false one).
#[must_use]
pub fn discontinuity_problem(x: &FindingReport) -> Option<String> {
    match (x.kind.as_str(), x.discontinuity) {
        ("SegmentDiscontinuity", Some(d)) if d.expected == d.found => {
            Some(format!("names expected and found offset {} alike: no offsets are missing or held twice", d.found))
        }
        ("SegmentDiscontinuity", _) | (_, None) => None,
        (kind, Some(_)) => Some(format!("is given to a finding of kind {kind}; only a SegmentDiscontinuity has one")),
    }
}

fn validate_file(at: &str, f: &FileReport) -> Result<(), Refused> {
    if f.path.is_empty() {
        return Err(refuse(format!("{at}.path"), "is empty"));
    }
    text(&format!("{at}.path"), &f.path, MAX_NAME_BYTES)?;
    if let Some(shard) = &f.shard {
        text(&format!("{at}.shard"), shard, MAX_NAME_BYTES)?;
    }
    check_hashes(at, f)?;
    check_change(at, f)?;
    check_time(at, f)?;
    if f.findings.len() > MAX_FINDINGS_PER_FILE {
        return Err(refuse(
            format!("{at}.findings"),
            format!("lists {} findings; a file has at most {MAX_FINDINGS_PER_FILE}", f.findings.len()),
        ));
    }
    if f.notes.len() > MAX_NOTES_PER_FILE {
        return Err(refuse(format!("{at}.notes"), format!("lists {} notes; a file has at most {MAX_NOTES_PER_FILE}", f.notes.len())));
    }
    if f.records.saturating_mul(felix_codec::format::record::RECORD_HEADER_LEN as u64) > f.size {
        return Err(refuse(format!("{at}.records"), format!("is {}, more than {} bytes can hold", f.records, f.size)));
    }
    if f.index_entries.is_some_and(|n| n.saturating_mul(felix_codec::format::index::INDEX_ENTRY_LEN as u64) > f.size) {
        return Err(refuse(
            format!("{at}.index_entries"),
            format!("is {}, more than {} bytes can hold", f.index_entries.unwrap_or(0), f.size),
        ));
    }
    if f.findings_omitted > f.size {
        return Err(refuse(
            format!("{at}.findings_omitted"),
            format!("is {}, more than one per byte of a {}-byte file", f.findings_omitted, f.size),
        ));
    }
    if let (Some(a), Some(b)) = (f.first_offset, f.last_offset) {
        if a > b {
            return Err(refuse(format!("{at}.first_offset"), format!("is {a}, past last_offset {b}")));
        }
    }
    if let Some(entries) = &f.entries {
        if entries.len() > usize::from(felix_codec::format::epochs::MAX_EPOCHS) {
            return Err(refuse(
                format!("{at}.entries"),
                format!("lists {} generations; at most {} exist", entries.len(), felix_codec::format::epochs::MAX_EPOCHS),
            ));
        }
    }
    for (n, note) in f.notes.iter().enumerate() {
        text(&format!("{at}.notes[{n}]"), note, MAX_TEXT_BYTES)?;
    }
    for (n, x) in f.findings.iter().enumerate() {
        let at = format!("{at}.findings[{n}]");
        if !is_finding_kind(&x.kind) {
            let shown: String = x.kind.chars().take(40).collect();
            return Err(refuse(format!("{at}.kind"), format!("{} is not a kind of damage this build knows", quote(&shown))));
        }
        if x.position > f.size {
            return Err(refuse(format!("{at}.position"), format!("is {}, past the file's size ({} bytes)", x.position, f.size)));
        }
        if x.end < x.position || x.end > f.size {
            return Err(refuse(format!("{at}.end"), format!("is {}, outside {}..={} (position..size)", x.end, x.position, f.size)));
        }
        text(&format!("{at}.message"), &x.message, MAX_TEXT_BYTES)?;
        discontinuity_problem(x).map_or(Ok(()), |why| Err(refuse(format!("{at}.discontinuity"), why)))?;
    }
    if f.findings.windows(2).any(|w| (w[0].position, w[0].end) > (w[1].position, w[1].end)) {
        return Err(refuse(format!("{at}.findings"), "are not ordered by position"));
    }
    let status = status_of(&f.findings);
    if f.status != status {
        return Err(refuse(
            format!("{at}.status"),
            format!("says {:?} but the findings listed make it {:?}", f.status, status).to_lowercase(),
        ));
    }
    Ok(())
}

/// A file's `time`: a segment's, with an intact record to have a time,
/// its first and last within its least and greatest, and one record's span
/// one timestamp.
fn check_time(at: &str, f: &FileReport) -> Result<(), Refused> {
    let Some(t) = f.time else { return Ok(()) };
    let field = format!("{at}.time");
    if f.kind != FileKind::Segment {
        return Err(refuse(field, format!("is given for a file of kind {}: only a segment's records have times", f.kind.as_str())));
    }
    if f.records == 0 || f.first_offset.is_none() {
        return Err(refuse(field, "is given for a segment without an intact record"));
    }
    if t.min > t.max {
        return Err(refuse(format!("{field}.min"), format!("is {}, above max {}", t.min, t.max)));
    }
    for (name, v) in [("first", t.first), ("last", t.last)] {
        if v < t.min || v > t.max {
            return Err(refuse(format!("{field}.{name}"), format!("is {v}, outside {}..={} (min..max)", t.min, t.max)));
        }
    }
    if !could_span(t, f.records) {
        return Err(refuse(
            field,
            if f.records == 1 {
                "spans more than one timestamp for a segment of one record".to_string()
            } else {
                format!(
                    "has least {} and greatest {} for a segment of two records, whose timestamps are its first ({}) and last ({})",
                    t.min, t.max, t.first, t.last
                )
            },
        ));
    }
    Ok(())
}

/// Whether `t` can be the span of `n` records' timestamps: none has no
/// span, one has one timestamp, two have their first and last as least
/// and greatest (a report's file, a diff's divergent records).
pub(super) fn could_span(t: felix_codec::read::time::TimeSpan, n: u64) -> bool {
    match n {
        0 => false,
        1 => t.first == t.last && t.min == t.max,
        2 => (t.min, t.max) == (t.first.min(t.last), t.first.max(t.last)),
        _ => true,
    }
}

/// A report either predates `time` (no file carries one) or gives it for
/// every segment with an intact record: a shard's span is joined from its
/// segments', and one left out would leave its records out of it.
fn times_given_together(files: &[FileReport]) -> Result<(), Refused> {
    if files.iter().all(|f| f.time.is_none()) {
        return Ok(());
    }
    match files.iter().position(|f| f.kind == FileKind::Segment && f.records > 0 && f.first_offset.is_some() && f.time.is_none()) {
        Some(i) => Err(refuse(
            format!("files[{i}].time"),
            format!("is missing for a segment of {} intact records, while other files of the report carry theirs", files[i].records),
        )),
        None => Ok(()),
    }
}

/// Opens a JSON report (`felix-storage inspect --json`, or the page's own download).
///
/// # Errors
/// Why it cannot be opened, in words ([`OpenError`]): too large, not JSON or
/// cut short (line and column), a field of the wrong shape (its path), or
/// the field refused.
pub fn from_json(bytes: &[u8], source: Source) -> Result<SharedReport, OpenError> {
    let from = source.origin();
    if bytes.len() as u64 > MAX_JSON_BYTES {
        return Err(OpenError::TooLarge { from, document: Document::Report, bytes: bytes.len() as u64, max: MAX_JSON_BYTES });
    }
    let report: Report = parse(bytes, &from, Document::Report)?;
    validate(&report, FILE_LIMITS).map_err(|e| OpenError::Refused { from, document: Document::Report, why: e.into() })?;
    Ok(SharedReport { report, source, provenance: Provenance::default() })
}

/// Checks what a link says about itself.
///
/// # Errors
/// The field refused.
pub fn validate_provenance(p: &Provenance) -> Result<(), Refused> {
    if let Some(by) = &p.shared_by {
        if by.chars().count() > MAX_BY_CHARS {
            return Err(refuse("shared_by", format!("is {} characters long; at most {MAX_BY_CHARS} are accepted", by.chars().count())));
        }
        text("shared_by", by, MAX_NAME_BYTES)?;
        if by.contains('\n') {
            return Err(refuse("shared_by", "holds a line break"));
        }
    }
    if let Some(build) = &p.build {
        text("build", build, 200)?;
        if build.contains('\n') {
            return Err(refuse("build", "holds a line break"));
        }
    }
    if p.made_at_micros.is_some_and(|m| m > 32_503_680_000_000_000) {
        return Err(refuse("made_at_micros", "is after the year 3000"));
    }
    Ok(())
}

/// The report as JSON text, exactly as `felix-storage inspect --json` prints it
/// (pretty, with a final newline), so the two compare byte for byte.
#[must_use]
pub fn to_json(report: &Report) -> String {
    let mut s = serde_json::to_string_pretty(report).unwrap_or_default();
    s.push('\n');
    s
}

pub use crate::ui::message::short;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{sample, scan::scan_all};
    use felix_codec::doc::report::FileChange;
    use proptest::prelude::*;

    fn sample_report() -> Report {
        Report::new(scan_all(&sample::files()).into_iter().map(|s| s.report).collect())
    }

    #[test]
    fn the_sample_report_is_accepted() {
        assert_eq!(validate(&sample_report(), FILE_LIMITS), Ok(()));
        // A file that grew while it was read keeps its hash (of its first bytes).
        let mut r = sample_report();
        let size_at_start = r.files[1].size;
        r.files[1].changed_while_read = Some(FileChange { size_at_start, size_at_end: Some(size_at_start + 9), only_grew: true });
        assert_eq!(validate(&r, FILE_LIMITS), Ok(()));
    }

    #[test]
    fn a_report_from_before_the_hash_field_still_opens() {
        // Version 1 as it was: `sha256` only, no `hash` key at all.
        let mut v = serde_json::to_value(sample_report()).unwrap();
        for f in v["files"].as_array_mut().unwrap() {
            f.as_object_mut().unwrap().remove("hash");
            f["sha256"] = serde_json::Value::String("ab".repeat(32));
        }
        let opened = from_json(v.to_string().as_bytes(), Source::Pasted).unwrap();
        assert!(opened.report.files.iter().all(|f| f.hash.is_none() && f.sha256.as_deref() == Some("ab".repeat(32).as_str())));
        // A hash algorithm this build does not know is refused, by name.
        let mut v = serde_json::to_value(sample_report()).unwrap();
        v["files"][0]["hash"]["algorithm"] = "md5".into();
        let e = from_json(v.to_string().as_bytes(), Source::Pasted).unwrap_err().to_string();
        assert_eq!(
            e,
            "the pasted text is not a report: field `files[0].hash.algorithm` holds \u{2068}md5\u{2069}, which is not one of `blake3` or `sha256`"
        );
    }

    #[test]
    fn each_hostile_field_is_refused_by_name() {
        type Breaker = Box<dyn Fn(&mut Report)>;
        let cases: Vec<(Breaker, &str)> = vec![
            (Box::new(|r| r.report_version = 2), "report_version is 2; this page reads version 1"),
            (
                Box::new(|r| r.files[0].sha256 = Some("é".repeat(32))),
                "files[0].sha256 is not 64 lower-case hex digits (it holds 32 characters)",
            ),
            (
                Box::new(|r| r.files[0].sha256 = Some("A".repeat(64))),
                "files[0].sha256 is not 64 lower-case hex digits (it holds 64 characters)",
            ),
            (
                Box::new(|r| r.files[1].hash.as_mut().unwrap().value = "ab".into()),
                "files[1].hash.value is not 64 lower-case hex digits (it holds 2 characters)",
            ),
            (
                Box::new(|r| r.files[1].hash.as_mut().unwrap().value = "\u{202e}".repeat(64)),
                "files[1].hash.value is not 64 lower-case hex digits (it holds 64 characters)",
            ),
            (
                Box::new(|r| r.files[2].findings[0].kind = "<img src=x>".into()),
                "files[2].findings[0].kind \u{2068}<img src=x>\u{2069} is not a kind of damage this build knows",
            ),
            (
                Box::new(|r| r.files[2].findings[0].position = u64::MAX),
                "files[2].findings[0].position is 18446744073709551615, past the file's size",
            ),
            (Box::new(|r| r.files[2].findings[0].end = 0), "files[2].findings[0].end is 0, outside"),
            // A gap's offsets only on a gap, and two of them (issue 18's third
            // review: "offset 379 is held by two segments" from equal ones).
            (
                Box::new(|r| {
                    r.files[2].findings[0].discontinuity = Some(felix_codec::doc::report::Discontinuity { expected: 1, found: 2 })
                }),
                "files[2].findings[0].discontinuity is given to a finding of kind",
            ),
            (
                Box::new(|r| {
                    let f = &mut r.files[2].findings[0];
                    f.kind = "SegmentDiscontinuity".into();
                    f.discontinuity = Some(felix_codec::doc::report::Discontinuity { expected: 379, found: 379 });
                }),
                "files[2].findings[0].discontinuity names expected and found offset 379 alike",
            ),
            (
                Box::new(|r| r.files[1].status = felix_codec::doc::report::Status::Clean),
                "files[1].status says clean but the findings listed make it repairable",
            ),
            (Box::new(|r| r.files[0].path = String::new()), "files[0].path is empty"),
            (Box::new(|r| r.files[0].path = "a\u{1b}[31m".into()), "files[0].path holds the control character U+001B at byte 1"),
            (Box::new(|r| r.files[0].path = "x".repeat(5000)), "files[0].path is 5000 bytes long"),
            (Box::new(|r| r.files[0].records = u64::MAX), "files[0].records is 18446744073709551615, more than"),
            (Box::new(|r| r.files[2].findings[0].message = "m".repeat(5000)), "files[2].findings[0].message is 5000 bytes long"),
            (
                Box::new(|r| r.files[0].findings_omitted = u64::MAX),
                "files[0].findings_omitted is 18446744073709551615, more than one per byte",
            ),
            (Box::new(|r| r.files[1].index_entries = Some(u64::MAX)), "files[1].index_entries is 18446744073709551615, more than"),
            (
                Box::new(|r| {
                    let size_at_start = r.files[1].size;
                    r.files[1].changed_while_read = Some(FileChange { size_at_start, size_at_end: Some(0), only_grew: false });
                }),
                "files[1].hash is given for a file that did not only grow while it was read",
            ),
            (
                Box::new(|r| {
                    let size_at_start = r.files[1].size - 1;
                    r.files[1].changed_while_read =
                        Some(FileChange { size_at_start, size_at_end: Some(size_at_start + 1), only_grew: true });
                }),
                "files[1].size is",
            ),
            (
                Box::new(|r| {
                    let size_at_start = r.files[1].size;
                    r.files[1].changed_while_read = Some(FileChange { size_at_start, size_at_end: None, only_grew: true });
                }),
                "files[1].changed_while_read.only_grew is true, but size_at_end is null",
            ),
            (
                Box::new(|r| {
                    let size_at_start = r.files[1].size;
                    r.files[1].changed_while_read =
                        Some(FileChange { size_at_start, size_at_end: Some(size_at_start - 1), only_grew: true });
                }),
                "files[1].changed_while_read.only_grew is true, but size_at_end is",
            ),
            (Box::new(|r| r.files[0].time.as_mut().unwrap().min = u64::MAX), "files[0].time.min is 18446744073709551615, above max"),
            (Box::new(|r| r.files[0].time.as_mut().unwrap().first = 0), "files[0].time.first is 0, outside"),
            (Box::new(|r| r.files[0].time.as_mut().unwrap().last = u64::MAX), "files[0].time.last is 18446744073709551615, outside"),
            (Box::new(|r| r.files[1].time = r.files[0].time), "files[1].time is given for a file of kind index"),
            (
                Box::new(|r| {
                    r.files[0].records = 0;
                    r.files[0].first_offset = None;
                }),
                "files[0].time is given for a segment without an intact record",
            ),
            (
                Box::new(|r| {
                    r.files[0].records = 1;
                    r.files[0].time.as_mut().unwrap().max += 1;
                }),
                "files[0].time spans more than one timestamp",
            ),
            (
                Box::new(|r| {
                    r.files[0].records = 2;
                    let t = r.files[0].time.as_mut().unwrap();
                    (t.first, t.last, t.min, t.max) = (5, 5, 5, 9);
                }),
                "files[0].time has least 5 and greatest 9 for a segment of two records, whose timestamps are its first (5) and last (5)",
            ),
            (
                Box::new(|r| r.files[0].time = None),
                "files[0].time is missing for a segment of 40 intact records, while other files of the report carry theirs",
            ),
        ];
        for (break_it, want) in cases {
            let mut r = sample_report();
            break_it(&mut r);
            let got = validate(&r, FILE_LIMITS).unwrap_err().to_string();
            assert!(got.starts_with(&format!("the report is refused: {want}")), "{got}\nwanted {want}");
        }
    }

    #[test]
    fn a_file_listed_twice_is_refused_by_name() {
        let mut r = sample_report();
        let again = r.files[1].clone();
        r.files.push(again);
        let e = validate(&r, FILE_LIMITS).unwrap_err();
        assert_eq!(e.field, "files[7].path");
        assert_eq!(
            e.to_string(),
            format!(
                "the report is refused: files[7].path lists {}{}{} again (first as files[1]): a report lists each file once",
                '\u{2068}', r.files[1].path, '\u{2069}'
            )
        );
        // The same name in two shards is two files.
        let mut r = sample_report();
        let mut other = r.files[1].clone();
        other.path = other.path.replacen("orders", "payments", 1);
        r.files.push(other);
        assert_eq!(validate(&r, FILE_LIMITS), Ok(()));
    }

    #[test]
    fn a_report_of_a_folder_whose_every_evidence_name_and_note_is_taken_opens() {
        let mut r = sample_report();
        let template = r.files[2].clone();
        let dir = template.path.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
        for k in 1..=MAX_EVIDENCE_ATTEMPTS {
            let name = felix_codec::format::file_name::evidence_name(7, 32, k);
            for path in [format!("{dir}/{name}"), format!("{dir}/{}", felix_codec::format::file_name::evidence_note_name(&name))] {
                let mut f = template.clone();
                f.path = path;
                r.files.push(f);
            }
        }
        assert!(r.files.len() > 2 * MAX_EVIDENCE_ATTEMPTS as usize);
        let json = serde_json::to_vec(&r).unwrap();
        assert_eq!(from_json(&json, Source::Pasted).map(|o| o.report.files.len()), Ok(r.files.len()));
    }

    #[test]
    fn counts_are_capped() {
        let mut r = sample_report();
        let f = r.files[2].clone();
        r.files = vec![f; MAX_FILES + 1];
        assert_eq!(validate(&r, FILE_LIMITS).unwrap_err().field, "files");
        let r = sample_report();
        let one = Limits { files: 100, findings: 1 };
        assert!(validate(&r, one).unwrap_err().to_string().contains("at most 1 are accepted here"));
    }

    #[test]
    fn a_file_may_not_claim_more_findings_than_the_codec_keeps() {
        let mut r = sample_report();
        let f = r.files[2].findings[0].clone();
        r.files[2].findings = vec![f; MAX_FINDINGS_PER_FILE + 1];
        assert_eq!(
            validate(&r, FILE_LIMITS).unwrap_err().to_string(),
            "the report is refused: files[2].findings lists 10001 findings; a file has at most 10000"
        );
    }

    #[test]
    fn oversized_json_is_refused_before_it_is_parsed() {
        let big = vec![b' '; usize::try_from(MAX_JSON_BYTES).unwrap() + 1];
        let e = from_json(&big, Source::JsonFile("<b>big</b>.json".into())).unwrap_err().to_string();
        // The file's name is quoted as the page shows every name: escaped by the one rule, isolated.
        assert_eq!(e, "\u{2068}<b>big</b>.json\u{2069} is 67108865 bytes; a report may be at most 67108864 bytes");
        let e = from_json(&big, Source::JsonFile("x\u{202e}nosj.json".into())).unwrap_err().to_string();
        assert_eq!(crate::ui::message::shown(&e), "x\\u{202e}nosj.json is 67108865 bytes; a report may be at most 67108864 bytes");
    }

    #[test]
    fn json_errors_name_the_place() {
        let e = from_json(b"{\"report_version\":1,\"files\":[{]}", Source::JsonFile("r.json".into())).unwrap_err();
        assert_eq!(e, OpenError::NotJson { from: Origin::File("r.json".into()), line: 1, column: 31 });
        assert_eq!(e.to_string(), "\u{2068}r.json\u{2069} is not JSON: something unexpected at line 1, column 31");
        let e = from_json(b"\xff", Source::Pasted).unwrap_err();
        assert_eq!(e.to_string(), "the pasted text is not JSON: something unexpected at line 1, column 1");
        // A report whose file size is a list: the field, by its path, in words.
        let mut v = serde_json::to_value(sample_report()).unwrap();
        v["files"][3]["size"] = serde_json::json!([1]);
        assert_eq!(
            from_json(v.to_string().as_bytes(), Source::Pasted).unwrap_err().to_string(),
            "the pasted text is not a report: field `files[3].size` should be a whole number from 0 to 18446744073709551615, not a list"
        );
        assert_eq!(
            from_json(b"[]", Source::Pasted).unwrap_err().to_string(),
            "the pasted text is not a report: it holds a list where a report's JSON object should be"
        );
        let json = serde_json::to_vec(&sample_report()).unwrap();
        assert_eq!(from_json(&json, Source::Pasted).unwrap().report, sample_report());
    }

    #[test]
    fn short_never_cuts_a_character() {
        assert_eq!(short("ééééé", 3), "ééé…");
        assert_eq!(short("abc", 3), "abc");
        assert_eq!(short("", 3), "");
    }

    proptest! {
        /// Whatever bytes a file holds, the page's own report of it is accepted.
        #[test]
        fn reports_of_any_bytes_are_accepted(bytes in proptest::collection::vec(any::<u8>(), 0..600), name in 0..4usize) {
            let names = ["00000000000000000000.log", "00000000000000000000.index", "epochs", "x.bin"];
            let scanned = scan_all(&[(names[name].to_string(), bytes)]);
            let report = Report::new(scanned.into_iter().map(|s| s.report).collect());
            prop_assert_eq!(validate(&report, FILE_LIMITS), Ok(()));
        }

        /// Damaged sample files give reports that are accepted too.
        #[test]
        fn reports_of_damaged_samples_are_accepted(file in 0..7usize, at in any::<prop::sample::Index>(), cut in any::<prop::sample::Index>(), flip in 1..=255u8) {
            let files = sample::files();
            let (path, mut bytes) = files[file].clone();
            let i = at.index(bytes.len());
            bytes[i] ^= flip;
            bytes.truncate(cut.index(bytes.len() + 1));
            let report = Report::new(scan_all(&[(path, bytes)]).into_iter().map(|s| s.report).collect());
            prop_assert_eq!(validate(&report, FILE_LIMITS), Ok(()));
        }
    }
}
