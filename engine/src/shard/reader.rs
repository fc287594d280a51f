//! Reads. A read never returns bytes that are not a record on the segment's
//! chain from its header: an index entry is only a hint, and before a read
//! starts from one, the record headers between the last verified entry and
//! it are walked (28 bytes per record, payloads skipped) and the entry must
//! land exactly on a record carrying its offset. An entry that does not is
//! dropped from memory (with a warning; `recover` rebuilds the file) and the
//! read starts from the last one that does. Verification is remembered, so
//! each stretch of a segment is walked once per open. [`Shard::read_ranges`]
//! returns the same records as verified file ranges, for zero-copy sends.

use std::path::Path;
use std::sync::Arc;

use felix_codec::format::index::IndexEntry;
use felix_codec::format::record::{ExpectedOffset, Record};
use felix_codec::format::segment_header::{SegmentHeader, SEGMENT_HEADER_LEN};
use felix_codec::read::reader::{ChunkedReader, ReadError};
use felix_codec::read::time::TimeSeek;
use felix_codec::{CorruptionSite, Finding, Repair};

use super::walk::{budget_window, share, walk, walk_shared, Flow, Seen, HEADER_CHUNK_BYTES, READ_CHUNK_BYTES};
use super::{Shard, StoredRecord};
use crate::error::EngineError;
use crate::io::checked::CheckedIo;
use crate::io::Io;

mod ranges;
pub use ranges::RecordRange;

/// Where a read starts in one segment: a record boundary and its offset.
type Start = (u64, ExpectedOffset);

/// A segment a read walks: `(id, base offset, readable length)`.
pub(super) type SegmentSpan = (u64, u64, u64);

impl Shard {
    /// Reads records from `from_offset`, up to about `max_bytes` of payload
    /// (always at least one record when any exists). Reading past the end
    /// returns nothing; below the oldest record, `Trimmed`.
    ///
    /// # Errors
    /// `Trimmed`, `FailStopped`, IO failures, or damage met in the records read.
    pub fn read(&self, from_offset: u64, max_bytes: usize) -> Result<Vec<StoredRecord>, EngineError> {
        self.read_bounded(from_offset, max_bytes, usize::MAX)
    }

    /// As [`Shard::read`], returning at most `max_records` records (at least
    /// one when any exists): payload bytes alone do not bound a response of
    /// empty records.
    ///
    /// # Errors
    /// As [`Shard::read`].
    pub fn read_bounded(&self, from_offset: u64, max_bytes: usize, max_records: usize) -> Result<Vec<StoredRecord>, EngineError> {
        let started = std::time::Instant::now();
        let out = self.consistently(|| self.read_inner(from_offset, max_bytes, max_records.max(1)))?;
        metrics::counter!(crate::metrics_names::READ_RECORDS_TOTAL).increment(out.len() as u64);
        metrics::counter!(crate::metrics_names::READ_BYTES_TOTAL).increment(out.iter().map(|r| r.payload.len() as u64).sum::<u64>());
        metrics::histogram!(crate::metrics_names::READ_DURATION_SECONDS).record(started.elapsed().as_secs_f64());
        Ok(out)
    }

    /// Runs a read (`read`, `read_ranges`, a time seek) until no truncation and no removal
    /// of the oldest segment came while it ran. A read walks the files
    /// without the shard's lock, from a snapshot taken under it; a
    /// truncation meanwhile may cut what it walks (a short read, or records
    /// rewritten at the same offsets and not yet durable), and retention may
    /// remove a file it is about to open. So its answer — records or an
    /// error — counts only when the shard's truncation count and oldest
    /// segment are the same after it as before; otherwise it runs again, from
    /// a fresh snapshot (which says `Trimmed` when the offset went). From
    /// its third run on it holds retention off ([`Shard::hold_retention`]):
    /// only truncations can race it then.
    ///
    /// # Errors
    /// The read's own; an IO error saying so when [`READ_ATTEMPTS`] runs in
    /// a row were raced (records it cannot vouch for are never returned).
    pub(super) fn consistently<T>(&self, mut read: impl FnMut() -> Result<T, EngineError>) -> Result<T, EngineError> {
        let mut held = None;
        for attempt in 0..READ_ATTEMPTS {
            if attempt == super::retention::OVERTAKEN_BEFORE_HOLDING {
                held = Some(self.hold_retention());
            }
            let before = self.read_epoch();
            let answer = read();
            if self.read_epoch() == before {
                return answer;
            }
        }
        drop(held);
        Err(EngineError::Io {
            path: self.shared.dir.path.clone(),
            op: "read",
            message: format!("{READ_ATTEMPTS} reads in a row raced a truncation or a retention pass; read again"),
        })
    }

