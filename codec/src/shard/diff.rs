//! Where two replicas of a shard diverge: a pure state machine fed each
//! side's intact records in log order, one record at a time, so whoever owns
//! the IO (the CLI reading two directories, the page slicing two folders)
//! streams both sides in step in bounded memory and gets the same verdict.
//!
//! ```text
//! let mut diff = DiffMachine::new();
//! loop {
//!     match diff.need() {
//!         Need::Record(side) => diff.push(side, next_intact_record_of(side)), // None: that side ended
//!         Need::Nothing => break,
//!     }
//! }
//! let answer = diff.finish(facts_of_a, facts_of_b);
//! ```
//!
//! The machine holds at most one record of each side: the driver feeds the
//! side whose next offset is needed, so memory does not grow with the logs.
//! A record is summarised by its offset, its verified checksum and where it
//! lives — never its payload, so no diff (and no shared diff) can carry one.
//!
//! The rules:
//!
//! | both sides hold offset `o` (intact)  | the same checksum, payload length and publish time: compared and equal; any of them different: divergent (the first is `first_divergent_offset`) |
//! |--------------------------------------|------------------------------------------------|
//! | only one side holds `o`              | not compared: before or after the other's range it is "one side has more", inside it a hole the other side's damage explains |
//! | a side's damage (a finding in a segment file) | blocks the comparison: the diff is never `identical`, the finding is named |
//! | a finding in an index file           | named, but blocks nothing: the diff reads records, not indexes |
//! | a finding in the epochs file         | the file reads as empty: that side has no history to truncate by; blocks nothing |
//!
//! Which findings block is decided by the file a finding is in ([`blocks`]),
//! never by its kind's name: `Truncated` is met in all three files.
//!
//! Each side's truncation point is the leader-epoch rule
//! ([`crate::format::epochs::truncation_point`]) with that side as the follower and
//! the other as the leader.
//!
//! # Example
//!
//! ```
//! use felix_codec::shard::diff::{DiffMachine, Need, RecordSummary, Side, SideFacts};
//! let rec = |offset, checksum| RecordSummary { offset, checksum, segment_id: 0, position: 32 + offset * 30, payload_len: 2, timestamp_micros: 1 };
//! let a = [rec(0, 7), rec(1, 8), rec(2, 9)];
//! let b = [rec(0, 7), rec(1, 5)];
//! let (mut ia, mut ib) = (a.iter().copied(), b.iter().copied());
//! let mut diff = DiffMachine::new();
//! while let Need::Record(side) = diff.need() {
//!     let next = match side { Side::A => ia.next(), Side::B => ib.next() };
//!     diff.push(side, next);
//! }
//! let d = diff.finish(SideFacts::new("a"), SideFacts::new("b"));
//! assert_eq!(d.first_divergent_offset, Some(1));
//! assert!(!d.identical);
//! assert_eq!(d.a.next_offset, 3);
//! ```

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;

use crate::doc::report::{offsets_words, one_line, FileReport};
use crate::doc::text::span_words;
use crate::format::epochs::{end_of_generation, truncation_point, Epoch};
use crate::format::file_name::{classify, segment_file_name, EntryName, FileKind};
use crate::format::shard_name::parse_dir_name;
use crate::read::time::TimeSpan;
use crate::shard::recovery::RemainingFinding;

/// Version of the diff's JSON shape.
pub const DIFF_VERSION: u32 = 1;

/// Most findings a diff names per side; past it they are counted.
pub const MAX_DIFF_FINDINGS: usize = 1_000;

/// Most notes a diff keeps.
pub const MAX_NOTES: usize = 16;

/// Most lost ranges a diff names per side; past it a note counts them.
pub const MAX_LOST_RANGES: usize = 1_000;

/// One replica of the two.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// The first replica given.
    A,
    /// The second replica given.
    B,
}

/// What the machine wants next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// The next intact record of this side (or `None`: it ended).
    Record(Side),
    /// Both sides ended: call [`DiffMachine::finish`].
    Nothing,
}

/// One intact record (both checksums verified), as the diff sees it: never
/// its payload.
///
/// ```
/// use felix_codec::shard::diff::RecordSummary;
/// let r = RecordSummary { offset: 5, checksum: 0x2402_152C, segment_id: 0, position: 32, payload_len: 2, timestamp_micros: 9 };
/// assert_eq!(r.checksum, 0x2402_152C);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RecordSummary {
    /// Its offset.
    pub offset: u64,
    /// Its verified payload checksum (CRC-32C over header fields and payload).
    pub checksum: u32,
    /// The segment holding it.
    pub segment_id: u64,
    /// Its first byte in that segment.
    pub position: u64,
    /// Its payload's length.
    pub payload_len: u32,
    /// Its publish time.
    pub timestamp_micros: u64,
}

impl RecordSummary {
    /// Whether `other` (at the same offset) is the same record as far as the
    /// diff can tell: the same verified checksum, payload length and publish
    /// time. The checksum covers the other two, but it is 32 bits of CRC: a
    /// record rewritten under a matching checksum (forged, or rot that
    /// happened to verify) still shows in the header fields it covers.
    ///
    /// ```
    /// use felix_codec::shard::diff::RecordSummary;
    /// let a = RecordSummary { offset: 5, checksum: 7, segment_id: 0, position: 32, payload_len: 2, timestamp_micros: 9 };
    /// let moved = RecordSummary { segment_id: 4, position: 900, ..a };
    /// assert!(a.same_record(&moved), "where a record lives is not what it is");
    /// assert!(!a.same_record(&RecordSummary { timestamp_micros: 10, ..a }));
    /// ```
    #[must_use]
    pub fn same_record(&self, other: &Self) -> bool {
        self.offset == other.offset
            && self.checksum == other.checksum
            && self.payload_len == other.payload_len
            && self.timestamp_micros == other.timestamp_micros
    }

    /// From a scanner's record item.
    ///
    /// ```
    /// use felix_codec::shard::diff::RecordSummary;
    /// use felix_codec::format::record::RecordHeader;
    /// use felix_codec::read::scan::{RecordItem, RecordStatus};
    /// let header = RecordHeader { payload_len: 2, offset: 7, timestamp_micros: 9, header_crc: 1, checksum: 2 };
    /// let item = RecordItem { position: 32, header, status: RecordStatus::Intact };
    /// assert_eq!(RecordSummary::of(3, &item).offset, 7);
    /// ```
    #[must_use]
    pub fn of(segment_id: u64, item: &crate::read::scan::RecordItem) -> Self {
        Self {
            offset: item.header.offset,
            checksum: item.header.checksum,
            segment_id,
            position: item.position,
            payload_len: item.header.payload_len,
            timestamp_micros: item.header.timestamp_micros,
        }
    }
}

/// What the machine counts of one side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Track {
    first: Option<u64>,
    last: Option<u64>,
    records: u64,
    /// Records whose offset did not follow the previous one (never compared).
    unordered: u64,
    ended: bool,
}

impl Track {
    /// Whether `r` continues this side's log (strictly after the last offset).
    fn accept(&mut self, r: &RecordSummary) -> bool {
        if self.last.is_some_and(|l| r.offset <= l) {
            self.unordered = self.unordered.saturating_add(1);
            return false;
        }
        self.first.get_or_insert(r.offset);
        self.last = Some(r.offset);
        self.records = self.records.saturating_add(1);
        true
    }
}

