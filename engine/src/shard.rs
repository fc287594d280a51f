//! One shard: the durable writer, the reader, recovery on open, rollover,
//! retention, epochs and divergence truncation. Every on-disk byte goes
//! through `felix-codec`; every IO call through [`Io`].
//!
//! Durability protocol (see `docs/durability.md`):
//! - a segment is created as `NNN.log.tmp`, its header written and fsynced,
//!   then renamed into place and the directory fsynced — so a segment under
//!   its real name always has a whole, durable header;
//! - an append is encoded, written, `fdatasync`ed, then acknowledged;
//!   appends that arrive while a sync is in flight share the next one
//!   (group commit);
//! - after any failed write or sync the shard refuses every later append
//!   (fail-stop); it never retries a sync.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use felix_codec::epochs::{self, Epoch, MAX_EPOCHS};
use felix_codec::file_name::{index_file_name, parse_file_name, segment_file_name, FileKind, EPOCHS_FILE_NAME};
use felix_codec::index::{build_index, seek_position, IndexEntry, IndexHeader, IndexPlanner, DEFAULT_INDEX_SPACING_BYTES};
use felix_codec::reader::SegmentReader;
use felix_codec::record::{encode_record, RECORD_HEADER_LEN};
use felix_codec::scan::{IndexScanner, Item, ScanContext, SegmentScanner};
use felix_codec::segment_header::{SegmentHeader, SEGMENT_HEADER_LEN};
use felix_codec::shard_name::ShardKey;
use felix_codec::{CorruptionKind, Finding, Repair, MAX_PAYLOAD_BYTES};

use crate::error::EngineError;
use crate::io::{read_exact_at, Io};

/// Default segment size: 128 MiB.
pub const DEFAULT_SEGMENT_SIZE_BYTES: u64 = 128 << 20;
/// Bytes read per step when reading records.
const READ_CHUNK_BYTES: usize = 256 << 10;
/// Bytes read per step when recovery scans a whole segment.
const SCAN_CHUNK_BYTES: usize = 1 << 20;
/// Segments up to this size are read in one go (a reader thread costs more than it saves).
const SMALL_SEGMENT_BYTES: u64 = 32 << 20;

/// When an append is acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// After the `fdatasync` covering it returned (the default). A crash at
    /// any instant loses nothing acknowledged.
    EveryBatch,
    /// At most one `fdatasync` per interval; appends in between are
    /// acknowledged once written. Weaker promise: a crash may lose what was
    /// acknowledged within the last interval.
    Interval {
        /// The interval in microseconds.
        micros: u64,
    },
}

/// How a shard stores and keeps data. Every field has a named default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Roll to a new segment once the active one would exceed this
    /// ([`DEFAULT_SEGMENT_SIZE_BYTES`]).
    pub segment_size_bytes: u64,
    /// An index entry per this many bytes of segment data (4096).
    pub index_spacing_bytes: u64,
    /// Delete whole oldest segments while the shard holds more (none).
    pub retention_bytes: Option<u64>,
    /// Delete whole oldest segments whose newest record is older (none).
    pub retention_age_micros: Option<u64>,
    /// When appends are acknowledged ([`Durability::EveryBatch`]).
    pub durability: Durability,
    /// Let recovery cut a damaged tail whose damage is rot, not a torn write (off).
    pub repair_checksum_tail: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            segment_size_bytes: DEFAULT_SEGMENT_SIZE_BYTES,
            index_spacing_bytes: DEFAULT_INDEX_SPACING_BYTES,
            retention_bytes: None,
            retention_age_micros: None,
            durability: Durability::EveryBatch,
            repair_checksum_tail: false,
        }
    }
}

/// A record seen by a scan: `(offset, position, timestamp_micros)`.
type RecordAt = (u64, u64, u64);

/// A record read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRecord {
    /// Its offset.
    pub offset: u64,
    /// Its publish time.
    pub timestamp_micros: u64,
    /// Its payload.
    pub payload: Vec<u8>,
}

/// What recovery did (or, with `dry_run`, would do) on open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Tails cut: the segment, the finding that justified it, and the sidecar holding the bytes.
    pub truncated: Vec<(PathBuf, Finding, PathBuf)>,
    /// Indexes rebuilt, and why.
    pub rebuilt_indexes: Vec<(PathBuf, String)>,
    /// Leftover temporary files removed.
    pub removed_temporaries: Vec<PathBuf>,
    /// Warnings (a damaged epochs file that reads as empty, …).
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone)]
struct Segment {
    id: u64,
    base: u64,
    /// Bytes written (all of them durable for sealed segments).
    len: u64,
    /// Offset after the last record written.
    next: u64,
    index: Vec<IndexEntry>,
    planner: IndexPlanner,
    newest_timestamp: u64,
}

#[derive(Debug)]
struct Inner {
    segments: Vec<Segment>,
    next_offset: u64,
    durable_next: u64,
    /// Length of the active segment covered by the last sync.
    durable_len: u64,
    syncing: bool,
    last_sync_micros: u64,
    failed: Option<String>,
    epochs: Vec<Epoch>,
}

/// One shard directory. `Shard` is `Sync`: share it between threads with an `Arc`.
#[derive(Debug)]
pub struct Shard {
    io: Arc<dyn Io>,
    dir: PathBuf,
    name: String,
    config: Config,
    inner: Mutex<Inner>,
    synced: Condvar,
}

