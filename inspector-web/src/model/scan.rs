//! Driving the codec over one group of files, chunk by chunk, and keeping
//! what the views need: the report (exactly the CLI's model; its file
//! hashes come separately, from `model::hash`, so the verdict never waits
//! for them), record rows for the table and the hex labels, index entries
//! and epochs. The page feeds it `Blob.slice` chunks; tests feed it slices.
//!
//! A shard is read through [`ShardDrive`], the page's one driver of the
//! codec's shard scan (`felix_codec::shard::scan::ShardScan`): the group
//! scan here and the replica compare and recovery preview
//! (`model::replica`) keep different things of the same items.

use felix_codec::doc::report::{FileReport, FindingReport};
use felix_codec::format::epochs::{Epoch, EPOCH_ENTRY_LEN};
use felix_codec::format::index::{IndexEntry, INDEX_ENTRY_LEN};
use felix_codec::format::segment_header::SEGMENT_HEADER_LEN;
use felix_codec::read::scan::epochs::entry_position;
use felix_codec::read::scan::{Item, RecordStatus};
use felix_codec::shard::inspect::{FileScan, InputFile, ShardInspection};
use felix_codec::shard::recovery::ShardFacts;
pub use felix_codec::shard::scan::Read;
use felix_codec::shard::scan::ShardScan;

use super::filemap::{MapCounts, Part};
use super::group::{file_name, Dropped, Group};
pub use super::rows::{RecordRow, Rows};
use super::window::Checkpoints;

/// Record rows kept per drop for the table and hex labels (29 bytes each,
/// [`Rows::ROW_BYTES`]; see [`Budget`]).
pub const MAX_RECORD_ROWS: usize = 1_000_000;
/// Index entries kept per drop for the index view (16 bytes each).
pub const MAX_INDEX_ROWS: usize = 1_000_000;
/// Findings shown live per chunk, at most.
pub const MAX_LIVE_FINDINGS: usize = 100;
/// Largest read per chunk.
pub const CHUNK_BYTES: u64 = 4 << 20;
/// The first read of a file (reads double from here up to [`CHUNK_BYTES`]).
pub const FIRST_CHUNK_BYTES: u64 = 64 << 10;
/// The reads a shard's scan asks for while the page's reads pace it: every
/// read the page makes (64 KiB doubling, cut into [`CHUNK_BYTES`] pieces) is
/// a multiple of it but a file's last, so the scan's reads tile the page's.
pub const TILE_BYTES: u64 = FIRST_CHUNK_BYTES;

/// Rows the page may still keep, across every file of one drop: the record
/// list and the index entries are held for the views, so a drop of many
/// files holds at most [`MAX_RECORD_ROWS`] records and [`MAX_INDEX_ROWS`]
/// entries in all, not that many per file. Files are scanned in order, and
/// the first ones take the rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Record rows left.
    pub records: usize,
    /// Index entries left.
    pub entries: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Self { records: MAX_RECORD_ROWS, entries: MAX_INDEX_ROWS }
    }
}

/// What the views need beyond the report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Detail {
    /// Records whose header verified, in file order (capped).
    pub records: Rows,
    /// Whether the cap cut the list.
    pub records_capped: bool,
    /// Every record row the scan met, listed or not (the list holds the first ones).
    pub records_seen: u64,
    /// Index entries (capped).
    pub index_entries: Vec<IndexEntry>,
    /// Epochs entries.
    pub epochs: Vec<Epoch>,
    /// Findings as the scan met them (provisional verdicts), not yet handed out.
    pub live: Vec<FindingReport>,
    /// The file map's counts (a fixed number of cells, whatever the file holds).
    pub map: MapCounts,
    /// Record boundaries a window of rows can be re-read from (a fixed
    /// number at most, whatever the file holds): rows past the listed ones.
    pub checkpoints: Checkpoints,
}

impl Detail {
    /// Nothing yet, for a file of `size` bytes.
    #[must_use]
    pub fn new(size: u64) -> Self {
        Self { map: MapCounts::new(size), ..Self::default() }
    }

