//! The tools' one read loop. Every byte `inspect`, `diff` and the
//! command line's plan file are read with goes through [`Opened::read_chunks`]:
//! a file opened once through [`Io::open_read`] (links followed, as the
//! tools follow them), read from a position in [`CHUNK_BYTES`] reads into
//! one page-aligned [`ReadBuf`], each chunk handed to the reader before the
//! next is read, so memory is one buffer whatever the file's size.
//!
//! The shard's own loops are apart from this one: `shard::walk::walk_shared`
//! feeds the strict reader (reads and recovery's header walks), and
//! `shard::recovery::feed_file` the shard's scan on open and in `recover`'s
//! plan, through the shard's `CheckedIo`.

use std::path::Path;

use crate::io::{Io, Links, ReadHandle, Stat};
use crate::shard::walk::ReadBuf;
use crate::tools::{io_error, ToolError};

/// Bytes per read, for every read the tools make.
pub const CHUNK_BYTES: usize = 1 << 20;

/// Which file a path named when its stamp was taken: device and inode.
pub type Identity = (u64, u64);

/// A file opened once for a tool's reads (see the module doc).
#[derive(Debug)]
pub(crate) struct Opened<'a> {
    path: &'a Path,
    handle: Box<dyn ReadHandle + 'a>,
}

/// Why [`Opened::read_chunks`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// It read the whole range asked for.
    Range,
    /// The file ended first.
    Eof,
    /// The reader wanted no more.
    Done,
}

impl<'a> Opened<'a> {
    /// Opens `path` (links followed). `Ok(None)` when `expect` names a
    /// file and the one opened is another (put at its path since its stamp
    /// was taken): its bytes are never read as that file's. Every read's
    /// own handle is checked, so a file swapped out and back is never read
    /// as the one stamped.
    ///
    /// # Errors
    /// The file cannot be opened (or its identity told).
    pub(crate) fn open(io: &'a dyn Io, path: &'a Path, expect: Option<Identity>) -> Result<Option<Self>, ToolError> {
        let handle = io.open_read(path, Links::Follow).map_err(|e| io_error(path, &e))?;
        let opened = Self { path, handle };
        if !expect.is_none_or(|id| opened.handle.stat().is_ok_and(|s| s.identity() == id)) {
            return Ok(None);
        }
        Ok(Some(opened))
    }

    /// The path it was opened at.
    #[must_use]
    pub(crate) fn path(&self) -> &Path {
        self.path
    }

    /// What the open file is now.
    ///
    /// # Errors
    /// The IO error, naming the file.
    pub(crate) fn stat(&self) -> Result<Stat, ToolError> {
        self.handle.stat().map_err(|e| io_error(self.path, &e))
    }

    /// Reads at most `limit` bytes from `start` in [`CHUNK_BYTES`] reads into
    /// `buf`, handing each chunk to `take`, which answers whether it wants
    /// more (an error from it stops the loop and is returned). Returns how
    /// many bytes were read, and why it stopped.
    ///
    /// # Errors
    /// A read that failed, naming the file; or `take`'s error.
    pub(crate) fn read_chunks(
        &self,
        start: u64,
        limit: u64,
        buf: &mut ReadBuf,
        mut take: impl FnMut(&[u8]) -> Result<bool, ToolError>,
    ) -> Result<(u64, End), ToolError> {
        let mut read = 0u64;
        while read < limit {
            buf.set_len(usize::try_from(limit - read).unwrap_or(CHUNK_BYTES).min(CHUNK_BYTES));
            let n = self.handle.read_at(start.saturating_add(read), buf.bytes_mut()).map_err(|e| io_error(self.path, &e))?;
            if n == 0 {
                return Ok((read, End::Eof));
            }
            read += n as u64;
            if !take(buf.bytes().get(..n).unwrap_or(&[]))? {
                return Ok((read, End::Done));
            }
        }
        Ok((read, End::Range))
    }
}

/// What [`read_whole`] found at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Whole {
    /// A regular file's bytes, all of them.
    Bytes(Vec<u8>),
    /// Not a regular file (a FIFO, a directory, …): not read.
    NotRegular(crate::io::EntryType),
    /// A regular file longer than the most asked for: not kept.
    TooLarge,
}