/// Microseconds since the Unix epoch.
#[must_use]
pub fn now_micros() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

fn corrupt(path: &Path, kind: CorruptionKind, shard: &str, id: Option<u64>, position: u64, end: u64, offset: Option<u64>) -> EngineError {
    let site = felix_codec::CorruptionSite { shard: Some(shard.into()), segment_id: id, position };
    EngineError::Corrupt { path: path.to_path_buf(), finding: Box::new(Finding { kind, site, end, offset, repair: Repair::Never }) }
}

impl Shard {
    /// The directory of `key` under `root`.
    #[must_use]
    pub fn dir_of(root: &Path, key: &ShardKey<'_>) -> PathBuf {
        root.join(key.dir_name())
    }

    /// Opens (creating if needed) the shard `key` under `root`, recovering as
    /// the spec allows. See [`Shard::open_dir`].
    ///
    /// # Errors
    /// IO failures, and damage recovery may not repair.
    pub fn open(io: Arc<dyn Io>, root: &Path, key: &ShardKey<'_>, config: Config) -> Result<(Self, RecoveryReport), EngineError> {
        Self::open_dir(io, &Self::dir_of(root, key), config, false)
    }

    /// Opens the shard in `dir`. Recovery: parse and numerically sort the
    /// file names, read every header, check contiguity, validate or rebuild
    /// every index, scan the newest segment and cut a repairable tail (after
    /// copying the cut bytes to a sidecar). With `dry_run`, nothing is
    /// changed on disk and the report says what would be.
    ///
    /// # Errors
    /// IO failures, and damage recovery may not repair, with its full site.
    pub fn open_dir(io: Arc<dyn Io>, dir: &Path, config: Config, dry_run: bool) -> Result<(Self, RecoveryReport), EngineError> {
        io.create_dir_all(dir).map_err(|e| EngineError::io(dir, "create_dir_all", &e))?;
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let shard = Self {
            io,
            dir: dir.to_path_buf(),
            name,
            config,
            inner: Mutex::new(Inner {
                segments: Vec::new(),
                next_offset: 0,
                durable_next: 0,
                durable_len: 0,
                syncing: false,
                last_sync_micros: 0,
                failed: None,
                epochs: Vec::new(),
            }),
            synced: Condvar::new(),
        };
        let report = shard.recover(dry_run)?;
        Ok((shard, report))
    }