    /// What a racing truncation or retention pass changes: the shard's
    /// truncation count and its oldest segment's id (under the lock: the
    /// published accessors may not show yet a change whose files are gone).
    fn read_epoch(&self) -> (u64, Option<u64>) {
        let g = self.shared.lock();
        (g.truncations, g.segments.first().map(|s| s.id))
    }

    /// The segments a read from `from_offset` walks, as `(id, base offset,
    /// readable length)` from the one holding it on, and the offset where
    /// visible records end; `None` when nothing is visible at or after it.
    /// Both `read` and `read_ranges` start here.
    ///
    /// # Errors
    /// `Trimmed` below the oldest record; `FailStopped`.
    pub(super) fn segments_from(&self, from_offset: u64) -> Result<Option<(Vec<SegmentSpan>, u64)>, EngineError> {
        let shared = &*self.shared;
        shared.dir.io.check()?;
        let g = shared.lock();
        let first = g.first_offset();
        if from_offset < first {
            return Err(EngineError::Trimmed { requested: from_offset, oldest: first });
        }
        if from_offset >= g.visible_next {
            return match &g.unreadable {
                Some((path, finding)) => Err(EngineError::Corrupt { path: path.clone(), finding: Box::new(finding.clone()) }),
                None => Ok(None),
            };
        }
        let at = g.segments.partition_point(|s| s.base <= from_offset).saturating_sub(1);
        let active = g.segments.last().map(|s| s.id);
        let segs = g
            .segments
            .get(at..)
            .unwrap_or(&[])
            .iter()
            .map(|s| (s.id, s.base, if Some(s.id) == active { g.visible_len.min(s.len) } else { s.len }))
            .collect();
        Ok(Some((segs, g.visible_next)))
    }

    /// One run of [`Shard::read_bounded`] (see [`Shard::consistently`]).
    fn read_inner(&self, from_offset: u64, max_bytes: usize, max_records: usize) -> Result<Vec<StoredRecord>, EngineError> {
        let shared = &*self.shared;
        let Some((segments, end)) = self.segments_from(from_offset)? else { return Ok(Vec::new()) };
        let mut out = Vec::new();
        let mut bytes = 0usize;
        let budget = std::cell::Cell::new(max_bytes);
        let records_left = std::cell::Cell::new(max_records);
        for (i, (id, base, len)) in segments.into_iter().enumerate() {
            let (position, expected) = if i == 0 {
                self.verified_start(id, base, len, from_offset)?
            } else {
                (SEGMENT_HEADER_LEN as u64, ExpectedOffset::Exactly(base))
            };
            let mut done = false;
            let path = shared.dir.log(id);
            // A read capped at a few records wants a window for about that many
            // (a page each; a larger record is still read whole), not a megabyte.
            let window = || budget_window(budget.get().min(records_left.get().saturating_mul(4096)));
            let reader = ChunkedReader::new(position, expected, len);
            let walked = walk_shared(&shared.dir.io, &path, len, reader, window, |seen, buf| {
                let Seen::Record(_, r) = seen else { return Flow::Continue };
                if r.header.offset >= end {
                    done = true;
                    return Flow::Stop;
                }
                if r.header.offset < from_offset {
                    return Flow::Continue;
                }
                if !out.is_empty() && (bytes.saturating_add(r.payload.len()) > max_bytes || out.len() >= max_records) {
                    done = true;
                    return Flow::Stop;
                }
                bytes = bytes.saturating_add(r.payload.len());
                budget.set(max_bytes.saturating_sub(bytes));
                records_left.set(max_records.saturating_sub(out.len() + 1));
                out.push(StoredRecord {
                    offset: r.header.offset,
                    timestamp_micros: r.header.timestamp_micros,
                    checksum: r.header.checksum,
                    payload: share(buf, r.payload),
                });
                Flow::Continue
            })?;
            if let Some(e) = walked.defect {
                // Every intact record before the damage is returned; the
                // next read, starting at the damaged record, gets the error.
                return if out.is_empty() { Err(self.damage(id, &e)) } else { Ok(out) };
            }
            if done {
                break;
            }
        }
        Ok(out)
    }