/// The diff in progress: feed it with [`DiffMachine::push`] as
/// [`DiffMachine::need`] asks.
#[derive(Clone, Debug, Default)]
pub struct DiffMachine {
    a: Track,
    b: Track,
    head_a: Option<RecordSummary>,
    head_b: Option<RecordSummary>,
    compared: u64,
    divergent: u64,
    first: Option<(RecordSummary, RecordSummary)>,
    /// Offsets A lacks inside its own range that B holds intact (with B's record at the first), then the ranges past the cap.
    lost_a: LostRanges,
    /// The same for B.
    lost_b: LostRanges,
    /// The timestamps of A's divergent records, in offset order.
    times_a: Option<TimeSpan>,
    /// The timestamps of B's divergent records.
    times_b: Option<TimeSpan>,
}

/// Offset ranges one side lost, each with the other side's record at its
/// first offset; at most [`MAX_LOST_RANGES`], the rest counted.
#[derive(Clone, Debug, Default)]
struct LostRanges {
    ranges: Vec<(OffsetRange, RecordSummary)>,
    omitted: u64,
}

impl LostRanges {
    /// `held` (the other side's intact record) is at an offset this side lacks.
    fn add(&mut self, held: RecordSummary) {
        if let Some((r, _)) = self.ranges.last_mut() {
            if r.to == held.offset {
                r.to = r.to.saturating_add(1);
                return;
            }
        }
        if self.ranges.len() < MAX_LOST_RANGES {
            self.ranges.push((OffsetRange { from: held.offset, to: held.offset.saturating_add(1) }, held));
        } else {
            self.omitted = self.omitted.saturating_add(1);
        }
    }

    fn into_report(self) -> (Vec<Lost>, u64) {
        (self.ranges.into_iter().map(|(range, r)| Lost { range, held_at: RecordRef::of(&r) }).collect(), self.omitted)
    }
}

impl DiffMachine {
    /// A diff of two logs, nothing seen yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Which side's next record is wanted.
    #[must_use]
    pub fn need(&self) -> Need {
        if self.head_a.is_none() && !self.a.ended {
            Need::Record(Side::A)
        } else if self.head_b.is_none() && !self.b.ended {
            Need::Record(Side::B)
        } else {
            Need::Nothing
        }
    }

    /// The next intact record of `side`, in log order; `None` when that side
    /// has no more. A record whose offset does not follow the side's last one
    /// is counted and skipped (its damage is a finding of that side). Pushing
    /// to a side that ended, or one the machine did not ask for, is harmless:
    /// a record pushed while one is held is compared first.
    pub fn push(&mut self, side: Side, record: Option<RecordSummary>) {
        let (track, head) = match side {
            Side::A => (&mut self.a, &mut self.head_a),
            Side::B => (&mut self.b, &mut self.head_b),
        };
        match record {
            None => track.ended = true,
            Some(r) if !track.ended => {
                if head.is_some() {
                    // Not asked for: settle what is held first, keeping at most one per side.
                    self.settle(true);
                    let (track, head) = match side {
                        Side::A => (&mut self.a, &mut self.head_a),
                        Side::B => (&mut self.b, &mut self.head_b),
                    };
                    if track.accept(&r) {
                        *head = Some(r);
                    }
                } else if track.accept(&r) {
                    *head = Some(r);
                }
            }
            Some(_) => {}
        }
        self.settle(false);
    }

    /// Compares or retires held records while the order allows. With
    /// `force`, retires the lower one even when the other side may still
    /// bring its match (used only when a side pushed past its turn).
    fn settle(&mut self, force: bool) {
        loop {
            match (self.head_a, self.head_b) {
                (Some(a), Some(b)) if a.offset == b.offset => {
                    self.compared = self.compared.saturating_add(1);
                    if !a.same_record(&b) {
                        self.divergent = self.divergent.saturating_add(1);
                        if self.first.is_none() {
                            self.first = Some((a, b));
                        }
                        TimeSpan::extend(&mut self.times_a, a.timestamp_micros);
                        TimeSpan::extend(&mut self.times_b, b.timestamp_micros);
                    }
                    self.head_a = None;
                    self.head_b = None;
                }
                (Some(a), Some(b)) => {
                    // The lower offset is one the other side lacks: inside its
                    // range (it holds an earlier record too) it was lost there.
                    if a.offset < b.offset {
                        if self.b.first.is_some_and(|f| f < a.offset) {
                            self.lost_b.add(a);
                        }
                        self.head_a = None;
                    } else {
                        if self.a.first.is_some_and(|f| f < b.offset) {
                            self.lost_a.add(b);
                        }
                        self.head_b = None;
                    }
                }
                (Some(_), None) if self.b.ended || force => self.head_a = None,
                (None, Some(_)) if self.a.ended || force => self.head_b = None,
                _ => return,
            }
            if force {
                return;
            }
        }
    }

    /// The verdict, with what each side's inspection found and its epochs.
    #[must_use]
    pub fn finish(mut self, a: SideFacts, b: SideFacts) -> Diff {
        self.a.ended = true;
        self.b.ended = true;
        self.settle(false);
        let mut notes = Vec::new();
        self.note_alone_at_max(&mut notes);
        let different_shards = different_shards(&a.dir_name(), &b.dir_name());
        let side_a = SideReport::new(a, self.a);
        let side_b = SideReport::new(b, self.b);
        let common = match (side_a.first_offset, side_b.first_offset) {
            (Some(fa), Some(fb)) => {
                let from = fa.max(fb);
                let to = side_a.next_offset.min(side_b.next_offset);
                (from < to).then_some(OffsetRange { from, to })
            }
            _ => None,
        };
        let only_a = only(&side_a, &side_b, common);
        let only_b = only(&side_b, &side_a, common);
        let divergence = self.first.map(|(ra, rb)| Divergence { offset: ra.offset, a: RecordRef::of(&ra), b: RecordRef::of(&rb) });
        let first_divergent_offset = divergence.as_ref().map(|d| d.offset);
        let divergent_time = self.times_a.zip(self.times_b).map(|(a, b)| DivergentTime { a, b });
        let (truncate_a_to, truncate_b_to) = match &different_shards {
            Some(d) => {
                push_note(&mut notes, d.warning());
                (None, None)
            }
            None => truncations(&side_a, &side_b, first_divergent_offset, &mut notes),
        };
        for (name, s) in [("A", &side_a), ("B", &side_b)] {
            if s.unordered_records > 0 {
                push_note(&mut notes, format!("{name}: {} intact records out of offset order were not compared", s.unordered_records));
            }
        }
        let (lost_a, omitted_a) = self.lost_a.into_report();
        let (lost_b, omitted_b) = self.lost_b.into_report();
        for (name, omitted) in [("A", omitted_a), ("B", omitted_b)] {
            if omitted > 0 {
                push_note(
                    &mut notes,
                    format!("{name} lost {omitted} more offsets the other holds, in ranges past the {MAX_LOST_RANGES} listed"),
                );
            }
        }
        let identical = divergence.is_none()
            && only_a.is_empty()
            && only_b.is_empty()
            && self.compared == side_a.records
            && self.compared == side_b.records
            && !side_a.blocked
            && !side_b.blocked
            && different_shards.is_none();
        Diff {
            diff_version: DIFF_VERSION,
            identical,
            first_divergent_offset,
            divergence,
            common_range: common,
            compared_records: self.compared,
            divergent_records: self.divergent,
            only_a,
            only_b,
            a: side_a,
            b: side_b,
            truncate_a_to,
            truncate_b_to,
            notes,
            different_shards,
            lost_a,
            lost_b,
            divergent_time,
        }
    }

