//! `felix-storage inspect`: find the files, feed them through the codec in
//! chunks, and collect one [`Report`]. `felix-storage recover` uses the same
//! walk and the same scans, so the two can never disagree.
//!
//! Memory stays bounded whatever the file size: each file is read in
//! [`CHUNK_BYTES`] pieces and the codec's scanners keep only a partial
//! structure between pieces.
//!
//! Which directories are shards: one holding a file with the format's own
//! segment or index name (`NNNNNNNNNNNNNNNNNNNN.log` / `.index`, 20 digits);
//! or one holding any other Felix name (`epochs`, the engine's lock,
//! temporaries, evidence) that is named as a shard directory
//! (`…-0123456789abcdef`) or holds no directory — so a folder holding only
//! an `epochs` file is judged as a shard, with a note that no segment names
//! it. A Felix name on a FIFO or a dangling link counts as a Felix file here
//! too. Any other directory is searched (to [`MAX_ROOT_DEPTH`] levels); a
//! Felix file found loose in it (a root's `epochs`) is judged on its own,
//! as when it is given alone, with a note; its other files are reported as
//! not part of any shard and never read. Every Felix name wherever found is
//! judged or refused, never shown clean unread. The directories inside a
//! shard directory are searched too (shards below it are not hidden by it);
//! links to directories are named in a note, never followed. A Felix name
//! on something that is not a regular file is reported as refused, never
//! read. Reads create and change nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use felix_codec::doc::report::{FileChange, FileHash, FileReport, HashAlgorithm, Report};
use felix_codec::format::file_name::{classify, EntryName, FileKind};
use felix_codec::format::shard_name::parse_dir_name;
use felix_codec::shard::inspect::{FileScan, InputFile, ShardInspection};
use felix_codec::shard::recovery::ShardFacts;
use sha2::{Digest, Sha256};

use crate::io::{Io, OsIo};
use crate::shard::walk::ReadBuf;
use crate::tools::{io_error, name_of, ToolError};

mod subtree;

/// Bytes read from disk per chunk.
pub const CHUNK_BYTES: usize = 1 << 20;
/// How deep below a root to look for shard directories.
pub const MAX_ROOT_DEPTH: usize = 4;

/// One unit of inspection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A file given on its own.
    File(PathBuf),
    /// A shard directory and its entries (regular files and links to them), sorted by name.
    Shard(PathBuf, Vec<PathBuf>),
    /// A file found loose in a directory that is not a shard: reported, never read.
    Stray(PathBuf),
    /// An entry of a shard directory with one of the format's names that is
    /// not a regular file (a directory, a FIFO, a link to anything but a
    /// regular file, a dangling link): the engine refuses to open the shard
    /// holding it. Reported (inspect exits 1), never read.
    Refused(PathBuf, &'static str),
}

/// The targets a user's paths resolve to, and what a person should know about the search.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolution {
    /// What to inspect, in order.
    pub targets: Vec<Target>,
    /// Directories not searched, and the like.
    pub notes: Vec<String>,
}

impl Resolution {
    /// Whether a shard holds an entry that makes the engine refuse it.
    #[must_use]
    pub fn refuses_a_shard(&self) -> bool {
        self.targets.iter().any(|t| matches!(t, Target::Refused(..)))
    }
}

fn sorted_entries(dir: &Path) -> Result<Vec<fs::DirEntry>, ToolError> {
    let mut entries = fs::read_dir(dir).map_err(|e| io_error(dir, &e))?.collect::<Result<Vec<_>, _>>().map_err(|e| io_error(dir, &e))?;
    entries.sort_by_key(fs::DirEntry::file_name);
    Ok(entries)
}

/// The name a shard's findings carry: its folder's real name (`.` is the
/// folder it stands for).
pub(crate) fn shard_name(dir: &Path) -> String {
    dir.canonicalize().ok().as_deref().map(name_of).unwrap_or_else(|| name_of(dir))
}

