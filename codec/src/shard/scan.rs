//! The one shard-scan state machine: it says which bytes of which file it
//! needs next and takes them, in the order the shard's checks need
//! ([`ShardInspection::order`]), ending each file as its last bytes arrive.
//! The caller owns the IO — the CLI's `inspect`, `diff` and `recover` read
//! files through the engine's `Io`, the page slices `Blob`s in a worker —
//! and every caller drives the inspection the same way:
//!
//! ```
//! use felix_codec::format::record::encode_record;
//! use felix_codec::format::segment_header::SegmentHeader;
//! use felix_codec::shard::inspect::{InputFile, ShardInspection};
//! use felix_codec::shard::scan::ShardScan;
//! let mut log = SegmentHeader::new(0, 1).encode().to_vec();
//! encode_record(0, 1, b"hello", &mut log).unwrap();
//! let files = [("s/00000000000000000000.log", &log[..])];
//! let inputs = files.iter().map(|(p, b)| InputFile { path: (*p).into(), name: p[2..].into(), size: b.len() as u64 }).collect();
//! let mut scan = ShardScan::new(ShardInspection::new(Some("s".into()), inputs), 7);
//! while let Some(read) = scan.next_read(&mut ()) {
//!     let bytes = &files[read.file].1[read.start as usize..read.end as usize];
//!     scan.feed(bytes, &mut ());
//! }
//! let (reports, _facts) = scan.finish(&mut ()).finish_with_facts("s".into());
//! assert!(reports[0].findings.is_empty());
//! ```
//!
//! A read that comes back short (the file shrank while it was read) ends
//! that file where the bytes stopped; the report then says how many bytes
//! it saw. Bytes the verdict no longer depends on ([`Read::scan_needs`]
//! false: an epochs file past its largest valid size, a file that is not
//! the format's) may be counted instead of read ([`ShardScan::skip`]).

use crate::doc::report::Report;
use crate::read::scan::Sink;
use crate::shard::inspect::{FileScan, InputFile, ShardInspection};
use alloc::string::String;
use alloc::vec::Vec;

/// A read the scan asks for: bytes `start..end` of file `file` (an index
/// into [`ShardInspection::files`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Read {
    /// Which file.
    pub file: usize,
    /// First byte.
    pub start: u64,
    /// Exclusive end.
    pub end: u64,
    /// Whether the scan still looks at these bytes; when false the caller
    /// may [`ShardScan::skip`] them (or read them for a hash, and feed them).
    pub scan_needs: bool,
    /// The first read of this file.
    pub first: bool,
}

/// The file being read: its scan and how far it got.
#[derive(Debug)]
struct Current {
    file: usize,
    scan: FileScan,
    read: u64,
    size: u64,
    /// The end of the last read asked for.
    asked: u64,
}

/// A shard's inspection driven chunk by chunk (see the module doc).
#[derive(Debug)]
pub struct ShardScan {
    inspection: ShardInspection,
    order: Vec<usize>,
    next: usize,
    current: Option<Current>,
    chunk_bytes: u64,
}

impl ShardScan {
    /// Scans `inspection`'s files, at most `chunk_bytes` (at least 1) a read.
    #[must_use]
    pub fn new(inspection: ShardInspection, chunk_bytes: u64) -> Self {
        let order = inspection.order();
        Self { inspection, order, next: 0, current: None, chunk_bytes: chunk_bytes.max(1) }
    }

    /// The inspection's files, as given.
    #[must_use]
    pub fn inspection(&self) -> &ShardInspection {
        &self.inspection
    }

    /// The next bytes to read, or `None` once every file was read. A file
    /// whose bytes all arrived ends here, its last items going to `sink`.
    pub fn next_read(&mut self, sink: &mut impl Sink) -> Option<Read> {
        loop {
            if let Some(c) = &mut self.current {
                if c.read < c.size {
                    c.asked = c.size.min(c.read.saturating_add(self.chunk_bytes));
                    let scan_needs = c.scan.needs_bytes();
                    return Some(Read { file: c.file, start: c.read, end: c.asked, scan_needs, first: c.read == 0 });
                }
                self.end_current(sink);
                continue;
            }
            let &file = self.order.get(self.next)?;
            self.next += 1;
            let size = self.inspection.files().get(file).map_or(0, |f| f.size);
            let scan = self.inspection.begin(file);
            self.current = Some(Current { file, scan, read: 0, size, asked: 0 });
            if size == 0 {
                // An empty file is still a file: its first read is empty.
                self.end_current(sink);
            }
        }
    }

    fn end_current(&mut self, sink: &mut impl Sink) {
        if let Some(c) = self.current.take() {
            self.inspection.end(c.file, c.scan, sink);
        }
    }

    /// Feeds the bytes of the last [`Read`]. Fewer bytes than asked end the
    /// file there (it shrank while read).
    pub fn feed(&mut self, bytes: &[u8], sink: &mut impl Sink) {
        let Some(c) = &mut self.current else { return };
        c.scan.feed(bytes, sink);
        Self::advance(c, bytes.len() as u64);
    }

    /// Counts the bytes of the last [`Read`] without looking at them (only
    /// when it said [`Read::scan_needs`] false).
    pub fn skip(&mut self, n: u64) {
        let Some(c) = &mut self.current else { return };
        c.scan.skip(n);
        Self::advance(c, n);
    }

    fn advance(c: &mut Current, n: u64) {
        let wanted = c.asked.saturating_sub(c.read);
        c.read = if n < wanted { c.size } else { c.read.saturating_add(n) };
    }