    /// A range ends one past its last offset, so none can hold u64::MAX: a
    /// side that alone holds a record there is named in a note.
    fn note_alone_at_max(&self, notes: &mut Vec<String>) {
        let alone_at_max = [("A", self.a.last, self.b.last), ("B", self.b.last, self.a.last)]
            .into_iter()
            .filter(|(_, this, other)| *this == Some(u64::MAX) && *other != Some(u64::MAX))
            .map(|(name, ..)| name);
        for name in alone_at_max {
            push_note(
                notes,
                format!(
                    "{name} alone holds offset {} (the last offset there can be, which no range above can name: a range ends one past its last offset)",
                    u64::MAX
                ),
            );
        }
    }
}

/// Each side's truncation as the other's follower (the leader-epoch rule),
/// with a note when a side keeps an offset whose records differ.
fn truncations(a: &SideReport, b: &SideReport, first_divergent: Option<u64>, notes: &mut Vec<String>) -> (Option<u64>, Option<u64>) {
    let truncate_a_to = follower_truncation(a, b, "A", "B", notes);
    let truncate_b_to = follower_truncation(b, a, "B", "A", notes);
    if let Some(d) = first_divergent {
        for (name, t) in [("A", truncate_a_to), ("B", truncate_b_to)] {
            if t.is_some_and(|t| t > d) {
                push_note(
                    notes,
                    format!(
                        "{name} keeps offset {d} under the epochs rule, yet the records at {d} differ: both sides wrote it in generations \
                         the epochs do not tell apart (two leaders at once, or epochs lost)"
                    ),
                );
            }
        }
    }
    (truncate_a_to, truncate_b_to)
}

fn push_note(notes: &mut Vec<String>, note: String) {
    if notes.len() < MAX_NOTES {
        notes.push(note);
    }
}

/// The offsets `this` holds outside the common range (before and after).
fn only(this: &SideReport, other: &SideReport, common: Option<OffsetRange>) -> Vec<OffsetRange> {
    let Some(first) = this.first_offset else { return Vec::new() };
    let next = this.next_offset;
    let Some(common) = common else {
        // Nothing in common: all of this side is its own (when the other has records, or not).
        let _ = other;
        // Empty when the side's one record is at u64::MAX (a note names it).
        return if first < next { alloc::vec![OffsetRange { from: first, to: next }] } else { Vec::new() };
    };
    let mut out = Vec::new();
    if first < common.from {
        out.push(OffsetRange { from: first, to: common.from });
    }
    if next > common.to {
        out.push(OffsetRange { from: common.to, to: next });
    }
    out
}

/// Where `follower` would cut, asking `leader` where its latest generation ends.
fn follower_truncation(follower: &SideReport, leader: &SideReport, f: &str, l: &str, notes: &mut Vec<String>) -> Option<u64> {
    let to_epoch = |e: &[u64; 2]| Epoch { generation: e[0], start_offset: e[1] };
    let local: Vec<Epoch> = follower.epochs.iter().map(to_epoch).collect();
    let theirs: Vec<Epoch> = leader.epochs.iter().map(to_epoch).collect();
    let Some(latest) = local.last() else {
        push_note(notes, format!("{f} has no epochs: the divergence rule cannot place its truncation as a follower of {l}"));
        return None;
    };
    let Some((known, leader_end)) = end_of_generation(&theirs, leader.next_offset, latest.generation) else {
        push_note(
            notes,
            format!(
                "{l} knows no generation at or below {f}'s latest ({}): the divergence rule gives {f} no truncation point",
                latest.generation
            ),
        );
        return None;
    };
    let point = truncation_point(&local, follower.next_offset, known, leader_end);
    if known != latest.generation {
        push_note(
            notes,
            format!(
                "{l} never had {f}'s latest generation {}: {point} is the leader-epoch rule's answer (from {l}'s generation {known}); \
                 a leader that answers only for generations it has (the broker's generation_end) refuses {f} instead",
                latest.generation
            ),
        );
    }
    Some(point)
}

/// What the caller knows of one side besides its records: its path, its
/// inspection's findings and its epochs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SideFacts {
    /// The shard directory as shown.
    pub path: String,
    /// Its epochs (empty when the file is missing or damaged).
    pub epochs: Vec<Epoch>,
    /// Every finding of its inspection, with the file (name) it is in.
    pub findings: Vec<RemainingFinding>,
    /// Findings its inspection counted past its per-file limit.
    pub findings_omitted: u64,
    /// The next offset when the log holds no intact record (the newest
    /// segment's base offset), when known.
    pub empty_next_offset: Option<u64>,
    /// The shard directory's own name, as resolved (`None`: the last
    /// component of `path`). Whether two sides are one shard is judged by it
    /// ([`different_shards`]).
    pub shard_dir: Option<String>,
}

impl SideFacts {
    /// A side with nothing known but its path.
    #[must_use]
    pub fn new(path: &str) -> Self {
        Self { path: path.into(), ..Self::default() }
    }

    /// The shard directory's name: [`SideFacts::shard_dir`], else the last
    /// component of the path.
    #[must_use]
    pub fn dir_name(&self) -> String {
        if let Some(d) = &self.shard_dir {
            return d.clone();
        }
        let trimmed = self.path.trim_end_matches(['/', '\\']);
        trimmed.rsplit(['/', '\\']).next().unwrap_or(trimmed).into()
    }

    /// What a shard's inspection says of it: every finding (with its file's
    /// name), the epochs (as the report reads them: empty when damaged), and
    /// the newest segment's base offset. The CLI and the page both build a
    /// side this way from the one report model.
    ///
    /// ```
    /// use felix_codec::shard::diff::SideFacts;
    /// use felix_codec::format::file_name::FileKind;
    /// use felix_codec::doc::report::FileReport;
    /// let mut epochs = FileReport::new("s/epochs".into(), FileKind::Epochs, 44);
    /// epochs.entries = Some(vec![[1, 0], [3, 100]]);
    /// let side = SideFacts::from_reports("s", &[epochs]);
    /// assert_eq!(side.epochs.len(), 2);
    /// ```
    #[must_use]
    pub fn from_reports(path: &str, reports: &[FileReport]) -> Self {
        let mut side = Self::new(path);
        let mut newest: Option<(u64, u64)> = None;
        for r in reports {
            let name = r.path.rsplit(['/', '\\']).next().unwrap_or(&r.path);
            for f in &r.findings {
                side.findings.push(RemainingFinding { file: name.into(), finding: f.clone() });
            }
            side.findings_omitted = side.findings_omitted.saturating_add(r.findings_omitted);
            match r.kind {
                FileKind::Epochs if classify(name) == EntryName::Epochs => {
                    let entries = r.entries.as_deref().unwrap_or(&[]);
                    side.epochs = entries.iter().map(|[g, s]| Epoch { generation: *g, start_offset: *s }).collect();
                }
                FileKind::Segment => {
                    if let (Some(id), Some(base)) = (r.segment_id, r.base_offset) {
                        if newest.is_none_or(|(n, _)| id > n) {
                            newest = Some((id, base));
                        }
                    }
                }
                _ => {}
            }
        }
        side.empty_next_offset = newest.map(|(_, base)| base);
        side
    }
}

/// `[from, to)` of offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OffsetRange {
    /// First offset.
    pub from: u64,
    /// One past the last offset.
    pub to: u64,
}

impl OffsetRange {
    /// The range in the words every verdict uses ([`offsets_words`]: its
    /// last offset included — "offsets 10..=12", "offset 30"), so `diff`,
    /// `inspect` and the page name the same offsets the same way; "no
    /// offsets" when it is empty.
    ///
    /// ```
    /// use felix_codec::shard::diff::OffsetRange;
    /// assert_eq!(OffsetRange { from: 10, to: 13 }.words(), "offsets 10..=12");
    /// assert_eq!(OffsetRange { from: 30, to: 31 }.words(), "offset 30");
    /// assert_eq!(OffsetRange { from: 5, to: 5 }.words(), "no offsets");
    /// ```
    #[must_use]
    pub fn words(&self) -> String {
        if self.to <= self.from {
            return "no offsets".into();
        }
        offsets_words(self.from, self.to - 1)
    }
}

