//! `felix-storage inspect`: find the files, feed them through the codec in
//! chunks, and collect one [`Report`]. `felix-storage recover` uses the same
//! walk and the same scans, so the two can never disagree.
//!
//! Memory stays bounded whatever the file size: each file is read through
//! the tools' one read loop ([`crate::tools::read`]) in
//! [`CHUNK_BYTES`](crate::tools::read::CHUNK_BYTES) pieces and the codec's scanners keep only a partial
//! structure between pieces. Which paths are shards is `resolve`'s
//! question (`inspect/resolve.rs`); every file is read through the [`Io`]
//! the caller gives (`OsIo` for the command line).
//!

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use felix_codec::doc::report::{FileChange, FileHash, FileReport, HashAlgorithm, Report};
use felix_codec::format::file_name::FileKind;
use felix_codec::shard::inspect::{FileScan, InputFile, ShardInspection};
use felix_codec::shard::recovery::ShardFacts;
use sha2::{Digest, Sha256};

use crate::io::{EntryType, Io, Links, Stat};
use crate::shard::walk::ReadBuf;
use crate::tools::read::{End, Identity, Opened};
use crate::tools::{io_error, name_of, ToolError};

mod resolve;
mod subtree;

pub(crate) use resolve::{first_refused, shard_name};
pub use resolve::{is_shard_dir, resolve, shard_files, Resolution, Target, MAX_ROOT_DEPTH};

/// Reports progress through a long scan.
pub trait Progress {
    /// `done` of `total` bytes read; `path` is the file being read.
    fn update(&mut self, path: &Path, done: u64, total: u64);
    /// The scan is over.
    fn finish(&mut self) {}
}

/// No progress shown.
#[derive(Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn update(&mut self, _: &Path, _: u64, _: u64) {}
}

/// How [`inspect_with`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Compute each file's identity hash, BLAKE3 (the JSON report carries it;
    /// the text report does not show it, so `inspect` without `--json` skips
    /// it and reads only the bytes its verdicts need).
    pub hash: bool,
    /// Also compute each file's SHA-256 (`--sha256`: the value `sha256sum`
    /// prints, in the report's `sha256` field).
    pub sha256: bool,
    /// Worker threads (at least 1): [`default_jobs`] unless the user says.
    pub jobs: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self { hash: true, sha256: false, jobs: default_jobs() }
    }
}

/// The machine's available parallelism (1 when it cannot be told).
#[must_use]
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// A file hash being computed: BLAKE3 (the report's identity) or SHA-256.
#[derive(Debug)]
enum Hasher {
    Blake3(Box<blake3::Hasher>),
    Sha256(Sha256),
}

impl Hasher {
    fn new(algorithm: HashAlgorithm) -> Self {
        match algorithm {
            HashAlgorithm::Blake3 => Self::Blake3(Box::new(blake3::Hasher::new())),
            HashAlgorithm::Sha256 => Self::Sha256(Sha256::new()),
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            Self::Blake3(h) => {
                h.update(bytes);
            }
            Self::Sha256(h) => h.update(bytes),
        }
    }

    fn finish(self) -> FileHash {
        match self {
            Self::Blake3(h) => FileHash::new(HashAlgorithm::Blake3, h.finalize().as_bytes()),
            Self::Sha256(h) => FileHash::new(HashAlgorithm::Sha256, &h.finalize()),
        }
    }
}

/// Streams one file's first `limit` bytes (its size when the inspection
/// began: a file growing meanwhile is described as it was then, by its scan
/// and its hashes alike) through `scan` (when given) and `hasher` (when
/// given), through the tools' read loop; without a hasher, stops reading
/// once the verdict needs no more bytes. `on_bytes` hears of every read.
/// Returns how many bytes it read or skipped: fewer than `limit` when the
/// file shrank meanwhile — or none at all when `file` is `None` (the file
/// opened is not the one stamped: another put at its path since its stamp
/// was taken, whose bytes are never judged or hashed as this file's).
fn stream_file(
    file: Option<Opened<'_>>,
    mut scan: Option<&mut FileScan>,
    mut hasher: Option<&mut Hasher>,
    buf: &mut ReadBuf,
    on_bytes: &mut dyn FnMut(&Path, u64),
    limit: u64,
) -> Result<u64, ToolError> {
    let Some(file) = file else { return Ok(0) };
    let path = file.path();
    let hashing = hasher.is_some();
    let wants = |scan: &Option<&mut FileScan>| hashing || scan.as_ref().is_none_or(|s| s.needs_bytes());
    let (read, end) = if wants(&scan) {
        file.read_chunks(0, limit, buf, |chunk| {
            if let Some(h) = &mut hasher {
                h.update(chunk);
            }
            if let Some(scan) = &mut scan {
                scan.feed(chunk, &mut ());
            }
            on_bytes(path, chunk.len() as u64);
            Ok(wants(&scan))
        })?
    } else {
        (0, End::Done)
    };
    match (end, scan) {
        // The verdict needs no more bytes: the rest (to the size taken first) is skipped.
        (End::Done, Some(scan)) if read < limit => {
            let skipped = file.stat()?.len.min(limit).saturating_sub(read);
            scan.skip(skipped);
            Ok(read + skipped)
        }
        _ => Ok(read),
    }
}

