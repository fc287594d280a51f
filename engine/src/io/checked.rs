//! The fail-stop latch, after redb's `CheckedBackend`: every IO call of a
//! shard goes through one [`CheckedIo`]. The first failure of a mutating call
//! (write, sync, truncate, create, rename, link, remove) is recorded, and from
//! then on *every* call — reads included — answers
//! [`EngineError::FailStopped`] naming that first failure. After a failed
//! fsync the kernel may have dropped the dirty pages (fsyncgate), so nothing
//! may be retried, and no call site can forget to stop: the rule lives here,
//! not in a line each caller must remember.
//!
//! Errors come back as [`EngineError::Io`] naming the file and the operation.

use std::io;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use super::{read_exact_at, DirEntry, EntryType, Io, Links, LockGuard, LockHolder, ReadHandle, Stat};
use crate::error::EngineError;

/// See the module doc.
#[derive(Debug)]
pub struct CheckedIo {
    io: Arc<dyn Io>,
    failed: OnceLock<String>,
    /// Set once the shard is closed (its directory): every call refuses.
    closed: OnceLock<std::path::PathBuf>,
}

impl CheckedIo {
    /// Wraps `io`.
    #[must_use]
    pub fn new(io: Arc<dyn Io>) -> Self {
        Self { io, failed: OnceLock::new(), closed: OnceLock::new() }
    }

    /// The underlying IO, for handing to another reader of the same files.
    #[must_use]
    pub fn inner(&self) -> &Arc<dyn Io> {
        &self.io
    }

    /// The first failure, once one happened.
    #[must_use]
    pub fn failure(&self) -> Option<&str> {
        self.failed.get().map(String::as_str)
    }

    /// The wrapped `Io`'s clock ([`Io::monotonic_nanos`]).
    #[must_use]
    pub fn monotonic_nanos(&self) -> u64 {
        self.io.monotonic_nanos()
    }

    /// `FailStopped` once a mutating call failed.
    ///
    /// # Errors
    /// `FailStopped`.
    pub fn check(&self) -> Result<(), EngineError> {
        if let Some(cause) = self.failed.get() {
            return Err(EngineError::FailStopped { cause: cause.clone() });
        }
        match self.closed.get() {
            Some(dir) => Err(EngineError::Closed { dir: dir.clone() }),
            None => Ok(()),
        }
    }

    /// Closes the shard in `dir`: from now on every call answers
    /// [`EngineError::Closed`] (a failure recorded before stays the answer).
    /// Not a failure: nothing is latched.
    pub fn close(&self, dir: &Path) {
        let _ = self.closed.set(dir.to_path_buf());
    }