/// One record at the first divergence: where it is and its header's
/// values, never its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RecordRef {
    /// The segment file's name.
    pub file: String,
    /// The record's first byte in it.
    pub position: u64,
    /// Payload length in bytes.
    pub payload_len: u32,
    /// Publish time.
    pub timestamp_micros: u64,
    /// Its verified checksum, 8 upper-case hex digits.
    pub checksum: String,
}

impl RecordRef {
    fn of(r: &RecordSummary) -> Self {
        Self {
            file: segment_file_name(r.segment_id),
            position: r.position,
            payload_len: r.payload_len,
            timestamp_micros: r.timestamp_micros,
            checksum: format!("{:08X}", r.checksum),
        }
    }
}

/// The first offset both sides hold with different records.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Divergence {
    /// The offset.
    pub offset: u64,
    /// A's record there.
    pub a: RecordRef,
    /// B's record there.
    pub b: RecordRef,
}

/// Two replicas that are not of one shard, judged by their directories'
/// names (`tenant_namespace_stream_shard-HASH`, [`crate::format::shard_name`]): the
/// readable names differ, or the keys (the hash of the exact key) do. Only
/// two names of the shard-name form are judged; a folder named otherwise
/// (a copy under `replica-a/`) says nothing either way.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DifferentShards {
    /// A's shard directory name, as judged.
    pub a_dir: String,
    /// B's shard directory name, as judged.
    pub b_dir: String,
    /// The readable names (`acme_default_orders_0`) differ.
    pub names_differ: bool,
    /// The keys differ as written (the 16 hex digits after the name: FNV-1a
    /// 64 of the exact key). The broker writes them in lower case, so two
    /// names whose digits differ only in case are two folders, of which at
    /// most one is a folder the broker opens.
    pub keys_differ: bool,
}

impl DifferentShards {
    /// The warning, in words: what the CLI prints, the page shows first and
    /// the diff's notes hold.
    ///
    /// ```
    /// use felix_codec::shard::diff::different_shards;
    /// let d = different_shards("acme_default_orders_0-0d3aed4b998d2798", "acme_default_payments_0-feaf85568f3eb5b0").unwrap();
    /// assert!(d.warning().starts_with("A and B are different shards"));
    /// ```
    #[must_use]
    pub fn warning(&self) -> String {
        let what = match (self.names_differ, self.keys_differ, self.key_case_only()) {
            (true, true, _) => "their shard names and keys differ",
            (true, false, _) => "their shard names differ (the same key: a folder renamed?)",
            (false, _, true) => "their keys differ in case only: the broker writes lower case, so at most one of them is a folder it opens",
            _ => "their keys differ (the same readable name of two different keys)",
        };
        format!(
            "A and B are different shards: A is {}, B is {} ({what}); their records share offsets, not a log: \
             neither is the other's replica, so do not truncate either to match the other",
            one_line(&self.a_dir),
            one_line(&self.b_dir)
        )
    }
}

impl DifferentShards {
    /// The two keys are one number written in different case.
    fn key_case_only(&self) -> bool {
        let key = |dir: &str| parse_dir_name(dir).map(|(_, k)| k);
        self.keys_differ && key(&self.a_dir) == key(&self.b_dir)
    }
}

/// Whether the shard directories named `a` and `b` hold different shards
/// (`None`: the same shard, or a name not of the shard-name form, which
/// cannot tell). One judge for the CLI and the page.
///
/// ```
/// use felix_codec::shard::diff::different_shards;
/// let orders = "acme_default_orders_0-0d3aed4b998d2798";
/// assert!(different_shards(orders, orders).is_none());
/// assert!(different_shards(orders, "replica-b").is_none(), "a name that is no shard name cannot tell");
/// let d = different_shards(orders, "acme_default_payments_0-feaf85568f3eb5b0").unwrap();
/// assert!(d.names_differ && d.keys_differ);
/// let upper = different_shards(orders, "acme_default_orders_0-0D3AED4B998D2798").unwrap();
/// assert!(upper.warning().contains("differ in case only"), "the broker never writes upper case");
/// ```
#[must_use]
pub fn different_shards(a: &str, b: &str) -> Option<DifferentShards> {
    let (name_a, _) = parse_dir_name(a)?;
    let (name_b, _) = parse_dir_name(b)?;
    // The digits as written: `…-0D3A…` is not the folder `…-0d3a…` names.
    let digits = |dir: &str| dir.rsplit_once('-').map(|(_, hex)| String::from(hex));
    let (names_differ, keys_differ) = (name_a != name_b, digits(a) != digits(b));
    (names_differ || keys_differ).then(|| DifferentShards { a_dir: a.into(), b_dir: b.into(), names_differ, keys_differ })
}

/// When each side's divergent records were written (the records both sides
/// hold at one offset with different checksums): each side's span of their
/// timestamps, in offset order — `first` is the first divergent record's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DivergentTime {
    /// A's divergent records.
    pub a: TimeSpan,
    /// B's divergent records.
    pub b: TimeSpan,
}

/// Offsets one side lacks inside its own range (it holds records before
/// them) that the other side holds intact: lost there, to be fetched from
/// the other.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Lost {
    /// The offsets.
    pub range: OffsetRange,
    /// The other side's intact record at `range.from`.
    pub held_at: RecordRef,
}

/// One side of a diff.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SideReport {
    /// The shard directory as shown.
    pub path: String,
    /// Its first intact record's offset (`null`: none).
    pub first_offset: Option<u64>,
    /// One past its last intact record (the newest segment's base offset when it holds none).
    pub next_offset: u64,
    /// Intact records in offset order.
    pub records: u64,
    /// Intact records out of offset order (not compared).
    pub unordered_records: u64,
    /// `[[generation, start_offset], …]`.
    pub epochs: Vec<[u64; 2]>,
    /// Whether its damage blocks the comparison (a segment finding).
    pub blocked: bool,
    /// Its inspection's findings, each with its file.
    pub findings: Vec<RemainingFinding>,
    /// Findings past [`MAX_DIFF_FINDINGS`] (or the inspection's own limit), counted only.
    pub findings_omitted: u64,
}

impl SideReport {
    fn new(facts: SideFacts, track: Track) -> Self {
        let blocked = facts.findings.iter().any(blocks) || track.unordered > 0;
        let total = facts.findings.len();
        let mut findings = facts.findings;
        findings.truncate(MAX_DIFF_FINDINGS);
        let omitted = facts.findings_omitted.saturating_add(total.saturating_sub(findings.len()) as u64);
        let next_offset = track.last.map_or(facts.empty_next_offset.unwrap_or(0), |l| l.saturating_add(1));
        Self {
            path: facts.path,
            first_offset: track.first,
            next_offset,
            records: track.records,
            unordered_records: track.unordered,
            epochs: facts.epochs.iter().map(|e| [e.generation, e.start_offset]).collect(),
            blocked,
            findings,
            findings_omitted: omitted,
        }
    }
}

