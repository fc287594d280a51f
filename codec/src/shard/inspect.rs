//! Inspecting a set of files as a shard: which file is which, in what order
//! to read them, the streaming scan of each, and the cross-file checks.
//!
//! The caller owns the IO (the CLI reads files, the browser slices Blobs)
//! and drives the inspection through the one state machine that says which
//! bytes it needs next, `shard::scan::ShardScan`.
//!
//! Cross-file checks: consecutive segments (by numeric id) must continue each
//! other's offsets; each index must match its segment's base offset and land
//! on its records; every epoch must start at or below the log's end.
//!
//! # Example
//!
//! ```
//! use felix_codec::shard::scan::inspect_in_memory;
//! use felix_codec::format::record::encode_record;
//! use felix_codec::format::segment_header::SegmentHeader;
//! let mut log = SegmentHeader::new(0, 1).encode().to_vec();
//! encode_record(0, 1, b"hello", &mut log).unwrap();
//! log.truncate(log.len() - 2); // a torn tail
//! let report = inspect_in_memory(Some("s".into()), &[("s/00000000000000000000.log".into(), &log[..])], 4096);
//! assert_eq!(report.files[0].findings[0].kind, "Truncated");
//! assert!(report.has_damage());
//! ```

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::doc::report::FileReport;
use crate::format::epochs::EPOCH_ENTRY_LEN;
use crate::format::file_name::{classify, describe_magic, parse_file_name, EntryName, FileKind};
use crate::format::index::BASE_OFFSET_AT as INDEX_BASE_OFFSET_AT;
use crate::format::segment_header::{BASE_OFFSET_AT as SEGMENT_BASE_OFFSET_AT, SEGMENT_HEADER_LEN};
use crate::read::scan::epochs::entry_position;
use crate::read::scan::{EpochsScanner, IndexCheck, IndexScanner, IndexSummary, Item, ScanContext, SegmentScanner, Sink};
use crate::shard::recovery::{IndexFacts, IndexFile, IndexProblem, SegmentFacts, ShardFacts};
use crate::shard::tail::{abandoned_tail, unheld_words, TailShape};
use crate::verdict::corruption::{CorruptionKind, Finding, Repair};

/// A file to inspect: its path as shown, its bare name and its size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputFile {
    /// Path as the user gave it.
    pub path: String,
    /// File name without directories.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
}

/// An index scanned before its segment, waiting to be checked against it.
#[derive(Debug)]
struct PendingIndex {
    segment_id: u64,
    index_file: usize,
    entries: Vec<(u64, crate::format::index::IndexEntry)>,
}

/// What one file turned out to be, after its scan.
#[derive(Debug)]
enum Done {
    Segment(crate::read::scan::SegmentSummary),
    Index(IndexSummary),
    Epochs(crate::read::scan::EpochsSummary),
    Unknown { size: u64, first: Vec<u8> },
}

/// A set of files inspected together (a shard directory, or a lone file).
#[derive(Debug)]
pub struct ShardInspection {
    shard: Option<String>,
    files: Vec<InputFile>,
    newest_segment_id: Option<u64>,
    done: Vec<Option<Done>>,
    /// Index entries waiting for their segment's scan.
    pending_index: Vec<PendingIndex>,
    /// (segment file, index file) pairs whose check is under way.
    checking: Vec<(usize, usize)>,
    extra: Vec<Vec<Finding>>,
    /// Per file, the cross-file findings past the per-file limit, counted only.
    extra_omitted: Vec<u64>,
    writer_live: bool,
    /// The newest segments recovery removes (files, newest first), and the
    /// segment then newest, once every scan is done ([`Self::settle_tail`]).
    abandoned: Vec<usize>,
    tail: Option<usize>,
}

/// The streaming scan of one file. Its kind is fixed by the name, or by the
/// first four bytes when the name is not conventional.
#[derive(Debug)]
pub struct FileScan {
    name: String,
    ctx: ScanContext,
    kind: Option<FileKind>,
    first: Vec<u8>,
    state: ScanState,
}