/// The hash of a file's first `limit` bytes (see [`stream_file`]); `None`
/// when it holds fewer (it shrank since its size was taken) or is not the
/// file stamped.
fn hash_file(
    file: Option<Opened<'_>>,
    algorithm: HashAlgorithm,
    buf: &mut ReadBuf,
    on_bytes: &mut dyn FnMut(&Path, u64),
    limit: u64,
) -> Result<Option<FileHash>, ToolError> {
    let mut hasher = Hasher::new(algorithm);
    let read = stream_file(file, None, Some(&mut hasher), buf, on_bytes, limit)?;
    Ok((read == limit).then(|| hasher.finish()))
}

/// What is known of a file when the inspection begins and again when it
/// ends: a change between the two is said in the report ([`FileChange`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    size: u64,
    dev: u64,
    ino: u64,
    mtime: (i64, i64),
    /// The inode's change time: a rename away and back, a write or a
    /// `chmod` moves it, though the other fields may come back the same.
    ctime: (i64, i64),
}

impl Stamp {
    /// The file at `path` now (links followed, as every read follows them).
    fn of(io: &dyn Io, path: &Path) -> Result<Self, ToolError> {
        let s: Stat = io.stat(path, Links::Follow).map_err(|e| io_error(path, &e))?;
        Ok(Self { size: s.len, dev: s.dev, ino: s.ino, mtime: s.mtime, ctime: s.ctime })
    }

    fn identity(&self) -> Identity {
        (self.dev, self.ino)
    }

    /// How the file changed since `self` was taken, if it did: `now` is its
    /// stamp at the end (`None`: gone), `short` whether a read of it found
    /// fewer than `self.size` bytes (or opened another file).
    ///
    /// It "only grew" — the report then describes its first `self.size`
    /// bytes, with their hash — when the same file is larger at the end and
    /// neither its modification nor its change time moved. Any write moves
    /// them, an append as much as a write over the bytes already read, and
    /// no stamp tells the two apart: so a file whose times moved is said to
    /// have changed "not only by growing", and gets no hash.
    fn change(&self, now: Option<&Self>, short: bool) -> Option<FileChange> {
        if now == Some(self) && !short {
            return None;
        }
        let only_grew = now
            .is_some_and(|n| n.identity() == self.identity() && n.size > self.size && n.mtime == self.mtime && n.ctime == self.ctime)
            && !short;
        Some(FileChange { size_at_start: self.size, size_at_end: now.map(|n| n.size), only_grew })
    }
}

fn size_of(io: &dyn Io, path: &Path) -> Result<u64, ToolError> {
    io.stat(path, Links::Follow).map(|s| s.len).map_err(|e| io_error(path, &e))
}

/// The pid of the writer holding the shard in `dir`, when one does
/// (`Some(None)`: held, pid unknown).
#[must_use]
pub fn writer_of(io: &dyn Io, dir: &Path) -> Option<Option<u32>> {
    io.lock_holder(dir).ok().flatten().map(|h| h.pid)
}

/// Inspects every target, with each file's SHA-256, on every core, and
/// returns the report (the same, byte for byte, as a run on one thread).
///
/// # Errors
/// A file that cannot be opened or read.
pub fn inspect(io: &dyn Io, resolution: &Resolution, progress: &mut dyn Progress) -> Result<Report, ToolError> {
    inspect_with(io, resolution, &Options::default(), progress)
}

/// What every job reads from: the `Io`, the targets and their stamps.
#[derive(Clone, Copy)]
struct Work<'a> {
    io: &'a dyn Io,
    targets: &'a [Target],
    stamps: &'a [Vec<Stamp>],
}