    fn take(&mut self, item: &Item<'_>, limit: Budget) {
        match item {
            Item::SegmentHeader(_) => self.map.add(0, SEGMENT_HEADER_LEN as u64, Part::Header),
            Item::Record(r) => {
                let part = match r.status {
                    RecordStatus::Intact => Part::Verified,
                    RecordStatus::OutOfOrder | RecordStatus::ChecksumMismatch => Part::Damaged,
                    RecordStatus::Torn => Part::Torn,
                };
                self.map.add(r.position, r.end(), part);
                self.records_seen = self.records_seen.saturating_add(1);
                if r.status != RecordStatus::Torn {
                    self.checkpoints.after_record(self.records_seen, r.end(), r.header.offset);
                }
                if self.records.len() < limit.records {
                    self.records.push(RecordRow {
                        position: r.position,
                        offset: r.header.offset,
                        payload_len: r.header.payload_len,
                        timestamp_micros: r.header.timestamp_micros,
                        status: r.status,
                    });
                } else {
                    self.records_capped = true;
                }
            }
            Item::IndexEntry { n, entry } => {
                let at = IndexEntry::file_position(*n);
                self.map.add(at, at + INDEX_ENTRY_LEN as u64, Part::Verified);
                if self.index_entries.len() < limit.entries {
                    self.index_entries.push(*entry);
                }
            }
            Item::Epoch { n, epoch } => {
                let at = entry_position(usize::from(*n));
                self.map.add(at, at + EPOCH_ENTRY_LEN as u64, Part::Verified);
                self.epochs.push(*epoch);
            }
            Item::Finding(f) if self.live.len() < MAX_LIVE_FINDINGS => self.live.push(FindingReport::from(*f)),
            _ => {}
        }
    }
}

/// What a shard's scan keeps of each file's items: the views' [`Detail`]
/// (a group's scan), or a replica's intact records (`model::replica`).
pub trait Keep {
    /// An item of file `file` (an index into the shard's files).
    fn item(&mut self, file: usize, item: &Item<'_>);
}

/// The page's one driver of a shard's inspection: the codec's [`ShardScan`]
/// (which bytes of which file it needs next, fed as they come, a short read
/// ending its file), each item handed to `K` with the file it belongs to.
/// The group scan (the views) and the replica compare and recovery preview
/// (`model::replica`) both read a shard through it.
///
/// Items go to the file of the last read asked for: a file's last items (its
/// end comes with the next [`ShardDrive::next_read`]) go to it. An empty file
/// is begun and ended inside that same call, so its end — findings only, no
/// bytes were read — goes to the file before it (a group scan drops them
/// with that file's live findings; its report lists them).
#[derive(Debug)]
pub struct ShardDrive<K> {
    scan: ShardScan,
    keep: K,
    /// The file of the last read asked for.
    current: Option<usize>,
}

impl<K: Keep> ShardDrive<K> {
    /// Scans `files` as the shard named `shard`, at most `chunk_bytes` a read.
    #[must_use]
    pub fn new(shard: &str, files: Vec<InputFile>, chunk_bytes: u64, keep: K) -> Self {
        let inspection = ShardInspection::new(Some(shard.to_owned()), files);
        Self { scan: ShardScan::new(inspection, chunk_bytes), keep, current: None }
    }

    /// The order the shard's checks read its files in (indexes into them).
    #[must_use]
    pub fn order(&self) -> Vec<usize> {
        self.scan.inspection().order()
    }

    /// What is kept.
    #[must_use]
    pub fn keep(&self) -> &K {
        &self.keep
    }

    /// What is kept, to take from it.
    pub fn keep_mut(&mut self) -> &mut K {
        &mut self.keep
    }