/// Whether the directory `dir`, holding the regular files `names` (and
/// directories too when `has_subdirs`), is a shard directory (see the module doc).
#[must_use]
pub fn is_shard_dir(dir: &Path, names: &[String], has_subdirs: bool) -> bool {
    let segment_files = names.iter().any(|n| matches!(classify(n), EntryName::Segment(_) | EntryName::Index(_)));
    let felix_files = names.iter().any(|n| classify(n) != EntryName::Foreign);
    segment_files || (felix_files && (!has_subdirs || parse_dir_name(&name_of(dir)).is_some()))
}

/// Whether any of `names` is a segment file's: without one, no segment
/// names the shard (its other Felix files are judged all the same).
fn has_segment(names: &[String]) -> bool {
    names.iter().any(|n| matches!(classify(n), EntryName::Segment(_)))
}

/// Resolves the paths a user gave: files stay files; shard directories are
/// shards; any other directory is searched.
///
/// # Errors
/// A path that cannot be read, one that is neither a file nor a directory (a
/// FIFO, a socket, a device), or a directory with no shard and no file below it.
pub fn resolve(paths: &[PathBuf]) -> Result<Resolution, ToolError> {
    let mut out = Resolution::default();
    for path in paths {
        let meta = fs::metadata(path).map_err(|e| io_error(path, &e))?;
        if meta.is_file() {
            out.targets.push(Target::File(path.clone()));
            continue;
        }
        if !meta.is_dir() {
            return Err(ToolError {
                path: path.clone(),
                what: "not a regular file or a directory (a FIFO, a socket or a device): nothing here to inspect; \
                       give segment, index or epochs files, shard directories or roots of them"
                    .into(),
            });
        }
        let shards = |out: &Resolution| {
            out.targets.iter().filter(|t| matches!(t, Target::File(_) | Target::Shard(..) | Target::Refused(..))).count()
        };
        let before = shards(&out);
        collect_dir(path, 0, &mut out)?;
        if shards(&out) == before {
            return Err(ToolError {
                path: path.clone(),
                what: "no shard directory (no segment, index, epochs or other Felix file) found here".into(),
            });
        }
    }
    inspect_once(&mut out);
    Ok(out)
}

/// Each file and shard is inspected once, however many times and however
/// it was named (`d d`, `d ./d`, a link and its target, a root and a shard
/// inside it, a shard and one of its files): the first naming is kept — a
/// shard before a file it holds, which it judges in context — and a note
/// says what was given again. A report never lists one file twice.
fn inspect_once(out: &mut Resolution) {
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let mut in_shards: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    for t in &out.targets {
        if let Target::Shard(dir, files) = t {
            for f in files {
                in_shards.entry(real(f)).or_insert_with(|| dir.clone());
            }
        }
    }
    let mut seen: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    let mut kept = Vec::with_capacity(out.targets.len());
    for t in std::mem::take(&mut out.targets) {
        let (shown, key) = match &t {
            Target::Shard(dir, _) => (dir.clone(), real(dir)),
            Target::File(p) | Target::Stray(p) | Target::Refused(p, _) => (p.clone(), real(p)),
        };
        // Every shard's first naming is kept, so a file one holds is inspected there.
        if let Some(dir) = in_shards.get(&key).filter(|_| !matches!(t, Target::Shard(..))) {
            out.notes.push(format!("{}: also in the shard {}, and inspected there, once", shown.display(), dir.display()));
            continue;
        }
        if let Some(first) = seen.get(&key) {
            out.notes.push(format!("{}: given more than once (first as {}); inspected once", shown.display(), first.display()));
            continue;
        }
        seen.insert(key, shown);
        kept.push(t);
    }
    out.targets = kept;
}

/// A shard directory's files as one target (with a note when no segment
/// names it a shard).
fn add_shard(dir: &Path, files: Vec<PathBuf>, names: &[String], out: &mut Resolution) {
    if !has_segment(names) {
        out.notes.push(format!(
            "{}: no segment (NNNNNNNNNNNNNNNNNNNN.log) names this shard: the Felix files it holds are judged as a shard's all the same",
            dir.display()
        ));
    }
    out.targets.push(Target::Shard(dir.to_path_buf(), files));
}