/// One piece of work for a worker: the scan of a target (a lone file, or a
/// whole shard: its files are scanned in order, each check needs the
/// previous), the hash of one file, or one BLAKE3 subtree of a large file
/// (bytes `offset..offset + len`; see [`subtree`]).
#[derive(Debug, Clone, Copy)]
enum Job {
    Scan { target: usize },
    Hash { target: usize, file: usize, algorithm: HashAlgorithm },
    HashPart { target: usize, file: usize, offset: u64, len: u64 },
}

/// What a job produced.
#[derive(Debug)]
enum Output {
    File(Box<FileReport>),
    Shard {
        reports: Vec<FileReport>,
        writer: Option<Option<u32>>,
    },
    Hash(Option<FileHash>),
    /// A subtree's chaining value; `None` when the file ended before it.
    Part(Option<blake3::hazmat::ChainingValue>),
}

/// From a worker to the thread that owns progress and results.
enum Msg {
    Bytes(PathBuf, u64),
    Done(usize, Result<Output, (usize, ToolError)>),
}

impl Job {
    fn target(self) -> usize {
        match self {
            Self::Scan { target } | Self::Hash { target, .. } | Self::HashPart { target, .. } => target,
        }
    }
}

/// Inspects every target as `options` say and returns the report.
///
/// Work is split into jobs — the scan of each target, and the hash of each
/// file — run by `options.jobs` workers, longest first. Each worker holds
/// one [`CHUNK_BYTES`](crate::tools::read::CHUNK_BYTES) buffer and one partial structure, so memory does not
/// depend on file sizes or counts. Results are put back in target order, so
/// the report is byte-identical to a run with one worker; when reads fail,
/// the error is the one a run in order would have met first.
///
/// # Errors
/// A file that cannot be opened or read.
pub fn inspect_with(io: &dyn Io, resolution: &Resolution, options: &Options, progress: &mut dyn Progress) -> Result<Report, ToolError> {
    let targets = &resolution.targets;
    let stamps = take_stamps(io, targets)?;
    let sizes: Vec<Vec<u64>> = stamps.iter().map(|t| t.iter().map(|s| s.size).collect()).collect();
    let jobs = plan_jobs(targets, &sizes, options);
    let total: u64 = sizes.iter().flatten().sum::<u64>() * (1 + u64::from(options.hash) + u64::from(options.sha256));
    let outputs = run_jobs(Work { io, targets, stamps: &stamps }, &jobs, options.jobs, total, progress)?;
    assemble(io, resolution, &jobs, outputs, &stamps)
}

/// Each target's files' sizes and identities, first and in order: a
/// missing file fails here as it always did.
fn take_stamps(io: &dyn Io, targets: &[Target]) -> Result<Vec<Vec<Stamp>>, ToolError> {
    let mut stamps: Vec<Vec<Stamp>> = Vec::with_capacity(targets.len());
    for t in targets {
        stamps.push(match t {
            Target::File(p) => vec![Stamp::of(io, p)?],
            Target::Shard(_, files) => files.iter().map(|p| Stamp::of(io, p)).collect::<Result<_, _>>()?,
            Target::Stray(_) | Target::Refused(..) => Vec::new(),
        });
    }
    Ok(stamps)
}

/// The jobs: each target's scan, each file's hash (a large file's BLAKE3 in
/// one job per subtree), each with its cost in scan-bytes, longest first
/// (stable: ties keep target order).
fn plan_jobs(targets: &[Target], sizes: &[Vec<u64>], options: &Options) -> Vec<(u64, Job)> {
    let mut jobs: Vec<(u64, Job)> = Vec::new();
    for (target, t) in targets.iter().enumerate() {
        let files = sizes.get(target).map_or(&[][..], Vec::as_slice);
        if matches!(t, Target::Stray(_) | Target::Refused(..)) {
            continue;
        }
        jobs.push((files.iter().sum(), Job::Scan { target }));
        // In memory, BLAKE3 runs about 3x slower than the scan, SHA-256 about 7x: weigh them so.
        for (algorithm, wanted, weight) in [(HashAlgorithm::Blake3, options.hash, 3), (HashAlgorithm::Sha256, options.sha256, 7)] {
            if !wanted {
                continue;
            }
            for (file, &size) in files.iter().enumerate() {
                // A large file's BLAKE3 hash: one job per subtree, so every worker can take a part.
                let parts = if algorithm == HashAlgorithm::Blake3 { subtree::pieces(size, subtree::PIECE_BYTES) } else { Vec::new() };
                if parts.is_empty() {
                    jobs.push((size.saturating_mul(weight), Job::Hash { target, file, algorithm }));
                }
                jobs.extend(
                    parts.into_iter().map(|(offset, len)| (len.saturating_mul(weight), Job::HashPart { target, file, offset, len })),
                );
            }
        }
    }
    jobs.sort_by_key(|&(cost, _)| std::cmp::Reverse(cost));
    jobs
}

