//! The index scanner, and the check of an index against its segment.
//!
//! Entries must ascend strictly by offset and by position. A torn final
//! entry is a note, not a finding. [`IndexCheck`] then walks the segment's
//! records (from the segment scanner's items) and reports every entry that
//! does not land on a real record boundary carrying its offset.

use alloc::format;
use alloc::vec::Vec;

use super::{Findings, Item, ScanContext, Sink};
use crate::format::index::{IndexEntry, IndexHeader, IndexProblem, INDEX_ENTRY_LEN, INDEX_HEADER_LEN};
use crate::format::record::RECORD_HEADER_LEN;
use crate::format::segment_header::SEGMENT_HEADER_LEN;
use crate::verdict::corruption::{CorruptionKind, Finding, Repair};

/// Most entries kept for checking against the segment (1,048,576: 24 MiB
/// as kept). An index holding more is not trusted ([`quick_check`] calls it
/// unusable) and is rebuilt from its segment: 16× what upstream's defaults
/// write (a 256 MiB segment indexed every 4 KiB holds 65,536 entries), and
/// the most entries the engine keeps in memory per segment.
pub const MAX_CHECKED_ENTRIES: usize = 1 << 20;

/// What a whole index scan found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IndexSummary {
    /// The header, when it decoded.
    pub header: Option<IndexHeader>,
    /// Bytes scanned.
    pub size: u64,
    /// Whole entries read.
    pub entries: u64,
    /// Entries kept (in order, numbered) for the check against the segment.
    pub kept: Vec<(u64, IndexEntry)>,
    /// Bytes of a torn final entry (0 when the file ends on an entry boundary).
    pub torn_entry_bytes: u64,
    /// Findings and notes.
    pub findings: Findings,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Header,
    Entries,
    Stopped,
}

/// Scans one index file fed in chunks.
#[derive(Debug)]
pub struct IndexScanner {
    ctx: ScanContext,
    state: State,
    buf: Vec<u8>,
    total: u64,
    header: Option<IndexHeader>,
    n: u64,
    previous: Option<IndexEntry>,
    kept: Vec<(u64, IndexEntry)>,
    findings: Findings,
}

impl IndexScanner {
    /// A scanner for one index file.
    #[must_use]
    pub fn new(ctx: ScanContext) -> Self {
        Self {
            ctx,
            state: State::Header,
            buf: Vec::with_capacity(INDEX_HEADER_LEN),
            total: 0,
            header: None,
            n: 0,
            previous: None,
            kept: Vec::new(),
            findings: Findings::default(),
        }
    }

    fn add(&mut self, kind: CorruptionKind, start: u64, end: u64, sink: &mut impl Sink) {
        self.findings.add(&self.ctx, kind, (start, end), None, Repair::Always, sink);
    }

    /// Feeds the next chunk of the file.
    pub fn feed(&mut self, mut chunk: &[u8], sink: &mut impl Sink) {
        self.total = self.total.saturating_add(chunk.len() as u64);
        while !chunk.is_empty() {
            let want = match self.state {
                State::Header => INDEX_HEADER_LEN,
                State::Entries => INDEX_ENTRY_LEN,
                State::Stopped => return,
            };
            let take = want.saturating_sub(self.buf.len()).min(chunk.len());
            let (now, rest) = chunk.split_at(take);
            chunk = rest;
            self.buf.extend_from_slice(now);
            if self.buf.len() < want {
                continue;
            }
            match self.state {
                State::Header => self.on_header(sink),
                State::Entries => self.on_entry(sink),
                State::Stopped => {}
            }
            self.buf.clear();
        }
    }

    fn on_header(&mut self, sink: &mut impl Sink) {
        match IndexHeader::decode(&self.buf) {
            Ok((header, _)) => {
                self.header = Some(header);
                self.state = State::Entries;
            }
            Err((kind, end)) => {
                if let CorruptionKind::IndexMagic { .. } = kind {
                    self.findings.note(format!("the first bytes look like {}", crate::format::file_name::describe_magic(&self.buf)));
                }
                self.add(kind, 0, end as u64, sink);
                self.state = State::Stopped;
            }
        }
    }

    fn on_entry(&mut self, sink: &mut impl Sink) {
        let Some(entry) = IndexEntry::decode(&self.buf) else { return };
        let n = self.n;
        self.n += 1;
        let at = IndexEntry::file_position(n);
        sink.item(Item::IndexEntry { n, entry });
        if let Some(prev) = self.previous {
            if entry.offset <= prev.offset || entry.position <= prev.position {
                let kind = CorruptionKind::IndexOutOfOrder {
                    previous_offset: prev.offset,
                    offset: entry.offset,
                    previous_position: prev.position,
                    position: entry.position,
                };
                self.add(kind, at, at + INDEX_ENTRY_LEN as u64, sink);
            }
        }
        self.previous = Some(entry);
        if self.kept.len() < MAX_CHECKED_ENTRIES {
            self.kept.push((n, entry));
        }
    }