/// The files of a folder that is not a shard: a Felix file loose in a
/// folder of folders (a root of shards) is judged on its own, as when it is
/// given alone; other files are strays.
fn add_loose(files: Vec<PathBuf>, out: &mut Resolution) {
    for file in files {
        if classify(&name_of(&file)) == EntryName::Foreign {
            out.targets.push(Target::Stray(file));
        } else {
            out.notes.push(format!(
                "{}: a Felix file loose in a folder that holds folders and is not named as a shard directory: inspect judges it on its own; recover leaves it alone",
                file.display()
            ));
            out.targets.push(Target::File(file));
        }
    }
}

fn collect_dir(dir: &Path, depth: usize, out: &mut Resolution) -> Result<(), ToolError> {
    let entries = sorted_entries(dir)?;
    // Regular files and links (a link is shown, and read through, never followed by the engine).
    let files: Vec<PathBuf> = entries
        .iter()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || (t.is_symlink() && e.path().is_file())))
        .map(fs::DirEntry::path)
        .collect();
    let names: Vec<String> = files.iter().map(|p| name_of(p)).collect();
    let has_subdirs = entries.iter().any(|e| e.file_type().is_ok_and(|t| t.is_dir()));
    // A Felix name on what is not a regular file or a directory (a FIFO, a
    // dangling link) counts as a Felix file too: refused below, never hidden.
    let mut felix_names = names.clone();
    felix_names.extend(
        entries
            .iter()
            .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir() && !t.is_file()) && !files.contains(&e.path()))
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| classify(n) != EntryName::Foreign),
    );
    let shard = is_shard_dir(dir, &felix_names, has_subdirs);
    if shard {
        add_shard(dir, files, &names, out);
    } else {
        add_loose(files, out);
    }
    refuse_irregular(&entries, shard, out);
    let is_dir = |e: &&fs::DirEntry| e.file_type().is_ok_and(|t| t.is_dir());
    // Directories (a shard directory may hold shards below it too; hiding them
    // would hide data), never one a Felix name claims (refused above).
    let subdirs: Vec<PathBuf> = entries
        .iter()
        .filter(is_dir)
        .filter(|e| !shard || e.file_name().to_str().is_none_or(|n| matches!(classify(n), EntryName::Foreign)))
        .map(fs::DirEntry::path)
        .collect();
    // Links to directories are not followed (a loop, or a shard counted twice): say so.
    for e in &entries {
        if e.file_type().is_ok_and(|t| t.is_symlink())
            && e.path().is_dir()
            && !out.targets.iter().any(|t| matches!(t, Target::Refused(p, _) if *p == e.path()))
        {
            out.notes.push(format!(
                "{}: a symbolic link to a directory, not followed; give its target to inspect what it holds",
                e.path().display()
            ));
        }
    }
    if depth >= MAX_ROOT_DEPTH {
        if !subdirs.is_empty() {
            out.notes.push(format!(
                "{}: not searched deeper than {MAX_ROOT_DEPTH} levels; give a directory below it to inspect what it holds",
                dir.display()
            ));
        }
        return Ok(());
    }
    for sub in subdirs {
        collect_dir(&sub, depth + 1, out)?;
    }
    Ok(())
}