/// Runs the jobs on `workers` threads, each with one buffer, telling
/// `progress` of every byte; each job's output in its slot, or the error a
/// run in target order would have met first.
fn run_jobs(
    work: Work<'_>,
    jobs: &[(u64, Job)],
    workers: usize,
    total: u64,
    progress: &mut dyn Progress,
) -> Result<Vec<Option<Output>>, ToolError> {
    let mut outputs: Vec<Option<Output>> = (0..jobs.len()).map(|_| None).collect();
    let mut failure: Option<((usize, usize), ToolError)> = None;
    let next = AtomicUsize::new(0);
    // The lowest target known to have failed: later targets' jobs are skipped
    // (an earlier target's error is what a run in order would report).
    let failed_target = AtomicUsize::new(usize::MAX);
    std::thread::scope(|scope| {
        let (tx, rx) = mpsc::channel::<Msg>();
        for _ in 0..workers.clamp(1, jobs.len().max(1)) {
            let tx = tx.clone();
            let (next, failed_target) = (&next, &failed_target);
            scope.spawn(move || {
                let mut buf = ReadBuf::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(_, job)) = jobs.get(i) else { break };
                    if job.target() > failed_target.load(Ordering::Relaxed) {
                        continue;
                    }
                    let mut on_bytes = |path: &Path, n: u64| {
                        let _ = tx.send(Msg::Bytes(path.to_path_buf(), n));
                    };
                    let out = run_job(work, job, &mut buf, &mut on_bytes);
                    if let Err((_, _)) = &out {
                        failed_target.fetch_min(job.target(), Ordering::Relaxed);
                    }
                    let _ = tx.send(Msg::Done(i, out));
                }
            });
        }
        drop(tx);
        let mut done = 0u64;
        for msg in rx {
            match msg {
                Msg::Bytes(path, n) => {
                    done += n;
                    progress.update(&path, done, total);
                }
                Msg::Done(i, Ok(out)) => {
                    if let Some(slot) = outputs.get_mut(i) {
                        *slot = Some(out);
                    }
                }
                Msg::Done(i, Err((file_rank, e))) => {
                    let key = (jobs.get(i).map_or(usize::MAX, |(_, j)| j.target()), file_rank);
                    if failure.as_ref().is_none_or(|(k, _)| key < *k) {
                        failure = Some((key, e));
                    }
                }
            }
        }
    });
    progress.finish();
    match failure {
        Some((_, e)) => Err(e),
        None => Ok(outputs),
    }
}

/// Runs one job; an error comes with the rank, in the target's read order,
/// of the file that failed (so the first error in order can be chosen).
/// Every file is read up to its size in `stamps` (taken once, when the
/// inspection began), so a growing file's scan and hashes describe the same
/// bytes, and only if the file each read opens is the one stamped.
fn run_job<'a>(work: Work<'a>, job: Job, buf: &mut ReadBuf, on_bytes: &mut dyn FnMut(&Path, u64)) -> Result<Output, (usize, ToolError)> {
    let Work { io, targets, stamps } = work;
    let target_stamps = stamps.get(job.target()).map_or(&[][..], Vec::as_slice);
    let size = |file: usize| target_stamps.get(file).map_or(0, |s| s.size);
    let open = |path: &'a PathBuf, file: usize| Opened::open(io, path, target_stamps.get(file).map(Stamp::identity));
    match (job, targets.get(job.target())) {
        (Job::Scan { .. }, Some(Target::File(path))) => {
            let mut scan = FileScan::standalone(&name_of(path));
            let _ = open(path, 0).and_then(|f| stream_file(f, Some(&mut scan), None, buf, on_bytes, size(0))).map_err(|e| (0, e))?;
            Ok(Output::File(Box::new(scan.into_report(path.display().to_string(), &mut ()))))
        }
        (Job::Scan { .. }, Some(Target::Shard(dir, paths))) => {
            let writer = writer_of(io, dir);
            let (reports, _) = scan_shard(io, (dir, paths), Some(target_stamps), Writer::Probe, None, buf, on_bytes)?;
            Ok(Output::Shard { reports, writer })
        }
        (Job::Hash { file, algorithm, .. }, Some(target @ (Target::File(_) | Target::Shard(..)))) => {
            let Some(path) = file_path(target, file) else { return Ok(Output::Hash(None)) };
            let hashed = open(path, file).and_then(|f| hash_file(f, algorithm, buf, on_bytes, size(file)));
            hashed.map(Output::Hash).map_err(|e| (rank_of(target, file), e))
        }
        (Job::HashPart { file, offset, len, .. }, Some(target @ (Target::File(_) | Target::Shard(..)))) => {
            let Some(path) = file_path(target, file) else { return Ok(Output::Part(None)) };
            let hashed = open(path, file).and_then(|f| subtree::hash_piece(f, offset, len, buf, on_bytes));
            hashed.map(Output::Part).map_err(|e| (rank_of(target, file), e))
        }
        (_, Some(Target::Stray(_) | Target::Refused(..)) | None) => Ok(Output::Hash(None)),
    }
}

