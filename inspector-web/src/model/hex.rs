//! The hex view's layout and colouring: 16 bytes a row; every byte labelled
//! with the field it belongs to (from the codec's field tables and the
//! scanned record rows) and marked when a finding covers it; hover text with
//! the field's decoded value.

use felix_codec::doc::report::FindingReport;
use felix_codec::format::epochs::{EPOCHS_HEADER_LEN, EPOCH_ENTRY_LEN};
use felix_codec::format::file_name::FileKind;
use felix_codec::format::index::{IndexEntry, INDEX_ENTRY_LEN, INDEX_HEADER_LEN};
use felix_codec::format::record::{HEADER_CRC_AT as RECORD_HEADER_CRC_AT, RECORD_HEADER_LEN};
use felix_codec::format::segment_header::{HEADER_CRC_AT as SEGMENT_HEADER_CRC_AT, SEGMENT_HEADER_LEN};
use felix_codec::format::time::{format_micros, parse_time, TimeError};
use felix_codec::read::scan::epochs::entry_position;
use felix_codec::read::scan::fields::{
    Field, FieldClass, EPOCHS_HEADER_FIELDS, EPOCH_ENTRY_FIELDS, INDEX_ENTRY_FIELDS, INDEX_HEADER_FIELDS, RECORD_HEADER_FIELDS,
    SEGMENT_HEADER_FIELDS,
};
use felix_codec::read::scan::RecordStatus;
use felix_codec::read::time::{TimeSeek, TimeSpan};

use crate::ui::keys::Nav;
use crate::ui::message::{quote, short};

use super::scan::{Rows, Scanned};
use super::window::Want;

/// Bytes per row.
pub const BYTES_PER_ROW: u64 = 16;

/// Rows needed for `size` bytes.
#[must_use]
pub fn row_count(size: u64) -> u64 {
    size.div_ceil(BYTES_PER_ROW)
}

/// The row holding byte `pos`.
#[must_use]
pub fn row_of(pos: u64) -> u64 {
    pos / BYTES_PER_ROW
}

/// A field located in the file: absolute `start..end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Located {
    /// The field.
    pub field: Field,
    /// Absolute first byte.
    pub start: u64,
    /// Absolute end.
    pub end: u64,
    /// What holds it ("segment header", "record 42", "index entry 3", …).
    pub owner: Owner,
}

/// The structure a field belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A file header.
    Header,
    /// The record with this offset.
    Record(u64),
    /// Index or epochs entry number.
    Entry(u64),
}

fn locate(table: &[Field], base: u64, pos: u64, owner: Owner) -> Option<Located> {
    table.iter().find(|f| pos >= base + f.start && pos < base + f.end).map(|f| Located {
        field: *f,
        start: base + f.start,
        end: base + f.end,
        owner,
    })
}

const PAYLOAD: Field =
    Field { name: "payload", start: RECORD_HEADER_LEN as u64, end: RECORD_HEADER_LEN as u64, class: FieldClass::Payload };

/// Entry `n` of a table of `len`-byte entries after a `header`-byte header,
/// when the whole entry lies within `size` bytes (a torn final entry is no entry).
fn entry_at(pos: u64, header: u64, len: u64, size: u64) -> Option<(u64, u64)> {
    let n = pos.checked_sub(header)? / len;
    let start = header + n * len;
    (start + len <= size).then_some((n, start))
}

/// The field byte `pos` belongs to, if any structure was recognised there.
#[must_use]
pub fn field_at(kind: FileKind, records: &Rows, size: u64, pos: u64) -> Option<Located> {
    if pos >= size {
        return None;
    }
    match kind {
        FileKind::Segment => {
            if pos < SEGMENT_HEADER_LEN as u64 {
                return locate(&SEGMENT_HEADER_FIELDS, 0, pos, Owner::Header);
            }
            let i = records.partition_point(|r| r.position <= pos).checked_sub(1)?;
            let r = records.get(i)?;
            if pos >= r.end() {
                return None;
            }
            locate(&RECORD_HEADER_FIELDS, r.position, pos, Owner::Record(r.offset)).or(Some(Located {
                field: PAYLOAD,
                start: r.position + RECORD_HEADER_LEN as u64,
                end: r.end(),
                owner: Owner::Record(r.offset),
            }))
        }
        FileKind::Index => {
            if pos < INDEX_HEADER_LEN as u64 {
                return locate(&INDEX_HEADER_FIELDS, 0, pos, Owner::Header);
            }
            let (n, start) = entry_at(pos, INDEX_HEADER_LEN as u64, INDEX_ENTRY_LEN as u64, size)?;
            debug_assert_eq!(start, IndexEntry::file_position(n));
            locate(&INDEX_ENTRY_FIELDS, start, pos, Owner::Entry(n))
        }
        FileKind::Epochs => {
            if pos < EPOCHS_HEADER_LEN as u64 {
                return locate(&EPOCHS_HEADER_FIELDS, 0, pos, Owner::Header);
            }
            let (n, start) = entry_at(pos, EPOCHS_HEADER_LEN as u64, EPOCH_ENTRY_LEN as u64, size)?;
            debug_assert_eq!(Some(start), usize::try_from(n).ok().map(entry_position));
            locate(&EPOCH_ENTRY_FIELDS, start, pos, Owner::Entry(n))
        }
        FileKind::Unknown => None,
    }
}

/// The CSS class of a field class.
#[must_use]
pub fn class_name(class: FieldClass) -> &'static str {
    match class {
        FieldClass::Magic => "f-magic",
        FieldClass::Version | FieldClass::Flags | FieldClass::Reserved => "f-meta",
        FieldClass::Offset => "f-offset",
        FieldClass::Length => "f-length",
        FieldClass::Timestamp => "f-time",
        FieldClass::Crc => "f-crc",
        FieldClass::Payload => "f-payload",
        FieldClass::Count => "f-count",
    }
}

