//! All engine IO goes through [`Io`], so tests can fail the Nth call or
//! freeze durability at any sync ([`sim::SimIo`]). [`OsIo`] is the real one.
//! The shard never calls [`Io`] directly: it goes through
//! [`checked::CheckedIo`], which latches the first failure (fail-stop).
//!
//! **Architecture invariant:** nothing in the engine touches `std::fs`
//! except `OsIo`: the shard, the tools (`inspect`, `diff`, `recover`,
//! `demo`) and the command line's file reads all go through [`Io`]
//! (`scripts/structure` counts what is left: none).

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt::Debug;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead as _};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub mod checked;
pub mod sim;

/// What a directory entry is, without following symbolic links.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryType {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (never followed by the engine).
    Symlink,
    /// A FIFO, socket, device…
    Other,
}

impl EntryType {
    /// `"a regular file"`, `"a directory"`, …, for messages.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::File => "a regular file",
            Self::Dir => "a directory",
            Self::Symlink => "a symbolic link",
            Self::Other => "not a regular file (a FIFO, socket or device)",
        }
    }
}

/// One directory entry: its name exactly as the OS gave it (it may not be UTF-8).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// The name.
    pub name: OsString,
    /// What it is.
    pub kind: EntryType,
}

/// Whether a call follows a symbolic link at the end of its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    /// Follow it: the answer is about the file it points to.
    Follow,
    /// Do not: the answer is about the link itself.
    NoFollow,
}

/// What a path is, how large, and which file it is: what a tool takes of a
/// file before it reads it and again after, to tell whether it changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// What it is.
    pub kind: EntryType,
    /// Its length in bytes.
    pub len: u64,
    /// The device it is on.
    pub dev: u64,
    /// Its inode on that device.
    pub ino: u64,
    /// Its modification time (seconds, nanoseconds).
    pub mtime: (i64, i64),
    /// Its inode's change time (seconds, nanoseconds): a write, a rename
    /// away and back or a `chmod` moves it.
    pub ctime: (i64, i64),
}

impl Stat {
    /// Which file it is: device and inode.
    #[must_use]
    pub fn identity(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }
}

/// A file opened once for reading: read at any position, and asked what it
/// is, without opening its path again (a file put at the path meanwhile is
/// another file, never read as this one).
pub trait ReadHandle: Send + Sync + Debug {
    /// Reads up to `buf.len()` bytes at `pos`; returns how many were read
    /// (0 at the end of the file).
    ///
    /// # Errors
    /// The IO error.
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> io::Result<usize>;
    /// What the open file is now.
    ///
    /// # Errors
    /// The IO error.
    fn stat(&self) -> io::Result<Stat>;
}

/// Who holds a shard's writer lock, as far as can be told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LockHolder {
    /// The holder's process id, when known.
    pub pid: Option<u32>,
}

/// Checks that a held lock still guards what it was taken for.
type LockCheck = Box<dyn Fn() -> io::Result<()> + Send + Sync>;

/// A held writer lock; dropping it releases the lock (so does the holder's death).
pub struct LockGuard {
    _held: Box<dyn Send + Sync>,
    check: Option<LockCheck>,
}

impl Debug for LockGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LockGuard")
    }
}

impl LockGuard {
    /// A guard that runs nothing but keeps `held` alive until dropped.
    pub fn new(held: impl Send + Sync + 'static) -> Self {
        Self { _held: Box::new(held), check: None }
    }

    /// A guard whose [`LockGuard::verify`] runs `check`.
    pub fn checked(held: impl Send + Sync + 'static, check: impl Fn() -> io::Result<()> + Send + Sync + 'static) -> Self {
        Self { _held: Box::new(held), check: Some(Box::new(check)) }
    }

    /// Whether the lock still guards the shard it was taken for: the locked
    /// directory is still the one at the shard's path (not moved away or
    /// replaced).
    ///
    /// # Errors
    /// `Other` naming what changed, or the IO error of the check.
    pub fn verify(&self) -> io::Result<()> {
        self.check.as_ref().map_or(Ok(()), |check| check())
    }
}