/// The path of file `file` of `target` (a lone file is file 0).
fn file_path(target: &Target, file: usize) -> Option<&PathBuf> {
    match target {
        Target::File(path) => (file == 0).then_some(path),
        Target::Shard(_, paths) => paths.get(file),
        Target::Stray(_) | Target::Refused(..) => None,
    }
}

/// Where file `file` of `target` comes in the order its files are scanned
/// (asked only when a read failed).
fn rank_of(target: &Target, file: usize) -> usize {
    match target {
        Target::Shard(_, paths) => read_rank(paths, file),
        _ => file,
    }
}

/// Where file `i` of a shard comes in the order its files are scanned.
fn read_rank(paths: &[PathBuf], i: usize) -> usize {
    let inputs: Vec<InputFile> = paths.iter().map(|p| InputFile { path: String::new(), name: name_of(p), size: 0 }).collect();
    ShardInspection::new(None, inputs).order().iter().position(|&j| j == i).unwrap_or(usize::MAX)
}

/// The report, in target order, from the jobs' outputs; each file looked
/// at again, and a change since `stamps` were taken said in its report.
fn assemble(
    io: &dyn Io,
    resolution: &Resolution,
    jobs: &[(u64, Job)],
    outputs: Vec<Option<Output>>,
    stamps: &[Vec<Stamp>],
) -> Result<Report, ToolError> {
    let (scans, mut hashes) = sort_outputs(resolution.targets.len(), jobs, outputs, stamps);
    let mut files = Vec::new();
    let mut notes = resolution.notes.clone();
    for (i, (target, scan)) in resolution.targets.iter().zip(scans).enumerate() {
        let mut shas = hashes.get_mut(i).map(std::mem::take).unwrap_or_default().into_iter();
        let first = files.len();
        let mut short = Vec::new();
        match (target, scan) {
            (Target::File(_), Some(Output::File(mut report))) => {
                short.push(shas.next().unwrap_or_default().fill(&mut report));
                files.push(*report);
            }
            (Target::Shard(dir, _), Some(Output::Shard { mut reports, writer })) => {
                if let Some(pid) = writer {
                    let by = pid.map_or_else(String::new, |p| format!(" (pid {p})"));
                    notes.push(format!("{}: shard is open for writing{by}; the tail may be in flight", dir.display()));
                }
                short.extend(reports.iter_mut().zip(shas).map(|(r, h)| h.fill(r)));
                files.extend(reports);
            }
            (Target::Stray(path), _) => {
                let mut r = FileReport::new(path.display().to_string(), FileKind::Unknown, size_of(io, path)?);
                r.notes.push("not part of any shard directory: not inspected, and never read or changed by the engine".into());
                files.push(r);
            }
            (Target::Refused(path, what), _) => {
                let mut r = FileReport::new(path.display().to_string(), FileKind::Unknown, 0);
                r.notes.push(format!(
                    "{what} where a Felix file belongs: not read; the engine refuses to open this shard until it is moved away (it neither follows nor replaces it)"
                ));
                files.push(r);
            }
            (Target::File(path) | Target::Shard(path, _), _) => {
                return Err(ToolError { path: path.clone(), what: "the inspection of this target did not finish".into() });
            }
        }
        if let (Some(paths), Some(stamps)) = (target_paths(target), stamps.get(i)) {
            say_changes(io, files.get_mut(first..).unwrap_or_default(), paths, stamps, &short);
        }
    }
    let mut report = Report::new(files);
    report.notes = notes;
    Ok(report)
}