/// Index of the finding whose range covers `pos`, if any (`findings` ordered by position).
#[must_use]
pub fn finding_at(findings: &[FindingReport], pos: u64) -> Option<usize> {
    findings.iter().position(|f| pos >= f.position && pos < f.end.max(f.position + 1))
}

/// The finding on index entry `n`, if any: the codec's verdict on it, found
/// where the codec's layout puts the entry.
#[must_use]
pub fn index_entry_finding(findings: &[FindingReport], n: u64) -> Option<&FindingReport> {
    finding_at(findings, IndexEntry::file_position(n)).and_then(|i| findings.get(i))
}

/// The number of the index entry starting at byte `position`, if one can
/// (the codec's layout: after the header, whole entries).
#[must_use]
pub fn index_entry_number(position: u64) -> Option<u64> {
    let body = position.checked_sub(INDEX_HEADER_LEN as u64)?;
    let n = body / INDEX_ENTRY_LEN as u64;
    (IndexEntry::file_position(n) == position).then_some(n)
}

/// What marks a file's bytes damaged: the findings its report lists and,
/// when it lists only some, what the scan met past them.
#[derive(Clone, Copy, Debug)]
pub struct Marks<'a> {
    /// The findings listed (ordered by position).
    pub findings: &'a [FindingReport],
    /// Findings the report counts but does not list (`findings_omitted`).
    pub omitted: u64,
    /// Whether the page's budget cut the record rows (bytes past the last row are then unknown).
    pub records_capped: bool,
}

impl<'a> Marks<'a> {
    /// The marks of a scanned file.
    #[must_use]
    pub fn of(s: &'a Scanned) -> Self {
        Self { findings: &s.report.findings, omitted: s.report.findings_omitted, records_capped: s.detail.records_capped }
    }
}

/// Why a byte is marked damaged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Damage<'a> {
    /// A listed finding covers it.
    Listed(&'a FindingReport),
    /// No listed finding does, but the report lists only some: the codec
    /// scanner's verdict on the record holding it, in words, or `None` for
    /// bytes of a segment no verified record accounts for.
    Unlisted(Option<&'static str>),
}

/// The damage at byte `pos`: a listed finding's; past the listed ones (a
/// report whose findings were cut at the per-file limit), a record the
/// codec's scanner found damaged, or segment bytes no verified record holds.
#[must_use]
pub fn damage_at<'a>(kind: FileKind, records: &Rows, marks: &Marks<'a>, size: u64, pos: u64) -> Option<Damage<'a>> {
    if let Some(f) = finding_at(marks.findings, pos).and_then(|i| marks.findings.get(i)) {
        return Some(Damage::Listed(f));
    }
    if marks.omitted == 0 || kind != FileKind::Segment || pos < SEGMENT_HEADER_LEN as u64 || pos >= size {
        return None;
    }
    let row = records.partition_point(|r| r.position <= pos).checked_sub(1).and_then(|i| records.get(i)).filter(|r| pos < r.end());
    match row {
        Some(r) => r.status.is_damaged().then_some(Damage::Unlisted(Some(r.status.describe()))),
        None => {
            let rows_reach = records.get(records.len().wrapping_sub(1)).map_or(0, |r| r.end());
            (!marks.records_capped || pos < rows_reach).then_some(Damage::Unlisted(None))
        }
    }
}

/// Classes for one byte: its field, and `dmg` when it is damaged ([`damage_at`]).
#[must_use]
pub fn byte_classes(kind: FileKind, records: &Rows, marks: &Marks<'_>, size: u64, pos: u64) -> String {
    let field = field_at(kind, records, size, pos).map_or("f-none", |l| class_name(l.field.class));
    match damage_at(kind, records, marks, size, pos) {
        Some(_) => format!("{field} dmg"),
        None => field.to_string(),
    }
}

/// The visible rows of the hex view, for [`rows_html`].
#[derive(Clone, Copy, Debug)]
pub struct VisibleRows<'a> {
    /// The file's kind.
    pub kind: FileKind,
    /// Its record rows.
    pub records: &'a Rows,
    /// What marks its bytes damaged.
    pub marks: Marks<'a>,
    /// Its size.
    pub size: u64,
    /// The first row shown.
    pub top: u64,
    /// Rows shown (fewer at the end of the file).
    pub rows: u64,
    /// Height of a row in CSS pixels.
    pub row_px: u64,
    /// The bytes fetched.
    pub window: &'a Window,
    /// The selected byte range.
    pub range: Option<(u64, u64)>,
    /// The keyboard cursor.
    pub cursor: u64,
}

fn escape_text(c: char, out: &mut String) {
    match c {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        c => out.push(c),
    }
}