/// The file operations the engine needs. Every mutating call may fail; after
/// a failed write or sync the engine stops (fail-stop) rather than retry.
pub trait Io: Send + Sync + Debug {
    /// Every entry of `dir` (not `.`/`..`), symbolic links not followed.
    fn list(&self, dir: &Path) -> io::Result<Vec<DirEntry>>;
    /// What `path` is (`None` when nothing is there), links not followed.
    fn kind(&self, path: &Path) -> io::Result<Option<EntryType>>;
    /// What `path` is, how large and which file (`NotFound` when nothing is
    /// there, or a followed link points nowhere).
    fn stat(&self, path: &Path, links: Links) -> io::Result<Stat>;
    /// `path` made absolute, every link and `.`/`..` in it resolved
    /// (`NotFound` when it does not exist).
    fn canonical(&self, path: &Path) -> io::Result<PathBuf>;
    /// Opens the file at `path` for reading, once, following a link at its
    /// end or not. Never blocks: a FIFO opens at once (the handle's
    /// [`ReadHandle::stat`] says what it is; the caller refuses what is not
    /// a regular file).
    fn open_read(&self, path: &Path, links: Links) -> io::Result<Box<dyn ReadHandle + '_>>;
    /// Creates one directory; fails when it exists or its parent does not.
    fn create_dir(&self, dir: &Path) -> io::Result<()>;
    /// Length of a file.
    fn len(&self, path: &Path) -> io::Result<u64>;
    /// Reads up to `buf.len()` bytes at `pos`; returns how many were read.
    fn read_at(&self, path: &Path, pos: u64, buf: &mut [u8]) -> io::Result<usize>;
    /// Creates an empty file, failing if anything exists there.
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
    /// Gives the file at `from` a second name `to`, failing (`AlreadyExists`)
    /// when `to` exists: publishing without ever replacing.
    fn link(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// Takes the exclusive writer lock of the shard directory `dir`. The
    /// lock is on the directory itself, which no stray `rm` of a file can
    /// swap; the engine also locks `dir/writer.lock` (creating it when
    /// missing, with the holder's pid in it), the lock earlier builds take.
    /// Fails at once with `WouldBlock` when another holder has either,
    /// unless `wait`.
    fn lock(&self, dir: &Path, wait: bool) -> io::Result<LockGuard>;
    /// Whether someone holds the writer lock of the shard directory `dir`
    /// (the directory's, or `writer.lock`'s), without taking it or creating
    /// anything. `None` when nobody does.
    fn lock_holder(&self, dir: &Path) -> io::Result<Option<LockHolder>>;
    /// Reserves `len` bytes of blocks for a file without changing its length
    /// (`fallocate` with `FALLOC_FL_KEEP_SIZE`); a filesystem that cannot is
    /// not an error. The default reserves nothing.
    fn preallocate(&self, _path: &Path, _len: u64) -> io::Result<()> {
        Ok(())
    }
    /// A monotonic clock in nanoseconds (from an arbitrary start), for
    /// decisions the engine makes by elapsed time (how fresh the last check
    /// of the writer's lock is): behind the trait so a simulation decides
    /// them by its own clock, the same in every replay. The default is the
    /// machine's monotonic clock.
    fn monotonic_nanos(&self) -> u64 {
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        u64::try_from(START.get_or_init(std::time::Instant::now).elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// Reads exactly `buf.len()` bytes at `pos`, or fails with `UnexpectedEof`.
///
/// # Errors
/// The IO error, or `UnexpectedEof`.
pub fn read_exact_at(io: &dyn Io, path: &Path, mut pos: u64, mut buf: &mut [u8]) -> io::Result<()> {
    while !buf.is_empty() {
        let n = io.read_at(path, pos, buf)?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, format!("short read at byte {pos}")));
        }
        pos += n as u64;
        buf = &mut buf[n..];
    }
    Ok(())
}

/// The real filesystem. Keeps open handles so appends do not reopen files.
#[derive(Debug)]
pub struct OsIo {
    handles: Mutex<HashMap<PathBuf, Arc<File>>>,
    /// Which `OsIo` this is, for the threads' write caches.
    id: u64,
    /// Bumped whenever a path's handle changes (created, renamed, removed):
    /// a thread's cached handle is used only at the generation it was cached.
    generation: std::sync::atomic::AtomicU64,
}

impl Default for OsIo {
    fn default() -> Self {
        static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Self {
            handles: Mutex::default(),
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            generation: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

/// The file a thread last wrote through an `OsIo`: an append writes the
/// same file again and again, and this thread's own copy of its handle
/// spares every write the shared cache's lock and reference count, which
/// the threads of a busy log would otherwise take turns on. A thread keeps
/// at most one such handle, until its next write elsewhere or its exit: a
/// file removed meanwhile (a truncation's) keeps its blocks that long.
#[derive(Debug)]
struct ThreadWrite {
    io: u64,
    generation: u64,
    path: PathBuf,
    file: Arc<File>,
}

thread_local! {
    static LAST_WRITE: std::cell::RefCell<Option<ThreadWrite>> = const { std::cell::RefCell::new(None) };
}

impl OsIo {
    /// A handle cache over the real filesystem.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn handle(&self, path: &Path) -> io::Result<Arc<File>> {
        let mut handles = self.handles.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(f) = handles.get(path) {
            return Ok(Arc::clone(f));
        }
        // Never follow a symbolic link, and never create on the way.
        let f = match OpenOptions::new().read(true).write(true).custom_flags(libc_o_nofollow()).open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
                OpenOptions::new().read(true).custom_flags(libc_o_nofollow()).open(path)?
            }
            Err(e) => return Err(e),
        };
        let f = Arc::new(f);
        handles.insert(path.to_path_buf(), Arc::clone(&f));
        Ok(f)
    }