    /// The shard directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn log_path(&self, id: u64) -> PathBuf {
        self.dir.join(segment_file_name(id))
    }

    fn index_path(&self, id: u64) -> PathBuf {
        self.dir.join(index_file_name(id))
    }

    fn recover(&self, dry_run: bool) -> Result<RecoveryReport, EngineError> {
        let io = &*self.io;
        let mut report = RecoveryReport::default();
        let names = io.list(&self.dir).map_err(|e| EngineError::io(&self.dir, "list", &e))?;
        for n in names.iter().filter(|n| n.ends_with(".tmp")) {
            let p = self.dir.join(n);
            if !dry_run {
                io.remove(&p).map_err(|e| EngineError::io(&p, "remove", &e))?;
            }
            report.removed_temporaries.push(p);
        }
        let mut ids: Vec<u64> =
            names.iter().filter_map(|n| parse_file_name(n)).filter(|(_, k)| *k == FileKind::Segment).map(|(id, _)| id).collect();
        ids.sort_unstable();
        let mut segments = Vec::with_capacity(ids.len());
        let newest = ids.last().copied();
        for id in ids {
            let seg = if Some(id) == newest {
                self.recover_newest(id, dry_run, &mut report)?
            } else {
                self.load_sealed(id, dry_run, &mut report)?
            };
            if let Some(prev) = segments.last() {
                let prev: &Segment = prev;
                if seg.base != prev.next {
                    let kind = CorruptionKind::SegmentDiscontinuity { expected: prev.next, found: seg.base };
                    return Err(corrupt(&self.log_path(id), kind, &self.name, Some(id), 8, 16, None));
                }
            }
            segments.push(seg);
        }
        let epochs = self.load_epochs(&mut report);
        let mut g = self.lock();
        g.next_offset = segments.last().map_or(0, |s| s.next);
        g.durable_next = g.next_offset;
        g.durable_len = segments.last().map_or(0, |s| s.len);
        g.segments = segments;
        g.epochs = epochs;
        Ok(report)
    }

    fn read_header(&self, id: u64) -> Result<SegmentHeader, EngineError> {
        let path = self.log_path(id);
        let mut buf = [0u8; SEGMENT_HEADER_LEN];
        let len = self.io.len(&path).map_err(|e| EngineError::io(&path, "len", &e))?;
        let n = usize::try_from(len).unwrap_or(usize::MAX).min(SEGMENT_HEADER_LEN);
        read_exact_at(&*self.io, &path, 0, &mut buf[..n]).map_err(|e| EngineError::io(&path, "read", &e))?;
        SegmentHeader::decode(&buf[..n]).map(|(h, _)| h).map_err(|d| corrupt(&path, d.kind, &self.name, Some(id), 0, d.end as u64, None))
    }

    /// Scans a whole segment with the codec's scanner, collecting every
    /// record's `(offset, position, timestamp)`.
    fn scan_segment(&self, id: u64, newest: bool) -> Result<(felix_codec::scan::SegmentSummary, Vec<RecordAt>), EngineError> {
        let path = self.log_path(id);
        let len = self.io.len(&path).map_err(|e| EngineError::io(&path, "len", &e))?;
        let ctx = ScanContext { shard: Some(self.name.clone()), segment_id: Some(id), newest_segment: newest };
        let mut scanner = SegmentScanner::new(ctx);
        let mut records = Vec::new();
        let mut sink = |item: Item<'_>| {
            if let Item::Record(r) = item {
                records.push((r.header.offset, r.position, r.header.timestamp_micros));
            }
        };
        let io = &*self.io;
        if len <= SMALL_SEGMENT_BYTES {
            let mut buf = vec![0u8; SCAN_CHUNK_BYTES];
            let mut pos = 0;
            while pos < len {
                let want = usize::try_from(len - pos).unwrap_or(usize::MAX).min(buf.len());
                read_exact_at(io, &path, pos, &mut buf[..want]).map_err(|e| EngineError::io(&path, "read", &e))?;
                scanner.feed(&buf[..want], &mut sink);
                pos += want as u64;
            }
            let summary = scanner.finish(&mut sink);
            return Ok((summary, records));
        }
        // Read the next chunk on another thread while this one is scanned
        // (two buffers in flight), so recovery costs about max(read, scan).
        std::thread::scope(|scope| -> Result<(), EngineError> {
            let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Result<Vec<u8>, EngineError>>(1);
            let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Vec<u8>>();
            for _ in 0..2 {
                let _ = empty_tx.send(vec![0u8; SCAN_CHUNK_BYTES]);
            }
            let path = &path;
            scope.spawn(move || {
                let mut pos = 0;
                while pos < len {
                    let Ok(mut buf) = empty_rx.recv() else { return };
                    let want = usize::try_from(len - pos).unwrap_or(usize::MAX).min(SCAN_CHUNK_BYTES);
                    buf.resize(want, 0);
                    let read = read_exact_at(io, path, pos, &mut buf).map(|()| buf).map_err(|e| EngineError::io(path, "read", &e));
                    let failed = read.is_err();
                    if full_tx.send(read).is_err() || failed {
                        return;
                    }
                    pos += want as u64;
                }
            });
            for chunk in full_rx {
                let chunk = chunk?;
                scanner.feed(&chunk, &mut sink);
                let _ = empty_tx.send(chunk);
            }
            Ok(())
        })?;
        let summary = scanner.finish(&mut sink);
        Ok((summary, records))
    }

    fn recover_newest(&self, id: u64, dry_run: bool, report: &mut RecoveryReport) -> Result<Segment, EngineError> {
        let path = self.log_path(id);
        let header = self.read_header(id)?;
        let (summary, records) = self.scan_segment(id, true)?;
        let mut len = summary.size;
        if let Some(first) = summary.findings.findings.first() {
            let options = felix_codec::RepairOptions { repair_checksum_tail: self.config.repair_checksum_tail };
            let all_repairable = summary.findings.findings.iter().all(|f| match f.repair {
                Repair::Always => true,
                Repair::OptIn => options.repair_checksum_tail,
                Repair::Never => false,
            });
            if !all_repairable {
                let refused = summary.findings.findings.iter().find(|f| f.repair != Repair::Always).unwrap_or(first);
                return Err(EngineError::Corrupt { path, finding: Box::new(refused.clone()) });
            }
            let cut = summary.clean_prefix_end;
            let sidecar = self.dir.join(format!("{}.cut-{cut}", segment_file_name(id)));
            if !dry_run {
                self.preserve_tail(&path, &sidecar, cut, summary.size, first)?;
                self.io.set_len(&path, cut).map_err(|e| EngineError::io(&path, "set_len", &e))?;
                self.io.sync_data(&path).map_err(|e| EngineError::io(&path, "sync_data", &e))?;
            }
            report.truncated.push((path.clone(), first.clone(), sidecar));
            len = cut;
        }
        let kept: Vec<(u64, u64, u64)> = records.into_iter().filter(|(_, p, _)| *p < len).collect();
        let mut seg = self.segment_from_records(id, header.base_offset, len, &kept);
        self.ensure_index(&mut seg, &kept, dry_run, report)?;
        Ok(seg)
    }

    /// Copies the bytes about to be cut into a sidecar, with a JSON note of why.
    fn preserve_tail(&self, path: &Path, sidecar: &Path, cut: u64, size: u64, why: &Finding) -> Result<(), EngineError> {
        let mut bytes = vec![0u8; usize::try_from(size - cut).unwrap_or(0)];
        read_exact_at(&*self.io, path, cut, &mut bytes).map_err(|e| EngineError::io(path, "read", &e))?;
        let note = serde_json::json!({
            "segment": path.display().to_string(),
            "kind": why.kind.name(),
            "position": why.position(),
            "cut_at": cut,
            "cut_bytes": size - cut,
            "segment_len_before": size,
            "reason": why.to_string(),
        });
        let note_path = sidecar.with_extension(format!("{}.json", sidecar.extension().and_then(|e| e.to_str()).unwrap_or("")));
        self.write_file_durably(sidecar, &bytes)?;
        self.write_file_durably(&note_path, note.to_string().as_bytes())
    }

    /// temp file → write → fsync → rename → fsync directory.
    fn write_file_durably(&self, path: &Path, bytes: &[u8]) -> Result<(), EngineError> {
        let io = &*self.io;
        let tmp = PathBuf::from(format!("{}.tmp", path.display()));
        let _ = io.remove(&tmp);
        io.create(&tmp).map_err(|e| EngineError::io(&tmp, "create", &e))?;
        io.write_at(&tmp, 0, bytes).map_err(|e| EngineError::io(&tmp, "write", &e))?;
        io.sync_data(&tmp).map_err(|e| EngineError::io(&tmp, "sync_data", &e))?;
        io.rename(&tmp, path).map_err(|e| EngineError::io(path, "rename", &e))?;
        io.sync_dir(&self.dir).map_err(|e| EngineError::io(&self.dir, "sync_dir", &e))
    }

    fn segment_from_records(&self, id: u64, base: u64, len: u64, records: &[(u64, u64, u64)]) -> Segment {
        let mut planner = IndexPlanner::new(self.config.index_spacing_bytes);
        let index = records.iter().filter_map(|(o, p, _)| planner.observe(*o, *p)).collect();
        Segment {
            id,
            base,
            len,
            next: records.last().map_or(base, |(o, _, _)| o + 1),
            index,
            planner,
            newest_timestamp: records.iter().map(|(_, _, t)| *t).max().unwrap_or(0),
        }
    }

    /// Keeps the index file when every entry lands on one of `records` (any
    /// spacing is fine: entries are only starting points); otherwise rewrites
    /// it from the records. Returns the entries in force.
    fn ensure_index(
        &self,
        seg: &mut Segment,
        records: &[(u64, u64, u64)],
        dry_run: bool,
        report: &mut RecoveryReport,
    ) -> Result<(), EngineError> {
        let path = self.index_path(seg.id);
        let why = match self.read_whole(&path) {
            None => "missing",
            Some(bytes) => match index_agrees(&bytes, seg.base, records) {
                Ok(entries) => {
                    let mut planner = IndexPlanner::new(self.config.index_spacing_bytes);
                    if let Some(last) = entries.last() {
                        let _ = planner.observe(last.offset, last.position);
                    }
                    // Records after the last entry may still be due one.
                    let mut extra = Vec::new();
                    for (o, p, _) in records.iter().filter(|(_, p, _)| entries.last().is_none_or(|l| *p > l.position)) {
                        extra.extend(planner.observe(*o, *p));
                    }
                    if extra.is_empty() {
                        seg.index = entries;
                        seg.planner = planner;
                        return Ok(());
                    }
                    "entries missing for the last records (a crash before they were written)"
                }
                Err(why) => why,
            },
        };
        let mut want = IndexHeader::new(seg.base).encode().to_vec();
        for e in &seg.index {
            want.extend_from_slice(&e.encode());
        }
        if !dry_run {
            self.write_file_durably(&path, &want)?;
        }
        report.rebuilt_indexes.push((path, why.into()));
        Ok(())
    }

    fn read_whole(&self, path: &Path) -> Option<Vec<u8>> {
        let len = self.io.len(path).ok()?;
        let mut buf = vec![0u8; usize::try_from(len).ok()?];
        read_exact_at(&*self.io, path, 0, &mut buf).ok()?;
        Some(buf)
    }

    /// A sealed (older) segment: header, then its index is validated entry by
    /// entry against real record headers; on any doubt it is rebuilt by a full scan.
    fn load_sealed(&self, id: u64, dry_run: bool, report: &mut RecoveryReport) -> Result<Segment, EngineError> {
        let path = self.log_path(id);
        let header = self.read_header(id)?;
        let len = self.io.len(&path).map_err(|e| EngineError::io(&path, "len", &e))?;
        if let Some(seg) = self.trusted_index(id, header.base_offset, len)? {
            return Ok(seg);
        }
        let (summary, records) = self.scan_segment(id, false)?;
        if let Some(f) = summary.findings.findings.first() {
            return Err(EngineError::Corrupt { path, finding: Box::new(f.clone()) });
        }
        let mut seg = self.segment_from_records(id, header.base_offset, len, &records);
        self.ensure_index(&mut seg, &records, dry_run, report)?;
        Ok(seg)
    }

    /// Loads an index and checks every entry lands on a record with its
    /// offset, then walks from the last entry to the end of the segment.
    /// `None` when the index cannot be trusted.
    fn trusted_index(&self, id: u64, base: u64, len: u64) -> Result<Option<Segment>, EngineError> {
        let Some(bytes) = self.read_whole(&self.index_path(id)) else { return Ok(None) };
        let mut scanner = IndexScanner::new(ScanContext::default());
        scanner.feed(&bytes, &mut ());
        let summary = scanner.finish(&mut ());
        let sound = summary.header.is_some_and(|h| h.base_offset == base)
            && summary.findings.findings.is_empty()
            && summary.findings.notes.is_empty()
            && summary.kept.len() as u64 == summary.entries;
        if !sound {
            return Ok(None);
        }
        let entries: Vec<IndexEntry> = summary.kept.iter().map(|(_, e)| *e).collect();
        if entries.first().is_none_or(|e| e.offset != base || e.position != SEGMENT_HEADER_LEN as u64) {
            return Ok(None);
        }
        let path = self.log_path(id);
        for e in &entries {
            let mut h = [0u8; RECORD_HEADER_LEN];
            if e.position + RECORD_HEADER_LEN as u64 > len || read_exact_at(&*self.io, &path, e.position, &mut h).is_err() {
                return Ok(None);
            }
            if felix_codec::record::decode_record_header(&h).map(|r| r.offset) != Ok(e.offset) {
                return Ok(None);
            }
        }
        // Walk the tail from the last entry strictly: it gives the last offset.
        let last = entries.last().copied().unwrap_or(IndexEntry { offset: base, position: SEGMENT_HEADER_LEN as u64 });
        let mut tail = vec![0u8; usize::try_from(len - last.position).unwrap_or(0)];
        read_exact_at(&*self.io, &path, last.position, &mut tail).map_err(|e| EngineError::io(&path, "read", &e))?;
        let mut next = last.offset;
        let mut newest_timestamp = 0;
        for item in SegmentReader::at_position(&tail, last.position, Some(last.offset)) {
            match item {
                Ok((_, r)) => {
                    next = r.header.offset + 1;
                    newest_timestamp = newest_timestamp.max(r.header.timestamp_micros);
                }
                Err(_) => return Ok(None),
            }
        }
        let mut planner = IndexPlanner::new(self.config.index_spacing_bytes);
        for e in &entries {
            let _ = planner.observe(e.offset, e.position);
        }
        Ok(Some(Segment { id, base, len, next, index: entries, planner, newest_timestamp }))
    }

    fn load_epochs(&self, report: &mut RecoveryReport) -> Vec<Epoch> {
        let path = self.dir.join(EPOCHS_FILE_NAME);
        let Some(bytes) = self.read_whole(&path) else { return Vec::new() };
        let (entries, defect) = epochs::read_or_empty(&bytes);
        if let Some(d) = defect {
            report.warnings.push(format!("{}: {} — read as empty: divergence cannot be repaired automatically", path.display(), d.kind));
        }
        entries
    }

    // ---------------------------------------------------------------- writes

    fn fail(&self, g: &mut Inner, e: EngineError) -> EngineError {
        if g.failed.is_none() {
            g.failed = Some(e.to_string());
        }
        self.synced.notify_all();
        e
    }

    /// Creates segment `id` at `base`: temp → header → fsync → rename → fsync dir.
    fn create_segment(&self, g: &mut Inner, id: u64, base: u64) -> Result<(), EngineError> {
        let path = self.log_path(id);
        let header = SegmentHeader::new(base, now_micros()).encode();
        self.write_file_durably(&path, &header).map_err(|e| self.fail(g, e))?;
        let index = IndexHeader::new(base).encode();
        let ipath = self.index_path(id);
        let _ = self.io.remove(&ipath);
        let made = self.io.create(&ipath).and_then(|()| self.io.write_at(&ipath, 0, &index));
        made.map_err(|e| self.fail(g, EngineError::io(&ipath, "create", &e)))?;
        g.segments.push(Segment {
            id,
            base,
            len: SEGMENT_HEADER_LEN as u64,
            next: base,
            index: Vec::new(),
            planner: IndexPlanner::new(self.config.index_spacing_bytes),
            newest_timestamp: 0,
        });
        g.durable_len = SEGMENT_HEADER_LEN as u64;
        Ok(())
    }

    /// Seals the active segment (fsync) and opens the next one.
    fn roll(&self, g: &mut Inner) -> Result<(), EngineError> {
        let active = g.segments.last().map(|s| (s.id, s.next));
        let (id, next) = match active {
            Some((id, next)) => {
                let path = self.log_path(id);
                self.io.sync_data(&path).map_err(|e| self.fail(g, EngineError::io(&path, "sync_data", &e)))?;
                (id + 1, next)
            }
            None => (0, g.next_offset),
        };
        g.durable_next = g.next_offset;
        self.create_segment(g, id, next)
    }

    /// Appends a batch; returns the offsets assigned, once durable.
    ///
    /// # Errors
    /// `TooLarge` (nothing written), `FailStopped`, or the IO failure that stopped the shard.
    pub fn append(&self, payloads: &[&[u8]]) -> Result<std::ops::Range<u64>, EngineError> {
        if let Some(p) = payloads.iter().find(|p| p.len() > MAX_PAYLOAD_BYTES as usize) {
            return Err(EngineError::TooLarge { len: p.len() });
        }
        let mut g = self.lock();
        if let Some(cause) = &g.failed {
            return Err(EngineError::FailStopped { cause: cause.clone() });
        }
        let first = g.next_offset;
        let now = now_micros();
        let mut buf = Vec::new();
        for payload in payloads {
            let record_len = (RECORD_HEADER_LEN + payload.len()) as u64;
            let needs_roll = match g.segments.last() {
                None => true,
                Some(s) => s.next > s.base && s.len + record_len > self.config.segment_size_bytes,
            };
            if needs_roll {
                self.flush(&mut g, &mut buf)?;
                self.roll(&mut g)?;
            }
            let offset = g.next_offset;
            let Some(seg) = g.segments.last_mut() else { break };
            let position = seg.len + buf.len() as u64;
            encode_record(offset, now, payload, &mut buf).map_err(|_| EngineError::TooLarge { len: payload.len() })?;
            if let Some(entry) = seg.planner.observe(offset, position) {
                seg.index.push(entry);
            }
            seg.next = offset + 1;
            seg.newest_timestamp = now;
            g.next_offset = offset + 1;
        }
        self.flush(&mut g, &mut buf)?;
        let end = g.next_offset;
        self.commit(g, end)?;
        Ok(first..end)
    }

    /// Writes buffered records to the active segment, and their index entries.
    fn flush(&self, g: &mut Inner, buf: &mut Vec<u8>) -> Result<(), EngineError> {
        if buf.is_empty() {
            return Ok(());
        }
        let Some(seg) = g.segments.last() else { return Ok(()) };
        let (id, pos) = (seg.id, seg.len);
        let path = self.log_path(id);
        self.io.write_at(&path, pos, buf).map_err(|e| self.fail(g, EngineError::io(&path, "write", &e)))?;
        let Some(seg) = g.segments.last_mut() else { return Ok(()) };
        seg.len += buf.len() as u64;
        let written: Vec<IndexEntry> = seg.index.iter().copied().filter(|e| e.position >= pos).collect();
        let index_len = IndexEntry::file_position((seg.index.len() - written.len()) as u64);
        buf.clear();
        if !written.is_empty() {
            let bytes: Vec<u8> = written.iter().flat_map(|e| e.encode()).collect();
            let ipath = self.index_path(id);
            self.io.write_at(&ipath, index_len, &bytes).map_err(|e| self.fail(g, EngineError::io(&ipath, "write", &e)))?;
        }
        Ok(())
    }

    /// Group commit: waits until offsets below `end` are durable, leading a
    /// sync when none is in flight, sharing one when it is.
    fn commit<'a>(&'a self, mut g: MutexGuard<'a, Inner>, end: u64) -> Result<(), EngineError> {
        loop {
            if let Some(cause) = &g.failed {
                return Err(EngineError::FailStopped { cause: cause.clone() });
            }
            if g.durable_next >= end {
                return Ok(());
            }
            if let Durability::Interval { micros } = self.config.durability {
                if now_micros().saturating_sub(g.last_sync_micros) < micros {
                    return Ok(());
                }
            }
            if g.syncing {
                g = self.synced.wait(g).unwrap_or_else(std::sync::PoisonError::into_inner);
                continue;
            }
            g.syncing = true;
            let target = g.next_offset;
            let Some(seg) = g.segments.last() else { return Ok(()) };
            let (path, target_len) = (self.log_path(seg.id), seg.len);
            drop(g);
            let result = self.io.sync_data(&path);
            g = self.lock();
            g.syncing = false;
            match result {
                Ok(()) => {
                    g.durable_next = g.durable_next.max(target);
                    g.durable_len = g.durable_len.max(target_len);
                    g.last_sync_micros = now_micros();
                    self.synced.notify_all();
                }
                Err(e) => {
                    let err = EngineError::io(&path, "sync_data", &e);
                    return Err(self.fail(&mut g, err));
                }
            }
        }
    }

    // ----------------------------------------------------------------- reads

    /// The offset the next append gets.
    #[must_use]
    pub fn next_offset(&self) -> u64 {
        self.lock().next_offset
    }

    /// The oldest stored offset.
    #[must_use]
    pub fn first_offset(&self) -> u64 {
        let g = self.lock();
        g.segments.first().map_or(g.next_offset, |s| s.base)
    }

    /// Reads acknowledged records from `from_offset`, up to about `max_bytes`
    /// of payload (always at least one record when any exists). Reading past
    /// the end returns nothing; below the oldest record, `Trimmed`.
    ///
    /// # Errors
    /// `Trimmed`, IO failures, or damage met in the records read.
    pub fn read(&self, from_offset: u64, max_bytes: usize) -> Result<Vec<StoredRecord>, EngineError> {
        let (segments, end, durable_len) = {
            let g = self.lock();
            let first = g.segments.first().map_or(g.next_offset, |s| s.base);
            if from_offset < first {
                return Err(EngineError::Trimmed { requested: from_offset, first });
            }
            if from_offset >= g.durable_next {
                return Ok(Vec::new());
            }
            let at = g.segments.partition_point(|s| s.base <= from_offset).saturating_sub(1);
            let segs: Vec<(u64, u64, Option<IndexEntry>)> = g
                .segments
                .get(at..)
                .unwrap_or(&[])
                .iter()
                .map(|s| (s.id, s.len, if s.base <= from_offset { seek_position(&s.index, from_offset) } else { None }))
                .collect();
            (segs, g.durable_next, g.durable_len)
        };
        let mut out = Vec::new();
        let mut bytes = 0usize;
        let last_id = segments.last().map(|s| s.0);
        for (id, len, entry) in segments {
            let len = if Some(id) == last_id { len.min(durable_len.max(SEGMENT_HEADER_LEN as u64)) } else { len };
            let attempt = self.read_segment(id, len, entry, from_offset, end, max_bytes, &mut out, &mut bytes);
            // Index entries are never trusted: if one misleads, scan the segment from its start.
            let done = match attempt {
                Err(EngineError::Corrupt { .. }) if entry.is_some() && out.is_empty() => {
                    self.read_segment(id, len, None, from_offset, end, max_bytes, &mut out, &mut bytes)?
                }
                other => other?,
            };
            if done {
                break;
            }
        }
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn read_segment(
        &self,
        id: u64,
        len: u64,
        entry: Option<IndexEntry>,
        from: u64,
        end: u64,
        max_bytes: usize,
        out: &mut Vec<StoredRecord>,
        bytes: &mut usize,
    ) -> Result<bool, EngineError> {
        let path = self.log_path(id);
        let (mut pos, mut expected) = match entry {
            Some(e) => (e.position, Some(e.offset)),
            None => (SEGMENT_HEADER_LEN as u64, None),
        };
        let mut chunk = READ_CHUNK_BYTES;
        let mut buf = Vec::new();
        while pos < len {
            let want = usize::try_from(len - pos).unwrap_or(usize::MAX).min(chunk);
            buf.resize(want, 0);
            read_exact_at(&*self.io, &path, pos, &mut buf).map_err(|e| EngineError::io(&path, "read", &e))?;
            let mut consumed = 0u64;
            let mut grow = None;
            for item in SegmentReader::at_position(&buf, pos, expected) {
                match item {
                    Ok((p, r)) => {
                        consumed = p + r.header.record_len() - pos;
                        expected = Some(r.header.offset + 1);
                        if r.header.offset >= end {
                            return Ok(true);
                        }
                        if r.header.offset < from {
                            continue;
                        }
                        if !out.is_empty() && *bytes + r.payload.len() > max_bytes {
                            return Ok(true);
                        }
                        *bytes += r.payload.len();
                        out.push(StoredRecord {
                            offset: r.header.offset,
                            timestamp_micros: r.header.timestamp_micros,
                            payload: r.payload.to_vec(),
                        });
                    }
                    // The record continues past this chunk: read on from it.
                    Err(e) if matches!(e.kind, CorruptionKind::Truncated { needed, .. } if e.position + needed <= len) => {
                        if consumed == 0 {
                            grow = match e.kind {
                                CorruptionKind::Truncated { needed, .. } => usize::try_from(needed).ok(),
                                _ => None,
                            };
                        }
                        break;
                    }
                    Err(e) => {
                        let site =
                            felix_codec::CorruptionSite { shard: Some(self.name.clone()), segment_id: Some(id), position: e.position };
                        let finding = Finding { kind: e.kind, site, end: e.end, offset: e.offset, repair: Repair::Never };
                        return Err(EngineError::Corrupt { path, finding: Box::new(finding) });
                    }
                }
            }
            if let Some(n) = grow {
                chunk = n;
                continue;
            }
            if consumed == 0 {
                break;
            }
            pos += consumed;
        }
        Ok(false)
    }

    // ------------------------------------------------------------ retention

    /// Deletes whole oldest segments beyond the retention limits, never the
    /// active one; drops epochs older than the oldest retained record.
    /// Returns the segment files deleted.
    ///
    /// # Errors
    /// IO failures.
    pub fn apply_retention(&self, now_micros: u64) -> Result<Vec<PathBuf>, EngineError> {
        let mut g = self.lock();
        let mut removed = Vec::new();
        loop {
            if g.segments.len() < 2 {
                break;
            }
            let total: u64 = g.segments.iter().map(|s| s.len).sum();
            let Some(oldest) = g.segments.first().cloned() else { break };
            let over_bytes = self.config.retention_bytes.is_some_and(|limit| total > limit);
            let too_old = self.config.retention_age_micros.is_some_and(|age| now_micros.saturating_sub(oldest.newest_timestamp) > age);
            if !over_bytes && !too_old {
                break;
            }
            for p in [self.index_path(oldest.id), self.log_path(oldest.id)] {
                match self.io.remove(&p) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(EngineError::io(&p, "remove", &e)),
                }
            }
            g.segments.remove(0);
            removed.push(self.log_path(oldest.id));
        }
        if !removed.is_empty() {
            self.io.sync_dir(&self.dir).map_err(|e| EngineError::io(&self.dir, "sync_dir", &e))?;
            let first = g.segments.first().map_or(g.next_offset, |s| s.base);
            let bounded = bound_epochs(&g.epochs, first);
            if bounded != g.epochs {
                self.write_epochs(&bounded)?;
                g.epochs = bounded;
            }
        }
        Ok(removed)
    }

    // --------------------------------------------------------------- epochs

    /// The generation history.
    #[must_use]
    pub fn epochs(&self) -> Vec<Epoch> {
        self.lock().epochs.clone()
    }

    fn write_epochs(&self, entries: &[Epoch]) -> Result<(), EngineError> {
        let bytes = epochs::encode(entries).map_err(|kind| {
            let path = self.dir.join(EPOCHS_FILE_NAME);
            corrupt(&path, kind, &self.name, None, 0, 0, None)
        })?;
        self.write_file_durably(&self.dir.join(EPOCHS_FILE_NAME), &bytes)
    }

    /// Records that generation `generation` begins at the next offset.
    ///
    /// # Errors
    /// `Generation` when it does not exceed the latest; IO failures.
    pub fn begin_generation(&self, generation: u64) -> Result<(), EngineError> {
        let mut g = self.lock();
        if let Some(latest) = g.epochs.last().map(|e| e.generation) {
            if generation <= latest {
                return Err(EngineError::Generation { requested: generation, latest });
            }
        }
        let mut entries = g.epochs.clone();
        entries.push(Epoch { generation, start_offset: g.next_offset });
        let first = g.segments.first().map_or(g.next_offset, |s| s.base);
        let mut entries = bound_epochs(&entries, first);
        let excess = entries.len().saturating_sub(usize::from(MAX_EPOCHS));
        entries.drain(..excess);
        self.write_epochs(&entries)?;
        g.epochs = entries;
        Ok(())
    }

    /// Where this replica must cut its log, given the leader's answer to
    /// "where does generation `g` end": see [`truncation_point`].
    #[must_use]
    pub fn divergence_point(&self, leader_generation: u64, leader_end_offset: u64) -> u64 {
        let g = self.lock();
        truncation_point(&g.epochs, g.next_offset, leader_generation, leader_end_offset)
    }

    /// Removes every record with an offset above `offset` (keeps `..=offset`),
    /// across segments, fixing indexes and epochs.
    ///
    /// # Errors
    /// `Trimmed` when `offset + 1` is below the oldest record; IO failures.
    pub fn truncate_after(&self, offset: u64) -> Result<(), EngineError> {
        let keep_next = offset.saturating_add(1);
        let mut g = self.lock();
        if keep_next >= g.next_offset {
            return Ok(());
        }
        let first = g.segments.first().map_or(g.next_offset, |s| s.base);
        if keep_next < first {
            return Err(EngineError::Trimmed { requested: keep_next, first });
        }
        while g.segments.len() > 1 && g.segments.last().is_some_and(|s| s.base >= keep_next) {
            let Some(s) = g.segments.pop() else { break };
            for p in [self.index_path(s.id), self.log_path(s.id)] {
                self.io.remove(&p).map_err(|e| self.fail(&mut g, EngineError::io(&p, "remove", &e)))?;
            }
        }
        self.io.sync_dir(&self.dir).map_err(|e| self.fail(&mut g, EngineError::io(&self.dir, "sync_dir", &e)))?;
        let Some(seg) = g.segments.last().cloned() else { return Ok(()) };
        let (_, records) = self.scan_segment(seg.id, true)?;
        let cut = records.iter().find(|(o, _, _)| *o >= keep_next).map_or(seg.len, |(_, p, _)| *p);
        let kept: Vec<(u64, u64, u64)> = records.into_iter().filter(|(o, _, _)| *o < keep_next).collect();
        let path = self.log_path(seg.id);
        self.io.set_len(&path, cut).map_err(|e| self.fail(&mut g, EngineError::io(&path, "set_len", &e)))?;
        self.io.sync_data(&path).map_err(|e| self.fail(&mut g, EngineError::io(&path, "sync_data", &e)))?;
        let rebuilt = self.segment_from_records(seg.id, seg.base, cut, &kept);
        let index = build_index(seg.base, kept.iter().map(|(o, p, _)| (*o, *p)), self.config.index_spacing_bytes);
        self.write_file_durably(&self.index_path(seg.id), &index)?;
        if let Some(last) = g.segments.last_mut() {
            *last = rebuilt;
        }
        g.next_offset = keep_next;
        g.durable_next = keep_next;
        g.durable_len = cut;
        let epochs: Vec<Epoch> = g.epochs.iter().copied().filter(|e| e.start_offset < keep_next).collect();
        if epochs != g.epochs {
            self.write_epochs(&epochs)?;
            g.epochs = epochs;
        }
        Ok(())
    }
}

