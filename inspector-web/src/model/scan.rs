//! Driving the codec over one group of files, chunk by chunk, and keeping
//! what the views need: the report (exactly the CLI's model; its file
//! hashes come separately, from `model::hash`, so the verdict never waits
//! for them), record rows for the table and the hex labels, index entries
//! and epochs. The page feeds it `Blob.slice` chunks; tests feed it slices.

use felix_codec::doc::report::{FileReport, FindingReport};
use felix_codec::format::epochs::{Epoch, EPOCH_ENTRY_LEN};
use felix_codec::format::index::{IndexEntry, INDEX_ENTRY_LEN};
use felix_codec::format::segment_header::SEGMENT_HEADER_LEN;
use felix_codec::read::scan::epochs::entry_position;
use felix_codec::read::scan::{Item, RecordStatus};
use felix_codec::shard::inspect::{FileScan, InputFile, ShardInspection};

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

/// One file being scanned.
#[derive(Debug)]
pub struct FileJob {
    scan: FileScan,
    detail: Detail,
    done: u64,
    /// The rows this file may keep (what the drop's [`Budget`] had left).
    limit: Budget,
}

impl FileJob {
    /// Feeds the next chunk.
    pub fn feed(&mut self, chunk: &[u8]) {
        let (detail, limit) = (&mut self.detail, self.limit);
        self.scan.feed(chunk, &mut |item: Item<'_>| detail.take(&item, limit));
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
        std::mem::take(&mut self.detail.live)
    }
}

/// The scan of one group: a shard, or one loose file.
#[derive(Debug)]
pub struct GroupScan {
    inspection: Option<ShardInspection>,
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

impl GroupScan {
    /// Prepares the scan of `group` of `dropped`.
    #[must_use]
    pub fn new(group: &Group, dropped: &[Dropped]) -> Self {
        let files: Vec<&Dropped> = group.files.iter().filter_map(|i| dropped.get(*i)).collect();
        let paths = files.iter().map(|f| f.path.clone()).collect();
        let inspection = group.shard.as_ref().map(|shard| {
            let inputs = files.iter().map(|f| InputFile { path: f.path.clone(), name: file_name(&f.path).into(), size: f.size }).collect();
            ShardInspection::new(Some(shard.clone()), inputs)
        });
        let (sizes, ids) = (files.iter().map(|f| f.size).collect(), files.iter().map(|f| f.id).collect());
        Self { inspection, results: files.iter().map(|_| None).collect(), paths, sizes, ids }
    }

    /// The order to scan the group's files in (indexes within the group).
    #[must_use]
    pub fn order(&self) -> Vec<usize> {
        match &self.inspection {
            Some(s) => s.order(),
            None => (0..self.paths.len()).collect(),
        }
    }

    /// Starts file `i` of the group, which may keep what `budget` has left.
    #[must_use]
    pub fn begin(&mut self, i: usize, budget: &Budget) -> FileJob {
        let scan = match &mut self.inspection {
            Some(s) => s.begin(i),
            None => FileScan::standalone(file_name(self.paths.get(i).map_or("", String::as_str))),
        };
        FileJob { scan, detail: Detail::new(self.sizes.get(i).copied().unwrap_or(0)), done: 0, limit: *budget }
    }

    /// Ends file `i`; what it kept is taken from `budget`.
    pub fn end(&mut self, i: usize, job: FileJob, budget: &mut Budget) {
        let FileJob { scan, mut detail, limit, .. } = job;
        let mut sink = |item: Item<'_>| detail.take(&item, limit);
        let report = match &mut self.inspection {
            Some(s) => {
                s.end(i, scan, &mut sink);
                None
            }
            None => Some(scan.into_report(self.paths.get(i).cloned().unwrap_or_default(), &mut sink)),
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
        let shard_reports = self.inspection.map(ShardInspection::finish);
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
