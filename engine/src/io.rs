//! All engine IO goes through [`Io`], so tests can fail the Nth call or
//! freeze durability at any sync ([`sim::SimIo`]). [`OsIo`] is the real one.
//!
//! **Architecture invariant:** nothing in the engine touches `std::fs`
//! except `OsIo` (and the read-only `inspect` walker).

use std::collections::HashMap;
use std::fmt::Debug;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub mod sim;

/// The file operations the engine needs. Paths are absolute or relative to
/// the process; every mutating call may fail, and after a failed write or
/// sync the engine stops (fail-stop) rather than retry.
pub trait Io: Send + Sync + Debug {
    /// Names of the entries in `dir` (files only).
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// Creates `dir` and its parents.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// Length of a file.
    fn len(&self, path: &Path) -> io::Result<u64>;
    /// Reads up to `buf.len()` bytes at `pos`; returns how many were read.
    fn read_at(&self, path: &Path, pos: u64, buf: &mut [u8]) -> io::Result<usize>;
    /// Creates an empty file, failing if it exists.
    fn create(&self, path: &Path) -> io::Result<()>;
    /// Writes all of `data` at `pos`.
    fn write_at(&self, path: &Path, pos: u64, data: &[u8]) -> io::Result<()>;
    /// Truncates or extends a file.
    fn set_len(&self, path: &Path, len: u64) -> io::Result<()>;
    /// Makes a file's data durable (`fdatasync`).
    fn sync_data(&self, path: &Path) -> io::Result<()>;
    /// Makes a directory's entries durable (fsync of the directory).
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Atomically renames `from` to `to`, replacing `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    fn remove(&self, path: &Path) -> io::Result<()>;
}

/// Reads exactly `buf.len()` bytes at `pos`, or fails with `UnexpectedEof`.
///
/// # Errors
/// The IO error, or `UnexpectedEof`.
pub fn read_exact_at(io: &dyn Io, path: &Path, mut pos: u64, mut buf: &mut [u8]) -> io::Result<()> {
    while !buf.is_empty() {
        let n = io.read_at(path, pos, buf)?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, format!("{}: short read at byte {pos}", path.display())));
        }
        pos += n as u64;
        buf = &mut buf[n..];
    }
    Ok(())
}

/// The real filesystem. Keeps open handles so appends do not reopen files.
#[derive(Debug, Default)]
pub struct OsIo {
    handles: Mutex<HashMap<PathBuf, Arc<File>>>,
}

impl OsIo {
    /// A handle cache over the real filesystem.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn handle(&self, path: &Path) -> io::Result<Arc<File>> {
        let mut map = self.handles.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(f) = map.get(path) {
            return Ok(Arc::clone(f));
        }
        let f = Arc::new(OpenOptions::new().read(true).write(true).open(path).or_else(|_| File::open(path))?);
        map.insert(path.to_path_buf(), Arc::clone(&f));
        Ok(f)
    }

    fn forget(&self, path: &Path) {
        self.handles.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(path);
    }
}

impl Io for OsIo {
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for e in fs::read_dir(dir)? {
            let e = e?;
            if e.file_type()?.is_file() {
                names.push(e.file_name().to_string_lossy().into_owned());
            }
        }
        names.sort();
        Ok(names)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)
    }
    fn len(&self, path: &Path) -> io::Result<u64> {
        Ok(fs::metadata(path)?.len())
    }
    fn read_at(&self, path: &Path, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.handle(path)?.read_at(buf, pos)
    }
    fn create(&self, path: &Path) -> io::Result<()> {
        let f = OpenOptions::new().read(true).write(true).create_new(true).open(path)?;
        self.handles.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(path.to_path_buf(), Arc::new(f));
        Ok(())
    }
    fn write_at(&self, path: &Path, pos: u64, data: &[u8]) -> io::Result<()> {
        self.handle(path)?.write_all_at(data, pos)
    }
    fn set_len(&self, path: &Path, len: u64) -> io::Result<()> {
        self.handle(path)?.set_len(len)
    }
    fn sync_data(&self, path: &Path) -> io::Result<()> {
        self.handle(path)?.sync_data()
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)?;
        self.forget(from);
        self.forget(to);
        Ok(())
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        self.forget(path);
        fs::remove_file(path)
    }
}