    /// Ends the scan.
    #[must_use]
    pub fn finish(mut self, sink: &mut impl Sink) -> IndexSummary {
        let mut torn_entry_bytes = 0;
        match self.state {
            State::Header => {
                let kind = CorruptionKind::Truncated { needed: INDEX_HEADER_LEN as u64, available: self.total };
                let total = self.total;
                self.add(kind, 0, total, sink);
            }
            State::Entries if !self.buf.is_empty() => {
                torn_entry_bytes = self.buf.len() as u64;
                self.findings.note(format!(
                    "torn final entry: the last {} bytes (from byte {}) are not a whole entry and are ignored",
                    self.buf.len(),
                    IndexEntry::file_position(self.n)
                ));
            }
            State::Entries | State::Stopped => {}
        }
        if self.n > self.kept.len() as u64 {
            self.findings.note(format!("only the first {} entries were checked against the segment", self.kept.len()));
        }
        IndexSummary { header: self.header, size: self.total, entries: self.n, kept: self.kept, torn_entry_bytes, findings: self.findings }
    }
}

/// The engine's quick check of an index at open, before any of its entries
/// is used as a hint: everything that can be judged without walking the
/// segment's records. `None` when the index may be used (each entry is still
/// verified against the record chain before a read trusts it; see
/// [`IndexCheck`] for the full check).
#[must_use]
pub fn quick_check(summary: &IndexSummary, ctx: &ScanContext, segment_base: u64, segment_len: u64) -> Option<IndexProblem> {
    let Some(header) = summary.header else {
        return Some(match summary.findings.findings.first() {
            Some(f) => IndexProblem::Finding(f.clone()),
            None => IndexProblem::Unusable("no index header".into()),
        });
    };
    if header.base_offset != segment_base {
        let kind = CorruptionKind::IndexBaseOffset { index: header.base_offset, segment: segment_base };
        let at = crate::format::index::BASE_OFFSET_AT as u64;
        return Some(IndexProblem::Finding(Finding { kind, site: ctx.site(at), end: at + 8, offset: None, repair: Repair::Always }));
    }
    if let Some(f) = summary.findings.findings.first() {
        return Some(IndexProblem::Finding(f.clone()));
    }
    if summary.torn_entry_bytes > 0 {
        return Some(IndexProblem::TornEntry);
    }
    if summary.kept.len() as u64 != summary.entries {
        return Some(IndexProblem::Unusable(format!("more than {MAX_CHECKED_ENTRIES} entries")));
    }
    let first_position = SEGMENT_HEADER_LEN as u64;
    match summary.kept.first() {
        None if segment_len > first_position => return Some(IndexProblem::Unusable("no entry for the first record".into())),
        Some((_, e)) if e.offset != segment_base || e.position != first_position => {
            return Some(IndexProblem::Unusable("the first entry is not the segment's first record".into()))
        }
        _ => {}
    }
    for (n, e) in &summary.kept {
        if e.position.saturating_add(RECORD_HEADER_LEN as u64) > segment_len {
            let kind = CorruptionKind::IndexEntryMismatch { offset: e.offset, position: e.position };
            let at = IndexEntry::file_position(*n);
            let site = ctx.site(at);
            return Some(IndexProblem::Finding(Finding {
                kind,
                site,
                end: at + INDEX_ENTRY_LEN as u64,
                offset: Some(e.offset),
                repair: Repair::Always,
            }));
        }
    }
    None
}

/// Checks index entries against the records of their segment, as the
/// segment scanner reports them (a record counts as a boundary when its
/// header verified).
#[derive(Debug)]
pub struct IndexCheck {
    ctx: ScanContext,
    /// Entries sorted by position.
    entries: Vec<(u64, IndexEntry)>,
    cursor: usize,
    mismatches: Vec<Finding>,
    /// Mismatches past [`super::MAX_FINDINGS_PER_FILE`], counted only.
    omitted: u64,
}

impl IndexCheck {
    /// A check of `entries` (as kept by [`IndexScanner`]); `ctx` names the index file.
    #[must_use]
    pub fn new(ctx: ScanContext, mut entries: Vec<(u64, IndexEntry)>) -> Self {
        entries.sort_by_key(|(n, e)| (e.position, *n));
        Self { ctx, entries, cursor: 0, mismatches: Vec::new(), omitted: 0 }
    }

    fn mismatch(&mut self, n: u64, entry: IndexEntry) {
        let at = IndexEntry::file_position(n);
        let kind = CorruptionKind::IndexEntryMismatch { offset: entry.offset, position: entry.position };
        if self.mismatches.len() < super::MAX_FINDINGS_PER_FILE {
            self.mismatches.push(Finding {
                kind,
                site: self.ctx.site(at),
                end: at + INDEX_ENTRY_LEN as u64,
                offset: Some(entry.offset),
                repair: Repair::Always,
            });
        } else {
            self.omitted = self.omitted.saturating_add(1);
        }
    }

    /// Takes one item from the segment scanner.
    pub fn item(&mut self, item: &Item<'_>) {
        let Item::Record(record) = item else { return };
        if record.status == super::RecordStatus::Torn {
            return; // not a whole record: recovery cuts it, so an entry there is stale
        }
        while let Some(&(n, entry)) = self.entries.get(self.cursor) {
            if entry.position > record.position {
                break;
            }
            self.cursor += 1;
            if entry.position < record.position || entry.offset != record.header.offset {
                self.mismatch(n, entry);
            }
        }
    }

    /// Ends the check: entries past the last record are mismatches too.
    /// Returns the findings, in index-file order (the first
    /// [`super::MAX_FINDINGS_PER_FILE`] met), and how many more there were.
    #[must_use]
    pub fn finish(mut self) -> (Vec<Finding>, u64) {
        while let Some(&(n, entry)) = self.entries.get(self.cursor) {
            self.cursor += 1;
            self.mismatch(n, entry);
        }
        self.mismatches.sort_by_key(Finding::position);
        (self.mismatches, self.omitted)
    }
}