    pub(super) fn damage(&self, id: u64, e: &ReadError) -> EngineError {
        let dir = &self.shared.dir;
        let site = CorruptionSite { shard: Some(dir.name.clone()), segment_id: Some(id), position: e.position };
        let finding = Finding { kind: e.kind.clone(), site, end: e.end, offset: e.offset, repair: Repair::Never };
        EngineError::Corrupt { path: dir.log(id), finding: Box::new(finding) }
    }

    /// The verified record boundary to start reading `from` in segment `id`.
    fn verified_start(&self, id: u64, base: u64, len: u64, from: u64) -> Result<Start, EngineError> {
        let shared = &*self.shared;
        let head = (SEGMENT_HEADER_LEN as u64, ExpectedOffset::Exactly(base));
        loop {
            let (start, targets, verified) = {
                let g = shared.lock();
                let Some(seg) = g.segments.iter().find(|s| s.id == id) else { return Ok(head) };
                let entries = &seg.index.entries;
                let Some(k) = entries.partition_point(|e| e.offset <= from).checked_sub(1) else { return Ok(head) };
                let verified = seg.index.verified;
                if k < verified {
                    let e = entries.get(k).copied().unwrap_or(IndexEntry { offset: base, position: head.0 });
                    return Ok((e.position, ExpectedOffset::Exactly(e.offset)));
                }
                let start = match verified.checked_sub(1).and_then(|v| entries.get(v)) {
                    Some(e) => (e.position, ExpectedOffset::Exactly(e.offset)),
                    None => head,
                };
                (start, entries.get(verified..=k).unwrap_or(&[]).to_vec(), verified)
            };
            let (landed, off_chain) = walk_to_entries(&shared.dir.io, &shared.dir.log(id), len, start, &targets)?;
            let mut g = shared.lock();
            let Some(seg) = g.segments.iter_mut().find(|s| s.id == id) else { return Ok(head) };
            seg.index.verified = seg.index.verified.max(verified + landed);
            let mut warning = None;
            if off_chain {
                let bad = verified + landed;
                if seg.index.entries.len() > bad && seg.index.verified <= bad {
                    let e = seg.index.entries.get(bad).copied();
                    seg.index.entries.truncate(bad);
                    warning = e.map(|e| {
                        format!(
                            "{}: index entry (offset {}, byte {}) does not land on a record on the segment's chain; \
                             entries from it on are not used (felix-storage recover rebuilds the index)",
                            shared.dir.index(id).display(),
                            e.offset,
                            e.position
                        )
                    });
                }
            }
            if let Some(w) = warning {
                g.warnings.push(w);
            }
        }
    }
}

/// The first record from `first` on whose verified header `hit` accepts,
/// by a headers-only walk; `Err` with the defect that ended the walk first
/// (`None`: the file ended and no record was accepted).
fn seek_start(
    io: &CheckedIo,
    (path, len): (&Path, u64),
    first: Start,
    mut hit: impl FnMut(&felix_codec::format::record::RecordHeader) -> bool,
) -> Result<Result<Start, Option<ReadError>>, EngineError> {
    let mut found = None;
    let reader = ChunkedReader::headers_only(first.0, first.1, len);
    let walked = walk(io, path, len, reader, HEADER_CHUNK_BYTES, |seen| match seen {
        Seen::Header(p, h) if hit(&h) => {
            found = Some((p, ExpectedOffset::Exactly(h.offset)));
            Flow::Stop
        }
        _ => Flow::Continue,
    })?;
    Ok(found.ok_or(walked.defect))
}