/// The answer: what `felix-storage diff --json` prints (see
/// `docs/report-format.md`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Diff {
    /// [`DIFF_VERSION`].
    pub diff_version: u32,
    /// Same records over the common range, neither side holds more, and no
    /// damage blocks the comparison.
    pub identical: bool,
    /// The first offset both sides hold with different checksums.
    pub first_divergent_offset: Option<u64>,
    /// Both records at that offset.
    pub divergence: Option<Divergence>,
    /// Offsets both sides hold a record for (`null`: none in common).
    pub common_range: Option<OffsetRange>,
    /// Offsets both sides held intact, compared.
    pub compared_records: u64,
    /// Of those, how many differ.
    pub divergent_records: u64,
    /// Offset ranges only A holds (before or after the common range).
    pub only_a: Vec<OffsetRange>,
    /// Offset ranges only B holds.
    pub only_b: Vec<OffsetRange>,
    /// Replica A.
    pub a: SideReport,
    /// Replica B.
    pub b: SideReport,
    /// Where A keeps offsets below as a follower of B (the leader-epoch rule); `null`: the rule cannot place it.
    pub truncate_a_to: Option<u64>,
    /// Where B keeps offsets below as a follower of A.
    pub truncate_b_to: Option<u64>,
    /// What else a person should know, in words.
    pub notes: Vec<String>,
    /// Set when the two sides are different shards (their directory names
    /// say so): no truncation is given, and the diff is never identical.
    #[cfg_attr(feature = "serde", serde(default))]
    pub different_shards: Option<DifferentShards>,
    /// Offsets A lost inside its range that B still holds intact (at most [`MAX_LOST_RANGES`]).
    #[cfg_attr(feature = "serde", serde(default))]
    pub lost_a: Vec<Lost>,
    /// Offsets B lost inside its range that A still holds intact.
    #[cfg_attr(feature = "serde", serde(default))]
    pub lost_b: Vec<Lost>,
    /// When each side's divergent records were written (`null`: none diverge).
    #[cfg_attr(feature = "serde", serde(default))]
    pub divergent_time: Option<DivergentTime>,
}

impl Diff {
    /// Whether `felix-storage diff` exits 1: the replicas differ or damage blocks the comparison.
    #[must_use]
    pub fn differs(&self) -> bool {
        !self.identical
    }

    /// The diff as text for a person (the CLI escapes it for the terminal).
    ///
    /// ```
    /// use felix_codec::shard::diff::{DiffMachine, SideFacts};
    /// let d = DiffMachine::new().finish(SideFacts::new("a"), SideFacts::new("b"));
    /// assert!(d.to_text().contains("identical"));
    /// ```
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (name, s) in [("A", &self.a), ("B", &self.b)] {
            let first = s.first_offset.map_or_else(|| "no record".into(), |f| OffsetRange { from: f, to: s.next_offset }.words());
            let _ = writeln!(out, "{name}: {}: {first} ({} intact), epochs {}", one_line(&s.path), s.records, epochs_text(&s.epochs));
        }
        match self.common_range {
            Some(r) => {
                let _ = writeln!(out, "common range: {} ({} records compared)", r.words(), self.compared_records);
            }
            None => out.push_str("common range: none\n"),
        }
        if let Some(d) = &self.different_shards {
            let _ = writeln!(out, "WARNING: {}", d.warning());
        }
        match &self.divergence {
            Some(d) => {
                let _ = writeln!(
                    out,
                    "FIRST DIVERGENT OFFSET {}: A {} at byte {} checksum {}, B {} at byte {} checksum {} ({} offsets differ)",
                    d.offset,
                    one_line(&d.a.file),
                    d.a.position,
                    d.a.checksum,
                    one_line(&d.b.file),
                    d.b.position,
                    d.b.checksum,
                    self.divergent_records
                );
            }
            None => out.push_str("no divergent offset\n"),
        }
        if let Some(t) = &self.divergent_time {
            let _ = writeln!(out, "divergent records' times: A's {}; B's {}", span_words(t.a), span_words(t.b));
        }
        for (name, ranges) in [("A", &self.only_a), ("B", &self.only_b)] {
            for r in ranges {
                let _ = writeln!(out, "only {name} holds {}", r.words());
            }
        }
        for line in self.lost_sentences() {
            let _ = writeln!(out, "{line}");
        }
        for (name, s) in [("A", &self.a), ("B", &self.b)] {
            for f in &s.findings {
                let blocks = if blocks(f) { "blocks the comparison" } else { "noted" };
                let _ = writeln!(
                    out,
                    "{name} damage ({blocks}): {}/{}: {} at byte {}{}: {}",
                    one_line(&s.path),
                    one_line(&f.file),
                    f.finding.kind,
                    f.finding.position,
                    f.finding.offset.map_or_else(String::new, |o| format!(", offset {o}")),
                    one_line(&f.finding.message)
                );
            }
            if s.findings_omitted > 0 {
                let _ = writeln!(out, "{name}: {} more findings not shown", s.findings_omitted);
            }
        }
        for side in [Side::A, Side::B] {
            if let Some(line) = self.follower_line(side) {
                let _ = writeln!(out, "{line}");
            }
        }
        for n in &self.notes {
            let _ = writeln!(out, "note: {}", one_line(n));
        }
        out.push_str(if self.identical { "identical\n" } else { "DIFFERENT\n" });
        out
    }
}

impl Diff {
    /// What `side` does as the other's follower, in words: its truncation
    /// (`follower_action`), or — when the two are different shards — that it
    /// is no follower and must not be truncated to match; `None` when the
    /// epochs give no truncation point (a note says why). The CLI's text and
    /// the page say it with this.
    #[must_use]
    pub fn follower_line(&self, side: Side) -> Option<String> {
        let (name, other, s, t) = match side {
            Side::A => ("A", "B", &self.a, self.truncate_a_to),
            Side::B => ("B", "A", &self.b, self.truncate_b_to),
        };
        if self.different_shards.is_some() {
            return Some(format!("{name} is no follower of {other} (a different shard): do not truncate it to match"));
        }
        follower_action(s, t).map(|action| format!("as a follower of {other}, {name} {action}"))
    }

    /// Each lost range in words, A's then B's: which side lost which
    /// offsets, the damage there that explains it, and where the other side
    /// still holds them ("B lost offset 30 (RecordChecksum at byte 932 of
    /// 00000000000000000000.log); A still holds it intact, at byte 932 of
    /// 00000000000000000000.log: copy it from A"). The CLI's text, the page
    /// and the Markdown say it with this.
    #[must_use]
    pub fn lost_sentences(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (name, other, lost, s) in [("A", "B", &self.lost_a, &self.a), ("B", "A", &self.lost_b, &self.b)] {
            for l in lost {
                out.push(lost_sentence(name, other, l, s));
            }
        }
        out
    }
}

fn lost_sentence(name: &str, other: &str, l: &Lost, side: &SideReport) -> String {
    let (from, to) = (l.range.from, l.range.to);
    let count = to.saturating_sub(from);
    let (what, pronoun) = if count == 1 { (l.range.words(), "it") } else { (format!("{} ({count} records)", l.range.words()), "them") };
    let cause = side
        .findings
        .iter()
        .find(|f| blocks(f) && f.finding.offset.is_some_and(|o| from <= o && o < to))
        .map_or_else(String::new, |f| format!(" ({} at byte {} of {})", f.finding.kind, f.finding.position, one_line(&f.file)));
    let at = if count == 1 { "at" } else { "from" };
    format!(
        "{name} lost {what}{cause}; {other} still holds {pronoun} intact, {at} byte {} of {}: copy {pronoun} from {other}",
        l.held_at.position,
        one_line(&l.held_at.file)
    )
}