    /// The next bytes to read (the codec's [`ShardScan::next_read`]), or
    /// `None` once every file was read.
    pub fn next_read(&mut self) -> Option<Read> {
        let (keep, current) = (&mut self.keep, self.current);
        let read = self.scan.next_read(&mut |item: Item<'_>| to(keep, current, &item));
        self.current = read.map(|r| r.file);
        read
    }

    /// Feeds the bytes of the last [`Read`]; fewer than asked end the file there.
    pub fn feed(&mut self, bytes: &[u8]) {
        let (keep, current) = (&mut self.keep, self.current);
        self.scan.feed(bytes, &mut |item: Item<'_>| to(keep, current, &item));
    }

    /// Ends the scan (files never read end unread) and hands back what was
    /// kept, the reports in the shard's file order (cross-file checks
    /// applied) and the facts recovery plans from (`path`: the folder as shown).
    #[must_use]
    pub fn finish(self, path: String) -> (K, Vec<FileReport>, ShardFacts) {
        let Self { scan, mut keep, current } = self;
        let inspection = scan.finish(&mut |item: Item<'_>| to(&mut keep, current, &item));
        let (reports, facts) = inspection.finish_with_facts(path);
        (keep, reports, facts)
    }
}

fn to(keep: &mut impl Keep, current: Option<usize>, item: &Item<'_>) {
    if let Some(file) = current {
        keep.item(file, item);
    }
}

/// The file a group's scan has open: its [`Detail`] and the rows it may keep.
#[derive(Debug)]
struct Open {
    file: usize,
    detail: Detail,
    limit: Budget,
}

impl Open {
    /// No file open: nothing is kept.
    fn none() -> Self {
        Self { file: usize::MAX, detail: Detail::default(), limit: Budget { records: 0, entries: 0 } }
    }
}

impl Keep for Open {
    fn item(&mut self, file: usize, item: &Item<'_>) {
        if file == self.file {
            self.detail.take(item, self.limit);
        }
    }
}

/// A shard's scan while the page's reads pace it: the reads the scan asks
/// for are [`TILE_BYTES`] long, and the page's chunks are cut into them (a
/// chunk's end that is not a whole read waits in `carry` for the next chunk:
/// never in practice, as every read the page makes is a multiple of
/// [`TILE_BYTES`] but a file's last).
#[derive(Debug)]
struct Paced {
    drive: ShardDrive<Open>,
    /// The read the scan asked for and not yet fed.
    pending: Option<Read>,
    carry: Vec<u8>,
}

impl Paced {
    /// Feeds `bytes`, the next of file `file`.
    fn feed(&mut self, file: usize, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            if self.pending.is_none() {
                self.pending = self.drive.next_read();
            }
            // Bytes past the file's size (or of a file already ended) are not the shard's.
            let Some(read) = self.pending.filter(|r| r.file == file) else { return };
            let want = usize::try_from(read.end - read.start).unwrap_or(usize::MAX);
            if self.carry.is_empty() && bytes.len() >= want {
                let (now, rest) = bytes.split_at(want);
                self.drive.feed(now);
                bytes = rest;
            } else {
                let (now, rest) = bytes.split_at((want - self.carry.len()).min(bytes.len()));
                self.carry.extend_from_slice(now);
                bytes = rest;
                if self.carry.len() < want {
                    return;
                }
                self.drive.feed(&self.carry);
                self.carry.clear();
            }
            self.pending = None;
        }
    }

    /// Ends file `file`: bytes it still wanted end it where they stopped.
    fn end(&mut self, file: usize) {
        if self.pending.is_some_and(|r| r.file == file) {
            self.drive.feed(&self.carry);
            self.carry.clear();
            self.pending = None;
        }
        if self.pending.is_none() {
            // Ends the file (its last items go to its detail) and asks for the next one's bytes.
            self.pending = self.drive.next_read();
        }
    }
}

/// One file being scanned.
#[derive(Debug)]
pub struct FileJob {
    scan: JobScan,
    done: u64,
}

#[derive(Debug)]
enum JobScan {
    /// A loose file, on its own.
    Loose(Box<(FileScan, Open)>),
    /// A shard's file: the shard's scan travels with the job while it is open.
    Shard(Box<Paced>),
}

impl FileJob {
    /// Feeds the next chunk.
    pub fn feed(&mut self, chunk: &[u8]) {
        match &mut self.scan {
            JobScan::Loose(loose) => {
                let (scan, open) = &mut **loose;
                let file = open.file;
                scan.feed(chunk, &mut |item: Item<'_>| open.item(file, &item));
            }
            JobScan::Shard(paced) => {
                let file = paced.drive.keep().file;
                paced.feed(file, chunk);
            }
        }
        self.done += chunk.len() as u64;
    }

    /// Bytes fed so far.
    #[must_use]
    pub fn bytes_done(&self) -> u64 {
        self.done
    }

    /// Findings met since the last call, with provisional repair verdicts
    /// (the final ones come with the report), so the page can show damage
    /// while the rest of a large file is still being read.
    pub fn take_live(&mut self) -> Vec<FindingReport> {
        let open = match &mut self.scan {
            JobScan::Loose(loose) => &mut loose.1,
            JobScan::Shard(paced) => paced.drive.keep_mut(),
        };
        std::mem::take(&mut open.detail.live)
    }
}

/// The scan of one group: a shard, or loose files each on its own.
#[derive(Debug)]
pub struct GroupScan {
    /// The shard's scan (`None` for loose files, or while a [`FileJob`] holds it).
    shard: Option<Box<Paced>>,
    order: Vec<usize>,
    paths: Vec<String>,
    sizes: Vec<u64>,
    ids: Vec<u32>,
    results: Vec<Option<(Option<FileReport>, Detail)>>,
}

/// A scanned file: its report and the views' detail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scanned {
    /// The file's id ([`Dropped::id`]).
    pub file: u32,
    /// The report (the CLI's model).
    pub report: FileReport,
    /// Rows for the views.
    pub detail: Detail,
}

/// Each file as the shard's inspection takes it.
#[must_use]
pub fn inputs(files: &[(String, u64)]) -> Vec<InputFile> {
    files.iter().map(|(p, size)| InputFile { path: p.clone(), name: file_name(p).into(), size: *size }).collect()
}

impl GroupScan {
    /// Prepares the scan of `group` of `dropped`.
    #[must_use]
    pub fn new(group: &Group, dropped: &[Dropped]) -> Self {
        let files: Vec<&Dropped> = group.files.iter().filter_map(|i| dropped.get(*i)).collect();
        let listed: Vec<(String, u64)> = files.iter().map(|f| (f.path.clone(), f.size)).collect();
        let shard = group.shard.as_ref().map(|shard| {
            let mut drive = ShardDrive::new(shard, inputs(&listed), TILE_BYTES, Open::none());
            // Files before the first with bytes begin and end here: nothing of them is kept.
            let pending = drive.next_read();
            Box::new(Paced { drive, pending, carry: Vec::new() })
        });
        let order = shard.as_ref().map_or_else(|| (0..files.len()).collect(), |s| s.drive.order());
        let (paths, sizes) = listed.into_iter().unzip();
        Self { shard, order, paths, sizes, ids: files.iter().map(|f| f.id).collect(), results: files.iter().map(|_| None).collect() }
    }

    /// The order to scan the group's files in (indexes within the group).
    #[must_use]
    pub fn order(&self) -> Vec<usize> {
        self.order.clone()
    }

    /// Starts file `i` of the group, which may keep what `budget` has left.
    /// A shard's files are begun in [`GroupScan::order`], each ended before the next.
    #[must_use]
    pub fn begin(&mut self, i: usize, budget: &Budget) -> FileJob {
        let open = Open { file: i, detail: Detail::new(self.sizes.get(i).copied().unwrap_or(0)), limit: *budget };
        let scan = match self.shard.take() {
            Some(mut paced) => {
                *paced.drive.keep_mut() = open;
                JobScan::Shard(paced)
            }
            None => JobScan::Loose(Box::new((FileScan::standalone(file_name(self.paths.get(i).map_or("", String::as_str))), open))),
        };
        FileJob { scan, done: 0 }
    }

    /// Ends file `i`; what it kept is taken from `budget`.
    pub fn end(&mut self, i: usize, job: FileJob, budget: &mut Budget) {
        let (report, mut detail) = match job.scan {
            JobScan::Loose(loose) => {
                let (scan, mut open) = *loose;
                let path = self.paths.get(i).cloned().unwrap_or_default();
                let report = scan.into_report(path, &mut |item: Item<'_>| open.item(i, &item));
                (Some(report), open.detail)
            }
            JobScan::Shard(mut paced) => {
                paced.end(i);
                let open = std::mem::replace(paced.drive.keep_mut(), Open::none());
                self.shard = Some(paced);
                (None, open.detail)
            }
        };
        // Live findings were for the page while scanning; the report is final.
        detail.live.clear();
        budget.records = budget.records.saturating_sub(detail.records.len());
        budget.entries = budget.entries.saturating_sub(detail.index_entries.len());
        if let Some(slot) = self.results.get_mut(i) {
            *slot = Some((report, detail));
        }
    }

    /// The reports, in the group's file order, with cross-file checks applied
    /// (without their hashes: those come from `model::hash`).
    #[must_use]
    pub fn finish(self) -> Vec<Scanned> {
        let shard_reports = self.shard.map(|paced| paced.drive.finish(String::new()).1);
        let mut out = Vec::new();
        for (i, result) in self.results.into_iter().enumerate() {
            let Some((report, detail)) = result else { continue };
            let report = match (report, &shard_reports) {
                (Some(r), _) => r,
                (None, Some(all)) => match all.get(i) {
                    Some(r) => r.clone(),
                    None => continue,
                },
                (None, None) => continue,
            };
            let Some(&file) = self.ids.get(i) else { continue };
            out.push(Scanned { file, report, detail });
        }
        out
    }
}

/// The order the scan reads `dropped` in (indexes into it): group by group,
/// each group's files in the order its checks need. The reader and the scan
/// both follow it.
#[must_use]
pub fn read_order(dropped: &[Dropped]) -> Vec<usize> {
    let mut out = Vec::with_capacity(dropped.len());
    for g in super::group::group(dropped) {
        let scan = GroupScan::new(&g, dropped);
        out.extend(scan.order().into_iter().filter_map(|i| g.files.get(i).copied()));
    }
    out
}

/// Scans and hashes in-memory files completely (tests): the reports the page ends with.
#[must_use]
pub fn scan_all(files: &[(String, Vec<u8>)]) -> Vec<Scanned> {
    let dropped: Vec<Dropped> = files
        .iter()
        .enumerate()
        .map(|(i, (p, b))| Dropped { id: u32::try_from(i).unwrap_or(u32::MAX), path: p.clone(), size: b.len() as u64 })
        .collect();
    let (mut out, mut budget) = (Vec::new(), Budget::default());
    for g in super::group::group(&dropped) {
        let mut scan = GroupScan::new(&g, &dropped);
        for i in scan.order() {
            let mut job = scan.begin(i, &budget);
            let bytes = g.files.get(i).and_then(|d| files.get(*d)).map_or(&[][..], |(_, b)| b.as_slice());
            for chunk in bytes.chunks(usize::try_from(CHUNK_BYTES).unwrap_or(usize::MAX)) {
                job.feed(chunk);
            }
            scan.end(i, job, &mut budget);
        }
        out.extend(scan.finish());
    }
    out.sort_by_key(|s| s.file);
    for s in &mut out {
        if let Some((_, bytes)) = files.get(s.file as usize) {
            super::hash::hash_bytes(bytes, false).fill(&mut s.report);
        }
    }
    out
}

/// A segment's companion index, when it was scanned with it (same shard,
/// same segment id): where its entries point are the map's ticks.
#[must_use]
pub fn companion_index<'a>(
    segment: &Scanned,
    others: impl IntoIterator<Item = &'a std::rc::Rc<Scanned>>,
) -> Option<&'a std::rc::Rc<Scanned>> {
    let r = &segment.report;
    if r.kind != felix_codec::format::file_name::FileKind::Segment || r.segment_id.is_none() {
        return None;
    }
    others.into_iter().find(|o| {
        o.report.kind == felix_codec::format::file_name::FileKind::Index && o.report.segment_id == r.segment_id && o.report.shard == r.shard
    })
}

/// The byte positions an index's entries point at.
#[must_use]
pub fn pointed(index: &Scanned) -> Vec<u64> {
    index.detail.index_entries.iter().map(|e| e.position).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sample;

    /// Rows kept packed read back as they went in, and search as a slice would.
    #[test]
    fn packed_rows_read_back_and_search_like_a_slice() {
        let statuses = [RecordStatus::Intact, RecordStatus::OutOfOrder, RecordStatus::ChecksumMismatch, RecordStatus::Torn];
        let want: Vec<RecordRow> = (0..1000u64)
            .map(|i| RecordRow {
                position: 32 + i * 97 + (i % 3),
                offset: u64::MAX - 1000 + i,
                payload_len: u32::MAX - u32::try_from(i).unwrap(),
                timestamp_micros: i.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                status: statuses[usize::try_from(i % 4).unwrap()],
            })
            .collect();
        let rows: Rows = want.iter().copied().collect();
        assert_eq!((rows.len(), rows.is_empty()), (1000, false));
        assert_eq!(rows.iter().collect::<Vec<_>>(), want);
        assert_eq!(rows.get(1000), None);
        assert_eq!(rows.get(usize::MAX), None);
        for pos in [0, 31, 32, 33, 128, 129, 5000, 97_000, u64::MAX] {
            assert_eq!(rows.partition_point(|r| r.position <= pos), want.partition_point(|r| r.position <= pos), "pos {pos}");
        }
        assert_eq!(Rows::from_bytes(rows.as_bytes().to_vec()), Ok(rows.clone()));
        let mut bad = rows.as_bytes().to_vec();
        bad[7 * Rows::ROW_BYTES + Rows::ROW_BYTES - 1] = 4;
        assert_eq!(Rows::from_bytes(bad), Err((7, 4)));
        let mut partial = rows.as_bytes().to_vec();
        partial.pop();
        assert_eq!(Rows::from_bytes(partial), Err((999, 0)));
        assert_eq!(Rows::default().partition_point(|_| true), 0);
    }

    #[test]
    fn the_sample_scans_to_every_kind_it_promises() {
        let files = sample::files();
        let scanned = scan_all(&files);
        assert_eq!(scanned.len(), files.len());
        let kinds: Vec<&str> = scanned.iter().flat_map(|s| s.report.findings.iter().map(|f| f.kind.as_str())).collect();
        for k in ["Truncated", "RecordChecksum", "IndexEntryMismatch"] {
            assert!(kinds.contains(&k), "{k} missing from {kinds:?}");
        }
        let epochs = scanned.iter().find(|s| s.report.kind == felix_codec::format::file_name::FileKind::Epochs).unwrap();
        assert_eq!(epochs.detail.epochs.len(), 3);
        let seg = scanned.iter().find(|s| s.report.path.ends_with("00000000000000000000.log")).unwrap();
        assert_eq!(seg.detail.records.len() as u64, seg.report.records);
        assert_eq!(seg.report.hash.as_ref().map(|h| (h.algorithm.as_str(), h.value.len())), Some(("blake3", 64)));
        assert_eq!(seg.report.sha256, None, "SHA-256 only when asked for");
    }

    #[test]
    fn the_read_order_names_every_file_once() {
        let files = sample::files();
        let dropped: Vec<Dropped> =
            files.iter().enumerate().map(|(i, (p, b))| Dropped { id: i as u32, path: p.clone(), size: b.len() as u64 }).collect();
        let order = read_order(&dropped);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..files.len()).collect::<Vec<_>>());
        assert_ne!(order, sorted, "the shard's own read order, not the drop order");
    }

