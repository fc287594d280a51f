//! `felix-storage inspect`: find the files, feed them through the codec in
//! chunks, and collect one [`Report`]. `felix-storage recover` uses the same
//! walk and the same scans, so the two can never disagree.
//!
//! Memory stays bounded whatever the file size: each file is read in
//! [`CHUNK_BYTES`] pieces and the codec's scanners keep only a partial
//! structure between pieces.
//!
//! Which directories are shards: one holding a file with the format's own
//! segment or index name (`NNNNNNNNNNNNNNNNNNNN.log` / `.index`, 20 digits),
//! or, under a shard-directory name (`…-0123456789abcdef`), an `epochs`
//! file. Any other directory is searched (to [`MAX_ROOT_DEPTH`] levels);
//! the files found loose in it are reported as not part of any shard and
//! never read. Reads create and change nothing.

use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use felix_codec::file_name::{classify, EntryName, FileKind};
use felix_codec::inspect::{FileScan, InputFile, ShardInspection};
use felix_codec::recovery::ShardFacts;
use felix_codec::report::{FileReport, Report};
use felix_codec::shard_name::parse_dir_name;
use sha2::{Digest, Sha256};

use crate::io::{Io, OsIo};

/// Bytes read from disk per chunk.
pub const CHUNK_BYTES: usize = 1 << 20;
/// How deep below a root to look for shard directories.
pub const MAX_ROOT_DEPTH: usize = 4;

/// Why an inspection could not run (as opposed to damage it found).
#[derive(Debug)]
pub struct InspectError {
    /// The path involved.
    pub path: PathBuf,
    /// What went wrong.
    pub what: String,
}

impl fmt::Display for InspectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.what)
    }
}

impl std::error::Error for InspectError {}

fn io_error(path: &Path, e: &io::Error) -> InspectError {
    InspectError { path: path.to_path_buf(), what: e.to_string() }
}

/// One unit of inspection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A file given on its own.
    File(PathBuf),
    /// A shard directory and its entries (regular files and links to them), sorted by name.
    Shard(PathBuf, Vec<PathBuf>),
    /// A file found loose in a directory that is not a shard: reported, never read.
    Stray(PathBuf),
}

/// The targets a user's paths resolve to, and what a person should know about the search.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resolution {
    /// What to inspect, in order.
    pub targets: Vec<Target>,
    /// Directories not searched, and the like.
    pub notes: Vec<String>,
}

fn sorted_entries(dir: &Path) -> Result<Vec<fs::DirEntry>, InspectError> {
    let mut entries = fs::read_dir(dir).map_err(|e| io_error(dir, &e))?.collect::<Result<Vec<_>, _>>().map_err(|e| io_error(dir, &e))?;
    entries.sort_by_key(fs::DirEntry::file_name);
    Ok(entries)
}

fn name_of(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Whether the directory `dir`, holding `names`, is a shard directory (see the module doc).
#[must_use]
pub fn is_shard_dir(dir: &Path, names: &[String]) -> bool {
    let segment_files = names.iter().any(|n| matches!(classify(n), EntryName::Segment(_) | EntryName::Index(_)));
    let shard_name = parse_dir_name(&name_of(dir)).is_some();
    segment_files || (shard_name && names.iter().any(|n| classify(n) == EntryName::Epochs))
}

/// Resolves the paths a user gave: files stay files; shard directories are
/// shards; any other directory is searched.
///
/// # Errors
/// A path that cannot be read, or a directory with no shard and no file below it.
pub fn resolve(paths: &[PathBuf]) -> Result<Resolution, InspectError> {
    let mut out = Resolution::default();
    for path in paths {
        let meta = fs::metadata(path).map_err(|e| io_error(path, &e))?;
        if meta.is_file() {
            out.targets.push(Target::File(path.clone()));
            continue;
        }
        let before = out.targets.iter().filter(|t| !matches!(t, Target::Stray(_))).count();
        collect_dir(path, 0, &mut out)?;
        if out.targets.iter().filter(|t| !matches!(t, Target::Stray(_))).count() == before {
            return Err(InspectError {
                path: path.clone(),
                what: "no shard directory (no NNNNNNNNNNNNNNNNNNNN.log or .index file) found here".into(),
            });
        }
    }
    Ok(out)
}

fn collect_dir(dir: &Path, depth: usize, out: &mut Resolution) -> Result<(), InspectError> {
    let entries = sorted_entries(dir)?;
    // Regular files and links (a link is shown, and read through, never followed by the engine).
    let files: Vec<PathBuf> = entries
        .iter()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || (t.is_symlink() && e.path().is_file())))
        .map(fs::DirEntry::path)
        .collect();
    let names: Vec<String> = files.iter().map(|p| name_of(p)).collect();
    if is_shard_dir(dir, &names) {
        out.targets.push(Target::Shard(dir.to_path_buf(), files));
        return Ok(());
    }
    out.targets.extend(files.into_iter().map(Target::Stray));
    let subdirs: Vec<PathBuf> = entries.iter().filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(fs::DirEntry::path).collect();
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