/// The jobs' outputs put back per target: each target's scan, and each of
/// its files' hashes (a split file's root from its subtrees; a file that
/// shrank since its size was taken lacks a part: it has no hash, and its
/// report says it changed).
fn sort_outputs(
    targets: usize,
    jobs: &[(u64, Job)],
    outputs: Vec<Option<Output>>,
    stamps: &[Vec<Stamp>],
) -> (Vec<Option<Output>>, Vec<Vec<Hashes>>) {
    let mut scans: Vec<Option<Output>> = (0..targets).map(|_| None).collect();
    let mut hashes: Vec<Vec<Hashes>> = stamps.iter().map(|s| vec![Hashes::default(); s.len()]).collect();
    let mut parts: BTreeMap<(usize, usize), BTreeMap<u64, blake3::hazmat::ChainingValue>> = BTreeMap::new();
    let mut split: BTreeSet<(usize, usize)> = BTreeSet::new();
    for ((_, job), out) in jobs.iter().zip(outputs) {
        match (job, out) {
            (Job::HashPart { target, file, offset, .. }, out) => {
                split.insert((*target, *file));
                if let Some(Output::Part(Some(cv))) = out {
                    parts.entry((*target, *file)).or_default().insert(*offset, cv);
                }
            }
            (Job::Hash { target, file, .. }, Some(Output::Hash(h))) => {
                if let Some(slot) = hashes.get_mut(*target).and_then(|t| t.get_mut(*file)) {
                    slot.put(h);
                }
            }
            (Job::Scan { target }, out @ Some(_)) => {
                if let Some(slot) = scans.get_mut(*target) {
                    *slot = out;
                }
            }
            _ => {}
        }
    }
    for (target, file) in split {
        let size = stamps.get(target).and_then(|s| s.get(file)).map_or(0, |s| s.size);
        let root = parts.get(&(target, file)).and_then(|cvs| subtree::root(size, subtree::PIECE_BYTES, cvs));
        if let Some(slot) = hashes.get_mut(target).and_then(|t| t.get_mut(file)) {
            slot.put(root.map(|root| FileHash::new(HashAlgorithm::Blake3, root.as_bytes())));
        }
    }
    (scans, hashes)
}

/// The files a target reads (a lone file, or a shard's), in report order.
fn target_paths(target: &Target) -> Option<&[PathBuf]> {
    match target {
        Target::File(path) => Some(std::slice::from_ref(path)),
        Target::Shard(_, paths) => Some(paths),
        Target::Stray(_) | Target::Refused(..) => None,
    }
}

/// Looks at each file again once every job is done: one whose size or
/// identity changed since `stamps` were taken, or that a read found shorter
/// than its size then (its scan saw fewer bytes; `short`: a hash found fewer),
/// is said to have changed while it was read ([`FileReport::set_changed`]).
fn say_changes(io: &dyn Io, reports: &mut [FileReport], paths: &[PathBuf], stamps: &[Stamp], short: &[bool]) {
    for (i, ((r, path), stamp)) in reports.iter_mut().zip(paths).zip(stamps).enumerate() {
        let short = r.size < stamp.size || short.get(i).copied().unwrap_or(false);
        let now = Stamp::of(io, path).ok();
        if let Some(change) = stamp.change(now.as_ref(), short) {
            r.set_changed(change);
        }
    }
}

/// The hashes computed for one file.
#[derive(Debug, Clone, Default)]
struct Hashes {
    identity: Option<FileHash>,
    sha256: Option<String>,
    /// A hash found fewer bytes than the file held when the inspection began.
    short: bool,
}

impl Hashes {
    /// One hash, or `None` for one that found the file shorter.
    fn put(&mut self, h: Option<FileHash>) {
        match h {
            Some(h) if h.algorithm == HashAlgorithm::Blake3 => self.identity = Some(h),
            Some(h) => self.sha256 = Some(h.value),
            None => self.short = true,
        }
    }

    /// Puts the hashes into `report`; whether one found the file shorter.
    fn fill(self, report: &mut FileReport) -> bool {
        report.hash = self.identity;
        report.sha256 = self.sha256;
        self.short
    }
}

/// What the caller of [`inspect_shard`] knows about the shard's writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writer {
    /// Probe the writer's lock before reading, and again once the newest
    /// segment is read (a writer may start during the scan): while one holds
    /// it, a tail ending inside a record is a record in flight, not damage.
    Probe,
    /// The caller holds the shard's lock itself (`recover`): no writer can
    /// be live, and a torn tail is a torn tail.
    Excluded,
}