    /// The rows kept are one budget for the whole drop, not one per file: a
    /// drop of many large files holds no more rows than one.
    #[test]
    fn a_drop_keeps_at_most_its_budget_of_rows_across_all_its_files() {
        let files = sample::files();
        let dropped: Vec<Dropped> = files
            .iter()
            .enumerate()
            .map(|(i, (p, b))| Dropped { id: u32::try_from(i).unwrap(), path: p.clone(), size: b.len() as u64 })
            .collect();
        let whole = scan_all(&files);
        let (records, entries): (usize, usize) =
            whole.iter().fold((0, 0), |(r, e), s| (r + s.detail.records.len(), e + s.detail.index_entries.len()));
        assert!(records > 10 && entries > 4, "the sample has rows to cut: {records} records, {entries} entries");
        let start = Budget { records: records / 2, entries: entries / 2 };
        let mut budget = start;
        let mut kept = Vec::new();
        for g in crate::model::group::group(&dropped) {
            let mut scan = GroupScan::new(&g, &dropped);
            for i in scan.order() {
                let mut job = scan.begin(i, &budget);
                job.feed(g.files.get(i).and_then(|d| files.get(*d)).map_or(&[][..], |(_, b)| b.as_slice()));
                scan.end(i, job, &mut budget);
            }
            kept.extend(scan.finish());
        }
        assert_eq!(budget, Budget { records: 0, entries: 0 });
        assert_eq!(kept.iter().map(|s| s.detail.records.len()).sum::<usize>(), start.records);
        assert_eq!(kept.iter().map(|s| s.detail.index_entries.len()).sum::<usize>(), start.entries);
        for s in &kept {
            let full = whole.iter().find(|w| w.file == s.file).unwrap();
            // Each file keeps the first of its rows, says when it lost some, and its report is whole.
            assert_eq!(s.detail.records.as_bytes(), full.detail.records.as_bytes().get(..s.detail.records.as_bytes().len()).unwrap());
            assert_eq!(s.detail.records_capped, s.detail.records.len() < full.detail.records.len(), "{}", s.report.path);
            assert_eq!(s.detail.index_entries, full.detail.index_entries.get(..s.detail.index_entries.len()).unwrap());
            assert_eq!(s.report.records, full.report.records);
            assert_eq!(s.report.findings, full.report.findings);
        }
    }

