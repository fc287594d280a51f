//! Feeds a segment file to the codec's strict reader ([`ChunkedReader`]) in
//! fixed windows: the one loop behind reads, index verification, recovery's
//! tail checks, truncation and `felix-storage dump`. The window is
//! `chunk_bytes`, or one record when a record is larger (at most
//! 28 + 64 MiB, asked for by the codec only after the record's header
//! verified) — never a size read from disk before it was checked.

use std::path::Path;

use felix_codec::reader::{ChunkedReader, ReadError, Step};
use felix_codec::record::{Record, RecordHeader};

use crate::error::EngineError;
use crate::io::checked::CheckedIo;

/// Default window for record reads.
pub(crate) const READ_CHUNK_BYTES: usize = 256 << 10;
/// Window for headers-only walks (payloads are mostly skipped).
pub(crate) const HEADER_CHUNK_BYTES: usize = 64 << 10;

/// One record met by a walk.
pub(crate) enum Seen<'a> {
    /// A whole verified record.
    Record(u64, Record<'a>),
    /// A verified header (headers-only walk).
    Header(u64, RecordHeader),
}

/// Whether the walk goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    Stop,
}

/// How a walk ended.
#[derive(Debug)]
pub(crate) struct Walked {
    /// The reader's state where it stopped (position and expected offset).
    pub(crate) reader: ChunkedReader,
    /// The first defect, when the walk met one.
    pub(crate) defect: Option<ReadError>,
}

/// Walks `path` from where `reader` stands to its end, calling `visit` for
/// each record (or header) until it returns [`Flow::Stop`], a defect, or the end.
pub(crate) fn walk(
    io: &CheckedIo,
    path: &Path,
    end: u64,
    mut reader: ChunkedReader,
    chunk_bytes: usize,
    mut visit: impl FnMut(Seen<'_>) -> Flow,
) -> Result<Walked, EngineError> {
    let mut buf: Vec<u8> = Vec::new();
    let mut window_pos = reader.position();
    loop {
        match reader.step(&buf, window_pos) {
            Step::Record { position, record } => {
                if visit(Seen::Record(position, record)) == Flow::Stop {
                    return Ok(Walked { reader, defect: None });
                }
            }
            Step::Header { position, header } => {
                if visit(Seen::Header(position, header)) == Flow::Stop {
                    return Ok(Walked { reader, defect: None });
                }
            }
            Step::NeedBytes { position, len } => {
                let left = usize::try_from(end.saturating_sub(position)).unwrap_or(usize::MAX);
                let want = len.max(chunk_bytes).min(left).max(len);
                buf.resize(want, 0);
                io.read_exact_at(path, position, &mut buf)?;
                window_pos = position;
            }
            Step::Defect(defect) => return Ok(Walked { reader, defect: Some(defect) }),
            Step::End => return Ok(Walked { reader, defect: None }),
        }
    }
}