/// The visible rows as HTML, one string: every byte a grid cell with its
/// id, selection, classes and position (`data-pos`, read by the view's one
/// listener), and the row's ASCII. The page inserts it in one step rather
/// than building ~450 elements one call at a time, which took the page's
/// main thread 30 ms and more. Only bytes of the file appear in it as text,
/// escaped; every attribute is made here from numbers and class names.
#[must_use]
pub fn rows_html(v: &VisibleRows<'_>) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(usize::try_from(v.rows).unwrap_or(0) * 2_200);
    let byte = |p: u64| v.window.slice(p, p + 1).and_then(|b| b.first().copied());
    for row in v.top..v.top.saturating_add(v.rows) {
        let _ = write!(
            out,
            r#"<div class="row" role="row" aria-rowindex="{}" style="top:{}px"><span class="addr" role="rowheader">{:010X}</span>"#,
            row + 1,
            (row - v.top) * v.row_px,
            row * BYTES_PER_ROW
        );
        for i in 0..BYTES_PER_ROW {
            let pos = row * BYTES_PER_ROW + i;
            if pos >= v.size {
                out.push_str(r#"<span class="b pad" aria-hidden="true">  </span>"#);
                continue;
            }
            let mut class = byte_classes(v.kind, v.records, &v.marks, v.size, pos);
            let selected = v.range.is_some_and(|(a, b)| pos >= a && pos < b);
            if selected {
                class.push_str(" sel");
            }
            if pos == v.cursor {
                class.push_str(" cursor");
            }
            let _ = write!(out, r#"<span role="gridcell" id="hex-b-{pos}" aria-selected="{selected}" class="{class}" data-pos="{pos}">"#);
            match byte(pos) {
                Some(b) => {
                    let _ = write!(out, "{b:02X}");
                }
                None => out.push_str("··"),
            }
            out.push_str("</span>");
        }
        out.push_str(r#"<span class="ascii" aria-hidden="true">"#);
        for p in (row * BYTES_PER_ROW..(row + 1) * BYTES_PER_ROW).filter(|p| *p < v.size) {
            let c = byte(p).map_or('·', |b| if b.is_ascii_graphic() { char::from(b) } else { '.' });
            escape_text(c, &mut out);
        }
        out.push_str("</span></div>");
    }
    out
}

/// Bytes fetched for the visible rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Window {
    /// Absolute position of `bytes[0]`.
    pub start: u64,
    /// The bytes.
    pub bytes: Vec<u8>,
}

impl Window {
    /// The bytes `start..end`, when all are in the window.
    #[must_use]
    pub fn slice(&self, start: u64, end: u64) -> Option<&[u8]> {
        let a = usize::try_from(start.checked_sub(self.start)?).ok()?;
        let b = usize::try_from(end.checked_sub(self.start)?).ok()?;
        self.bytes.get(a..b)
    }
}

fn crc(bytes: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(bytes);
    h.finalize()
}

/// Hover text: the field, its owner and its decoded value when its bytes are in the window.
#[must_use]
pub fn describe(l: &Located, window: &Window) -> String {
    let owner = match l.owner {
        Owner::Header => "header".to_string(),
        Owner::Record(o) => format!("record {o}"),
        Owner::Entry(n) => format!("entry {n}"),
    };
    let at = format!("{owner}, bytes {}..{}", l.start, l.end);
    let Some(raw) = window.slice(l.start, l.end) else { return format!("{} ({at})", l.field.name) };
    let num = |b: &[u8]| b.iter().fold(0u64, |acc, x| (acc << 8) | u64::from(*x));
    let value = match (l.field.name, l.field.class) {
        (_, FieldClass::Payload) => format!("{} bytes", l.end - l.start),
        (_, FieldClass::Magic) => format!("{:02X?} \"{}\"", raw, String::from_utf8_lossy(raw)),
        ("header_crc", _) if matches!(l.owner, Owner::Record(_)) => {
            // A record's header_crc covers its bytes before it.
            let computed = window.slice(l.start.saturating_sub(RECORD_HEADER_CRC_AT as u64), l.start).map(crc);
            format!("stored {:08X}, computed {}", num(raw), computed.map_or("(needs bytes above)".into(), |c| format!("{c:08X}")))
        }
        ("header_crc", _) => {
            let computed = window.slice(l.start.saturating_sub(SEGMENT_HEADER_CRC_AT as u64), l.start).map(crc);
            format!("stored {:08X}, computed {}", num(raw), computed.map_or("(needs bytes above)".into(), |c| format!("{c:08X}")))
        }
        (_, FieldClass::Crc) => format!("stored {:08X}", num(raw)),
        _ => num(raw).to_string(),
    };
    format!("{} = {value} ({at})", l.field.name)
}

/// What a jump box entry asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jump {
    /// This byte range (a byte, or a listed record).
    Range(u64, u64),
    /// The record with this offset, past the listed rows: the page reads
    /// the file near it (`model::window`, [`super::window::Want::Offset`]).
    Offset(u64),
    /// The first record at or after this time (microseconds), past the
    /// listed rows: the page reads on from their end
    /// ([`super::window::Want::Time`]).
    Time(u64),
}

/// Why a jump box entry goes nowhere: what was not understood, or not found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JumpError {
    /// Nothing typed.
    Empty,
    /// `@…` followed by what is not a number (the whole entry, as typed).
    NotAnOffset(String),
    /// A record offset in a file that holds no intact record.
    NoRecords {
        /// The offset asked for.
        offset: u64,
    },
    /// A record offset below the file's first one.
    BeforeFirst {
        /// The offset asked for.
        offset: u64,
        /// The file's first intact record's offset.
        first: u64,
    },
    /// `@-1`: a negative record offset (the whole entry, as typed).
    NegativeOffset(String),
    /// `time` with nothing after it.
    NoTimeGiven,
    /// A record offset past the file's last one.
    PastLast {
        /// The offset asked for.
        offset: u64,
        /// The file's last intact record's offset.
        last: u64,
    },
    /// A record offset within the file's range that no record carries (lost to damage).
    NotFound(u64),
    /// `0x…` followed by what is not hex (the text, as typed).
    NotHex(String),
    /// Neither a number, `0x…` nor `@…` (the text, as typed).
    NotAPosition(String),
    /// `time …` followed by what is not a time (the text, as typed, and why:
    /// the codec's [`TimeError`]).
    NotATime(String, TimeError),
    /// A time in a file that holds no intact record.
    NoTimes {
        /// The time asked for.
        at: u64,
    },
    /// A time past every intact record's timestamp: no record is at or after it.
    PastEveryRecord {
        /// The time asked for.
        at: u64,
        /// The greatest timestamp of the file's intact records.
        latest: u64,
    },
    /// A time no listed record reaches, in a file whose rows are all listed
    /// (a report that does not match its rows).
    NoRecordAtOrAfter(u64),
    /// A byte position past the file's end.
    PastEnd {
        /// The position asked for.
        pos: u64,
        /// The file's size.
        size: u64,
    },
}