/// A target refusing each entry of `entries` with a Felix name that is not a
/// regular file (nor a link to one): in a shard directory (`in_shard`) a
/// directory too — the engine refuses the shard holding it; elsewhere a
/// FIFO, socket, device or dangling link (directories are searched there).
/// Never read.
fn refuse_irregular(entries: &[fs::DirEntry], in_shard: bool, out: &mut Resolution) {
    for e in entries {
        let name = e.file_name();
        let ours = name.to_str().is_some_and(|n| !matches!(classify(n), EntryName::Foreign));
        let Ok(t) = e.file_type() else { continue };
        if !ours || t.is_file() || (t.is_symlink() && e.path().is_file()) {
            continue;
        }
        if !in_shard && (t.is_dir() || (t.is_symlink() && e.path().is_dir())) {
            continue;
        }
        let what = if t.is_dir() {
            "a directory"
        } else if t.is_symlink() {
            if e.path().exists() {
                "a symbolic link to something other than a regular file"
            } else {
                "a symbolic link to nothing (dangling)"
            }
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        out.targets.push(Target::Refused(e.path(), what));
    }
}

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
/// given) in [`CHUNK_BYTES`] reads into `buf`; without a hasher, stops
/// reading once the verdict needs no more bytes. `on_bytes` hears of every
/// read. Returns how many bytes it read or skipped: fewer than `limit` when
/// the file shrank meanwhile — or none at all when the file it opened is not
/// `expect` (another file put at its path since its stamp was taken: its
/// bytes are never judged or hashed as this file's).
fn stream_file(
    path: &Path,
    expect: Option<Identity>,
    mut scan: Option<&mut FileScan>,
    mut hasher: Option<&mut Hasher>,
    buf: &mut ReadBuf,
    on_bytes: &mut dyn FnMut(&Path, u64),
    limit: u64,
) -> Result<u64, ToolError> {
    let mut file = fs::File::open(path).map_err(|e| io_error(path, &e))?;
    if !is_expected(&file, expect) {
        return Ok(0);
    }
    let mut read = 0u64;
    loop {
        if let (None, Some(scan)) = (&hasher, &mut scan) {
            if !scan.needs_bytes() {
                let size = file.metadata().map_err(|e| io_error(path, &e))?.len();
                let skipped = size.min(limit).saturating_sub(read);
                scan.skip(skipped);
                return Ok(read + skipped);
            }
        }
        if read >= limit {
            return Ok(read);
        }
        buf.set_len(usize::try_from(limit - read).unwrap_or(CHUNK_BYTES).min(CHUNK_BYTES));
        let n = match file.read(buf.bytes_mut()) {
            Ok(0) => return Ok(read),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_error(path, &e)),
        };
        let chunk = buf.bytes().get(..n).unwrap_or(&[]);
        if let Some(h) = &mut hasher {
            h.update(chunk);
        }
        if let Some(scan) = &mut scan {
            scan.feed(chunk, &mut ());
        }
        read += n as u64;
        on_bytes(path, n as u64);
    }
}

/// The hash of a file's first `limit` bytes (see [`stream_file`]); `None`
/// when it holds fewer (it shrank since its size was taken).
fn hash_file(
    path: &Path,
    expect: Option<Identity>,
    algorithm: HashAlgorithm,
    buf: &mut ReadBuf,
    on_bytes: &mut dyn FnMut(&Path, u64),
    limit: u64,
) -> Result<Option<FileHash>, ToolError> {
    let mut hasher = Hasher::new(algorithm);
    let read = stream_file(path, expect, None, Some(&mut hasher), buf, on_bytes, limit)?;
    Ok((read == limit).then(|| hasher.finish()))
}

/// Which file a path named when its stamp was taken: device and inode.
pub(crate) type Identity = (u64, u64);