#[derive(Debug)]
enum ScanState {
    Undecided,
    Segment(alloc::boxed::Box<SegmentScanner>, Option<IndexCheck>),
    Index(IndexScanner),
    Epochs(EpochsScanner),
    Unknown(u64),
}

impl FileScan {
    /// A scan of one file, outside any shard (verdicts as if it were a newest segment).
    #[must_use]
    pub fn standalone(name: &str) -> Self {
        let ctx = ScanContext { segment_id: parse_file_name(name).map(|(id, _)| id), newest_segment: true, ..ScanContext::default() };
        Self::new(name.into(), ctx, None)
    }

    fn new(name: String, ctx: ScanContext, check: Option<IndexCheck>) -> Self {
        // The engine's own side files are never read as structures: a leftover
        // temporary or a piece of evidence is not damage. Inside a shard, a
        // file whose name is not one of the format's (`server.log`, a copy
        // named `… (1).log`) is not read either: the engine never reads it,
        // so it can be neither the shard's data nor its damage.
        let kind = match classify(&name) {
            EntryName::Lock | EntryName::Temporary | EntryName::Evidence { .. } | EntryName::DamagedEpochs => Some(FileKind::Unknown),
            EntryName::Foreign if ctx.shard.is_some() => Some(FileKind::Unknown),
            _ => FileKind::from_name(&name),
        };
        let mut scan = Self { kind, name, ctx, first: Vec::new(), state: ScanState::Undecided };
        if scan.kind.is_some() {
            scan.start(check);
        }
        scan
    }

    /// The kind, once known.
    #[must_use]
    pub fn kind(&self) -> Option<FileKind> {
        self.kind
    }

    /// Whether this is the shard's newest segment: the one file whose tail
    /// a live writer may be writing.
    #[must_use]
    pub fn is_newest_segment(&self) -> bool {
        self.ctx.newest_segment && self.kind.is_none_or(|k| k == FileKind::Segment)
    }

    /// Says a writer holds the shard open after all (the caller probed again
    /// once the bytes were read: a writer may have started during the scan);
    /// takes effect when the scan ends.
    pub fn set_writer_live(&mut self, live: bool) {
        self.ctx.writer_live = live;
        if let ScanState::Segment(scanner, _) = &mut self.state {
            scanner.set_writer_live(live);
        }
    }

    fn start(&mut self, check: Option<IndexCheck>) {
        let kind = self.kind.unwrap_or_else(|| FileKind::from_magic(&self.first));
        self.kind = Some(kind);
        let ctx = self.ctx.clone();
        self.state = match kind {
            FileKind::Segment => ScanState::Segment(alloc::boxed::Box::new(SegmentScanner::new(ctx)), check),
            FileKind::Index => ScanState::Index(IndexScanner::new(ctx)),
            FileKind::Epochs => ScanState::Epochs(EpochsScanner::new(ctx)),
            FileKind::Unknown => ScanState::Unknown(0),
        };
    }

    /// Whether the verdict still depends on bytes not fed yet. An epochs file
    /// is judged on its first bytes up to the largest valid size, an unknown
    /// file on none: a caller that needs no hash may [`FileScan::skip`] the rest.
    #[must_use]
    pub fn needs_bytes(&self) -> bool {
        match &self.state {
            ScanState::Epochs(s) => s.needs_bytes(),
            ScanState::Unknown(_) => self.first.len() < 4,
            ScanState::Undecided | ScanState::Segment(..) | ScanState::Index(_) => true,
        }
    }

    /// Counts `n` more bytes of the file without looking at them (only when
    /// [`FileScan::needs_bytes`] is false).
    pub fn skip(&mut self, n: u64) {
        match &mut self.state {
            ScanState::Epochs(s) => s.skip(n),
            ScanState::Unknown(count) => *count = count.saturating_add(n),
            ScanState::Undecided | ScanState::Segment(..) | ScanState::Index(_) => {}
        }
    }