/// Walks record headers from `start` over `targets` (ascending entries):
/// returns how many landed exactly on a record with their offset, and
/// whether the next one did not (it lies off the chain, or past its end).
fn walk_to_entries(io: &CheckedIo, path: &Path, len: u64, start: Start, targets: &[IndexEntry]) -> Result<(usize, bool), EngineError> {
    let mut landed = 0usize;
    let mut off_chain = false;
    let reader = ChunkedReader::headers_only(start.0, start.1, len);
    let walked = walk(io, path, len, reader, HEADER_CHUNK_BYTES, |seen| {
        let Seen::Header(position, header) = seen else { return Flow::Continue };
        let Some(t) = targets.get(landed) else { return Flow::Stop };
        if t.position < position || (t.position == position && t.offset != header.offset) {
            off_chain = true;
            return Flow::Stop;
        }
        if t.position == position {
            landed += 1;
            if landed == targets.len() {
                return Flow::Stop;
            }
        }
        Flow::Continue
    })?;
    if landed < targets.len() && (walked.defect.is_some() || !off_chain) {
        off_chain = true;
    }
    Ok((landed, off_chain))
}

/// How a walk over one segment file ended, for tools (`felix-storage dump`).
#[derive(Debug)]
pub struct FileWalk {
    /// The segment's header.
    pub header: SegmentHeader,
    /// The first defect met, if any.
    pub defect: Option<ReadError>,
}

/// Where a tool's walk over one segment file starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkFrom {
    /// The first record.
    Start,
    /// The first record whose offset is at least this one.
    Offset(u64),
    /// The first record, in offset order, whose timestamp is at least this
    /// many microseconds (the codec's `TimeSeek`: Kafka's rule, so a clock
    /// that went back never hides a later record).
    Time(u64),
}

/// Walks one segment file strictly for a tool: the header first, then every
/// record from the one `from` names (found by a headers-only walk from the
/// start, each header's checksum verified: an index is never trusted).
/// `visit` gets each record's position and the record, and may stop the
/// walk. A `from` no record reaches visits nothing.
///
/// # Errors
/// The header's defect as `Corrupt`; IO failures.
pub fn walk_segment_file(
    io: Arc<dyn Io>,
    path: &Path,
    from: WalkFrom,
    on_header: impl FnOnce(&SegmentHeader),
    mut visit: impl FnMut(u64, Record<'_>) -> bool,
) -> Result<FileWalk, EngineError> {
    let io = CheckedIo::new(io);
    match io.kind(path)? {
        Some(crate::io::EntryType::File) => {}
        Some(other) => return Err(EngineError::NotRegular { path: path.to_path_buf(), what: other.describe() }),
        None => return Err(EngineError::io(path, "open", &std::io::Error::from(std::io::ErrorKind::NotFound))),
    }
    let len = io.len(path)?;
    let mut head = [0u8; SEGMENT_HEADER_LEN];
    let n = usize::try_from(len).unwrap_or(usize::MAX).min(SEGMENT_HEADER_LEN);
    let head = head.get_mut(..n).unwrap_or_default();
    io.read_exact_at(path, 0, head)?;
    let header = SegmentHeader::decode(head).map(|(h, _)| h).map_err(|d| {
        let site = CorruptionSite {
            shard: None,
            segment_id: felix_codec::format::file_name::parse_file_name(
                &path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            )
            .map(|(id, _)| id),
            position: 0,
        };
        EngineError::Corrupt {
            path: path.to_path_buf(),
            finding: Box::new(Finding { kind: d.kind, site, end: d.end as u64, offset: None, repair: Repair::Never }),
        }
    })?;
    on_header(&header);
    let first: Start = (SEGMENT_HEADER_LEN as u64, ExpectedOffset::Exactly(header.base_offset));
    let start = match from {
        WalkFrom::Offset(f) if f > header.base_offset => seek_start(&io, (path, len), first, |h| h.offset >= f)?,
        WalkFrom::Time(t) => {
            let mut seek = TimeSeek::new(t);
            seek_start(&io, (path, len), first, |h| seek.record(h.offset, h.timestamp_micros).is_some())?
        }
        WalkFrom::Start | WalkFrom::Offset(_) => Ok(first),
    };
    let start = match start {
        Ok(start) => start,
        Err(defect) => return Ok(FileWalk { header, defect }),
    };
    let walked = walk(&io, path, len, ChunkedReader::new(start.0, start.1, len), READ_CHUNK_BYTES, |seen| match seen {
        Seen::Record(p, r) if visit(p, r) => Flow::Continue,
        Seen::Record(..) => Flow::Stop,
        Seen::Header(..) => Flow::Continue,
    })?;
    Ok(FileWalk { header, defect: walked.defect })
}

/// How many times a read runs again when truncations or retention keep
/// racing it ([`Shard::consistently`]).
const READ_ATTEMPTS: u32 = 64;