/// Characters of a jump box entry an error quotes (then `…`): a written
/// time is at most 32, and a pasted page of text stays one sentence; a
/// time's error still names its character by number.
const ECHO_CHARS: usize = 64;

impl std::fmt::Display for JumpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let quote = |t: &str| quote(&short(t, ECHO_CHARS));
        match self {
            Self::Empty => write!(f, "type a byte position (1234 or 0x4d2), a record offset (@60) or a time (2026-11-01T09:00:15Z)"),
            Self::NotAnOffset(t) => write!(f, "{} is not a record offset (try @60)", quote(t)),
            Self::NoRecords { offset } => write!(f, "no such offset {offset}: the file holds no intact record"),
            Self::PastLast { offset, last } => write!(f, "no such offset {offset} in this file (its last is {last})"),
            Self::BeforeFirst { offset, first } => write!(f, "no such offset {offset} in this file (its first is {first})"),
            Self::NegativeOffset(t) => write!(f, "{} names no record: record offsets start at 0 (try @60)", quote(t)),
            Self::NoTimeGiven => write!(f, "type a time after \"time\" (time 2026-11-01T09:00:15Z, or time @MICROS)"),
            Self::NotFound(offset) => write!(f, "no record with offset {offset} was found in this file"),
            Self::NotHex(t) => write!(f, "{} is not a hex byte position", quote(t)),
            Self::NotAPosition(t) => write!(f, "{} is not a byte position (try 1234, 0x4d2 or @offset)", quote(t)),
            Self::NotATime(t, e) => write!(f, "{} is not a time: {e}", quote(t)),
            Self::NoTimes { at } => write!(f, "no record at or after {}: the file holds no intact record", format_micros(*at)),
            Self::PastEveryRecord { at, latest } => write!(
                f,
                "no record at or after {}: every intact record was written before it (the latest at {})",
                format_micros(*at),
                format_micros(*latest)
            ),
            Self::NoRecordAtOrAfter(at) => write!(f, "no record at or after {} was found", format_micros(*at)),
            Self::PastEnd { pos, size } => write!(f, "byte {pos} is past the end of the file ({size} bytes)"),
        }
    }
}

/// What a jump box entry means: `1234` or `0x4d2` is a byte position;
/// `@42` (or `offset 42`) is the record with that offset, among the listed
/// rows, or past them when the list was cut (`capped`). An offset past
/// `last_offset` (the file's last intact record) names that last one.
/// `time 2026-12-01T14:03:00Z` (or `time @MICROS`; a bare RFC 3339 time
/// too) is the first record at or after that time ([`jump_to_time`]).
///
/// # Errors
/// What was not understood or not found ([`JumpError`]).
pub fn parse_jump(text: &str, file: &JumpFile<'_>) -> Result<Jump, JumpError> {
    let JumpFile { records, capped, first_offset, last_offset, size, .. } = *file;
    let t = text.trim();
    if t.is_empty() {
        return Err(JumpError::Empty);
    }
    // A minus sign before digits is a negative number, not a date.
    if t.strip_prefix('-').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
        return Err(JumpError::NotAPosition(t.to_string()));
    }
    let record = t.strip_prefix('@').or_else(|| t.strip_prefix("offset")).map(str::trim);
    if record.is_some_and(|o| o.strip_prefix('-').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))) {
        return Err(JumpError::NegativeOffset(t.to_string()));
    }
    if let Some(when) = t.strip_prefix("time").map(str::trim).or_else(|| t.contains('-').then_some(t)) {
        if when.is_empty() {
            return Err(JumpError::NoTimeGiven);
        }
        let at = parse_time(when).map_err(|e| JumpError::NotATime(when.to_string(), e))?;
        return jump_to_time(at, file);
    }
    if let Some(o) = record {
        let offset: u64 = o.parse().map_err(|_| JumpError::NotAnOffset(t.to_string()))?;
        if let Some(r) = records.iter().find(|r| r.offset == offset) {
            let (start, end) = r.selection(size);
            return Ok(Jump::Range(start, end));
        }
        return match last_offset {
            None => Err(JumpError::NoRecords { offset }),
            Some(last) if offset > last => Err(JumpError::PastLast { offset, last }),
            Some(_) if first_offset.is_some_and(|first| offset < first) => {
                Err(JumpError::BeforeFirst { offset, first: first_offset.unwrap_or(0) })
            }
            Some(_) if capped => Ok(Jump::Offset(offset)),
            Some(_) => Err(JumpError::NotFound(offset)),
        };
    }
    let pos = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).map_err(|_| JumpError::NotHex(t.to_string()))?,
        None => t.parse().map_err(|_| JumpError::NotAPosition(t.to_string()))?,
    };
    if pos >= size {
        return Err(JumpError::PastEnd { pos, size });
    }
    Ok(Jump::Range(pos, pos + 1))
}

/// What the jump box knows of the file shown.
#[derive(Clone, Copy, Debug)]
pub struct JumpFile<'a> {
    /// The listed rows (the first ones, in file order).
    pub records: &'a Rows,
    /// Whether the file has rows past them.
    pub capped: bool,
    /// The file's first intact record's offset.
    pub first_offset: Option<u64>,
    /// The file's last intact record's offset.
    pub last_offset: Option<u64>,
    /// The span of its intact records' timestamps (its report's `time`).
    pub time: Option<TimeSpan>,
    /// Its size in bytes.
    pub size: u64,
}