    /// The page's chunks pace the shard's scan (cut into its reads, a
    /// chunk's end that is not a whole read carried to the next): any chunk
    /// sizes give the same reports and detail.
    #[test]
    fn any_chunking_of_the_pages_reads_gives_the_same_scan() {
        let files = sample::files();
        let dropped: Vec<Dropped> =
            files.iter().enumerate().map(|(i, (p, b))| Dropped { id: i as u32, path: p.clone(), size: b.len() as u64 }).collect();
        let mut whole = scan_all(&files);
        for s in &mut whole {
            s.report.hash = None;
        }
        for chunk in [1, 7, 1000, 65_535, 65_537, 1 << 22] {
            let mut out = Vec::new();
            let mut budget = Budget::default();
            for g in crate::model::group::group(&dropped) {
                let mut scan = GroupScan::new(&g, &dropped);
                for i in scan.order() {
                    let mut job = scan.begin(i, &budget);
                    for piece in files[g.files[i]].1.chunks(chunk) {
                        job.feed(piece);
                    }
                    assert_eq!(job.bytes_done(), files[g.files[i]].1.len() as u64);
                    scan.end(i, job, &mut budget);
                }
                out.extend(scan.finish());
            }
            out.sort_by_key(|s| s.file);
            assert_eq!(out, whole, "chunks of {chunk}");
        }
    }