    /// The file being read and its scan: the engine asks whether it is the
    /// newest segment and, when a writer started while its bytes were read,
    /// says so ([`FileScan::set_writer_live`]) before its last read is fed.
    pub fn current_scan(&mut self) -> Option<(usize, &mut FileScan)> {
        self.current.as_mut().map(|c| (c.file, &mut c.scan))
    }

    /// Whether the last [`Read`] asked for was its file's last.
    #[must_use]
    pub fn at_last_read(&self) -> bool {
        self.current.as_ref().is_some_and(|c| c.asked >= c.size)
    }

    /// Ends the scan (a file still open ends where its bytes stopped) and
    /// hands back the inspection, for its reports and facts.
    #[must_use]
    pub fn finish(mut self, sink: &mut impl Sink) -> ShardInspection {
        self.end_current(sink);
        // Files never begun (the caller stopped early) end unread, in order.
        while let Some(&file) = self.order.get(self.next) {
            self.next += 1;
            let scan = self.inspection.begin(file);
            self.inspection.end(file, scan, sink);
        }
        self.inspection
    }
}

/// Inspects whole files held in memory (tests, small inputs, the browser's
/// sample): as one shard when `shard` names it, otherwise each file alone.
/// `files` are `(path, bytes)`; bytes are fed in `chunk_bytes` pieces.
#[must_use]
pub fn inspect_in_memory(shard: Option<String>, files: &[(String, &[u8])], chunk_bytes: usize) -> Report {
    let input = |(path, bytes): &(String, &[u8])| InputFile {
        path: path.clone(),
        name: path.rsplit('/').next().unwrap_or(path).into(),
        size: bytes.len() as u64,
    };
    let chunk_bytes = chunk_bytes.max(1);
    let Some(shard) = shard else {
        let reports = files
            .iter()
            .map(|(path, bytes)| {
                let mut scan = FileScan::standalone(&input(&(path.clone(), bytes)).name);
                for chunk in bytes.chunks(chunk_bytes) {
                    scan.feed(chunk, &mut ());
                }
                scan.into_report(path.clone(), &mut ())
            })
            .collect();
        return Report::new(reports);
    };
    let inspection = ShardInspection::new(Some(shard), files.iter().map(input).collect());
    let mut scan = ShardScan::new(inspection, chunk_bytes as u64);
    while let Some(read) = scan.next_read(&mut ()) {
        let bytes = files.get(read.file).map_or(&[][..], |(_, b)| *b);
        let (start, end) = (usize::try_from(read.start).unwrap_or(usize::MAX), usize::try_from(read.end).unwrap_or(usize::MAX));
        scan.feed(bytes.get(start..end).unwrap_or(&[]), &mut ());
    }
    Report::new(scan.finish(&mut ()).finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::record::encode_record;
    use crate::format::segment_header::SegmentHeader;
    use crate::shard::inspect::InputFile;
    use alloc::string::String;
    use alloc::vec;

    fn shard() -> Vec<(String, Vec<u8>)> {
        let mut log = SegmentHeader::new(0, 1).encode().to_vec();
        for i in 0..5 {
            encode_record(i, 1, b"payload", &mut log).unwrap();
        }
        let torn = log.len() - 3;
        log.truncate(torn);
        vec![("s/00000000000000000000.log".into(), log), ("s/epochs".into(), vec![0; 3]), ("s/empty.txt".into(), vec![])]
    }

    fn inputs(files: &[(String, Vec<u8>)]) -> Vec<InputFile> {
        files.iter().map(|(p, b)| InputFile { path: p.clone(), name: p[2..].into(), size: b.len() as u64 }).collect()
    }

    fn run(files: &[(String, Vec<u8>)], chunk: u64, skip: bool) -> Vec<crate::doc::report::FileReport> {
        let mut scan = ShardScan::new(ShardInspection::new(Some("s".into()), inputs(files)), chunk);
        while let Some(r) = scan.next_read(&mut ()) {
            assert!(r.end - r.start <= chunk && r.end > r.start);
            if skip && !r.scan_needs {
                scan.skip(r.end - r.start);
            } else {
                let bytes = &files[r.file].1[r.start as usize..r.end as usize];
                scan.feed(bytes, &mut ());
            }
        }
        scan.finish(&mut ()).finish()
    }

    #[test]
    fn any_chunk_size_gives_the_whole_files_reports() {
        let files = shard();
        let whole = run(&files, u64::MAX, false);
        assert_eq!(whole[0].findings.len(), 1, "the torn tail");
        for chunk in [1, 2, 7, 28, 4096] {
            assert_eq!(run(&files, chunk, false), whole, "chunk {chunk}");
            assert_eq!(run(&files, chunk, true), whole, "chunk {chunk}, skipping");
        }
    }

    #[test]
    fn a_short_read_ends_the_file_where_its_bytes_stop() {
        let files = shard();
        let mut scan = ShardScan::new(ShardInspection::new(Some("s".into()), inputs(&files)), 1 << 20);
        while let Some(r) = scan.next_read(&mut ()) {
            let bytes = &files[r.file].1[r.start as usize..r.end as usize];
            // The segment shrank to 40 bytes while it was read.
            let cut = if r.file == 0 { &bytes[..40] } else { bytes };
            scan.feed(cut, &mut ());
        }
        let reports = scan.finish(&mut ()).finish();
        assert_eq!(reports[0].size, 40);
    }

    #[test]
    fn files_never_read_still_get_a_report() {
        let files = shard();
        let scan = ShardScan::new(ShardInspection::new(Some("s".into()), inputs(&files)), 8);
        let reports = scan.finish(&mut ()).finish();
        assert_eq!(reports.len(), 3);
    }
}
