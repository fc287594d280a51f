//! Feeds a segment file to the codec's strict reader ([`ChunkedReader`]) in
//! fixed windows: the one loop behind reads, index verification, recovery's
//! tail checks, truncation and `felix-storage dump`. The window is
//! `chunk_bytes`, or one record when a record is larger (at most
//! 28 + 64 MiB, asked for by the codec only after the record's header
//! verified) — never a size read from disk before it was checked.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use felix_codec::format::record::{Record, RecordHeader, RECORD_HEADER_LEN};
use felix_codec::read::reader::{ChunkedReader, ReadError, Step};
use felix_codec::MAX_PAYLOAD_BYTES;

use crate::error::EngineError;
use crate::io::checked::CheckedIo;

/// Default window for record reads.
pub(crate) const READ_CHUNK_BYTES: usize = 256 << 10;
/// Largest window a read asks for (a read wanting a megabyte of payload
/// reads it in one call, as a bare `read()` pass would).
pub(crate) const MAX_READ_WINDOW_BYTES: usize = 1 << 20;
/// The largest read a walk makes: one whole record of the largest payload.
pub(crate) const MAX_READ_BYTES: usize = RECORD_HEADER_LEN + MAX_PAYLOAD_BYTES as usize;
/// Read buffers the process keeps to use again, at most (so at most 16 MiB,
/// however many shards are open).
const POOLED_BUFFERS: usize = 16;