/// Streams one file through `scan` in chunks, computing its SHA-256 when
/// `hash`; without a hash, stops reading once the verdict needs no more bytes.
fn stream_file(
    path: &Path,
    scan: &mut FileScan,
    hash: bool,
    progress: &mut dyn Progress,
    done: &mut u64,
    total: u64,
) -> Result<Option<String>, InspectError> {
    let mut file = fs::File::open(path).map_err(|e| io_error(path, &e))?;
    let mut buf = vec![0u8; CHUNK_BYTES];
    let mut hasher = Sha256::new();
    let mut read = 0u64;
    loop {
        if !hash && !scan.needs_bytes() {
            let size = file.metadata().map_err(|e| io_error(path, &e))?.len();
            scan.skip(size.saturating_sub(read));
            return Ok(None);
        }
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_error(path, &e)),
        };
        let chunk = buf.get(..n).unwrap_or(&[]);
        if hash {
            hasher.update(chunk);
        }
        scan.feed(chunk, &mut ());
        read += n as u64;
        *done += n as u64;
        progress.update(path, *done, total);
    }
    Ok(hash.then(|| hex(&hasher.finalize())))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn size_of(path: &Path) -> Result<u64, InspectError> {
    fs::metadata(path).map(|m| m.len()).map_err(|e| io_error(path, &e))
}

/// The pid of the writer holding the shard in `dir`, when one does
/// (`Some(None)`: held, pid unknown).
#[must_use]
pub fn writer_of(dir: &Path) -> Option<Option<u32>> {
    let lock = dir.join(felix_codec::file_name::LOCK_FILE_NAME);
    OsIo::new().lock_holder(&lock).ok().flatten().map(|h| h.pid)
}

/// Inspects every target and returns the report.
///
/// # Errors
/// A file that cannot be opened or read.
pub fn inspect(resolution: &Resolution, progress: &mut dyn Progress) -> Result<Report, InspectError> {
    let mut total = 0;
    for t in &resolution.targets {
        match t {
            Target::File(p) => total += size_of(p)?,
            Target::Shard(_, files) => {
                for p in files {
                    total += size_of(p)?;
                }
            }
            Target::Stray(_) => {}
        }
    }
    let mut done = 0;
    let mut files = Vec::new();
    let mut notes = resolution.notes.clone();
    for target in &resolution.targets {
        match target {
            Target::File(path) => {
                let mut scan = FileScan::standalone(&name_of(path));
                let sha = stream_file(path, &mut scan, true, progress, &mut done, total)?;
                let mut report = scan.into_report(path.display().to_string(), &mut ());
                report.sha256 = sha;
                files.push(report);
            }
            Target::Shard(dir, paths) => {
                let writer = writer_of(dir);
                if let Some(pid) = writer {
                    let by = pid.map_or_else(String::new, |p| format!(" (pid {p})"));
                    notes.push(format!("{}: shard is open for writing{by}; the tail may be in flight", dir.display()));
                }
                let (reports, _) = inspect_shard(dir, paths, writer.is_some(), true, progress, &mut done, total)?;
                files.extend(reports);
            }
            Target::Stray(path) => {
                let mut r = FileReport::new(path.display().to_string(), FileKind::Unknown, size_of(path)?);
                r.notes.push("not part of any shard directory: not inspected, and never read or changed by the engine".into());
                files.push(r);
            }
        }
    }
    progress.finish();
    let mut report = Report::new(files);
    report.notes = notes;
    Ok(report)
}

/// Inspects one shard directory: the reports of its files and the facts
/// recovery plans from. `writer_live`: a writer holds the shard right now;
/// `hash`: compute each file's hash (recovery needs none, and then reads
/// only the bytes a verdict depends on).
///
/// # Errors
/// A file that cannot be opened or read.
pub fn inspect_shard(
    dir: &Path,
    paths: &[PathBuf],
    writer_live: bool,
    hash: bool,
    progress: &mut dyn Progress,
    done: &mut u64,
    total: u64,
) -> Result<(Vec<FileReport>, ShardFacts), InspectError> {
    let mut inputs = Vec::with_capacity(paths.len());
    for p in paths {
        inputs.push(InputFile { path: p.display().to_string(), name: name_of(p), size: size_of(p)? });
    }
    let shard_name = dir.canonicalize().ok().as_deref().map(name_of).unwrap_or_else(|| name_of(dir));
    let mut shard = ShardInspection::new(Some(shard_name), inputs).with_writer_live(writer_live);
    let mut shas = vec![None; paths.len()];
    for i in shard.order() {
        let Some(path) = paths.get(i) else { continue };
        let mut scan = shard.begin(i);
        let sha = stream_file(path, &mut scan, hash, progress, done, total)?;
        if let Some(slot) = shas.get_mut(i) {
            *slot = sha;
        }
        shard.end(i, scan, &mut ());
    }
    let (mut reports, facts) = shard.finish_with_facts(dir.display().to_string());
    for ((r, sha), path) in reports.iter_mut().zip(shas).zip(paths) {
        r.sha256 = sha;
        if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            r.notes.push(
                "a symbolic link: read through here, but the engine refuses to open a shard holding one (it neither follows nor replaces links)"
                    .into(),
            );
        }
    }
    Ok((reports, facts))
}

/// The files of a shard directory as `inspect` sees them (see [`resolve`]).
///
/// # Errors
/// The directory cannot be read.
pub fn shard_files(dir: &Path) -> Result<Vec<PathBuf>, InspectError> {
    let entries = sorted_entries(dir)?;
    Ok(entries
        .iter()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file() || (t.is_symlink() && e.path().is_file())))
        .map(fs::DirEntry::path)
        .collect())
}