    /// Whether [`CheckedIo::close`] was called.
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.closed.get().is_some()
    }

    /// Stops the shard for a panic unwinding out of a change to it (the
    /// first failure, when it is): see [`LatchOnUnwind`]. Also called by the
    /// shard's lock when a panic unwinds while it is held, before it lets
    /// go, so no other thread takes the lock between the panic and the stop.
    pub(crate) fn latch_panic(&self) {
        let _ = self.failed.set(PANICKED.to_string());
    }

    /// Latches `e` as the first failure (when it is) and returns it.
    pub fn latch(&self, e: EngineError) -> EngineError {
        let _ = self.failed.set(e.to_string());
        e
    }

    /// Runs one mutating operation of the shard (an append, a cut, …): any
    /// error inside it — a read included, since the operation may be half
    /// done — stops the shard.
    ///
    /// # Errors
    /// `FailStopped` before it starts, or the operation's error (latched).
    pub fn mutation<T>(&self, f: impl FnOnce() -> Result<T, EngineError>) -> Result<T, EngineError> {
        self.check()?;
        self.latching_panics(f).map_err(|e| match e {
            EngineError::FailStopped { .. } | EngineError::Closed { .. } => e,
            other => self.latch(other),
        })
    }

    fn mutate<T>(&self, path: &Path, op: &'static str, f: impl FnOnce(&dyn Io) -> io::Result<T>) -> Result<T, EngineError> {
        self.check()?;
        self.latching_panics(|| f(&*self.io)).map_err(|e| self.latch(EngineError::io(path, op, &e)))
    }

    /// Runs `f`, stopping the shard if a panic unwinds out of it ([`LatchOnUnwind`]).
    fn latching_panics<T>(&self, f: impl FnOnce() -> T) -> T {
        let unwinding = LatchOnUnwind(self);
        let result = f();
        std::mem::forget(unwinding);
        result
    }

    fn read<T>(&self, path: &Path, op: &'static str, f: impl FnOnce(&dyn Io) -> io::Result<T>) -> Result<T, EngineError> {
        self.check()?;
        f(&*self.io).map_err(|e| EngineError::io(path, op, &e))
    }

    /// Lists a directory (not latching: a read).
    ///
    /// # Errors
    /// `FailStopped`, or the IO error.
    pub fn list(&self, dir: &Path) -> Result<Vec<DirEntry>, EngineError> {
        self.read(dir, "list", |io| io.list(dir))
    }

    /// What is at `path`, links not followed.
    ///
    /// # Errors
    /// `FailStopped`, or the IO error.
    pub fn kind(&self, path: &Path) -> Result<Option<EntryType>, EngineError> {
        self.read(path, "stat", |io| io.kind(path))
    }

    /// What `path` is, how large and which file (not latching: a read).
    ///
    /// # Errors
    /// `FailStopped`, or the IO error.
    pub fn stat(&self, path: &Path, links: Links) -> Result<Stat, EngineError> {
        self.read(path, "stat", |io| io.stat(path, links))
    }

    /// `path` with every link and `.`/`..` resolved (not latching: a read).
    ///
    /// # Errors
    /// `FailStopped`, or the IO error.
    pub fn canonical(&self, path: &Path) -> Result<std::path::PathBuf, EngineError> {
        self.read(path, "resolve", |io| io.canonical(path))
    }

    /// Opens a file for reading once (not latching: a read). The handle's
    /// own reads are the underlying `Io`'s: a shard's reads go through
    /// [`CheckedIo::read_exact_at`], this is for a tool's.
    ///
    /// # Errors
    /// `FailStopped`, or the IO error.
    pub fn open_read(&self, path: &Path, links: Links) -> Result<Box<dyn ReadHandle + '_>, EngineError> {
        self.check()?;
        self.io.open_read(path, links).map_err(|e| EngineError::io(path, "open", &e))
    }

    /// A file's length.
    ///
    /// # Errors
    /// `FailStopped`, or the IO error.
    pub fn len(&self, path: &Path) -> Result<u64, EngineError> {
        self.read(path, "stat", |io| io.len(path))
    }

    /// Reads exactly `buf.len()` bytes at `pos`.
    ///
    /// # Errors
    /// `FailStopped`, or the IO error (`UnexpectedEof` when the file is shorter).
    pub fn read_exact_at(&self, path: &Path, pos: u64, buf: &mut [u8]) -> Result<(), EngineError> {
        self.read(path, "read", |io| read_exact_at(io, path, pos, buf))
    }

    /// Creates one directory.
    ///
    /// # Errors
    /// `FailStopped`, or the IO error (latched).
    pub fn create_dir(&self, dir: &Path) -> Result<(), EngineError> {
        self.mutate(dir, "mkdir", |io| io.create_dir(dir))
    }

    /// Creates one directory; one that exists already (another process made
    /// it first) is not a failure: `Ok(false)`.
    ///
    /// # Errors
    /// `FailStopped`, or any other IO error (latched).
    pub fn create_dir_if_missing(&self, dir: &Path) -> Result<bool, EngineError> {
        self.mutate(dir, "mkdir", |io| match io.create_dir(dir) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        })
    }

    /// Creates an empty file exclusively.
    ///
    /// # Errors
    /// `FailStopped`, or the IO error (latched).
    pub fn create(&self, path: &Path) -> Result<(), EngineError> {
        self.mutate(path, "create", |io| io.create(path))
    }

    /// Writes `data` at `pos`.
    ///
    /// # Errors
    /// `FailStopped`, or the IO error (latched).
    pub fn write_at(&self, path: &Path, pos: u64, data: &[u8]) -> Result<(), EngineError> {
        self.mutate(path, "write", |io| io.write_at(path, pos, data))
    }

    /// Truncates or extends a file.
    ///
    /// # Errors
    /// `FailStopped`, or the IO error (latched).
    pub fn set_len(&self, path: &Path, len: u64) -> Result<(), EngineError> {
        self.mutate(path, "truncate", |io| io.set_len(path, len))
    }

    /// `fdatasync`.
    ///
    /// # Errors
    /// `FailStopped`, or the IO error (latched).
    pub fn sync_data(&self, path: &Path) -> Result<(), EngineError> {
        self.mutate(path, "fdatasync", |io| io.sync_data(path))
    }

    /// fsync of a directory.
    ///
    /// # Errors
    /// `FailStopped`, or the IO error (latched).
    pub fn sync_dir(&self, dir: &Path) -> Result<(), EngineError> {
        self.mutate(dir, "fsync directory", |io| io.sync_dir(dir))
    }

    /// Atomic rename, replacing `to`.
    ///
    /// # Errors
    /// `FailStopped`, or the IO error (latched).
    pub fn rename(&self, from: &Path, to: &Path) -> Result<(), EngineError> {
        self.mutate(to, "rename", |io| io.rename(from, to))
    }

    /// A second name that never replaces: `Ok(false)` when `to` exists
    /// (not a failure: the caller picks another name).
    ///
    /// # Errors
    /// `FailStopped`, or any other IO error (latched).
    pub fn link_new(&self, from: &Path, to: &Path) -> Result<bool, EngineError> {
        self.mutate(to, "link", |io| match io.link(from, to) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        })
    }

    /// Removes a file; a file already gone is not a failure.
    ///
    /// # Errors
    /// `FailStopped`, or any other IO error (latched).
    pub fn remove_if_exists(&self, path: &Path) -> Result<(), EngineError> {
        self.mutate(path, "remove", |io| match io.remove(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        })
    }

    /// As [`CheckedIo::remove_if_exists`], but a failure is not latched: for
    /// a removal nothing acknowledged depends on (retention's: the file and
    /// every byte in it are still there, so the next pass tries again).
    ///
    /// # Errors
    /// `FailStopped`, or the IO error (not latched).
    pub fn remove_if_exists_unlatched(&self, path: &Path) -> Result<(), EngineError> {
        self.read(path, "remove", |io| match io.remove(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        })
    }

    /// Removes a file the failed operation itself just created under the
    /// writer's lock (a temporary, an evidence name published without its
    /// note), past the latch: the one call allowed after a failure, so a
    /// stopped operation leaves nothing it did not tell. Best effort: what
    /// stays is the engine's own temporary, which the next recovery removes.
    pub fn remove_own_after_failure(&self, path: &Path) {
        let _ = self.io.remove(path);
    }

    /// Reserves blocks for a file without changing its length.
    ///
    /// # Errors
    /// `FailStopped`, or the IO error (latched).
    pub fn preallocate(&self, path: &Path, len: u64) -> Result<(), EngineError> {
        self.mutate(path, "fallocate", |io| io.preallocate(path, len))
    }

    /// Takes the writer lock (not latching: a refusal is not an IO failure).
    ///
    /// # Errors
    /// The IO error (`WouldBlock` when held).
    pub fn lock(&self, path: &Path, wait: bool) -> io::Result<LockGuard> {
        self.io.lock(path, wait)
    }

    /// Who holds the writer lock, if anyone.
    ///
    /// # Errors
    /// The IO error.
    pub fn lock_holder(&self, path: &Path) -> Result<Option<LockHolder>, EngineError> {
        self.read(path, "probe lock", |io| io.lock_holder(path))
    }
}