/// Whether the open `file` is `expect` (no expectation: any file is).
/// Every read's own handle is checked, so a file swapped out and back
/// during the run is never read as the one stamped.
pub(crate) fn is_expected(file: &fs::File, expect: Option<Identity>) -> bool {
    use std::os::unix::fs::MetadataExt;
    expect.is_none_or(|id| file.metadata().is_ok_and(|m| (m.dev(), m.ino()) == id))
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
    fn of(path: &Path) -> Result<Self, ToolError> {
        use std::os::unix::fs::MetadataExt;
        let m = fs::metadata(path).map_err(|e| io_error(path, &e))?;
        Ok(Self { size: m.len(), dev: m.dev(), ino: m.ino(), mtime: (m.mtime(), m.mtime_nsec()), ctime: (m.ctime(), m.ctime_nsec()) })
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

fn size_of(path: &Path) -> Result<u64, ToolError> {
    fs::metadata(path).map(|m| m.len()).map_err(|e| io_error(path, &e))
}

/// The pid of the writer holding the shard in `dir`, when one does
/// (`Some(None)`: held, pid unknown).
#[must_use]
pub fn writer_of(dir: &Path) -> Option<Option<u32>> {
    OsIo::new().lock_holder(dir).ok().flatten().map(|h| h.pid)
}

/// Inspects every target, with each file's SHA-256, on every core, and
/// returns the report (the same, byte for byte, as a run on one thread).
///
/// # Errors
/// A file that cannot be opened or read.
pub fn inspect(resolution: &Resolution, progress: &mut dyn Progress) -> Result<Report, ToolError> {
    inspect_with(resolution, &Options::default(), progress)
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
/// one [`CHUNK_BYTES`] buffer and one partial structure, so memory does not
/// depend on file sizes or counts. Results are put back in target order, so
/// the report is byte-identical to a run with one worker; when reads fail,
/// the error is the one a run in order would have met first.
///
/// # Errors
/// A file that cannot be opened or read.
pub fn inspect_with(resolution: &Resolution, options: &Options, progress: &mut dyn Progress) -> Result<Report, ToolError> {
    let targets = &resolution.targets;
    let stamps = take_stamps(targets)?;
    let sizes: Vec<Vec<u64>> = stamps.iter().map(|t| t.iter().map(|s| s.size).collect()).collect();
    let jobs = plan_jobs(targets, &sizes, options);
    let total: u64 = sizes.iter().flatten().sum::<u64>() * (1 + u64::from(options.hash) + u64::from(options.sha256));
    let outputs = run_jobs(targets, &stamps, &jobs, options.jobs, total, progress)?;
    assemble(resolution, &jobs, outputs, &stamps)
}

/// Each target's files' sizes and identities, first and in order: a
/// missing file fails here as it always did.
fn take_stamps(targets: &[Target]) -> Result<Vec<Vec<Stamp>>, ToolError> {
    let mut stamps: Vec<Vec<Stamp>> = Vec::with_capacity(targets.len());
    for t in targets {
        stamps.push(match t {
            Target::File(p) => vec![Stamp::of(p)?],
            Target::Shard(_, files) => files.iter().map(|p| Stamp::of(p)).collect::<Result<_, _>>()?,
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
    targets: &[Target],
    stamps: &[Vec<Stamp>],
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
                    let out = run_job(targets, stamps, job, &mut buf, &mut on_bytes);
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
fn run_job(
    targets: &[Target],
    stamps: &[Vec<Stamp>],
    job: Job,
    buf: &mut ReadBuf,
    on_bytes: &mut dyn FnMut(&Path, u64),
) -> Result<Output, (usize, ToolError)> {
    let target_stamps = stamps.get(job.target()).map_or(&[][..], Vec::as_slice);
    let size = |file: usize| target_stamps.get(file).map_or(0, |s| s.size);
    let expect = |file: usize| target_stamps.get(file).map(Stamp::identity);
    match (job, targets.get(job.target())) {
        (Job::Scan { .. }, Some(Target::File(path))) => {
            let mut scan = FileScan::standalone(&name_of(path));
            let _ = stream_file(path, expect(0), Some(&mut scan), None, buf, on_bytes, size(0)).map_err(|e| (0, e))?;
            Ok(Output::File(Box::new(scan.into_report(path.display().to_string(), &mut ()))))
        }
        (Job::Scan { .. }, Some(Target::Shard(dir, paths))) => {
            let writer = writer_of(dir);
            let (reports, _) = scan_shard(dir, paths, Some(target_stamps), Writer::Probe, None, buf, on_bytes)?;
            Ok(Output::Shard { reports, writer })
        }
        (Job::Hash { file, algorithm, .. }, Some(target @ (Target::File(_) | Target::Shard(..)))) => {
            let Some(path) = file_path(target, file) else { return Ok(Output::Hash(None)) };
            hash_file(path, expect(file), algorithm, buf, on_bytes, size(file)).map(Output::Hash).map_err(|e| (rank_of(target, file), e))
        }
        (Job::HashPart { file, offset, len, .. }, Some(target @ (Target::File(_) | Target::Shard(..)))) => {
            let Some(path) = file_path(target, file) else { return Ok(Output::Part(None)) };
            subtree::hash_piece(path, expect(file), offset, len, buf, on_bytes).map(Output::Part).map_err(|e| (rank_of(target, file), e))
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
                let mut r = FileReport::new(path.display().to_string(), FileKind::Unknown, size_of(path)?);
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
            say_changes(files.get_mut(first..).unwrap_or_default(), paths, stamps, &short);
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
fn say_changes(reports: &mut [FileReport], paths: &[PathBuf], stamps: &[Stamp], short: &[bool]) {
    for (i, ((r, path), stamp)) in reports.iter_mut().zip(paths).zip(stamps).enumerate() {
        let short = r.size < stamp.size || short.get(i).copied().unwrap_or(false);
        let now = Stamp::of(path).ok();
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
    dir: &Path,
    paths: &[PathBuf],
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
    let (mut reports, facts) = scan_shard(dir, paths, None, writer, shas.as_deref_mut(), &mut buf, &mut on_bytes).map_err(|(_, e)| e)?;
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
    dir: &Path,
    paths: &[PathBuf],
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
            None => size_of(p).map_err(|e| (0, e))?,
        };
        inputs.push(InputFile { path: p.display().to_string(), name: name_of(p), size });
    }
    let limits: Vec<u64> = inputs.iter().map(|f| f.size).collect();
    let shard_name = shard_name(dir);
    let mut probe = || writer_of(dir).is_some();
    let probe: Option<&mut dyn FnMut() -> bool> = (writer == Writer::Probe).then_some(&mut probe);
    let shard = drive_shard(shard_name, inputs, probe, &mut (), |i, scan, _| {
        let Some(path) = paths.get(i) else { return Ok(()) };
        let mut hasher = shas.is_some().then(|| Hasher::new(HashAlgorithm::Blake3));
        let limit = limits.get(i).copied().unwrap_or(0);
        let expect = stamps.and_then(|s| s.get(i)).map(Stamp::identity);
        stream_file(path, expect, Some(scan), hasher.as_mut(), buf, on_bytes, limit)?;
        if let (Some(h), Some(slot)) = (hasher, shas.as_deref_mut().and_then(|s| s.get_mut(i))) {
            *slot = Some(h.finish());
        }
        Ok(())
    })?;
    let (mut reports, facts) = shard.finish_with_facts(dir.display().to_string());
    for (r, path) in reports.iter_mut().zip(paths) {
        if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
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

/// The files of a shard directory as `inspect` sees them (see [`resolve`]).
///
/// # Errors
/// The directory cannot be read.
pub fn shard_files(dir: &Path) -> Result<Vec<PathBuf>, ToolError> {
    let entries = sorted_entries(dir)?;
    Ok(entries
        .iter()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || (t.is_symlink() && e.path().is_file())))
        .map(fs::DirEntry::path)
        .collect())
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
        for limit in [0u64, 1, 1_048_576, 1_048_577, 2_500_000] {
            let mut seen = 0u64;
            let h = hash_file(&path, None, HashAlgorithm::Blake3, &mut buf, &mut |_, n| seen += n, limit).unwrap().unwrap();
            let want = blake3::hash(&bytes[..usize::try_from(limit).unwrap()]);
            assert_eq!(h, FileHash::new(HashAlgorithm::Blake3, want.as_bytes()), "limit {limit}");
            assert_eq!(seen, limit);
            let mut scan = FileScan::standalone(&name_of(&path));
            stream_file(&path, None, Some(&mut scan), None, &mut buf, &mut |_, _| {}, limit).unwrap();
            assert_eq!(scan.into_report(String::new(), &mut ()).size, limit, "limit {limit}");
        }
        // A file shorter than the size taken (it shrank): no hash, and the
        // scan says how many bytes it saw.
        assert_eq!(hash_file(&path, None, HashAlgorithm::Blake3, &mut buf, &mut |_, _| {}, 5_000_000).unwrap(), None);
        let mut scan = FileScan::standalone(&name_of(&path));
        assert_eq!(stream_file(&path, None, Some(&mut scan), None, &mut buf, &mut |_, _| {}, 5_000_000).unwrap(), 3_000_000);
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
