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

/// Alignment of [`ReadBuf`]'s bytes: a page.
const READ_ALIGN: usize = 4096;

/// A read buffer whose bytes start on a page boundary.
///
/// The kernel copies a read into it; on this project's AMD machines that copy
/// runs about 4x slower when the destination sits 16 bytes past a page
/// boundary — exactly where the allocator puts a large `Vec` (a fresh
/// mapping plus its 16-byte header). Measured: 256 MiB through 1 MiB reads
/// and CRC-32, 178 ms at offset 16, 44 ms at 0, 32, 64 or 2048. Safe code:
/// the buffer over-allocates by a page and hands out its aligned part.
#[derive(Debug, Default)]
pub(crate) struct ReadBuf {
    bytes: Vec<u8>,
    start: usize,
    len: usize,
}

impl ReadBuf {
    /// An empty buffer (nothing allocated yet).
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Makes the buffer `len` bytes long. Its contents are unspecified
    /// (callers fill it with a read); growing allocates anew.
    pub(crate) fn set_len(&mut self, len: usize) {
        if self.bytes.len().saturating_sub(self.start) < len {
            self.bytes = vec![0u8; len.saturating_add(READ_ALIGN)];
            let misalignment = self.bytes.as_ptr() as usize % READ_ALIGN;
            self.start = (READ_ALIGN - misalignment) % READ_ALIGN;
        }
        self.len = len;
    }

    /// The bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.bytes.get(self.start..self.start + self.len).unwrap_or_default()
    }

    /// The bytes, to read into.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        self.bytes.get_mut(self.start..self.start + self.len).unwrap_or_default()
    }
}

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
    reader: ChunkedReader,
    chunk_bytes: usize,
    visit: impl FnMut(Seen<'_>) -> Flow,
) -> Result<Walked, EngineError> {
    walk_windows(io, path, end, reader, || chunk_bytes, visit)
}

/// The window for a read that still wants about `budget` payload bytes:
/// that much plus room for headers, within [`HEADER_CHUNK_BYTES`] and
/// [`READ_CHUNK_BYTES`] — so a read that stops at its budget does not read
/// (and drop) most of a full window past it.
pub(crate) fn budget_window(budget: usize) -> usize {
    budget.saturating_add(budget / 16).saturating_add(4096).clamp(HEADER_CHUNK_BYTES, READ_CHUNK_BYTES)
}

/// [`walk`], asking `window` for the size of each read (at least one record
/// is always read whole).
pub(crate) fn walk_windows(
    io: &CheckedIo,
    path: &Path,
    end: u64,
    mut reader: ChunkedReader,
    mut window: impl FnMut() -> usize,
    mut visit: impl FnMut(Seen<'_>) -> Flow,
) -> Result<Walked, EngineError> {
    let mut buf = ReadBuf::new();
    let mut window_pos = reader.position();
    loop {
        match reader.step(buf.bytes(), window_pos) {
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
                let want = len.max(window()).min(left).max(len);
                buf.set_len(want);
                io.read_exact_at(path, position, buf.bytes_mut())?;
                window_pos = position;
            }
            Step::Defect(defect) => return Ok(Walked { reader, defect: Some(defect) }),
            Step::End => return Ok(Walked { reader, defect: None }),
        }
    }
}