    /// Feeds the next chunk of the file.
    pub fn feed(&mut self, chunk: &[u8], sink: &mut impl Sink) {
        if self.first.len() < 4 {
            let take = (4 - self.first.len()).min(chunk.len());
            self.first.extend_from_slice(chunk.get(..take).unwrap_or(&[]));
            if matches!(self.state, ScanState::Undecided) {
                if self.first.len() < 4 {
                    return;
                }
                self.start(None);
                let first = core::mem::take(&mut self.first);
                self.feed_decided(&first, sink);
                self.first = first;
                self.feed_decided(chunk.get(take..).unwrap_or(&[]), sink);
                return;
            }
        }
        self.feed_decided(chunk, sink);
    }

    fn feed_decided(&mut self, chunk: &[u8], sink: &mut impl Sink) {
        match &mut self.state {
            ScanState::Segment(scanner, check) => match check {
                Some(check) => scanner.feed(chunk, &mut |item: Item<'_>| {
                    check.item(&item);
                    sink.item(item);
                }),
                None => scanner.feed(chunk, sink),
            },
            ScanState::Index(s) => s.feed(chunk, sink),
            ScanState::Epochs(s) => s.feed(chunk, sink),
            ScanState::Unknown(n) => *n = n.saturating_add(chunk.len() as u64),
            ScanState::Undecided => {}
        }
    }

    fn finish(mut self, sink: &mut impl Sink) -> (Done, Option<(Vec<Finding>, u64)>) {
        if matches!(self.state, ScanState::Undecided) {
            self.start(None);
            let first = core::mem::take(&mut self.first);
            self.feed_decided(&first, sink);
            self.first = first;
        }
        match self.state {
            ScanState::Segment(scanner, mut check) => {
                let summary = match check {
                    Some(ref mut c) => scanner.finish(&mut |item: Item<'_>| {
                        c.item(&item);
                        sink.item(item);
                    }),
                    None => scanner.finish(sink),
                };
                (Done::Segment(summary), check.map(IndexCheck::finish))
            }
            ScanState::Index(s) => (Done::Index(s.finish(sink)), None),
            ScanState::Epochs(s) => (Done::Epochs(s.finish(sink)), None),
            ScanState::Unknown(size) => (Done::Unknown { size, first: self.first }, None),
            ScanState::Undecided => (Done::Unknown { size: 0, first: Vec::new() }, None),
        }
    }

    /// Ends a standalone scan and returns its report.
    #[must_use]
    pub fn into_report(self, path: String, sink: &mut impl Sink) -> FileReport {
        let name = self.name.clone();
        let ctx = self.ctx.clone();
        let (done, _) = self.finish(sink);
        let mut report = file_report(path, &name, &ctx, done);
        if matches!(report.kind, FileKind::Segment) {
            report.notes.push("inspected alone: repair verdicts assume this is the newest segment of its shard".into());
        }
        report
    }
}

impl ShardInspection {
    /// Files of one shard directory (`shard` is its name), or a loose set.
    #[must_use]
    pub fn new(shard: Option<String>, files: Vec<InputFile>) -> Self {
        let newest_segment_id =
            files.iter().filter_map(|f| parse_file_name(&f.name)).filter(|(_, k)| *k == FileKind::Segment).map(|(id, _)| id).max();
        let n = files.len();
        Self {
            shard,
            files,
            newest_segment_id,
            done: (0..n).map(|_| None).collect(),
            pending_index: Vec::new(),
            checking: Vec::new(),
            extra: (0..n).map(|_| Vec::new()).collect(),
            extra_omitted: alloc::vec![0; n],
            writer_live: false,
            abandoned: Vec::new(),
            tail: None,
        }
    }