/// The record Kafka's rule picks for `at`: the first intact record, in file
/// order, whose timestamp is ≥ `at` (the codec's [`TimeSeek`]; a record
/// below an earlier one's timestamp never hides a later match, a damaged
/// record's timestamp is not believed) — among the listed rows, or past
/// them when the list was cut. Past the file's greatest timestamp there is
/// none, and it says so.
///
/// # Errors
/// No intact record, or none at or after `at` ([`JumpError`]).
pub fn jump_to_time(at: u64, file: &JumpFile<'_>) -> Result<Jump, JumpError> {
    let mut seek = TimeSeek::new(at);
    let listed = file.records.iter().find(|r| r.status == RecordStatus::Intact && seek.record(r.offset, r.timestamp_micros).is_some());
    if let Some(r) = listed {
        let (start, end) = r.selection(file.size);
        return Ok(Jump::Range(start, end));
    }
    match file.time {
        None => Err(JumpError::NoTimes { at }),
        Some(span) if span.max < at => Err(JumpError::PastEveryRecord { at, latest: span.max }),
        Some(_) if file.capped => Ok(Jump::Time(at)),
        Some(_) => Err(JumpError::NoRecordAtOrAfter(at)),
    }
}

/// Why a jump read from the file (`want`) found no row: no record with the
/// offset (lost to damage), or none at or after the time.
#[must_use]
pub fn window_missed(want: Want) -> String {
    match want {
        Want::Offset(o) => JumpError::NotFound(o).to_string(),
        Want::Time { at, .. } => JumpError::NoRecordAtOrAfter(at).to_string(),
        Want::Rows { .. } | Want::Bytes { .. } => "no record was found there".to_string(),
    }
}

/// What a jump read from the file (`want`) looks for, in words.
#[must_use]
pub fn sought(want: Want) -> String {
    match want {
        Want::Offset(o) => format!("offset {o}"),
        Want::Time { at, .. } => format!("the record at or after {}", format_micros(at)),
        Want::Rows { first, .. } => format!("row {first}"),
        Want::Bytes { start, .. } => format!("the record at byte {start}"),
    }
}

/// What a click on byte `pos` selects: its record, its field, or the byte.
#[must_use]
pub fn click_selection(kind: FileKind, records: &Rows, size: u64, pos: u64) -> (u64, u64) {
    if kind == FileKind::Segment && pos >= SEGMENT_HEADER_LEN as u64 {
        let i = records.partition_point(|r| r.position <= pos).checked_sub(1);
        if let Some(r) = i.and_then(|i| records.get(i)).filter(|r| pos < r.end()) {
            return (r.position, r.end().min(size));
        }
    }
    field_at(kind, records, size, pos).map_or((pos, pos + 1), |l| (l.start, l.end))
}