/// Armed around a mutating operation or call and forgotten when it returns:
/// dropped only while a panic unwinds out of it, when it stops the shard as
/// an error would — the operation is half done as surely (a cut made on disk
/// and not in memory, a batch written and not counted), and the lock its
/// caller held lets go without poisoning anything. The panic goes on: it is
/// a bug, and whoever catches it finds the shard stopped.
struct LatchOnUnwind<'a>(&'a CheckedIo);

impl Drop for LatchOnUnwind<'_> {
    fn drop(&mut self) {
        self.0.latch_panic();
    }
}

/// The cause a shard stopped by a panic names.
const PANICKED: &str = "a panic unwound through a change to the shard, which may be half done";

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::io::sim::SimIo;

    #[test]
    fn the_first_failure_stops_every_later_call_reads_included() {
        let sim = Arc::new(SimIo::new());
        sim.put(Path::new("/d/f"), b"bytes");
        let io = CheckedIo::new(Arc::clone(&sim) as Arc<dyn Io>);
        let mut buf = [0u8; 5];
        io.read_exact_at(Path::new("/d/f"), 0, &mut buf).unwrap();
        assert!(io.read_exact_at(Path::new("/d/nope"), 0, &mut buf).is_err(), "a failed read…");
        io.write_at(Path::new("/d/f"), 0, b"B").unwrap(); // …does not stop the shard
        sim.fail_at(sim.mutations() + 1);
        let first = io.sync_data(Path::new("/d/f")).unwrap_err();
        assert!(matches!(first, EngineError::Io { op: "fdatasync", .. }), "{first}");
        sim.fail_at(u64::MAX);
        for later in
            [io.write_at(Path::new("/d/f"), 0, b"x"), io.read_exact_at(Path::new("/d/f"), 0, &mut buf), io.sync_dir(Path::new("/d"))]
        {
            let Err(EngineError::FailStopped { cause }) = later else { panic!("{later:?}") };
            assert_eq!(cause, first.to_string(), "every later call names the first failure");
        }
    }

    /// A panic out of a mutating operation or call leaves it half done, as
    /// an error would: the shard stops (and the panic goes on to its catcher).
    #[test]
    fn a_panic_inside_a_mutation_stops_the_shard_as_an_error_does() {
        let sim = Arc::new(SimIo::new());
        sim.put(Path::new("/d/f"), b"bytes");
        let in_operation = CheckedIo::new(Arc::clone(&sim) as Arc<dyn Io>);
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            in_operation.mutation(|| -> Result<(), EngineError> { panic!("a bug half way through a cut") })
        }));
        assert!(unwound.is_err(), "the panic goes on");
        let Err(EngineError::FailStopped { cause }) = in_operation.write_at(Path::new("/d/f"), 0, b"x") else { panic!("still running") };
        assert_eq!(cause, PANICKED);

        let in_call = CheckedIo::new(Arc::clone(&sim) as Arc<dyn Io>);
        sim.panic_at(Some(sim.mutations() + 1));
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| in_call.sync_data(Path::new("/d/f"))));
        let payload = unwound.unwrap_err();
        assert!(payload.downcast_ref::<crate::io::sim::InjectedPanic>().is_some(), "the injected panic itself");
        let mut buf = [0u8; 5];
        assert!(matches!(in_call.read_exact_at(Path::new("/d/f"), 0, &mut buf), Err(EngineError::FailStopped { .. })));

        let untouched = CheckedIo::new(sim as Arc<dyn Io>);
        assert_eq!(untouched.mutation(|| Ok(7)).unwrap(), 7, "a mutation that returns arms nothing");
        assert!(untouched.check().is_ok());
    }

    /// `stat`, `canonical` and `open_read` go through the latch like every
    /// read: answered while the shard runs, `Closed` once it is closed.
    #[test]
    fn stat_canonical_and_open_read_answer_until_the_shard_is_closed() {
        let sim = Arc::new(SimIo::new());
        sim.put(Path::new("/d/f"), b"bytes");
        let io = CheckedIo::new(Arc::clone(&sim) as Arc<dyn Io>);
        let f = Path::new("/d/f");
        assert_eq!(io.stat(f, Links::Follow).unwrap().len, 5);
        assert_eq!(io.canonical(Path::new("/d/../d/f")).unwrap(), f);
        let mut buf = [0u8; 5];
        assert_eq!(io.open_read(f, Links::Follow).unwrap().read_at(0, &mut buf).unwrap(), 5);
        let e = io.stat(Path::new("/d/none"), Links::Follow).unwrap_err();
        assert!(matches!(e, EngineError::Io { op: "stat", .. }), "{e}");
        io.close(Path::new("/d"));
        assert!(matches!(io.stat(f, Links::Follow), Err(EngineError::Closed { .. })));
        assert!(matches!(io.canonical(f), Err(EngineError::Closed { .. })));
        assert!(matches!(io.open_read(f, Links::Follow), Err(EngineError::Closed { .. })));
    }
}