    /// Says that a writer holds the shard open right now (the CLI knows it
    /// from the writer's lock): a file ending inside the newest segment's
    /// last record is then a record in flight, reported as a note.
    #[must_use]
    pub fn with_writer_live(mut self, live: bool) -> Self {
        self.writer_live = live;
        self
    }

    /// The files, as given.
    #[must_use]
    pub fn files(&self) -> &[InputFile] {
        &self.files
    }

    /// The order to read files in: indexes before their segments (so the
    /// segment scan can check them), epochs last (it is checked against the log).
    #[must_use]
    pub fn order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.files.len()).collect();
        order.sort_by_key(|&i| {
            let name = self.files.get(i).map_or("", |f| f.name.as_str());
            let rank = match FileKind::from_name(name) {
                Some(FileKind::Index) => 0,
                Some(FileKind::Segment) => 1,
                None | Some(FileKind::Unknown) => 2,
                Some(FileKind::Epochs) => 3,
            };
            (rank, parse_file_name(name).map(|(id, _)| id), i)
        });
        order
    }

    fn ctx(&self, i: usize) -> ScanContext {
        let name = self.files.get(i).map_or("", |f| f.name.as_str());
        let segment_id = parse_file_name(name).map(|(id, _)| id);
        let newest_segment = segment_id.is_some() && segment_id == self.newest_segment_id;
        ScanContext { shard: self.shard.clone(), segment_id, newest_segment, writer_live: self.writer_live }
    }

    /// Starts the scan of file `i`.
    #[must_use]
    pub fn begin(&mut self, i: usize) -> FileScan {
        let ctx = self.ctx(i);
        let name = self.files.get(i).map_or_else(String::new, |f| f.name.clone());
        let mut check = None;
        if let Some((id, FileKind::Segment)) = parse_file_name(&name) {
            if let Some(at) = self.pending_index.iter().position(|p| p.segment_id == id) {
                let pending = self.pending_index.swap_remove(at);
                check = Some(IndexCheck::new(self.ctx(pending.index_file), pending.entries));
                self.checking.push((i, pending.index_file));
            }
        }
        FileScan::new(name, ctx, check)
    }

    /// Ends the scan of file `i`.
    pub fn end(&mut self, i: usize, scan: FileScan, sink: &mut impl Sink) {
        let (mut done, index_findings) = scan.finish(sink);
        if let Done::Index(summary) = &mut done {
            let id = self.files.get(i).and_then(|f| parse_file_name(&f.name)).map(|(id, _)| id);
            if let (Some(segment_id), Some(_)) = (id, summary.header) {
                // The report needs only the count; the entries move to the segment's check.
                let entries = core::mem::take(&mut summary.kept);
                self.pending_index.push(PendingIndex { segment_id, index_file: i, entries });
            }
        }
        // Entries are checked against records only behind a header that
        // verifies: behind a rejected one nothing is a record, so the index
        // is not judged stale (no index is rebuilt from such a segment).
        let header_rejected = matches!(&done, Done::Segment(summary) if summary.header.is_none());
        if let Some((findings, omitted)) = index_findings.filter(|_| !header_rejected) {
            if let Some(&(_, index_file)) = self.checking.iter().find(|(seg, _)| *seg == i) {
                if let Some(extra) = self.extra.get_mut(index_file) {
                    extra.extend(findings);
                }
                if let Some(n) = self.extra_omitted.get_mut(index_file) {
                    *n = n.saturating_add(omitted);
                }
            }
        }
        if let Some(slot) = self.done.get_mut(i) {
            *slot = Some(done);
        }
    }

    /// The reports, in the order the files were given, with the cross-file
    /// checks applied.
    #[must_use]
    pub fn finish(self) -> Vec<FileReport> {
        self.finish_with_facts(String::new()).0
    }

    /// The reports, and the facts recovery plans from
    /// ([`crate::shard::recovery::plan_shard`]); `path` names the shard directory.
    #[must_use]
    pub fn finish_with_facts(mut self, path: String) -> (Vec<FileReport>, ShardFacts) {
        self.settle_tail();
        self.cross_check();
        let facts = self.facts(path);
        let mut reports = Vec::with_capacity(self.files.len());
        let abandoned: Vec<Option<String>> = (0..self.files.len()).map(|i| self.abandoned_note(i)).collect();
        let done_all: Vec<Option<Done>> = self.done.drain(..).collect();
        for (i, (file, done)) in self.files.iter().zip(done_all).enumerate() {
            let ctx = self.ctx(i);
            let done = done.unwrap_or(Done::Unknown { size: file.size, first: Vec::new() });
            let mut report = file_report(file.path.clone(), &file.name, &ctx, done);
            if let Some(Some(note)) = abandoned.get(i) {
                report.notes.push(note.clone());
            }
            if let Some(extra) = self.extra.get(i) {
                report.add_findings(extra);
            }
            let omitted = self.extra_omitted.get(i).copied().unwrap_or(0);
            report.findings_omitted = report.findings_omitted.saturating_add(omitted);
            report.shard = self.shard.clone();
            reports.push(report);
        }
        self.note_missing_companions(&mut reports);
        (reports, facts)
    }

    /// What recovery needs to know, from the scans and the cross checks.
    fn facts(&self, path: String) -> ShardFacts {
        let mut facts = ShardFacts { path, ..ShardFacts::default() };
        let extra = |i: usize| self.extra.get(i).map_or(&[][..], Vec::as_slice);
        for (id, i) in self.segments_by_id() {
            let (Some(s), Some(f)) = (self.segment(i), self.files.get(i)) else { continue };
            let mut findings: Vec<Finding> = s.findings.findings.clone();
            findings.extend(extra(i).iter().cloned());
            findings.sort_by_key(Finding::position);
            facts.segments.push(SegmentFacts {
                file: f.name.clone(),
                id,
                size: s.size,
                newest: self.abandoned.contains(&i) || self.tail.map_or(Some(id) == self.newest_segment_id, |t| t == i),
                findings,
                clean_prefix_end: s.clean_prefix_end,
                unfinished: s.unfinished || self.abandoned.contains(&i),
            });
        }
        let index_of = |id: u64| self.files.iter().position(|f| parse_file_name(&f.name) == Some((id, FileKind::Index)));
        for seg in &facts.segments {
            let problem = match index_of(seg.id) {
                None => Some(IndexProblem::Missing),
                Some(i) => match self.done.get(i) {
                    Some(Some(Done::Index(ix))) => {
                        let mut all: Vec<&Finding> = ix.findings.findings.iter().chain(extra(i)).collect();
                        all.sort_by_key(|f| f.position());
                        let file = self.files.get(i).map_or_else(String::new, |f| f.name.clone());
                        facts.index_findings.extend(all.iter().map(|f| (file.clone(), (*f).clone())));
                        match all.first() {
                            Some(f) => Some(IndexProblem::Finding((*f).clone())),
                            None if ix.torn_entry_bytes > 0 => Some(IndexProblem::TornEntry),
                            None => None,
                        }
                    }
                    _ => Some(IndexProblem::Unusable("the index was not scanned".into())),
                },
            };
            facts.indexes.push(IndexFacts { segment_id: seg.id, problem });
        }
        for (i, f) in self.files.iter().enumerate() {
            let own = match self.done.get(i) {
                Some(Some(Done::Segment(s))) => s.findings.omitted,
                Some(Some(Done::Index(ix))) => ix.findings.omitted,
                Some(Some(Done::Epochs(ep))) => ep.findings.omitted,
                _ => 0,
            };
            let omitted = own.saturating_add(self.extra_omitted.get(i).copied().unwrap_or(0));
            if omitted > 0 {
                facts.findings_omitted.push((f.name.clone(), omitted));
            }
            match classify(&f.name) {
                EntryName::Temporary => facts.temporaries.push(f.name.clone()),
                EntryName::Evidence { .. } => facts.evidence_present.push(f.name.clone()),
                EntryName::Index(id) => {
                    facts.index_files.push(IndexFile { file: f.name.clone(), id, size: f.size });
                    // An orphan's findings (a segment's index's are gathered above).
                    if let (false, Some(Some(Done::Index(ix)))) = (facts.segments.iter().any(|s| s.id == id), self.done.get(i)) {
                        facts.index_findings.extend(ix.findings.findings.iter().chain(extra(i)).map(|x| (f.name.clone(), x.clone())));
                    }
                }
                EntryName::Epochs => {
                    if let Some(Some(Done::Epochs(ep))) = self.done.get(i) {
                        for x in ep.findings.findings.iter().chain(extra(i)) {
                            facts.other_findings.push((f.name.clone(), x.clone()));
                        }
                    }
                }
                _ => {}
            }
        }
        facts
    }

    fn segments_by_id(&self) -> Vec<(u64, usize)> {
        let mut segs: Vec<(u64, usize)> = self
            .files
            .iter()
            .enumerate()
            .filter_map(|(i, f)| match (parse_file_name(&f.name), self.done.get(i)) {
                (Some((id, FileKind::Segment)), Some(Some(Done::Segment(_)))) => Some((id, i)),
                _ => None,
            })
            .collect();
        segs.sort_unstable();
        segs
    }

    fn segment(&self, i: usize) -> Option<&crate::read::scan::SegmentSummary> {
        match self.done.get(i) {
            Some(Some(Done::Segment(s))) => Some(s),
            _ => None,
        }
    }

    /// Which newest segments never took effect (recovery removes them:
    /// [`crate::shard::tail::abandoned_tail`]), and the segment before
    /// them, newest once they are gone, judged as the newest.
    fn settle_tail(&mut self) {
        let segs = self.segments_by_id();
        let shapes: Vec<TailShape> = segs.iter().filter_map(|(_, i)| self.segment(*i)).map(tail_shape).collect();
        let gone = if shapes.len() == segs.len() { abandoned_tail(&shapes) } else { 0 };
        self.abandoned = segs.iter().rev().take(gone).map(|(_, i)| *i).collect();
        if gone == 0 {
            return;
        }
        self.tail = segs.len().checked_sub(gone + 1).and_then(|k| segs.get(k)).map(|(_, i)| *i);
        if let Some(Some(Done::Segment(s))) = self.tail.and_then(|t| self.done.get_mut(t)) {
            s.judge_as_newest();
        }
    }

    /// The note of a segment recovery removes as a rollover that never took
    /// effect (an unfinished creation says so itself).
    fn abandoned_note(&self, i: usize) -> Option<String> {
        let s = self.segment(i).filter(|s| !s.unfinished && self.abandoned.contains(&i))?;
        let base = s.header?.base_offset;
        let segs = self.segments_by_id();
        let k = segs.iter().position(|(_, f)| *f == i)?;
        let before = k.checked_sub(1).and_then(|b| segs.get(b)).and_then(|(_, f)| self.segment(*f))?.next_offset();
        let ends = before.map_or_else(|| "no offset".into(), |e| format!("offset {e}"));
        // Past the clean end of the segment left newest (a damaged tail says itself why records are missing).
        let tail = self.tail.and_then(|t| self.segment(t)).filter(|t| t.findings.findings.is_empty());
        let unheld = tail.and_then(|t| unheld_words(t.next_offset()?, base)).map_or_else(String::new, |w| format!("; {w}"));
        Some(format!(
            "a rollover that never took effect: this segment holds a header and no record, and its base offset {base} is not \
             where the segment before it ends ({ends} would follow); it holds nothing to lose: recovery moves its bytes to \
             evidence and removes it, and the segment before it is the newest{unheld}"
        ))
    }

    fn cross_check(&mut self) {
        let mut segs = self.segments_by_id();
        // The segments recovery removes continue nothing.
        segs.retain(|(_, i)| !self.abandoned.contains(i));
        let mut extra: Vec<(usize, Finding)> = Vec::new();
        // Consecutive segments continue each other's offsets.
        for pair in segs.windows(2) {
            let [(_, a), (_, b)] = pair else { continue };
            let (Some(sa), Some(sb)) = (self.segment(*a), self.segment(*b)) else { continue };
            // A segment whose header is rejected tells no end to measure the next by.
            let Some(hb) = sb.header else { continue };
            if let Some(kind) = crate::shard::tail::discontinuity(sa.told_end(), sa.tail_damaged(), hb.base_offset) {
                let at = SEGMENT_BASE_OFFSET_AT as u64;
                extra.push((*b, Finding { kind, site: self.ctx(*b).site(at), end: at + 8, offset: None, repair: Repair::Never }));
            }
        }
        // Each index names its segment's base offset.
        for (i, f) in self.files.iter().enumerate() {
            let Some((id, FileKind::Index)) = parse_file_name(&f.name) else { continue };
            let Some(Some(Done::Index(ix))) = self.done.get(i) else { continue };
            let Some(ih) = ix.header else { continue };
            let seg = segs.iter().find(|(sid, _)| *sid == id).and_then(|(_, si)| self.segment(*si));
            if let Some(sh) = seg.and_then(|s| s.header) {
                if sh.base_offset != ih.base_offset {
                    let kind = CorruptionKind::IndexBaseOffset { index: ih.base_offset, segment: sh.base_offset };
                    let at = INDEX_BASE_OFFSET_AT as u64;
                    extra.push((i, Finding { kind, site: self.ctx(i).site(at), end: at + 8, offset: None, repair: Repair::Always }));
                }
            }
        }
        // Every epoch starts at or below the log's end.
        let log_end = segs.last().and_then(|(_, i)| self.segment(*i)).and_then(crate::read::scan::SegmentSummary::next_offset);
        if let Some(log_end) = log_end {
            for (i, f) in self.files.iter().enumerate() {
                if FileKind::from_name(&f.name) != Some(FileKind::Epochs) {
                    continue;
                }
                let Some(Some(Done::Epochs(ep))) = self.done.get(i) else { continue };
                for (n, e) in ep.entries.iter().enumerate() {
                    if e.start_offset > log_end {
                        let kind = CorruptionKind::EpochsBeyondLog { generation: e.generation, start_offset: e.start_offset, log_end };
                        let at = entry_position(n);
                        let site = self.ctx(i).site(at);
                        extra.push((i, Finding { kind, site, end: at + EPOCH_ENTRY_LEN as u64, offset: None, repair: Repair::Never }));
                    }
                }
            }
        }
        for (i, f) in extra {
            if let Some(e) = self.extra.get_mut(i) {
                e.push(f);
            }
        }
    }

    fn note_missing_companions(&self, reports: &mut [FileReport]) {
        let ids = |kind| -> Vec<u64> {
            self.files.iter().filter_map(|f| parse_file_name(&f.name)).filter(|(_, k)| *k == kind).map(|(id, _)| id).collect()
        };
        let (segments, indexes) = (ids(FileKind::Segment), ids(FileKind::Index));
        for (i, (f, r)) in self.files.iter().zip(reports.iter_mut()).enumerate() {
            match parse_file_name(&f.name) {
                // A segment recovery removes gets no index: its own note says what becomes of it.
                Some((id, FileKind::Segment)) if !indexes.contains(&id) && !self.abandoned.contains(&i) => {
                    r.notes.push("no index file: the engine rebuilds it from this segment on open".into());
                }
                Some((id, FileKind::Index)) if !segments.is_empty() && segments.iter().all(|s| *s < id) => {
                    let from = r.base_offset.map_or_else(String::new, |b| format!(" (offsets from {b})"));
                    r.notes.push(format!(
                        "no segment with this id, and it is newer than every segment here: the newest segment{from} may be lost \
                         (`felix-storage diff` against a healthy replica shows whether it holds them); an orphaned index, ignored \
                         by readers; recovery moves it to evidence"
                    ));
                }
                Some((id, FileKind::Index)) if !segments.contains(&id) => {
                    r.notes.push("no segment with this id: an orphaned index, ignored by readers; recovery moves it to evidence".into());
                }
                None if segments.is_empty() && classify(&f.name) == EntryName::Epochs => {
                    r.notes.push(
                        "no segment names this shard: its epochs are judged on their own (no log to check their offsets against)".into(),
                    );
                }
                _ => {}
            }
        }
    }
}