/// The process's read buffers kept to be used again, shared by every shard.
static READ_BUFFERS: BufPool = BufPool::new();
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
    /// (callers fill it with a read); growing allocates anew. Every caller
    /// bounds `len` by a named limit, never by a size read from disk:
    /// [`MAX_READ_BYTES`] (through `want`), `SCAN_CHUNK_BYTES`, or `inspect`'s
    /// `CHUNK_BYTES`.
    pub(crate) fn set_len(&mut self, len: usize) {
        if self.bytes.len().saturating_sub(self.start) < len {
            self.bytes = vec![0u8; len.saturating_add(READ_ALIGN)];
            let misalignment = self.bytes.as_ptr() as usize % READ_ALIGN;
            self.start = (READ_ALIGN - misalignment) % READ_ALIGN;
        }
        self.len = len;
    }

    /// Bytes allocated (with the alignment slack).
    fn capacity(&self) -> usize {
        self.bytes.len()
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
/// that much plus room for headers (a page, and a sixteenth for small
/// records), at most [`MAX_READ_WINDOW_BYTES`] — so a read that stops at its
/// budget does not read (and drop) much past it. (A record larger than the
/// window is still read whole: the reader asks for it.)
pub(crate) fn budget_window(budget: usize) -> usize {
    budget.saturating_add(budget / 16).saturating_add(4096).min(MAX_READ_WINDOW_BYTES)
}

/// Read buffers kept to be used again: a fresh buffer costs a zero-fill of
/// every byte before the kernel copies into it, as much again as the copy.
/// A buffer whose bytes are still shared by payloads handed out (see
/// [`walk_shared`]) is used again only once the last one is dropped. At most
/// [`POOLED_BUFFERS`] buffers of at most [`MAX_READ_WINDOW_BYTES`] (plus a
/// page) are kept.
#[derive(Debug)]
struct BufPool(std::sync::Mutex<Vec<Arc<ReadBuf>>>);

impl BufPool {
    const fn new() -> Self {
        Self(std::sync::Mutex::new(Vec::new()))
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, Vec<Arc<ReadBuf>>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A buffer of the caller's own: a kept one no payload shares any more, or a new one.
    fn take(&self) -> ReadBuf {
        let mut slots = self.slots();
        // Under the lock, a count of one means only the pool holds it, and
        // nothing can clone it but the pool.
        let free = slots.iter().position(|b| Arc::strong_count(b) == 1).map(|i| slots.swap_remove(i));
        free.and_then(|b| Arc::try_unwrap(b).ok()).unwrap_or_default()
    }

    /// Keeps `buf` (or a clone of it) to be used again, if it is small enough and there is room.
    fn keep(&self, buf: Arc<ReadBuf>) {
        if buf.capacity() > MAX_READ_WINDOW_BYTES + READ_ALIGN {
            return;
        }
        let mut slots = self.slots();
        if slots.len() < POOLED_BUFFERS {
            slots.push(buf);
        } else if let Some(i) = slots.iter().position(|b| Arc::strong_count(b) > 1) {
            // Full: a free buffer is worth more than one still shared.
            if Arc::strong_count(&buf) == 1 {
                slots[i] = buf;
            }
        }
    }
}

/// A read buffer shared by the payloads cut from it.
struct Shared(Arc<ReadBuf>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        self.0.bytes()
    }
}

/// [`walk`], asking `window` for the size of each read (at least one record
/// is always read whole), in kept buffers ([`walk_shared`] without the windows).
pub(crate) fn walk_windows(
    io: &CheckedIo,
    path: &Path,
    end: u64,
    reader: ChunkedReader,
    window: impl FnMut() -> usize,
    mut visit: impl FnMut(Seen<'_>) -> Flow,
) -> Result<Walked, EngineError> {
    walk_shared(io, path, end, reader, window, |seen, _| visit(seen))
}

/// The bytes to read at `position` when the reader asks for `len` and the
/// window is `window`: never past `end`, never less than `len`, never more
/// than [`MAX_READ_BYTES`] (the reader asks for a whole record only once its
/// header verified, so it never asks for more; were it to, the read is refused).
fn want(path: &Path, end: u64, position: u64, len: usize, window: usize) -> Result<usize, EngineError> {
    if len > MAX_READ_BYTES {
        let message = format!("a read of {len} bytes at byte {position}, more than the largest record ({MAX_READ_BYTES} bytes)");
        return Err(EngineError::Io { path: path.to_path_buf(), op: "read", message });
    }
    let left = usize::try_from(end.saturating_sub(position)).unwrap_or(usize::MAX);
    Ok(len.max(window.min(MAX_READ_BYTES)).min(left).max(len))
}

/// The one walk loop, for reads that hand payloads out without copying
/// them: each window is read into a kept page-aligned buffer that nothing
/// else holds (or a new one), shared as [`Bytes`], and `visit` gets each
/// record or header with the window it lies in (so a payload is a slice of
/// it). A window's buffer lives as long as any payload cut from it, and is
/// used again only after the last one is dropped.
pub(crate) fn walk_shared(
    io: &CheckedIo,
    path: &Path,
    end: u64,
    mut reader: ChunkedReader,
    mut window: impl FnMut() -> usize,
    mut visit: impl FnMut(Seen<'_>, &Bytes) -> Flow,
) -> Result<Walked, EngineError> {
    let mut shared = Bytes::new();
    let mut window_pos = reader.position();
    loop {
        let seen = match reader.step(&shared, window_pos) {
            Step::Record { position, record } => Seen::Record(position, record),
            Step::Header { position, header } => Seen::Header(position, header),
            Step::NeedBytes { position, len } => {
                let want = want(path, end, position, len, window())?;
                // The last window is done with: unless a payload still holds
                // it, its buffer can be this read's.
                drop(std::mem::take(&mut shared));
                let mut buf = READ_BUFFERS.take();
                buf.set_len(want);
                let read = io.read_exact_at(path, position, buf.bytes_mut());
                let held = Arc::new(buf);
                READ_BUFFERS.keep(Arc::clone(&held));
                read?;
                shared = Bytes::from_owner(Shared(held));
                window_pos = position;
                continue;
            }
            Step::Defect(defect) => return Ok(Walked { reader, defect: Some(defect) }),
            Step::End => return Ok(Walked { reader, defect: None }),
        };
        if visit(seen, &shared) == Flow::Stop {
            return Ok(Walked { reader, defect: None });
        }
    }
}

/// `part` (a slice of `window`) as a [`Bytes`] sharing `window`'s buffer.
pub(crate) fn share(window: &Bytes, part: &[u8]) -> Bytes {
    let start = (part.as_ptr() as usize).wrapping_sub(window.as_ptr() as usize);
    match start.checked_add(part.len()) {
        Some(end) if end <= window.len() && !part.is_empty() => window.slice(start..end),
        // Not inside the window (never, by construction), or empty: a copy is always right.
        _ => Bytes::copy_from_slice(part),
    }
}
