//! `felix-storage inspect`: find the files, feed them through the codec in
//! chunks, and collect one [`Report`].
//!
//! Memory stays bounded whatever the file size: each file is read in
//! [`CHUNK_BYTES`] pieces and the codec's scanners keep only a partial
//! structure between pieces.

use std::fmt;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use felix_codec::file_name::FileKind;
use felix_codec::inspect::{FileScan, InputFile, ShardInspection};
use felix_codec::report::{FileReport, Report};
use sha2::{Digest, Sha256};

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

/// One unit of inspection: a lone file, or the files of one shard directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A file given on its own.
    File(PathBuf),
    /// A shard directory and its regular files, sorted by name.
    Shard(PathBuf, Vec<PathBuf>),
}

fn is_felix_name(name: &str) -> bool {
    FileKind::from_name(name).is_some()
}

fn sorted_entries(dir: &Path) -> Result<Vec<fs::DirEntry>, InspectError> {
    let mut entries = fs::read_dir(dir).map_err(|e| io_error(dir, &e))?.collect::<Result<Vec<_>, _>>().map_err(|e| io_error(dir, &e))?;
    entries.sort_by_key(fs::DirEntry::file_name);
    Ok(entries)
}

/// Resolves the paths a user gave into targets: files stay files; a
/// directory holding `*.log`, `*.index` or `epochs` files is a shard;
/// any other directory is a root whose subdirectories are searched.
///
/// # Errors
/// A path that cannot be read, or a directory with no Felix files below it.
pub fn resolve(paths: &[PathBuf]) -> Result<Vec<Target>, InspectError> {
    let mut targets = Vec::new();
    for path in paths {
        let meta = fs::metadata(path).map_err(|e| io_error(path, &e))?;
        if meta.is_file() {
            targets.push(Target::File(path.clone()));
            continue;
        }
        let before = targets.len();
        collect_dir(path, 0, &mut targets)?;
        if targets.len() == before {
            return Err(InspectError { path: path.clone(), what: "no segment, index or epochs files found here".into() });
        }
    }
    Ok(targets)
}

fn collect_dir(dir: &Path, depth: usize, targets: &mut Vec<Target>) -> Result<(), InspectError> {
    let entries = sorted_entries(dir)?;
    let files: Vec<PathBuf> = entries.iter().filter(|e| e.file_type().is_ok_and(|t| t.is_file())).map(fs::DirEntry::path).collect();
    let is_shard = files.iter().any(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(is_felix_name));
    if is_shard {
        targets.push(Target::Shard(dir.to_path_buf(), files));
        return Ok(());
    }
    if depth >= MAX_ROOT_DEPTH {
        return Ok(());
    }
    for entry in entries {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            collect_dir(&entry.path(), depth + 1, targets)?;
        }
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

/// Streams one file through `scan` in chunks, computing its SHA-256.
fn stream_file(path: &Path, scan: &mut FileScan, progress: &mut dyn Progress, done: &mut u64, total: u64) -> Result<String, InspectError> {
    let mut file = fs::File::open(path).map_err(|e| io_error(path, &e))?;
    let mut buf = vec![0u8; CHUNK_BYTES];
    let mut hasher = Sha256::new();
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_error(path, &e)),
        };
        let chunk = buf.get(..n).unwrap_or(&[]);
        hasher.update(chunk);
        scan.feed(chunk, &mut ());
        *done += n as u64;
        progress.update(path, *done, total);
    }
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

fn size_of(path: &Path) -> Result<u64, InspectError> {
    fs::metadata(path).map(|m| m.len()).map_err(|e| io_error(path, &e))
}

/// Inspects every target and returns the report.
///
/// # Errors
/// A file that cannot be opened or read.
pub fn inspect(targets: &[Target], progress: &mut dyn Progress) -> Result<Report, InspectError> {
    let mut total = 0;
    for t in targets {
        match t {
            Target::File(p) => total += size_of(p)?,
            Target::Shard(_, files) => {
                for p in files {
                    total += size_of(p)?;
                }
            }
        }
    }
    let mut done = 0;
    let mut files = Vec::new();
    for target in targets {
        match target {
            Target::File(path) => {
                let mut scan = FileScan::standalone(&file_name(path));
                let sha = stream_file(path, &mut scan, progress, &mut done, total)?;
                let mut report = scan.into_report(path.display().to_string(), &mut ());
                report.sha256 = Some(sha);
                files.push(report);
            }
            Target::Shard(dir, paths) => files.extend(inspect_shard(dir, paths, progress, &mut done, total)?),
        }
    }
    progress.finish();
    Ok(Report::new(files))
}

fn inspect_shard(
    dir: &Path,
    paths: &[PathBuf],
    progress: &mut dyn Progress,
    done: &mut u64,
    total: u64,
) -> Result<Vec<FileReport>, InspectError> {
    let mut inputs = Vec::with_capacity(paths.len());
    for p in paths {
        inputs.push(InputFile { path: p.display().to_string(), name: file_name(p), size: size_of(p)? });
    }
    let shard_name = dir.canonicalize().ok().as_deref().map(file_name).unwrap_or_else(|| file_name(dir));
    let mut shard = ShardInspection::new(Some(shard_name), inputs);
    let mut shas = vec![String::new(); paths.len()];
    for i in shard.order() {
        let Some(path) = paths.get(i) else { continue };
        let mut scan = shard.begin(i);
        let sha = stream_file(path, &mut scan, progress, done, total)?;
        if let Some(slot) = shas.get_mut(i) {
            *slot = sha;
        }
        shard.end(i, scan, &mut ());
    }
    let mut reports = shard.finish();
    for (r, sha) in reports.iter_mut().zip(shas) {
        r.sha256 = Some(sha);
    }
    Ok(reports)
}