    /// Writes through this thread's cached handle of `path` when it is
    /// current, else through the shared cache (and caches that handle).
    fn write_through(&self, path: &Path, pos: u64, data: &[u8]) -> io::Result<()> {
        let generation = self.generation.load(std::sync::atomic::Ordering::Acquire);
        let hit = LAST_WRITE.with(|last| match last.borrow().as_ref() {
            Some(w) if w.io == self.id && w.generation == generation && w.path == path => Some(w.file.write_all_at(data, pos)),
            _ => None,
        });
        if let Some(written) = hit {
            return written;
        }
        let file = self.handle(path)?;
        let written = file.write_all_at(data, pos);
        LAST_WRITE.with(|last| *last.borrow_mut() = Some(ThreadWrite { io: self.id, generation, path: path.to_path_buf(), file }));
        written
    }

    fn forget(&self, path: &Path) {
        self.generation.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        let mut handles = self.handles.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        handles.remove(path);
    }
}

use std::os::unix::fs::OpenOptionsExt as _;

/// `O_NOFOLLOW`: a symbolic link where a Felix file should be is refused, never followed.
const fn libc_o_nofollow() -> i32 {
    libc::O_NOFOLLOW
}

/// A [`Stat`] from the OS's metadata.
fn stat_of(m: &fs::Metadata) -> Stat {
    Stat {
        kind: entry_type(m.file_type()),
        len: m.len(),
        dev: m.dev(),
        ino: m.ino(),
        mtime: (m.mtime(), m.mtime_nsec()),
        ctime: (m.ctime(), m.ctime_nsec()),
    }
}

/// A file `OsIo::open_read` opened.
#[derive(Debug)]
struct OsReadHandle(File);

impl ReadHandle for OsReadHandle {
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.0.read_at(buf, pos) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                read => return read,
            }
        }
    }
    fn stat(&self) -> io::Result<Stat> {
        self.0.metadata().map(|m| stat_of(&m))
    }
}

fn entry_type(t: fs::FileType) -> EntryType {
    if t.is_symlink() {
        EntryType::Symlink
    } else if t.is_dir() {
        EntryType::Dir
    } else if t.is_file() {
        EntryType::File
    } else {
        EntryType::Other
    }
}