/// What [`abandoned_tail`] needs of a segment's scan.
fn tail_shape(s: &crate::read::scan::SegmentSummary) -> TailShape {
    let header_only = s.records == 0 && s.findings.findings.is_empty() && s.size == SEGMENT_HEADER_LEN as u64;
    TailShape { unfinished: s.unfinished, empty_at: s.header.filter(|_| header_only).map(|h| h.base_offset), next_offset: s.told_end() }
}

fn file_report(path: String, name: &str, ctx: &ScanContext, done: Done) -> FileReport {
    let id = parse_file_name(name).map(|(id, _)| id);
    let (kind, size) = match &done {
        Done::Segment(s) => (FileKind::Segment, s.size),
        Done::Index(s) => (FileKind::Index, s.size),
        Done::Epochs(s) => (FileKind::Epochs, s.size),
        Done::Unknown { size, .. } => (FileKind::Unknown, *size),
    };
    let mut r = FileReport::new(path, kind, size);
    r.shard = ctx.shard.clone();
    r.segment_id = id;
    match done {
        Done::Segment(s) => {
            r.base_offset = s.header.map(|h| h.base_offset);
            r.records = s.records;
            r.first_offset = s.first_offset;
            r.last_offset = s.last_offset;
            r.time = s.time;
            r.add_findings(&s.findings.findings);
            r.findings_omitted = s.findings.omitted;
            r.notes = s.findings.notes;
            if FileKind::from_name(name).is_some() && id.is_none() {
                r.notes.push(format!("file name {name:?} is not a 20-digit segment id"));
            }
        }
        Done::Index(s) => {
            r.base_offset = s.header.map(|h| h.base_offset);
            r.index_entries = Some(s.entries);
            r.add_findings(&s.findings.findings);
            r.findings_omitted = s.findings.omitted;
            r.notes = s.findings.notes;
        }
        Done::Epochs(s) => {
            r.entries = Some(s.entries.iter().map(|e| [e.generation, e.start_offset]).collect());
            r.add_findings(&s.findings.findings);
            r.findings_omitted = s.findings.omitted;
            r.notes = s.findings.notes;
        }
        Done::Unknown { first, .. } => r.notes.push(match classify(name) {
            EntryName::Lock => {
                "the writer's lock file: a writer holds it (flock) only while it has the shard open; the file alone means nothing".into()
            }
            EntryName::Temporary => "a temporary file of the engine's, never finished: recovery removes it".into(),
            EntryName::Evidence { .. } if name.contains(".index.cut-") => {
                "evidence: an orphaned index recovery removed (no segment had its id), kept whole and never replaced".into()
            }
            EntryName::Evidence { position, .. } => {
                format!("evidence: bytes recovery cut from this segment at byte {position} (or why), kept and never replaced")
            }
            EntryName::DamagedEpochs => {
                "evidence: a damaged epochs file the engine replaced with a sound one, kept and never replaced".into()
            }
            EntryName::Foreign if ctx.shard.is_some() => format!(
                "not one of the format's file names, so no Felix reader or writer ever reads it (inspect it alone to check its bytes); its first bytes look like {}",
                describe_magic(&first)
            ),
            _ => format!("not a Felix storage file: its first bytes look like {}", describe_magic(&first)),
        }),
    }
    r
}