/// Inspects one shard directory: the reports of its files and the facts
/// recovery plans from. `writer`: see [`Writer`]; `hash`: compute each
/// file's identity hash (recovery needs none, and then reads only the bytes
/// a verdict depends on).
///
/// # Errors
/// A file that cannot be opened or read.
pub fn inspect_shard(
    io: &dyn Io,
    (dir, paths): (&Path, &[PathBuf]),
    writer: Writer,
    hash: bool,
    progress: &mut dyn Progress,
    done: &mut u64,
    total: u64,
) -> Result<(Vec<FileReport>, ShardFacts), ToolError> {
    let mut shas = hash.then(|| vec![None; paths.len()]);
    let mut buf = ReadBuf::new();
    let mut on_bytes = |path: &Path, n: u64| {
        *done += n;
        progress.update(path, *done, total);
    };
    let (mut reports, facts) =
        scan_shard(io, (dir, paths), None, writer, shas.as_deref_mut(), &mut buf, &mut on_bytes).map_err(|(_, e)| e)?;
    if let Some(shas) = shas {
        for (r, h) in reports.iter_mut().zip(shas) {
            r.hash = h;
        }
    }
    Ok((reports, facts))
}

/// Scans a shard's files in their read order (hashing each into `shas` when
/// given, with the identity hash). An error comes with the failing file's rank in that order.
fn scan_shard(
    io: &dyn Io,
    (dir, paths): (&Path, &[PathBuf]),
    stamps: Option<&[Stamp]>,
    writer: Writer,
    mut shas: Option<&mut [Option<FileHash>]>,
    buf: &mut ReadBuf,
    on_bytes: &mut dyn FnMut(&Path, u64),
) -> Result<(Vec<FileReport>, ShardFacts), (usize, ToolError)> {
    let mut inputs = Vec::with_capacity(paths.len());
    for (i, p) in paths.iter().enumerate() {
        let size = match stamps.and_then(|s| s.get(i)) {
            Some(stamp) => stamp.size,
            None => size_of(io, p).map_err(|e| (0, e))?,
        };
        inputs.push(InputFile { path: p.display().to_string(), name: name_of(p), size });
    }
    let limits: Vec<u64> = inputs.iter().map(|f| f.size).collect();
    let shard_name = shard_name(io, dir);
    let mut probe = || writer_of(io, dir).is_some();
    let probe: Option<&mut dyn FnMut() -> bool> = (writer == Writer::Probe).then_some(&mut probe);
    let shard = drive_shard(shard_name, inputs, probe, &mut (), |i, scan, _| {
        let Some(path) = paths.get(i) else { return Ok(()) };
        let mut hasher = shas.is_some().then(|| Hasher::new(HashAlgorithm::Blake3));
        let limit = limits.get(i).copied().unwrap_or(0);
        let expect = stamps.and_then(|s| s.get(i)).map(Stamp::identity);
        stream_file(Opened::open(io, path, expect)?, Some(scan), hasher.as_mut(), buf, on_bytes, limit)?;
        if let (Some(h), Some(slot)) = (hasher, shas.as_deref_mut().and_then(|s| s.get_mut(i))) {
            *slot = Some(h.finish());
        }
        Ok(())
    })?;
    let (mut reports, facts) = shard.finish_with_facts(dir.display().to_string());
    for (r, path) in reports.iter_mut().zip(paths) {
        if io.stat(path, Links::NoFollow).is_ok_and(|s| s.kind == EntryType::Symlink) {
            r.notes.push(
                "a symbolic link: read through here, but the engine refuses to open a shard holding one (it neither follows nor replaces links)"
                    .into(),
            );
        }
    }
    Ok((reports, facts))
}