/// What a side does as the other's follower, in words, from its truncation
/// point (`None`: the epochs give none): "truncates to T (drops offsets
/// T..=N-1)" or "keeps everything (truncation point T)". The CLI's text and the
/// page both say it with this.
#[must_use]
pub fn follower_action(side: &SideReport, truncate_to: Option<u64>) -> Option<String> {
    let next = side.next_offset;
    Some(match truncate_to? {
        t if t < next => format!("truncates to {t} (drops {})", OffsetRange { from: t, to: next }.words()),
        // `next_offset` stops at u64::MAX: whether the side holds that offset
        // is not known here (a note says so when it does).
        t if t == u64::MAX => format!("keeps the offsets below {t} (truncation point {t})"),
        t => format!("keeps everything (truncation point {t})"),
    })
}

/// Whether a finding blocks the comparison: it is in a segment file (damage
/// to records or a header, a discontinuity), decided by the file it is in
/// ([`classify`]). A finding in an index or the epochs file blocks nothing,
/// whatever its kind (`Truncated` is met in every file).
#[must_use]
pub fn blocks(finding: &RemainingFinding) -> bool {
    matches!(classify(&finding.file), EntryName::Segment(_))
}

fn epochs_text(epochs: &[[u64; 2]]) -> String {
    if epochs.is_empty() {
        return "none".into();
    }
    let parts: Vec<String> = epochs.iter().map(|[g, s]| format!("g{g}@{s}")).collect();
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::report::FindingReport;
    use crate::verdict::corruption::{CorruptionKind, CorruptionSite, Finding, Repair};
    use alloc::vec;

    fn rec(offset: u64, checksum: u32) -> RecordSummary {
        RecordSummary {
            offset,
            checksum,
            segment_id: 0,
            position: offset.wrapping_mul(30).wrapping_add(32),
            payload_len: 2,
            timestamp_micros: 1,
        }
    }

    fn run(a: &[RecordSummary], b: &[RecordSummary], fa: SideFacts, fb: SideFacts) -> (Diff, usize) {
        let (mut ia, mut ib) = (a.iter().copied(), b.iter().copied());
        let mut m = DiffMachine::new();
        let mut held_max = 0;
        while let Need::Record(side) = m.need() {
            let next = match side {
                Side::A => ia.next(),
                Side::B => ib.next(),
            };
            m.push(side, next);
            held_max = held_max.max(usize::from(m.head_a.is_some()) + usize::from(m.head_b.is_some()));
        }
        (m.finish(fa, fb), held_max)
    }

    fn found(file: &str, f: &Finding) -> RemainingFinding {
        RemainingFinding { file: file.into(), finding: FindingReport::from(f) }
    }

    fn log(range: core::ops::Range<u64>, salt: u32) -> Vec<RecordSummary> {
        range.map(|o| rec(o, o as u32 ^ salt)).collect()
    }

    /// Offset `u64::MAX` is outside every range (a range ends one past its
    /// last offset): a side holding it alone is named in a note, never lost;
    /// held by both, it is compared like any other offset.
    #[test]
    fn a_record_at_the_last_offset_is_named_when_one_side_alone_holds_it() {
        let top = |from: u64, salt: u32| (from..=u64::MAX).map(|o| rec(o, o as u32 ^ salt)).collect::<Vec<_>>();
        let (a, b) = (top(u64::MAX - 3, 0), top(u64::MAX - 3, 0));
        let (d, _) = run(&a, &b[..3], SideFacts::new("a"), SideFacts::new("b"));
        assert!(!d.identical && d.divergence.is_none() && d.only_a.is_empty() && d.only_b.is_empty());
        assert_eq!(d.common_range, Some(OffsetRange { from: u64::MAX - 3, to: u64::MAX }));
        assert_eq!(
            d.notes[0],
            format!(
                "A alone holds offset {} (the last offset there can be, which no range above can name: a range ends one past its last offset)",
                u64::MAX
            )
        );
        assert!(d.to_text().contains("A alone holds offset 18446744073709551615"), "{}", d.to_text());
        let (d, _) = run(&a[..3], &b, SideFacts::new("a"), SideFacts::new("b"));
        assert!(d.notes[0].starts_with("B alone holds offset 18446744073709551615"), "{:?}", d.notes);
        // One side holds only that record, the other nothing: no empty range, the note names it.
        let (d, _) = run(&a[3..], &[], SideFacts::new("a"), SideFacts { empty_next_offset: Some(0), ..SideFacts::new("b") });
        assert!(!d.identical && d.only_a.is_empty() && d.notes[0].starts_with("A alone holds offset 18446744073709551615"), "{d:?}");
        // With epochs, the truncation text never claims a side holding it keeps everything.
        let epochs = |name: &str| SideFacts { epochs: alloc::vec![Epoch { generation: 1, start_offset: 0 }], ..SideFacts::new(name) };
        let (d, _) = run(&a, &b[..3], epochs("a"), epochs("b"));
        assert_eq!(d.truncate_a_to, Some(u64::MAX));
        let text = d.to_text();
        assert!(
            !text.contains("keeps everything")
                && text.contains("A keeps the offsets below 18446744073709551615 (truncation point 18446744073709551615)"),
            "{text}"
        );
        // Both hold it: compared, and named when it differs.
        let (d, _) = run(&a, &b, SideFacts::new("a"), SideFacts::new("b"));
        assert!(d.identical && !d.notes.iter().any(|n| n.contains("alone holds")), "{d:?}");
        let (d, _) = run(
            &a,
            &top(u64::MAX - 3, 0).into_iter().map(|r| if r.offset == u64::MAX { rec(r.offset, 7) } else { r }).collect::<Vec<_>>(),
            SideFacts::new("a"),
            SideFacts::new("b"),
        );
        assert_eq!((d.identical, d.first_divergent_offset), (false, Some(u64::MAX)));
    }

    #[test]
    fn a_follower_copy_then_ten_different_each_diverges_at_fifty() {
        let mut a = log(0..50, 0);
        let mut b = a.clone();
        a.extend(log(50..60, 0xAAAA));
        b.extend(log(50..60, 0xBBBB));
        let (d, held) = run(&a, &b, SideFacts::new("a"), SideFacts::new("b"));
        assert_eq!(d.first_divergent_offset, Some(50));
        assert_eq!((d.compared_records, d.divergent_records), (60, 10));
        assert!(!d.identical && d.only_a.is_empty() && d.only_b.is_empty());
        assert!(held <= 2, "holds at most one record per side");
        let div = d.divergence.unwrap();
        assert_eq!((div.a.position, div.a.checksum.as_str()), (32 + 50 * 30, "0000AA98"));
    }

    #[test]
    fn the_divergent_records_times_are_each_side_s_own_in_offset_order() {
        let at = |r: RecordSummary, ts: u64| RecordSummary { timestamp_micros: ts, ..r };
        // Offsets 0..2 agree (stamped 500: not divergent, not counted); 2..5
        // diverge, A's clock going back at 3, B's rising; 5 agrees again.
        let a = [at(rec(0, 1), 500), at(rec(1, 2), 500), at(rec(2, 10), 300), at(rec(3, 11), 100), at(rec(4, 12), 200), at(rec(5, 6), 900)];
        let b = [at(rec(0, 1), 500), at(rec(1, 2), 500), at(rec(2, 20), 400), at(rec(3, 21), 410), at(rec(4, 22), 420), at(rec(5, 6), 900)];
        let (d, _) = run(&a, &b, SideFacts::new("a"), SideFacts::new("b"));
        let t = d.divergent_time.unwrap();
        assert_eq!((t.a.first, t.a.last, t.a.min, t.a.max), (300, 200, 100, 300));
        assert_eq!((t.b.first, t.b.last, t.b.min, t.b.max), (400, 420, 400, 420));
        assert_eq!(d.divergence.as_ref().map(|v| (v.a.timestamp_micros, v.b.timestamp_micros)), Some((300, 400)));
        let text = d.to_text();
        assert!(
            text.contains(
                "divergent records' times: A's written 1970-01-01T00:00:00.000300Z to 1970-01-01T00:00:00.000200Z \
                 (timestamps go back: earliest 1970-01-01T00:00:00.000100Z, latest 1970-01-01T00:00:00.000300Z); \
                 B's written 1970-01-01T00:00:00.000400Z to 1970-01-01T00:00:00.000420Z\n"
            ),
            "{text}"
        );
        let (same, _) = run(&a, &a, SideFacts::new("a"), SideFacts::new("b"));
        assert_eq!(same.divergent_time, None);
        assert!(!same.to_text().contains("times"));
    }

    #[test]
    fn identical_logs_and_two_empty_logs_are_identical() {
        let a = log(0..100, 3);
        assert!(run(&a, &a, SideFacts::new("a"), SideFacts::new("b")).0.identical);
        let (d, _) = run(&[], &[], SideFacts::new("a"), SideFacts::new("b"));
        assert!(d.identical && d.common_range.is_none() && d.first_divergent_offset.is_none());
    }

    #[test]
    fn one_side_longer_or_empty_or_starting_later_is_extent_not_divergence() {
        let a = log(0..100, 0);
        let (d, _) = run(&a, &a[..40], SideFacts::new("a"), SideFacts::new("b"));
        assert_eq!((d.first_divergent_offset, d.only_a.clone(), d.only_b.clone()), (None, vec![OffsetRange { from: 40, to: 100 }], vec![]));
        assert!(!d.identical);
        let (d, _) = run(&a, &[], SideFacts::new("a"), SideFacts { empty_next_offset: Some(0), ..SideFacts::new("b") });
        assert_eq!((d.common_range, d.only_a[0], d.b.next_offset), (None, OffsetRange { from: 0, to: 100 }, 0));
        // A follower that began mid-log (its first segment starts at 70).
        let (d, _) = run(&a, &a[70..], SideFacts::new("a"), SideFacts::new("b"));
        assert_eq!(d.common_range, Some(OffsetRange { from: 70, to: 100 }));
        assert_eq!((d.only_a[0], d.compared_records, d.first_divergent_offset), (OffsetRange { from: 0, to: 70 }, 30, None));
    }

    /// Two logs of offsets 0..60 where B lost offset 30 to rot (its finding in `fb`).
    fn b_lost_30_to_rot() -> (Vec<RecordSummary>, Vec<RecordSummary>, SideFacts) {
        let a = log(0..60, 0);
        let mut b = log(0..60, 0);
        b.remove(30);
        let rot = Finding {
            kind: CorruptionKind::RecordChecksum { stored: 1, computed: 2 },
            site: CorruptionSite { shard: None, segment_id: Some(0), position: 932 },
            end: 962,
            offset: Some(30),
            repair: Repair::Never,
        };
        let fb = SideFacts { findings: vec![found("00000000000000000000.log", &rot)], ..SideFacts::new("b") };
        (a, b, fb)
    }

    #[test]
    fn a_hole_from_damage_is_not_a_divergence_and_blocks() {
        let (a, b, fb) = b_lost_30_to_rot();
        let (d, _) = run(&a, &b, SideFacts::new("a"), fb);
        assert_eq!((d.first_divergent_offset, d.compared_records), (None, 59));
        assert!(d.b.blocked && !d.identical);
        assert_eq!(d.b.findings[0].finding.kind, "RecordChecksum");
        assert!(d.to_text().contains("B damage (blocks the comparison)"));
    }

    /// The offsets a side lacks inside its own range, that the other holds
    /// intact, are named with the damage that explains them and where the
    /// other side holds them: consecutive ones as one range, holes on both
    /// sides never, extents never.
    #[test]
    fn a_lost_offset_is_named_with_the_replica_that_still_holds_it() {
        let (a, b, fb) = b_lost_30_to_rot();
        let (d, _) = run(&a, &b, SideFacts::new("a"), fb.clone());
        assert_eq!(d.first_divergent_offset, None);
        assert!(d.lost_a.is_empty());
        assert_eq!(d.lost_b.len(), 1);
        assert_eq!(d.lost_b[0].range, OffsetRange { from: 30, to: 31 });
        assert_eq!((d.lost_b[0].held_at.file.as_str(), d.lost_b[0].held_at.position), ("00000000000000000000.log", 932));
        let sentence = "B lost offset 30 (RecordChecksum at byte 932 of 00000000000000000000.log); A still holds it intact, \
                        at byte 932 of 00000000000000000000.log: copy it from A";
        assert_eq!(d.lost_sentences(), [sentence]);
        assert!(d.to_text().contains(sentence), "{}", d.to_text());
        // Three in a row are one range; the other way round names A.
        let mut b3 = log(0..60, 0);
        b3.drain(10..13);
        let (d, _) = run(&b3, &a, SideFacts::new("a"), SideFacts::new("b"));
        assert_eq!(d.lost_a.iter().map(|l| l.range).collect::<Vec<_>>(), [OffsetRange { from: 10, to: 13 }]);
        assert!(d.lost_b.is_empty());
        assert!(
            d.lost_sentences()[0].starts_with("A lost offsets 10..=12 (3 records); B still holds them intact, from byte 332"),
            "{:?}",
            d.lost_sentences()
        );
        // A hole on both sides: neither holds it, nothing is lost to fetch; a later start is an extent.
        let (d, _) = run(&b, &b, SideFacts::new("a"), SideFacts::new("b"));
        assert!(d.lost_a.is_empty() && d.lost_b.is_empty());
        let (d, _) = run(&a, &a[5..], SideFacts::new("a"), SideFacts::new("b"));
        assert!(d.lost_b.is_empty() && d.only_a == [OffsetRange { from: 0, to: 5 }]);
    }

    #[test]
    fn lost_ranges_are_capped_and_the_rest_counted() {
        let a = log(0..(2 * MAX_LOST_RANGES as u64 + 10), 0);
        let b: Vec<_> = a.iter().copied().filter(|r| r.offset % 2 == 0).collect();
        let (d, _) = run(&a, &b, SideFacts::new("a"), SideFacts::new("b"));
        assert_eq!(d.lost_b.len(), MAX_LOST_RANGES);
        assert!(
            d.notes.iter().any(|n| n == &format!("B lost 4 more offsets the other holds, in ranges past the {MAX_LOST_RANGES} listed")),
            "{:?}",
            d.notes
        );
    }

    /// Two different shards (by their directories' names or keys) are
    /// warned of, never given a truncation, never identical; the same name
    /// under two parents, or a name that is no shard name, is not judged.
    #[test]
    fn different_shards_are_warned_of_and_never_truncated() {
        let orders = "acme_default_orders_0-0d3aed4b998d2798";
        let payments = "acme_default_payments_0-feaf85568f3eb5b0";
        let e = vec![Epoch { generation: 1, start_offset: 0 }];
        let side = |path: &str| SideFacts { epochs: e.clone(), ..SideFacts::new(path) };
        let a = log(0..50, 0);
        let b = log(0..30, 0xBBBB);
        let (d, _) = run(&a, &b, side(&format!("/r1/{orders}/")), side(&format!("/r2/{payments}")));
        let warned = d.different_shards.clone().unwrap();
        assert_eq!((warned.a_dir.as_str(), warned.b_dir.as_str(), warned.names_differ, warned.keys_differ), (orders, payments, true, true));
        assert_eq!((d.truncate_a_to, d.truncate_b_to, d.identical), (None, None, false));
        let text = d.to_text();
        assert!(
            text.contains(&format!(
                "WARNING: A and B are different shards: A is {orders}, B is {payments} (their shard names and keys differ)"
            )),
            "{text}"
        );
        assert!(!text.contains("truncates to"), "{text}");
        assert_eq!(d.follower_line(Side::B).unwrap(), "B is no follower of A (a different shard): do not truncate it to match");
        assert!(d.notes.iter().any(|n| n == &warned.warning()));
        // Identical logs of two shards are still not one shard's replicas.
        let (d, _) = run(&a, &a, side(orders), side(payments));
        assert!(!d.identical && d.different_shards.is_some());
        // The same shard under two parents, and a path's own name set apart from it.
        let (d, _) = run(&a, &a, side(&format!("x/{orders}")), side(&format!("y/{orders}")));
        assert!(d.identical && d.different_shards.is_none());
        let (d, _) = run(&a, &a, SideFacts { shard_dir: Some(orders.into()), ..side(".") }, side(payments));
        assert_eq!(d.different_shards.unwrap().a_dir, orders);
        // Names that are no shard names tell nothing.
        assert!(different_shards("a", "b").is_none() && different_shards(orders, "b").is_none());
        // The same key under another readable name; another key under the same readable name.
        let renamed = different_shards(orders, "acme_default_orderz_0-0d3aed4b998d2798").unwrap();
        assert!(renamed.names_differ && !renamed.keys_differ && renamed.warning().contains("a folder renamed?"));
        let rekeyed = different_shards(orders, "acme_default_orders_0-0d3aed4b998d2799").unwrap();
        assert!(!rekeyed.names_differ && rekeyed.keys_differ);
    }

    /// The file a finding is in decides, never its kind's name: `Truncated`
    /// blocks in a segment and nowhere else.
    #[test]
    fn only_a_finding_in_a_segment_file_blocks() {
        let torn = Finding {
            kind: CorruptionKind::Truncated { needed: 24, available: 6 },
            site: CorruptionSite { shard: None, segment_id: Some(0), position: 0 },
            end: 6,
            offset: None,
            repair: Repair::Always,
        };
        for (file, blocking) in
            [("00000000000000000000.log", true), ("00000000000000000000.index", false), ("epochs", false), ("x.index", false)]
        {
            assert_eq!(blocks(&found(file, &torn)), blocking, "{file}");
            let a = log(0..10, 0);
            let (d, _) = run(&a, &a, SideFacts::new("a"), SideFacts { findings: vec![found(file, &torn)], ..SideFacts::new("b") });
            assert_eq!((d.b.blocked, d.identical), (blocking, !blocking), "{file}");
        }
    }

    #[test]
    fn the_same_checksum_with_another_publish_time_or_length_is_divergent() {
        let a = log(0..10, 0);
        for changed in [RecordSummary { timestamp_micros: 2, ..a[4] }, RecordSummary { payload_len: 3, ..a[4] }] {
            let mut b = a.clone();
            b[4] = RecordSummary { segment_id: 9, position: 4096, ..changed };
            let (d, _) = run(&a, &b, SideFacts::new("a"), SideFacts::new("b"));
            assert_eq!((d.first_divergent_offset, d.divergent_records, d.identical), (Some(4), 1, false));
        }
        let moved: Vec<_> = a.iter().map(|r| RecordSummary { segment_id: 3, position: r.position + 100, ..*r }).collect();
        assert!(run(&a, &moved, SideFacts::new("a"), SideFacts::new("b")).0.identical, "where a record lives is not what it is");
    }

    #[test]
    fn out_of_order_records_are_counted_not_compared() {
        let mut a = log(0..10, 0);
        a.push(rec(5, 99));
        a.extend(log(10..12, 0));
        let b = log(0..12, 0);
        let (d, _) = run(&a, &b, SideFacts::new("a"), SideFacts::new("b"));
        assert_eq!((d.a.unordered_records, d.first_divergent_offset, d.compared_records), (1, None, 12));
        assert!(d.a.blocked && !d.identical);
    }

    #[test]
    fn pushes_out_of_turn_and_after_the_end_keep_memory_bounded() {
        let mut m = DiffMachine::new();
        for o in 0..1000 {
            m.push(Side::A, Some(rec(o, 1)));
            assert!(m.head_b.is_none() && usize::from(m.head_a.is_some()) <= 1);
        }
        m.push(Side::A, None);
        m.push(Side::A, Some(rec(5000, 1)));
        m.push(Side::B, None);
        let d = m.finish(SideFacts::new("a"), SideFacts::new("b"));
        assert_eq!((d.a.records, d.a.next_offset), (1000, 1000));
    }

    #[test]
    fn truncation_follows_the_epochs_rule_both_ways() {
        let mut a = log(0..50, 0);
        let mut b = a.clone();
        a.extend(log(50..60, 0xAAAA));
        b.extend(log(50..60, 0xBBBB));
        let ea = vec![Epoch { generation: 1, start_offset: 0 }];
        let eb = vec![Epoch { generation: 1, start_offset: 0 }, Epoch { generation: 2, start_offset: 50 }];
        let (d, _) = run(&a, &b, SideFacts { epochs: ea, ..SideFacts::new("a") }, SideFacts { epochs: eb, ..SideFacts::new("b") });
        assert_eq!((d.truncate_a_to, d.truncate_b_to), (Some(50), Some(50)));
        // A, the leader of generation 1 only, never had B's generation 2: the rule answers, a broker refuses.
        assert_eq!(
            d.notes,
            ["A never had B's latest generation 2: 50 is the leader-epoch rule's answer (from A's generation 1); \
              a leader that answers only for generations it has (the broker's generation_end) refuses B instead"]
        );
        // Without epochs the rule cannot place either side, and says so.
        let (d, _) = run(&a, &b, SideFacts::new("a"), SideFacts::new("b"));
        assert_eq!((d.truncate_a_to, d.truncate_b_to), (None, None));
        assert_eq!(d.notes.len(), 2);
    }

    #[test]
    fn the_same_generation_on_both_sides_is_named_as_two_leaders() {
        let mut a = log(0..50, 0);
        let mut b = a.clone();
        a.extend(log(50..60, 0xAAAA));
        b.extend(log(50..60, 0xBBBB));
        let e = vec![Epoch { generation: 1, start_offset: 0 }];
        let (d, _) = run(&a, &b, SideFacts { epochs: e.clone(), ..SideFacts::new("a") }, SideFacts { epochs: e, ..SideFacts::new("b") });
        assert_eq!(d.truncate_a_to, Some(60));
        assert!(d.notes.iter().any(|n| n.contains("two leaders")), "{:?}", d.notes);
    }

    #[test]
    fn findings_are_capped() {
        let f = Finding {
            kind: CorruptionKind::IndexEntryMismatch { offset: 3, position: 77 },
            site: CorruptionSite { shard: None, segment_id: Some(0), position: 40 },
            end: 56,
            offset: None,
            repair: Repair::Always,
        };
        let many = (0..MAX_DIFF_FINDINGS + 5).map(|_| found("x.index", &f)).collect();
        let (d, _) = run(&[], &[], SideFacts { findings: many, findings_omitted: 7, ..SideFacts::new("a") }, SideFacts::new("b"));
        assert_eq!((d.a.findings.len(), d.a.findings_omitted), (MAX_DIFF_FINDINGS, 12));
        assert!(!d.a.blocked, "an index finding blocks nothing");
        assert!(d.identical);
    }
}