/// The hex cursor after a navigation key: bytes left and right, rows up
/// and down, pages of `page_rows`, the file's ends. Always within the file.
#[must_use]
pub fn move_cursor(pos: u64, nav: Nav, size: u64, page_rows: u64) -> u64 {
    let last = size.saturating_sub(1);
    let page = page_rows.max(1) * BYTES_PER_ROW;
    match nav {
        Nav::Left => pos.saturating_sub(1),
        Nav::Right => pos.saturating_add(1),
        Nav::Up => pos.checked_sub(BYTES_PER_ROW).unwrap_or(pos),
        Nav::Down => pos.checked_add(BYTES_PER_ROW).filter(|p| *p <= last).unwrap_or(pos),
        Nav::PageUp => pos.saturating_sub(page),
        Nav::PageDown => pos.saturating_add(page),
        Nav::Home => 0,
        Nav::End => last,
    }
    .min(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::scan::scan_all;

    #[test]
    fn every_byte_of_the_golden_record_is_labelled_and_described() {
        let mut seg = felix_codec::format::golden::SEGMENT_HEADER.to_vec();
        seg.extend_from_slice(&felix_codec::format::golden::RECORD);
        let s = &scan_all(&[("a.log".into(), seg.clone())])[0];
        let size = seg.len() as u64;
        let names: Vec<&str> =
            (0..size).map(|p| field_at(FileKind::Segment, &s.detail.records, size, p).map_or("-", |l| l.field.name)).collect();
        assert_eq!(&names[..4], ["magic"; 4]);
        assert_eq!(&names[32..36], ["payload_len"; 4]);
        assert_eq!(&names[60..62], ["payload"; 2]);
        let w = Window { start: 0, bytes: seg };
        let l = field_at(FileKind::Segment, &s.detail.records, size, 33).unwrap();
        assert_eq!(describe(&l, &w), "payload_len = 2 (record 7, bytes 32..36)");
        let l = field_at(FileKind::Segment, &s.detail.records, size, 52).unwrap();
        assert_eq!(describe(&l, &w), "header_crc = stored C654DE27, computed C654DE27 (record 7, bytes 52..56)");
    }

    #[test]
    fn jumps_by_byte_or_offset_and_clicks_select_the_record() {
        let files = crate::model::sample::files();
        let s = &scan_all(&files)[0];
        let (recs, size, last) = (&s.detail.records, s.report.size, s.report.last_offset);
        let jump = |t: &str, capped: bool| {
            parse_jump(
                t,
                &JumpFile { records: recs, capped, first_offset: s.report.first_offset, last_offset: last, time: s.report.time, size },
            )
        };
        assert_eq!(jump("0x20", false), Ok(Jump::Range(32, 33)));
        assert_eq!(jump("100", false), Ok(Jump::Range(100, 101)));
        let r = recs.get(3).unwrap();
        assert_eq!(jump("@3", false), Ok(Jump::Range(r.position, r.end())));
        assert_eq!(jump("offset 3", true), Ok(Jump::Range(r.position, r.end())), "a listed record is found in the list");
        let last = last.unwrap();
        assert_eq!(jump("@999", false), Err(JumpError::PastLast { offset: 999, last }));
        assert_eq!(
            jump("@999", true).unwrap_err().to_string(),
            format!("no such offset 999 in this file (its last is {last})"),
            "whatever the list holds"
        );
        // Within the file's offsets but past a cut list: the page reads the file near it.
        let lost = (0..=last).find(|o| recs.iter().all(|r| r.offset != *o));
        if let Some(lost) = lost {
            assert_eq!(jump(&format!("@{lost}"), true), Ok(Jump::Offset(lost)));
            assert_eq!(jump(&format!("@{lost}"), false), Err(JumpError::NotFound(lost)));
            assert_eq!(window_missed(Want::Offset(lost)), format!("no record with offset {lost} was found in this file"));
        }
        let cut = Rows::default();
        let cut_file = |last_offset| JumpFile { records: &cut, capped: true, first_offset: None, last_offset, time: None, size };
        assert_eq!(parse_jump(&format!("@{last}"), &cut_file(Some(last))), Ok(Jump::Offset(last)));
        assert_eq!(parse_jump("@0", &cut_file(None)).unwrap_err().to_string(), "no such offset 0: the file holds no intact record");
        assert_eq!(jump("zz", false), Err(JumpError::NotAPosition("zz".into())));
        assert_eq!(jump("zz", false).unwrap_err().to_string(), "\u{2068}zz\u{2069} is not a byte position (try 1234, 0x4d2 or @offset)");
        assert_eq!(jump("0xzz", false), Err(JumpError::NotHex("0xzz".into())));
        assert_eq!(jump("@x", false), Err(JumpError::NotAnOffset("@x".into())));
        // Nothing, a bare @, a negative number: each in words that name what was typed.
        assert_eq!(jump("  ", false), Err(JumpError::Empty));
        assert_eq!(jump("@", false).unwrap_err().to_string(), "\u{2068}@\u{2069} is not a record offset (try @60)");
        assert_eq!(jump("-1", false), Err(JumpError::NotAPosition("-1".into())));
        assert_eq!(jump("@-1", false).unwrap_err().to_string(), "\u{2068}@-1\u{2069} names no record: record offsets start at 0 (try @60)");
        assert_eq!(
            jump(" time ", false).unwrap_err().to_string(),
            "type a time after \"time\" (time 2026-11-01T09:00:15Z, or time @MICROS)"
        );
        // Below the file's first offset (a later segment's file): named as its last is.
        let first = s.report.first_offset.unwrap();
        let later = JumpFile {
            records: &Rows::default(),
            capped: true,
            first_offset: Some(first + 5),
            last_offset: Some(first + 9),
            time: None,
            size,
        };
        assert_eq!(
            parse_jump(&format!("@{first}"), &later).unwrap_err().to_string(),
            format!("no such offset {first} in this file (its first is {})", first + 5)
        );
        assert_eq!(jump("99999999", false), Err(JumpError::PastEnd { pos: 99_999_999, size }));
        assert!(jump("99999999", false).unwrap_err().to_string().contains("past the end"));
        assert_eq!(click_selection(FileKind::Segment, recs, size, r.position + 30), (r.position, r.end()));
        assert_eq!(click_selection(FileKind::Segment, recs, size, 9), (8, 16), "a header byte selects its field");
    }

    /// A segment whose clock goes back mid-way, a damaged record between:
    /// `(offset, timestamp, rotten)`.
    fn clock_back() -> (Vec<u8>, Vec<(u64, u64, bool)>) {
        use felix_codec::format::record::encode_record;
        use felix_codec::format::segment_header::SegmentHeader;
        let records =
            [(0, 100, false), (1, 500, false), (2, 200, false), (3, 900, true), (4, 300, false), (5, 700, false), (6, 700, false)];
        let mut out = SegmentHeader::new(0, 1).encode().to_vec();
        for (offset, ts, rotten) in records {
            encode_record(offset, ts, b"payload", &mut out).unwrap();
            if rotten {
                *out.last_mut().unwrap() ^= 0xff;
            }
        }
        (out, records.to_vec())
    }

    #[test]
    fn a_time_jumps_to_the_first_record_at_or_after_it_by_kafkas_rule() {
        let (seg, records) = clock_back();
        let s = &scan_all(&[("00000000000000000000.log".into(), seg.clone())])[0];
        let (recs, size) = (&s.detail.records, s.report.size);
        assert_eq!(s.report.time, Some(TimeSpan { first: 100, last: 700, min: 100, max: 700 }), "the rotten record's 900 is not believed");
        let file = |records, capped| JumpFile {
            records,
            capped,
            first_offset: s.report.first_offset,
            last_offset: s.report.last_offset,
            time: s.report.time,
            size,
        };
        let at = |offset: u64| {
            let r = recs.iter().find(|r| r.offset == offset).unwrap();
            Ok(Jump::Range(r.position, r.end()))
        };
        // The answer a linear scan of the intact records in offset order gives.
        for t in 0..=701 {
            let want = records.iter().find(|&&(_, ts, rotten)| !rotten && ts >= t).map(|&(o, ..)| o);
            let got = jump_to_time(t, &file(recs, false));
            match want {
                Some(o) => assert_eq!(got, at(o), "T = {t}"),
                None => assert_eq!(got, Err(JumpError::PastEveryRecord { at: t, latest: 700 }), "T = {t}"),
            }
        }
        assert_eq!(jump_to_time(250, &file(recs, false)), at(1), "500 at offset 1 comes first; 300 at offset 4 does not hide behind it");
        assert_eq!(jump_to_time(800, &file(recs, true)), Err(JumpError::PastEveryRecord { at: 800, latest: 700 }), "even past a cut list");
        // Typed in the box: RFC 3339 (prefixed or bare) or @MICROS.
        assert_eq!(parse_jump("time @250", &file(recs, false)), at(1));
        assert_eq!(parse_jump("time 1970-01-01T00:00:00.000600Z", &file(recs, false)), at(5));
        assert_eq!(parse_jump(" 1970-01-01T00:00:00.0006Z ", &file(recs, false)), at(5));
        assert_eq!(
            parse_jump("time @701", &file(recs, false)).unwrap_err().to_string(),
            "no record at or after 1970-01-01T00:00:00.000701Z: every intact record was written before it (the latest at 1970-01-01T00:00:00.000700Z)"
        );
        let e = parse_jump("time 2026-13-01T00:00:00Z", &file(recs, false)).unwrap_err();
        assert!(matches!(&e, JumpError::NotATime(t, _) if t == "2026-13-01T00:00:00Z"), "{e:?}");
        assert!(e.to_string().starts_with("\u{2068}2026-13-01T00:00:00Z\u{2069} is not a time: character 6"), "{e}");
        // The listed rows cut after offset 2: a time past them is read from the file.
        let cut: Rows = recs.iter().take(3).collect();
        assert_eq!(jump_to_time(250, &file(&cut, true)), at(1));
        assert_eq!(jump_to_time(600, &file(&cut, true)), Ok(Jump::Time(600)));
        assert_eq!(jump_to_time(600, &file(&Rows::default(), false)), Err(JumpError::NoRecordAtOrAfter(600)));
        assert_eq!(window_missed(Want::Time { at: 600, from_row: 3 }), "no record at or after 1970-01-01T00:00:00.000600Z was found");
        assert_eq!(sought(Want::Time { at: 600, from_row: 3 }), "the record at or after 1970-01-01T00:00:00.000600Z");
        let none = JumpFile { records: &Rows::default(), capped: false, first_offset: None, last_offset: None, time: None, size };
        assert_eq!(
            jump_to_time(0, &none).unwrap_err().to_string(),
            "no record at or after 1970-01-01T00:00:00.000000Z: the file holds no intact record"
        );
    }

    /// A pasted 10 KB entry is named by its first characters (the page's
    /// alert, read out whole by a screen reader, stays a sentence), and what
    /// was not understood is still said.
    #[test]
    fn a_long_entry_is_named_by_its_start() {
        let s = &scan_all(&crate::model::sample::files())[1];
        let file = JumpFile {
            records: &s.detail.records,
            capped: false,
            first_offset: s.report.first_offset,
            last_offset: s.report.last_offset,
            time: s.report.time,
            size: s.report.size,
        };
        for (entry, says) in [
            (format!("time {}", "x".repeat(10_000)), "is not a time: character 1 ('x')"),
            (format!("2026-{}", "1".repeat(10_000)), "is not a time: character 8 ('1')"),
            (format!("@{}", "y".repeat(10_000)), "is not a record offset"),
            (format!("0x{}", "g".repeat(10_000)), "is not a hex byte position"),
            ("z".repeat(10_000), "is not a byte position"),
        ] {
            let e = parse_jump(&entry, &file).unwrap_err().to_string();
            assert!(e.len() < 400 && e.contains(says) && e.contains("…\u{2069}"), "{} bytes: {}", e.len(), &e[..e.len().min(300)]);
        }
    }

    #[test]
    fn the_stale_index_entry_carries_its_finding() {
        let scanned = scan_all(&crate::model::sample::files());
        let idx = scanned.iter().find(|s| s.report.path.ends_with("00000000000000000000.index")).unwrap();
        let n = idx.detail.index_entries.len() as u64;
        let last = index_entry_finding(&idx.report.findings, n - 1).map(|f| f.kind.as_str());
        assert_eq!(last, Some("IndexEntryMismatch"));
        assert_eq!(index_entry_finding(&idx.report.findings, 0), None);
        let f = idx.report.findings.iter().find(|f| f.kind == "IndexEntryMismatch").unwrap();
        assert_eq!(index_entry_number(f.position), Some(n - 1));
        assert_eq!(index_entry_number(0), None, "the header is no entry");
        assert_eq!(index_entry_number(IndexEntry::file_position(3) + 1), None, "not an entry's first byte");
    }

    #[test]
    fn the_cursor_stays_in_the_file() {
        assert_eq!(move_cursor(0, Nav::Left, 100, 24), 0);
        assert_eq!(move_cursor(5, Nav::Down, 100, 24), 21);
        assert_eq!(move_cursor(90, Nav::Down, 100, 24), 90, "no row below");
        assert_eq!(move_cursor(5, Nav::Up, 100, 24), 5, "no row above");
        assert_eq!(move_cursor(99, Nav::Right, 100, 24), 99);
        assert_eq!(move_cursor(0, Nav::PageDown, 1000, 24), 384);
        assert_eq!(move_cursor(0, Nav::PageDown, 100, 24), 99);
        assert_eq!(move_cursor(50, Nav::End, 100, 24), 99);
        assert_eq!(move_cursor(50, Nav::Home, 100, 24), 0);
        assert_eq!(move_cursor(0, Nav::End, 0, 24), 0);
        assert_eq!(move_cursor(u64::MAX - 3, Nav::PageDown, u64::MAX, 24), u64::MAX - 1);
    }

    #[test]
    fn index_and_epochs_entries_are_named_from_the_codec_layout() {
        let files = crate::model::sample::files();
        let scanned = scan_all(&files);
        let idx = scanned.iter().find(|s| s.report.kind == FileKind::Index).unwrap();
        let at = IndexEntry::file_position(1);
        let l = field_at(FileKind::Index, &idx.detail.records, idx.report.size, at + 9).unwrap();
        assert_eq!((l.field.name, l.owner, l.start), ("position", Owner::Entry(1), at + 8));
        let ep = scanned.iter().find(|s| s.report.kind == FileKind::Epochs).unwrap();
        let l = field_at(FileKind::Epochs, &Rows::default(), ep.report.size, entry_position(2)).unwrap();
        assert_eq!((l.field.name, l.owner), ("generation", Owner::Entry(2)));
        assert_eq!(field_at(FileKind::Epochs, &Rows::default(), ep.report.size + 8, ep.report.size + 1), None, "a torn entry is no entry");
    }

    #[test]
    fn the_visible_rows_are_one_html_string_with_every_cell_and_the_text_escaped() {
        let mut seg = felix_codec::format::golden::SEGMENT_HEADER.to_vec();
        seg.extend_from_slice(&felix_codec::format::golden::RECORD);
        seg.extend_from_slice(b"<&>\"x");
        let s = &scan_all(&[("a.log".into(), seg.clone())])[0];
        let size = seg.len() as u64;
        let window = Window { start: 0, bytes: seg.clone() };
        let v = VisibleRows {
            kind: FileKind::Segment,
            records: &s.detail.records,
            marks: Marks::of(s),
            size,
            top: 0,
            rows: row_count(size),
            row_px: 20,
            window: &window,
            range: Some((32, 36)),
            cursor: 33,
        };
        let html = rows_html(&v);
        assert!(html.starts_with(r#"<div class="row" role="row" aria-rowindex="1" style="top:0px"><span class="addr" role="rowheader">0000000000</span><span role="gridcell" id="hex-b-0" aria-selected="false" class="f-magic" data-pos="0">46</span>"#), "{html}");
        let class = byte_classes(FileKind::Segment, &s.detail.records, &Marks::of(s), size, 33);
        assert!(class.starts_with("f-length"));
        let cell = format!(r#"<span role="gridcell" id="hex-b-33" aria-selected="true" class="{class} sel cursor" data-pos="33">"#);
        assert!(html.contains(&cell), "{html}");
        assert_eq!(html.matches(r#"role="gridcell""#).count() as u64, size, "one cell a byte");
        assert_eq!(html.matches(r#"<span class="b pad" aria-hidden="true">  </span>"#).count() as u64, row_count(size) * 16 - size);
        assert!(html.contains("&lt;&amp;") && html.ends_with(r#"&gt;"x</span></div>"#), "{html}");
        assert!(!html.contains("<&"), "file bytes never become markup");
        // Bytes not yet fetched show as dots.
        let empty = rows_html(&VisibleRows { window: &Window::default(), rows: 1, ..v });
        assert!(
            empty.contains(r#"data-pos="0">··</span>"#)
                && empty.contains(r#"<span class="ascii" aria-hidden="true">················</span>"#)
        );
    }

    #[test]
    fn damaged_bytes_are_marked() {
        let mut seg = felix_codec::format::segment_header::SegmentHeader::new(7, 2).encode().to_vec();
        seg.extend_from_slice(&felix_codec::format::golden::RECORD_PAYLOAD_DAMAGED);
        let s = &scan_all(&[("a.log".into(), seg.clone())])[0];
        let size = seg.len() as u64;
        assert_eq!(byte_classes(FileKind::Segment, &s.detail.records, &Marks::of(s), size, 61), "f-payload dmg");
        assert_eq!(byte_classes(FileKind::Segment, &s.detail.records, &Marks::of(s), size, 31), "f-meta");
        assert_eq!((row_count(62), row_of(61)), (4, 3));
    }

    /// Issue 18: every other record rotted, more than a file lists: the
    /// records past the listed findings are marked damaged all the same, the
    /// intact ones between them are not, and a listed finding is named.
    #[test]
    fn damage_past_the_listed_findings_is_marked() {
        use felix_codec::format::record::encode_record;
        use felix_codec::read::scan::MAX_FINDINGS_PER_FILE;
        let mut seg = felix_codec::format::segment_header::SegmentHeader::new(0, 1).encode().to_vec();
        let n = (MAX_FINDINGS_PER_FILE as u64 + 1_000) * 2;
        let mut at = Vec::new();
        for o in 0..n {
            at.push(seg.len() as u64);
            encode_record(o, 1, b"payload!", &mut seg).unwrap();
            if o % 2 == 1 {
                *seg.last_mut().unwrap() ^= 1;
            }
        }
        let s = &scan_all(&[("a.log".into(), seg.clone())])[0];
        assert_eq!((s.report.findings.len(), s.report.findings_omitted), (MAX_FINDINGS_PER_FILE, 1_000));
        let size = seg.len() as u64;
        let marks = Marks::of(s);
        let damage = |pos: u64| damage_at(FileKind::Segment, &s.detail.records, &marks, size, pos);
        let (first_rot, last_rot, last_good) = (at[1] + 30, at[at.len() - 1] + 30, at[at.len() - 2] + 30);
        assert!(matches!(damage(first_rot), Some(Damage::Listed(f)) if f.kind == "RecordChecksum"));
        assert_eq!(damage(last_rot), Some(Damage::Unlisted(Some("its payload checksum failed"))));
        assert_eq!(damage(last_good), None);
        assert_eq!(byte_classes(FileKind::Segment, &s.detail.records, &marks, size, last_rot), "f-payload dmg");
        // With nothing left unlisted, only findings mark bytes (as before).
        let all = Marks { omitted: 0, ..marks };
        assert_eq!(damage_at(FileKind::Segment, &s.detail.records, &all, size, last_rot), None);
    }
}