/// A small file read whole (a plan file), opened once without blocking (a
/// FIFO would wait for a writer forever) and read only if it is a regular
/// file, at most `max_bytes` of it kept: memory is bounded by the caller's
/// limit, never by a size the file claims.
///
/// # Errors
/// The file cannot be opened or read, naming it.
pub fn read_whole(io: &dyn Io, path: &Path, max_bytes: u64) -> Result<Whole, ToolError> {
    let file = Opened { path, handle: io.open_read(path, Links::Follow).map_err(|e| io_error(path, &e))? };
    let kind = file.stat()?.kind;
    if kind != crate::io::EntryType::File {
        return Ok(Whole::NotRegular(kind));
    }
    let (mut bytes, mut buf) = (Vec::new(), ReadBuf::new());
    let (read, _) = file.read_chunks(0, max_bytes.saturating_add(1), &mut buf, |chunk| {
        bytes.extend_from_slice(chunk);
        Ok(true)
    })?;
    Ok(if read > max_bytes { Whole::TooLarge } else { Whole::Bytes(bytes) })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::io::sim::SimIo;

    /// The loop reads the range asked for, in chunks of at most
    /// `CHUNK_BYTES`, stops at the end of the file or when the reader says
    /// so, and opens only the file stamped.
    #[test]
    fn reads_a_range_in_chunks_and_says_why_it_stopped() {
        let io = Arc::new(SimIo::new());
        let path = Path::new("/d/f");
        let bytes: Vec<u8> = (0..2_500_000u32).map(|i| (i % 251) as u8).collect();
        io.put(path, &bytes);
        let id = io.stat(path, Links::Follow).unwrap().identity();
        let file = Opened::open(&*io, path, Some(id)).unwrap().unwrap();
        let mut buf = ReadBuf::new();
        let (mut seen, mut sizes) = (Vec::new(), Vec::new());
        let ended = file.read_chunks(10, 2_400_000, &mut buf, |c| {
            sizes.push(c.len());
            seen.extend_from_slice(c);
            Ok(true)
        });
        assert_eq!(ended.unwrap(), (2_400_000, End::Range));
        assert_eq!(sizes, [CHUNK_BYTES, CHUNK_BYTES, 2_400_000 - 2 * CHUNK_BYTES]);
        assert_eq!(seen, bytes[10..2_400_010]);
        assert_eq!(file.read_chunks(2_000_000, u64::MAX, &mut buf, |_| Ok(true)).unwrap(), (500_000, End::Eof));
        assert_eq!(file.read_chunks(0, u64::MAX, &mut buf, |_| Ok(false)).unwrap(), (CHUNK_BYTES as u64, End::Done));
        let stop = || ToolError { path: path.into(), what: "stop".into() };
        assert_eq!(file.read_chunks(0, 5, &mut buf, |_| Err(stop())).unwrap_err().what, "stop");
        assert!(Opened::open(&*io, path, Some((id.0, id.1 + 1))).unwrap().is_none(), "another file than the one stamped");
        assert!(Opened::open(&*io, Path::new("/d/none"), None).is_err());
    }

    /// A small file is read whole; a longer one, or what is not a regular
    /// file, is not kept.
    #[test]
    fn read_whole_keeps_a_regular_file_up_to_the_limit() {
        let io = SimIo::new();
        io.put(Path::new("/d/plan.json"), b"{}");
        assert_eq!(read_whole(&io, Path::new("/d/plan.json"), 2).unwrap(), Whole::Bytes(b"{}".to_vec()));
        assert_eq!(read_whole(&io, Path::new("/d/plan.json"), 1).unwrap(), Whole::TooLarge);
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("p");
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, rustix::fs::Mode::from_raw_mode(0o600), 0).unwrap();
        assert_eq!(read_whole(&crate::io::OsIo::new(), &fifo, 10).unwrap(), Whole::NotRegular(crate::io::EntryType::Other), "never blocks");
        assert_eq!(read_whole(&io, Path::new("/d/none"), 1).unwrap_err().path, Path::new("/d/none"));
    }
}