    /// A file that ended early (it shrank after it was dropped) ends where
    /// its bytes stopped, and the shard's next file is still read whole.
    #[test]
    fn a_shard_file_fed_short_ends_where_its_bytes_stop() {
        let files = sample::files();
        let dir = files.iter().find_map(|(p, _)| p.rsplit_once('/').map(|(d, _)| d.to_owned())).unwrap();
        let mine: Vec<(String, Vec<u8>)> = files.iter().filter(|(p, _)| p.starts_with(&format!("{dir}/"))).cloned().collect();
        let dropped: Vec<Dropped> =
            mine.iter().enumerate().map(|(i, (p, b))| Dropped { id: i as u32, path: p.clone(), size: b.len() as u64 }).collect();
        let g = Group { shard: Some(dir.clone()), files: (0..mine.len()).collect() };
        let mut scan = GroupScan::new(&g, &dropped);
        let order = scan.order();
        let mut budget = Budget::default();
        for (n, &i) in order.iter().enumerate() {
            let mut job = scan.begin(i, &budget);
            let bytes = &mine[i].1;
            job.feed(if n == 0 { &bytes[..bytes.len() / 2] } else { bytes });
            scan.end(i, job, &mut budget);
        }
        let out = scan.finish();
        let first = out.iter().find(|s| s.file as usize == order[0]).unwrap();
        assert_eq!(first.report.size, mine[order[0]].1.len() as u64 / 2);
        for s in out.iter().filter(|s| s.file as usize != order[0]) {
            assert_eq!(s.report.size, mine[s.file as usize].1.len() as u64, "{}", s.report.path);
        }
    }