impl Io for OsIo {
    fn list(&self, dir: &Path) -> io::Result<Vec<DirEntry>> {
        let mut out = Vec::new();
        for e in fs::read_dir(dir)? {
            let e = e?;
            out.push(DirEntry { name: e.file_name(), kind: entry_type(e.file_type()?) });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
    fn kind(&self, path: &Path) -> io::Result<Option<EntryType>> {
        match fs::symlink_metadata(path) {
            Ok(m) => Ok(Some(entry_type(m.file_type()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
    fn stat(&self, path: &Path, links: Links) -> io::Result<Stat> {
        match links {
            Links::Follow => fs::metadata(path),
            Links::NoFollow => fs::symlink_metadata(path),
        }
        .map(|m| stat_of(&m))
    }
    fn canonical(&self, path: &Path) -> io::Result<PathBuf> {
        fs::canonicalize(path)
    }
    fn open_read(&self, path: &Path, links: Links) -> io::Result<Box<dyn ReadHandle + '_>> {
        let nofollow = if links == Links::NoFollow { libc_o_nofollow() } else { 0 };
        let file = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | nofollow).open(path)?;
        Ok(Box::new(OsReadHandle(file)))
    }
    fn create_dir(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir(dir)
    }
    fn len(&self, path: &Path) -> io::Result<u64> {
        let cached = self.handles.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(path).cloned();
        match cached {
            Some(f) => Ok(f.metadata()?.len()),
            // Not opened for a size alone: a file the engine only lists (an
            // orphaned index) costs no descriptor and needs no read permission.
            None => match fs::symlink_metadata(path)? {
                m if m.file_type().is_file() => Ok(m.len()),
                m => Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{}: {}", path.display(), entry_type(m.file_type()).describe()),
                )),
            },
        }
    }
    fn read_at(&self, path: &Path, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.handle(path)?.read_at(buf, pos)
    }
    fn create(&self, path: &Path) -> io::Result<()> {
        let f = OpenOptions::new().read(true).write(true).create_new(true).open(path)?;
        self.generation.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        let mut handles = self.handles.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        handles.insert(path.to_path_buf(), Arc::new(f));
        Ok(())
    }
    fn write_at(&self, path: &Path, pos: u64, data: &[u8]) -> io::Result<()> {
        self.write_through(path, pos, data)
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
    fn link(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::hard_link(from, to)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        self.forget(path);
        fs::remove_file(path)
    }
    fn lock(&self, dir: &Path, wait: bool) -> io::Result<LockGuard> {
        // The directory itself: `O_DIRECTORY | O_NOFOLLOW`, so neither a file
        // nor a link where the shard should be is ever locked instead.
        let dir_file = OpenOptions::new().read(true).custom_flags(libc_o_nofollow() | libc::O_DIRECTORY).open(dir)?;
        take_flock(&dir_file, wait)?;
        let lock_path = dir.join(felix_codec::format::file_name::LOCK_FILE_NAME);
        let named = |e: io::Error| match e.kind() {
            io::ErrorKind::WouldBlock => e,
            kind => io::Error::new(kind, format!("{}: {e}", lock_path.display())),
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(libc_o_nofollow())
            .open(&lock_path)
            .map_err(named)?;
        if !file.metadata().map_err(named)?.file_type().is_file() {
            return Err(named(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file (a FIFO, socket or device)")));
        }
        take_flock(&file, wait).map_err(named)?;
        // The holder's pid, for whoever is refused. Not synced: it is only a hint.
        file.set_len(0)?;
        file.write_all_at(format!("{}\n", std::process::id()).as_bytes(), 0)?;
        let locked = dir_file.metadata()?;
        let (dev, ino, shown) = (locked.dev(), locked.ino(), dir.to_path_buf());
        let check = move || match fs::symlink_metadata(&shown) {
            Ok(m) if m.dev() == dev && m.ino() == ino => Ok(()),
            Ok(_) => Err(io::Error::other(format!(
                "{} is no longer the directory this writer locked: it was moved away or replaced while the writer held it",
                shown.display()
            ))),
            Err(e) => Err(io::Error::new(e.kind(), format!("{}: the locked shard directory is gone: {e}", shown.display()))),
        };
        Ok(LockGuard::checked(HeldFlocks([dir_file, file]), check))
    }
    fn preallocate(&self, path: &Path, len: u64) -> io::Result<()> {
        let file = self.handle(path)?;
        match rustix::fs::fallocate(&*file, rustix::fs::FallocateFlags::KEEP_SIZE, 0, len) {
            Ok(()) => Ok(()),
            Err(e) if e == rustix::io::Errno::OPNOTSUPP || e == rustix::io::Errno::NOSYS => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
    fn lock_holder(&self, dir: &Path) -> io::Result<Option<LockHolder>> {
        let mut wanted = Vec::new();
        for (path, is_dir) in [(dir.to_path_buf(), true), (dir.join(felix_codec::format::file_name::LOCK_FILE_NAME), false)] {
            match fs::symlink_metadata(&path) {
                Ok(m) if m.file_type().is_dir() == is_dir && (is_dir || m.file_type().is_file()) => {
                    wanted.push(proc_locks_id(m.dev(), m.ino()));
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        if wanted.is_empty() {
            return Ok(None);
        }
        // Test without taking: the kernel's table of held locks. Taking even a
        // shared lock for a moment could make a starting writer fail. Read a
        // line at a time: the table grows with every lock on the host.
        let Ok(table) = File::open("/proc/locks") else { return Ok(None) };
        for line in io::BufReader::new(table).lines() {
            let Ok(line) = line else { return Ok(None) };
            if let Some(pid) = wanted.iter().find_map(|want| flock_writer_on(&line, want)) {
                return Ok(Some(LockHolder { pid: Some(pid) }));
            }
        }
        Ok(None)
    }
}

/// The writer's two `flock`s, released explicitly (`LOCK_UN`) when dropped:
/// a child forked by another thread between our close and its `exec` keeps
/// the open file description (and so the lock) alive for a moment, which a
/// bare close would leave to chance.
struct HeldFlocks([File; 2]);

impl Drop for HeldFlocks {
    fn drop(&mut self) {
        for file in &self.0 {
            let _ = file.unlock();
        }
    }
}

/// An exclusive `flock` on `file`, at once (`WouldBlock` when held) or
/// waiting for it.
fn take_flock(file: &File, wait: bool) -> io::Result<()> {
    if wait {
        return file.lock();
    }
    file.try_lock().map_err(|e| match e {
        fs::TryLockError::WouldBlock => io::Error::from(io::ErrorKind::WouldBlock),
        fs::TryLockError::Error(e) => e,
    })
}

/// The pid holding an exclusive `flock` on the file `(dev, ino)`, from the
/// text of `/proc/locks` (`1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF`).
#[must_use]
pub fn flock_writer_in(table: &str, dev: u64, ino: u64) -> Option<u32> {
    let want = proc_locks_id(dev, ino);
    table.lines().find_map(|line| flock_writer_on(line, &want))
}

/// How `/proc/locks` names the file `(dev, ino)`: `major:minor:inode`.
fn proc_locks_id(dev: u64, ino: u64) -> String {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    format!("{major:02x}:{minor:02x}:{ino}")
}

/// The pid on one line of `/proc/locks` when it is a held exclusive `flock`
/// on the file `want` names.
fn flock_writer_on(line: &str, want: &str) -> Option<u32> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    // "N:" "FLOCK" "ADVISORY" "WRITE" pid dev:ino start end; a "->" marks a waiter.
    let at = fields.iter().position(|f| *f == "FLOCK")?;
    let rest = fields.get(at..)?;
    if fields.get(1) == Some(&"->") || rest.get(2) != Some(&"WRITE") {
        return None;
    }
    let id = rest.get(4)?;
    if !id.eq_ignore_ascii_case(want) {
        return None;
    }
    rest.get(3)?.parse().ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_writer_of_a_file_from_proc_locks() {
        let table = "1: POSIX  ADVISORY  WRITE 77 fd:01:99 0 EOF\n\
                     2: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF\n\
                     2: -> FLOCK  ADVISORY  WRITE 4343 fd:01:1234 0 EOF\n\
                     3: FLOCK  ADVISORY  READ 55 fd:01:1235 0 EOF\n";
        let dev = (0xfd << 8) | 0x01;
        assert_eq!(flock_writer_in(table, dev, 1234), Some(4242));
        assert_eq!(flock_writer_in(table, dev, 1235), None, "a shared lock is no writer");
        assert_eq!(flock_writer_in(table, dev, 99), None, "a POSIX lock is not ours");
        assert_eq!(flock_writer_in(table, dev + 1, 1234), None, "another device");
    }

    /// `stat` follows a link or not as asked and tells files apart by
    /// identity; `open_read` reads the file it opened even once another is
    /// put at its path, opens a FIFO without blocking, and `canonical`
    /// resolves links and `..`.
    #[test]
    fn stat_open_read_and_canonical_answer_about_the_file_asked() {
        let dir = tempfile::tempdir().unwrap();
        let (file, link, fifo) = (dir.path().join("f"), dir.path().join("l"), dir.path().join("p"));
        std::fs::write(&file, b"hello").unwrap();
        std::os::unix::fs::symlink(&file, &link).unwrap();
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, rustix::fs::Mode::from_raw_mode(0o600), 0).unwrap();
        let io = OsIo::new();
        let followed = io.stat(&link, Links::Follow).unwrap();
        assert_eq!((followed.kind, followed.len), (EntryType::File, 5));
        assert_eq!(followed.identity(), io.stat(&file, Links::NoFollow).unwrap().identity());
        assert_eq!(io.stat(&link, Links::NoFollow).unwrap().kind, EntryType::Symlink);
        assert_eq!(io.stat(&dir.path().join("none"), Links::Follow).unwrap_err().kind(), io::ErrorKind::NotFound);
        assert_eq!(io.canonical(&dir.path().join("x/../l")).ok(), None, "x does not exist");
        assert_eq!(io.canonical(&link).unwrap(), std::fs::canonicalize(&file).unwrap());
        let handle = io.open_read(&link, Links::Follow).unwrap();
        assert!(io.open_read(&link, Links::NoFollow).is_err(), "a link is not opened when links are not followed");
        std::fs::rename(&file, dir.path().join("moved")).unwrap();
        std::fs::write(&file, b"another").unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(handle.read_at(1, &mut buf).unwrap(), 4);
        assert_eq!(&buf[..4], b"ello");
        assert_eq!(handle.read_at(5, &mut buf).unwrap(), 0, "the end of the file opened");
        assert_eq!(handle.stat().unwrap().identity(), followed.identity());
        assert_eq!(io.open_read(&fifo, Links::Follow).unwrap().stat().unwrap().kind, EntryType::Other, "opened without a writer");
    }

    #[test]
    fn the_writer_lock_is_exclusive_across_handles_and_dies_with_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path();
        let io = OsIo::new();
        assert_eq!(io.lock_holder(path).unwrap(), None, "no writer");
        assert!(!path.join("writer.lock").exists(), "probing creates nothing");
        let guard = io.lock(path, false).unwrap();
        assert_eq!(io.lock(path, false).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        assert_eq!(io.lock_holder(path).unwrap(), Some(LockHolder { pid: Some(std::process::id()) }));
        guard.verify().unwrap();
        drop(guard);
        assert_eq!(io.lock_holder(path).unwrap(), None);
        drop(io.lock(path, false).unwrap());
    }

    #[test]
    fn removing_writer_lock_neither_frees_the_shard_nor_hides_its_writer() {
        let dir = tempfile::tempdir().unwrap();
        let io = OsIo::new();
        let guard = io.lock(dir.path(), false).unwrap();
        std::fs::remove_file(dir.path().join("writer.lock")).unwrap();
        assert_eq!(io.lock(dir.path(), false).unwrap_err().kind(), io::ErrorKind::WouldBlock, "the directory stays locked");
        assert_eq!(io.lock_holder(dir.path()).unwrap(), Some(LockHolder { pid: Some(std::process::id()) }));
        guard.verify().unwrap();
    }

    #[test]
    fn a_lock_on_a_directory_moved_away_fails_its_check() {
        let root = tempfile::tempdir().unwrap();
        let shard = root.path().join("s");
        std::fs::create_dir(&shard).unwrap();
        let io = OsIo::new();
        let guard = io.lock(&shard, false).unwrap();
        std::fs::rename(&shard, root.path().join("moved")).unwrap();
        std::fs::create_dir(&shard).unwrap();
        let e = guard.verify().unwrap_err();
        assert!(e.to_string().contains("no longer the directory this writer locked"), "{e}");
    }

    #[test]
    fn a_thread_s_cached_handle_never_writes_into_a_file_renamed_or_replaced_since() {
        let dir = tempfile::tempdir().unwrap();
        let (p, moved) = (dir.path().join("a.log"), dir.path().join("b.log"));
        let io = OsIo::new();
        io.create(&p).unwrap();
        io.write_at(&p, 0, b"one").unwrap();
        io.write_at(&p, 3, b"two").unwrap(); // through this thread's cached handle
        io.rename(&p, &moved).unwrap();
        io.create(&p).unwrap();
        io.write_at(&p, 0, b"new").unwrap();
        assert_eq!(std::fs::read(&moved).unwrap(), b"onetwo");
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        io.remove(&p).unwrap();
        io.create(&p).unwrap();
        io.write_at(&p, 0, b"third").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"third");
        // Another OsIo's cache is its own.
        let other = OsIo::new();
        other.write_at(&moved, 6, b"!").unwrap();
        io.write_at(&p, 5, b"?").unwrap();
        assert_eq!(std::fs::read(&moved).unwrap(), b"onetwo!");
        assert_eq!(std::fs::read(&p).unwrap(), b"third?");
    }
}