/// The index's entries when it is sound and every entry lands on a record
/// (`(offset, position, _)`, ascending); otherwise why not.
fn index_agrees(bytes: &[u8], base: u64, records: &[(u64, u64, u64)]) -> Result<Vec<IndexEntry>, &'static str> {
    let mut scanner = IndexScanner::new(ScanContext::default());
    scanner.feed(bytes, &mut ());
    let summary = scanner.finish(&mut ());
    match summary.header {
        None => return Err("unreadable header"),
        Some(h) if h.base_offset != base => return Err("base offset differs from its segment's"),
        Some(_) => {}
    }
    if !summary.findings.findings.is_empty() {
        return Err("entries out of order");
    }
    if !summary.findings.notes.is_empty() {
        return Err("a torn final entry");
    }
    let entries: Vec<IndexEntry> = summary.kept.into_iter().map(|(_, e)| e).collect();
    let mut at = 0;
    for e in &entries {
        at += records.get(at..).unwrap_or(&[]).partition_point(|(_, p, _)| *p < e.position);
        match records.get(at) {
            Some((o, p, _)) if *p == e.position && *o == e.offset => {}
            _ => return Err("an entry does not land on its record (stale)"),
        }
    }
    if entries.first().is_some_and(|e| e.position != SEGMENT_HEADER_LEN as u64) {
        return Err("no entry for the first record");
    }
    Ok(entries)
}

/// Keeps the entries still relevant once records below `first_offset` are
/// gone: the last one starting at or below it, and all later ones.
#[must_use]
pub fn bound_epochs(entries: &[Epoch], first_offset: u64) -> Vec<Epoch> {
    let keep_from = entries.iter().rposition(|e| e.start_offset <= first_offset).unwrap_or(0);
    entries.get(keep_from..).unwrap_or(&[]).to_vec()
}

/// Kafka's leader-epoch truncation rule. A follower whose latest generation
/// is `gf` asks the leader where `gf` ends; the leader answers with the
/// largest generation `gl <= gf` it knows and `leader_end`, the offset after
/// that generation's last record on the leader. The follower keeps offsets
/// below `min(leader_end, local end of gl)`, where the local end of `gl` is
/// the start of the follower's first generation after `gl`, or its log end.
#[must_use]
pub fn truncation_point(local: &[Epoch], local_next_offset: u64, leader_generation: u64, leader_end: u64) -> u64 {
    let local_end = local.iter().find(|e| e.generation > leader_generation).map_or(local_next_offset, |e| e.start_offset);
    leader_end.min(local_end).min(local_next_offset)
}