    #[test]
    fn findings_are_handed_out_as_the_scan_meets_them() {
        let files = sample::files();
        let (path, bytes) = files.iter().find(|(p, _)| p.ends_with("00000000000000000001.log")).unwrap();
        let dropped = [Dropped { id: 0, path: file_name(path).into(), size: bytes.len() as u64 }];
        let g = Group { shard: None, files: vec![0] };
        let mut scan = GroupScan::new(&g, &dropped);
        let mut job = scan.begin(0, &Budget::default());
        let rot_at = 1692;
        job.feed(&bytes[..rot_at + 200]);
        let live = job.take_live();
        assert_eq!(live.len(), 1, "the rot is reported before the file ends");
        assert_eq!((live[0].kind.as_str(), live[0].position), ("RecordChecksum", rot_at as u64));
        job.feed(&bytes[rot_at + 200..]);
        assert!(job.take_live().is_empty());
    }

    #[test]
    fn a_loose_file_gets_the_same_report_as_the_cli_model() {
        let files = sample::files();
        let (path, bytes) = files.iter().find(|(p, _)| p.ends_with("00000000000000000002.log")).unwrap();
        let name = file_name(path).to_string();
        let ours = scan_all(&[(name.clone(), bytes.clone())]);
        let cli = felix_codec::shard::scan::inspect_in_memory(None, &[(name, bytes.as_slice())], 4096);
        let mut want = cli.files[0].clone();
        want.hash = Some(crate::model::hash::hash_bytes(bytes, false).hash);
        assert_eq!(ours[0].report, want);
    }
}