/// The one place that drives the codec's shard inspection over a folder's
/// files (`shard_name`'s `inputs`) — `inspect`, `diff` and `recover`'s plan alike: the codec's read
/// order; each file's bytes fed by `read` (from where, and what else is done
/// with them, is the caller's); with `probe` (a reader's check of the
/// writer's lock), a writer live before the scan or found once the newest
/// segment was read makes its tail a record in flight, not damage. An error
/// comes with the failing file's rank in the read order.
pub(crate) fn drive_shard<S: felix_codec::read::scan::Sink, E>(
    shard_name: String,
    inputs: Vec<InputFile>,
    mut probe: Option<&mut dyn FnMut() -> bool>,
    sink: &mut S,
    mut read: impl FnMut(usize, &mut FileScan, &mut S) -> Result<(), E>,
) -> Result<ShardInspection, (usize, E)> {
    let live_before = probe.as_mut().is_some_and(|p| p());
    let mut shard = ShardInspection::new(Some(shard_name), inputs).with_writer_live(live_before);
    for (rank, i) in shard.order().into_iter().enumerate() {
        let mut scan = shard.begin(i);
        read(i, &mut scan, sink).map_err(|e| (rank, e))?;
        if !live_before && scan.is_newest_segment() && probe.as_mut().is_some_and(|p| p()) {
            scan.set_writer_live(true);
        }
        shard.end(i, scan, sink);
    }
    Ok(shard)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A file read up to the size taken when the inspection began: bytes
    /// written after it are in neither the scan nor the hash, so a growing
    /// segment's report describes one prefix (its size and its hash agree).
    #[test]
    fn the_scan_and_the_hash_stop_at_the_size_taken_first() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("00000000000000000000.log");
        let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let mut buf = ReadBuf::new();
        let io = crate::io::OsIo::new();
        let open = || Opened::open(&io, &path, None).unwrap();
        for limit in [0u64, 1, 1_048_576, 1_048_577, 2_500_000] {
            let mut seen = 0u64;
            let h = hash_file(open(), HashAlgorithm::Blake3, &mut buf, &mut |_, n| seen += n, limit).unwrap().unwrap();
            let want = blake3::hash(&bytes[..usize::try_from(limit).unwrap()]);
            assert_eq!(h, FileHash::new(HashAlgorithm::Blake3, want.as_bytes()), "limit {limit}");
            assert_eq!(seen, limit);
            let mut scan = FileScan::standalone(&name_of(&path));
            stream_file(open(), Some(&mut scan), None, &mut buf, &mut |_, _| {}, limit).unwrap();
            assert_eq!(scan.into_report(String::new(), &mut ()).size, limit, "limit {limit}");
        }
        // A file shorter than the size taken (it shrank): no hash, and the
        // scan says how many bytes it saw.
        assert_eq!(hash_file(open(), HashAlgorithm::Blake3, &mut buf, &mut |_, _| {}, 5_000_000).unwrap(), None);
        let mut scan = FileScan::standalone(&name_of(&path));
        assert_eq!(stream_file(open(), Some(&mut scan), None, &mut buf, &mut |_, _| {}, 5_000_000).unwrap(), 3_000_000);
        // Another file than the one stamped: nothing read, no hash.
        let mut scan = FileScan::standalone(&name_of(&path));
        assert_eq!(stream_file(None, Some(&mut scan), None, &mut buf, &mut |_, _| {}, 5).unwrap(), 0);
        assert_eq!(hash_file(None, HashAlgorithm::Blake3, &mut buf, &mut |_, _| {}, 5).unwrap(), None);
    }

    /// A change between the stamps taken at the start and at the end of an
    /// inspection: only growth of the same file with neither of its times
    /// moved keeps the prefix (and the hash); a write of any kind moves them.
    #[test]
    fn a_file_changed_while_read_is_told_apart_from_one_that_only_grew() {
        let at_start = Stamp { size: 100, dev: 1, ino: 7, mtime: (5, 0), ctime: (5, 0) };
        assert_eq!(at_start.change(Some(&at_start), false), None);
        let grown = Stamp { size: 150, ..at_start };
        let change = |now: Option<&Stamp>, short| at_start.change(now, short).unwrap();
        assert_eq!(change(Some(&grown), false), FileChange { size_at_start: 100, size_at_end: Some(150), only_grew: true });
        assert!(!change(Some(&grown), true).only_grew, "a read found it shorter (or another file): it did not only grow");
        assert!(
            !change(Some(&Stamp { mtime: (6, 0), ..grown }), false).only_grew,
            "appended, or written over and appended: no stamp tells"
        );
        assert!(!change(Some(&Stamp { ctime: (6, 0), ..grown }), false).only_grew, "its inode changed");
        assert!(!change(Some(&at_start), true).only_grew);
        assert!(!change(Some(&Stamp { size: 90, ..at_start }), false).only_grew);
        assert!(!change(Some(&Stamp { mtime: (6, 0), ..at_start }), false).only_grew, "written over in place");
        let back = change(Some(&Stamp { ctime: (6, 0), ..at_start }), false);
        assert!(!back.only_grew, "renamed away and back: only the change time tells");
        assert!(!change(Some(&Stamp { ino: 8, ..grown }), false).only_grew, "another file at its path");
        assert_eq!(change(None, false), FileChange { size_at_start: 100, size_at_end: None, only_grew: false });
    }
}
