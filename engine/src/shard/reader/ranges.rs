//! Zero-copy reads: the verified byte ranges of records, for a broker that
//! sends them to consumers as they lie on disk (`sendfile`, `splice`;
//! `std::io::copy` from a `File` to a socket or pipe does this on Linux).
//!
//! **A range never holds a byte that is not a verified record on the
//! segment's record chain.** The ranges are built from the records the
//! codec's strict reader ([`ChunkedReader`], whole records: header CRC,
//! length limit, payload checksum, offset chain) verified during this very
//! call, walked from a record boundary that is the segment's first record or
//! an index entry the chain itself confirmed (see [`super`]). Nothing is
//! copied to the caller; the bytes are read once to verify them (and are
//! then warm in the page cache for the send).

use std::cell::Cell;
use std::path::PathBuf;

use felix_codec::format::record::ExpectedOffset;
use felix_codec::format::segment_header::SEGMENT_HEADER_LEN;
use felix_codec::read::reader::ChunkedReader;

use super::super::walk::{budget_window, walk_windows, Flow, Seen};
use super::super::Shard;
use crate::error::EngineError;

/// Whole verified records, contiguous in one segment file, ready to be sent
/// as they are on disk (28-byte header then payload, record after record:
/// a consumer can check both CRCs itself).
///
/// The range stays valid while the segment holds those records: retention
/// deletes whole segments (a descriptor opened before keeps the bytes) and
/// divergence truncation (`truncate_after`) cuts records at the tail, so a
/// broker that sends after either must ask again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordRange {
    /// The segment file (open it read-only, without following links).
    pub path: PathBuf,
    /// The segment's id.
    pub segment_id: u64,
    /// Byte position of the first record's first byte.
    pub position: u64,
    /// Length in bytes: whole records, headers included.
    pub len: u64,
    /// Offset of the first record.
    pub first_offset: u64,
    /// Offset of the last record.
    pub last_offset: u64,
    /// Records in the range.
    pub records: u64,
    /// Payload bytes in the range (`len` less 28 per record).
    pub payload_bytes: u64,
}

impl RecordRange {
    /// Exclusive end of the range in its file.
    #[must_use]
    pub fn end(&self) -> u64 {
        self.position + self.len
    }
}

impl Shard {
    /// The records [`Shard::read`] would return for the same arguments, as
    /// file ranges instead of copied payloads: from `from_offset`, up to about
    /// `max_bytes` of payload (at least one record when any exists), one
    /// range per segment touched. Reading past the end returns nothing; below
    /// the oldest record, `Trimmed`.
    ///
    /// # Errors
    /// `Trimmed`, `FailStopped`, IO failures, or damage met in the records
    /// read (then no range is returned).
    pub fn read_ranges(&self, from_offset: u64, max_bytes: usize) -> Result<Vec<RecordRange>, EngineError> {
        self.consistently(|| self.read_ranges_once(from_offset, max_bytes))
    }

    /// One run of [`Shard::read_ranges`] (see `Shard::consistently`).
    fn read_ranges_once(&self, from_offset: u64, max_bytes: usize) -> Result<Vec<RecordRange>, EngineError> {
        let shared = &*self.shared;
        let Some((segments, end)) = self.segments_from(from_offset)? else { return Ok(Vec::new()) };
        let mut out: Vec<RecordRange> = Vec::new();
        let mut payload = 0usize;
        let budget = Cell::new(max_bytes);
        for (i, (id, base, len)) in segments.into_iter().enumerate() {
            let (position, expected) = if i == 0 {
                self.verified_start(id, base, len, from_offset)?
            } else {
                (SEGMENT_HEADER_LEN as u64, ExpectedOffset::Exactly(base))
            };
            let path = shared.dir.log(id);
            let mut range: Option<RecordRange> = None;
            let mut done = false;
            let reader = ChunkedReader::new(position, expected, len);
            let walked = walk_windows(
                &shared.dir.io,
                &path,
                len,
                reader,
                || budget_window(budget.get()),
                |seen| {
                    let Seen::Record(at, r) = seen else { return Flow::Continue };
                    let offset = r.header.offset;
                    if offset >= end {
                        done = true;
                        return Flow::Stop;
                    }
                    if offset < from_offset {
                        return Flow::Continue;
                    }
                    let any = !out.is_empty() || range.is_some();
                    if any && payload.saturating_add(r.payload.len()) > max_bytes {
                        done = true;
                        return Flow::Stop;
                    }
                    payload = payload.saturating_add(r.payload.len());
                    budget.set(max_bytes.saturating_sub(payload));
                    let (record_len, payload_len) = (r.header.record_len(), u64::from(r.header.payload_len));
                    // Verified records follow each other on the chain: the range only grows at its end.
                    match &mut range {
                        Some(g) if g.end() == at => {
                            g.len += record_len;
                            g.last_offset = offset;
                            g.records += 1;
                            g.payload_bytes += payload_len;
                        }
                        _ => {
                            out.extend(range.take());
                            range = Some(RecordRange {
                                path: path.clone(),
                                segment_id: id,
                                position: at,
                                len: record_len,
                                first_offset: offset,
                                last_offset: offset,
                                records: 1,
                                payload_bytes: payload_len,
                            });
                        }
                    }
                    Flow::Continue
                },
            )?;
            if let Some(e) = walked.defect {
                // As `read`: the intact records before the damage, then (next call) the error.
                out.extend(range);
                return if out.is_empty() { Err(self.damage(id, &e)) } else { Ok(out) };
            }
            out.extend(range);
            if done {
                break;
            }
        }
        Ok(out)
    }
}
