//! A simulated filesystem for crash and fault tests, after redb's
//! `crash_consistency` backend. It keeps a *live* image (what reads see) and
//! a *durable* image (what survives a crash): file bytes become durable at
//! `sync_data`; directory entries — files and subdirectories created,
//! renamed, linked or removed in a directory — at `sync_dir` of that
//! directory. A file survives a crash only when its name is durable in its
//! directory *and* that directory is durable in its parent, all the way up:
//! a shard directory that was never fsynced in its root loses every record
//! in it, as on a real filesystem.
//!
//! Faults: fail the Nth mutating call ([`SimIo::fail_at`]) or panic in it
//! ([`SimIo::panic_at`]), fail the Nth read
//! ([`SimIo::fail_read_at`], once: a bad sector), or freeze at the
//! Nth sync ([`SimIo::crash_after_sync`]): that sync completes, then every
//! later call fails, as if the process died. [`SimIo::crash`] returns the
//! durable image as a fresh filesystem, the way a reboot would find it (with
//! every lock released: locks die with their process).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

use super::{DirEntry, EntryType, Io, Links, LockGuard, LockHolder, ReadHandle, Stat};

/// The payload of a panic [`SimIo::panic_at`] injected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InjectedPanic {
    /// The mutating call that panicked.
    pub call: u64,
}

#[derive(Debug, Clone, Default)]
struct FileData {
    live: Vec<u8>,
    durable: Vec<u8>,
}

#[derive(Debug, Default)]
struct State {
    files: HashMap<u64, FileData>,
    next_id: u64,
    live_names: BTreeMap<PathBuf, u64>,
    durable_names: BTreeMap<PathBuf, u64>,
    live_dirs: BTreeSet<PathBuf>,
    durable_dirs: BTreeSet<PathBuf>,
    /// Entries that are symbolic links (tests plant them; never created by the engine).
    symlinks: BTreeSet<PathBuf>,
    mutations: u64,
    syncs: u64,
    fail_at: Option<u64>,
    /// The mutating call (counted from 1) that panics, once ([`SimIo::panic_at`]).
    panic_at: Option<u64>,
    crash_after_sync: Option<u64>,
    dead: bool,
    /// `read_at` calls made so far.
    reads: u64,
    /// The `read_at` call (counted like `reads`) that fails with EIO.
    fail_read: Option<u64>,
}

/// Writer locks held, shared by every handle of one simulated machine.
#[derive(Debug, Default)]
struct Locks {
    held: Mutex<BTreeMap<PathBuf, u32>>,
    released: Condvar,
    waiting: std::sync::atomic::AtomicU64,
}

/// See the module doc.
#[derive(Debug)]
pub struct SimIo {
    state: Mutex<State>,
    gate: Mutex<Gate>,
    gate_changed: Condvar,
    locks: Arc<Locks>,
    /// The simulated clock ([`Io::monotonic_nanos`]): it moves only when the simulation says.
    clock: std::sync::atomic::AtomicU64,
}

impl Default for SimIo {
    fn default() -> Self {
        let mut state = State::default();
        state.live_dirs.insert(PathBuf::from("/"));
        state.durable_dirs.insert(PathBuf::from("/"));
        Self {
            state: Mutex::new(state),
            gate: Mutex::default(),
            gate_changed: Condvar::new(),
            locks: Arc::default(),
            clock: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

/// Holds `sync_data` calls at the door, so a test can make appends pile up
/// behind a sync in flight (group commit) without sleeping.
#[derive(Debug, Default)]
struct Gate {
    held: bool,
    waiting: u64,
}

fn dead() -> io::Error {
    io::Error::other("simulated crash: the process is gone")
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("{}: no such file or directory", path.display()))
}

fn exists_error(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::AlreadyExists, format!("{} exists", path.display()))
}

fn parent(path: &Path) -> PathBuf {
    path.parent().map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
}

impl State {
    fn exists(&self, path: &Path) -> bool {
        self.live_names.contains_key(path) || self.live_dirs.contains(path) || self.symlinks.contains(path)
    }

    fn parent_must_exist(&self, path: &Path) -> io::Result<()> {
        let p = parent(path);
        if self.live_dirs.contains(&p) {
            Ok(())
        } else {
            Err(not_found(&p))
        }
    }

    /// Whether `dir` and every ancestor are durable.
    fn durable_chain(&self, dir: &Path) -> bool {
        let mut at = Some(dir);
        while let Some(d) = at {
            if d.as_os_str().is_empty() {
                break;
            }
            if !self.durable_dirs.contains(d) {
                return false;
            }
            at = d.parent();
        }
        true
    }
}

impl SimIo {
    /// An empty filesystem holding only `/`.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the simulated clock (nanoseconds; it should only move forward).
    /// It reads 0 until set and never moves by itself: a test that wants
    /// the engine's time-bound checks (how fresh the writer's lock check is)
    /// to come round moves it, as the simulator does each step.
    pub fn set_clock_nanos(&self, nanos: u64) {
        self.clock.store(nanos, std::sync::atomic::Ordering::Release);
    }

    /// Makes the `n`th mutating call (counted from 1) fail, and every one after it.
    pub fn fail_at(&self, n: u64) {
        self.lock_state().fail_at = Some(n);
    }

    /// Makes the `n`th mutating call (counted from 1) panic with an
    /// [`InjectedPanic`], once: a bug that unwinds out of an operation part
    /// way through it. `None` disarms it.
    pub fn panic_at(&self, n: Option<u64>) {
        self.lock_state().panic_at = n;
    }

    /// Makes the `n`th `read_at` from now (counted from 1) fail with EIO,
    /// once: a sector the disk could not read that time.
    pub fn fail_read_at(&self, n: u64) {
        let mut s = self.lock_state();
        s.fail_read = Some(s.reads + n);
    }

    /// `read_at` calls made so far.
    #[must_use]
    pub fn reads(&self) -> u64 {
        self.lock_state().reads
    }

    /// Lets the `n`th sync (counted from 1) complete, then kills the process.
    pub fn crash_after_sync(&self, n: u64) {
        self.lock_state().crash_after_sync = Some(n);
    }

    /// Mutating calls made so far.
    #[must_use]
    pub fn mutations(&self) -> u64 {
        self.lock_state().mutations
    }

    /// Syncs made so far.
    #[must_use]
    pub fn syncs(&self) -> u64 {
        self.lock_state().syncs
    }

    /// From now on, `sync_data` waits at the door until [`SimIo::release_syncs`].
    pub fn hold_syncs(&self) {
        self.gate.lock().unwrap_or_else(std::sync::PoisonError::into_inner).held = true;
    }

    /// Lets held and later syncs through.
    pub fn release_syncs(&self) {
        self.gate.lock().unwrap_or_else(std::sync::PoisonError::into_inner).held = false;
        self.gate_changed.notify_all();
    }

    /// Blocks until a sync is waiting at the door.
    pub fn wait_for_held_sync(&self) {
        let mut g = self.gate.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while g.waiting == 0 {
            g = self.gate_changed.wait(g).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    fn pass_gate(&self) {
        let mut g = self.gate.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        g.waiting += 1;
        self.gate_changed.notify_all();
        while g.held {
            g = self.gate_changed.wait(g).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        g.waiting -= 1;
    }

    /// The filesystem as a reboot would find it: only durable directories,
    /// names and bytes, and no lock held.
    #[must_use]
    pub fn crash(&self) -> SimIo {
        let s = self.lock_state();
        let next = SimIo::default();
        next.set_clock_nanos(self.monotonic_nanos());
        {
            let mut n = next.lock_state();
            n.next_id = s.next_id;
            for dir in &s.durable_dirs {
                if s.durable_chain(dir) {
                    n.live_dirs.insert(dir.clone());
                    n.durable_dirs.insert(dir.clone());
                }
            }
            for (path, id) in &s.durable_names {
                if !s.durable_chain(&parent(path)) {
                    continue;
                }
                let bytes = s.files.get(id).map(|f| f.durable.clone()).unwrap_or_default();
                n.files.insert(*id, FileData { live: bytes.clone(), durable: bytes });
                n.live_names.insert(path.clone(), *id);
                n.durable_names.insert(path.clone(), *id);
            }
            n.symlinks = s.symlinks.clone();
        }
        next
    }

    /// Current (live) bytes of a file.
    #[must_use]
    pub fn contents(&self, path: &Path) -> Option<Vec<u8>> {
        let s = self.lock_state();
        s.live_names.get(path).and_then(|id| s.files.get(id)).map(|f| f.live.clone())
    }

    /// Whether a directory exists (live).
    #[must_use]
    pub fn dir_exists(&self, path: &Path) -> bool {
        self.lock_state().live_dirs.contains(path)
    }

    /// Replaces a file's bytes, live and durable, creating it and its
    /// directories as durable (for damage injection and fixtures in tests).
    pub fn put(&self, path: &Path, bytes: &[u8]) {
        let mut s = self.lock_state();
        let mut dir = path.parent();
        while let Some(d) = dir {
            if d.as_os_str().is_empty() {
                break;
            }
            s.live_dirs.insert(d.to_path_buf());
            s.durable_dirs.insert(d.to_path_buf());
            dir = d.parent();
        }
        let id = match s.live_names.get(path) {
            Some(id) => *id,
            None => {
                s.next_id += 1;
                let id = s.next_id;
                s.live_names.insert(path.to_path_buf(), id);
                s.durable_names.insert(path.to_path_buf(), id);
                id
            }
        };
        s.files.insert(id, FileData { live: bytes.to_vec(), durable: bytes.to_vec() });
    }

    /// How many `lock` calls are waiting for a holder to let go.
    #[must_use]
    pub fn lock_waiters(&self) -> u64 {
        self.locks.waiting.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Plants a symbolic link entry (tests only: the engine never makes one).
    pub fn put_symlink(&self, path: &Path) {
        self.lock_state().symlinks.insert(path.to_path_buf());
    }

    fn lock_state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn mutate<T>(&self, f: impl FnOnce(&mut State) -> io::Result<T>) -> io::Result<T> {
        let mut s = self.lock_state();
        if s.dead {
            return Err(dead());
        }
        s.mutations += 1;
        if s.panic_at == Some(s.mutations) {
            s.panic_at = None;
            let call = s.mutations;
            drop(s);
            std::panic::panic_any(InjectedPanic { call });
        }
        if s.fail_at.is_some_and(|n| s.mutations >= n) {
            return Err(io::Error::other(format!("injected failure at mutating call {}", s.mutations)));
        }
        f(&mut s)
    }

    fn sync(&self, f: impl FnOnce(&mut State) -> io::Result<()>) -> io::Result<()> {
        self.mutate(|s| {
            f(s)?;
            s.syncs += 1;
            if s.crash_after_sync.is_some_and(|n| s.syncs >= n) {
                s.dead = true;
            }
            Ok(())
        })
    }

    fn read_state(&self) -> io::Result<std::sync::MutexGuard<'_, State>> {
        let s = self.lock_state();
        if s.dead {
            return Err(dead());
        }
        Ok(s)
    }

    /// Bytes at `pos` of the file `which` finds (by name, or by the id a
    /// handle holds) into `buf`, counted as a read (so
    /// [`SimIo::fail_read_at`] reaches it); `path` names it in an error.
    fn read_file(&self, path: &Path, which: impl FnOnce(&State) -> Option<u64>, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut s = self.read_state()?;
        s.reads += 1;
        if s.fail_read == Some(s.reads) {
            s.fail_read = None;
            return Err(io::Error::other(format!("simulated read error (EIO) in {}", path.display())));
        }
        let data = &which(&s).and_then(|id| s.files.get(&id)).ok_or_else(|| not_found(path))?.live;
        let start = usize::try_from(pos).unwrap_or(usize::MAX).min(data.len());
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        Ok(n)
    }
}

/// `path` without `.` and with each `..` taking the component before it.
fn normalized(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::Normal(name) => out.push(name),
            std::path::Component::RootDir | std::path::Component::CurDir | std::path::Component::Prefix(_) => {}
        }
    }
    out
}

impl State {
    /// What is at `path` (a planted link points nowhere: followed, it is
    /// `NotFound`). A file's inode is its id; times are not simulated (zero),
    /// so a change is seen by its size and identity only.
    fn stat(&self, path: &Path, links: Links) -> io::Result<Stat> {
        let at = |kind, len, ino| Stat { kind, len, dev: 0, ino, mtime: (0, 0), ctime: (0, 0) };
        if let Some(id) = self.live_names.get(path) {
            let len = self.files.get(id).map_or(0, |f| f.live.len() as u64);
            return Ok(at(EntryType::File, len, *id));
        }
        if self.live_dirs.contains(path) {
            return Ok(at(EntryType::Dir, 0, 0));
        }
        match (self.symlinks.contains(path), links) {
            (true, Links::NoFollow) => Ok(at(EntryType::Symlink, 0, 0)),
            _ => Err(not_found(path)),
        }
    }
}

/// A file [`SimIo::open_read`] opened: its id, read whatever its names become.
#[derive(Debug)]
struct SimReadHandle<'a> {
    io: &'a SimIo,
    path: PathBuf,
    id: u64,
}

impl ReadHandle for SimReadHandle<'_> {
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.io.read_file(&self.path, |_| Some(self.id), pos, buf)
    }
    fn stat(&self) -> io::Result<Stat> {
        let s = self.io.read_state()?;
        let len = s.files.get(&self.id).map_or(0, |f| f.live.len() as u64);
        Ok(Stat { kind: EntryType::File, len, dev: 0, ino: self.id, mtime: (0, 0), ctime: (0, 0) })
    }
}

fn file<'a>(s: &'a mut State, path: &Path) -> io::Result<&'a mut FileData> {
    let id = *s.live_names.get(path).ok_or_else(|| not_found(path))?;
    s.files.get_mut(&id).ok_or_else(|| not_found(path))
}

impl Io for SimIo {
    fn list(&self, dir: &Path) -> io::Result<Vec<DirEntry>> {
        let s = self.read_state()?;
        if !s.live_dirs.contains(dir) {
            return Err(not_found(dir));
        }
        let name = |p: &PathBuf| p.file_name().map(OsString::from);
        let mut out: Vec<DirEntry> = Vec::new();
        for p in s.live_names.keys().filter(|p| p.parent() == Some(dir)) {
            out.extend(name(p).map(|name| DirEntry { name, kind: EntryType::File }));
        }
        for p in s.live_dirs.iter().filter(|p| p.parent() == Some(dir)) {
            out.extend(name(p).map(|name| DirEntry { name, kind: EntryType::Dir }));
        }
        for p in s.symlinks.iter().filter(|p| p.parent() == Some(dir)) {
            out.extend(name(p).map(|name| DirEntry { name, kind: EntryType::Symlink }));
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
    fn kind(&self, path: &Path) -> io::Result<Option<EntryType>> {
        let s = self.read_state()?;
        Ok(if s.live_names.contains_key(path) {
            Some(EntryType::File)
        } else if s.live_dirs.contains(path) {
            Some(EntryType::Dir)
        } else if s.symlinks.contains(path) {
            Some(EntryType::Symlink)
        } else {
            None
        })
    }
    fn stat(&self, path: &Path, links: Links) -> io::Result<Stat> {
        self.read_state()?.stat(path, links)
    }
    fn canonical(&self, path: &Path) -> io::Result<PathBuf> {
        let path = normalized(path);
        self.read_state()?.stat(&path, Links::Follow).map(|_| path)
    }
    fn open_read(&self, path: &Path, links: Links) -> io::Result<Box<dyn ReadHandle + '_>> {
        let stat = self.read_state()?.stat(path, links)?;
        if stat.kind != EntryType::File {
            return Err(io::Error::other(format!("{}: {}: not opened for reading", path.display(), stat.kind.describe())));
        }
        Ok(Box::new(SimReadHandle { io: self, path: path.to_path_buf(), id: stat.ino }))
    }
    fn create_dir(&self, dir: &Path) -> io::Result<()> {
        self.mutate(|s| {
            if s.exists(dir) {
                return Err(exists_error(dir));
            }
            s.parent_must_exist(dir)?;
            s.live_dirs.insert(dir.to_path_buf());
            Ok(())
        })
    }
    fn len(&self, path: &Path) -> io::Result<u64> {
        let mut s = self.read_state()?;
        Ok(file(&mut s, path)?.live.len() as u64)
    }
    fn read_at(&self, path: &Path, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.read_file(path, |s| s.live_names.get(path).copied(), pos, buf)
    }
    fn create(&self, path: &Path) -> io::Result<()> {
        self.mutate(|s| {
            if s.exists(path) {
                return Err(exists_error(path));
            }
            s.parent_must_exist(path)?;
            s.next_id += 1;
            let id = s.next_id;
            s.files.insert(id, FileData::default());
            s.live_names.insert(path.to_path_buf(), id);
            Ok(())
        })
    }
    fn write_at(&self, path: &Path, pos: u64, data: &[u8]) -> io::Result<()> {
        self.mutate(|s| {
            let f = file(s, path)?;
            let pos = usize::try_from(pos).map_err(io::Error::other)?;
            if f.live.len() < pos + data.len() {
                f.live.resize(pos + data.len(), 0);
            }
            f.live[pos..pos + data.len()].copy_from_slice(data);
            Ok(())
        })
    }
    fn set_len(&self, path: &Path, len: u64) -> io::Result<()> {
        self.mutate(|s| {
            let f = file(s, path)?;
            f.live.resize(usize::try_from(len).map_err(io::Error::other)?, 0);
            Ok(())
        })
    }
    fn sync_data(&self, path: &Path) -> io::Result<()> {
        self.pass_gate();
        self.sync(|s| {
            let f = file(s, path)?;
            f.durable = f.live.clone();
            Ok(())
        })
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.sync(|s| {
            if !s.live_dirs.contains(dir) {
                return Err(not_found(dir));
            }
            s.durable_names.retain(|p, _| p.parent() != Some(dir));
            let live: Vec<(PathBuf, u64)> =
                s.live_names.iter().filter(|(p, _)| p.parent() == Some(dir)).map(|(p, i)| (p.clone(), *i)).collect();
            s.durable_names.extend(live);
            s.durable_dirs.retain(|p| p.parent() != Some(dir));
            let dirs: Vec<PathBuf> = s.live_dirs.iter().filter(|p| p.parent() == Some(dir)).cloned().collect();
            s.durable_dirs.extend(dirs);
            Ok(())
        })
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.mutate(|s| {
            s.parent_must_exist(to)?;
            let id = s.live_names.remove(from).ok_or_else(|| not_found(from))?;
            s.live_names.insert(to.to_path_buf(), id);
            Ok(())
        })
    }
    fn link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.mutate(|s| {
            if s.exists(to) {
                return Err(exists_error(to));
            }
            s.parent_must_exist(to)?;
            let id = *s.live_names.get(from).ok_or_else(|| not_found(from))?;
            s.live_names.insert(to.to_path_buf(), id);
            Ok(())
        })
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        self.mutate(|s| s.live_names.remove(path).map(|_| ()).ok_or_else(|| not_found(path)))
    }
    fn lock(&self, path: &Path, wait: bool) -> io::Result<LockGuard> {
        {
            // The shard directory itself is locked (as `OsIo` does): removing
            // or replacing a file inside it never frees the lock.
            let s = self.read_state()?;
            if !s.live_dirs.contains(path) {
                return Err(not_found(path));
            }
        }
        let mut held = self.locks.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while held.contains_key(path) {
            if !wait {
                return Err(io::Error::from(io::ErrorKind::WouldBlock));
            }
            self.locks.waiting.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held = self.locks.released.wait(held).unwrap_or_else(std::sync::PoisonError::into_inner);
            self.locks.waiting.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        }
        held.insert(path.to_path_buf(), std::process::id());
        Ok(LockGuard::new(SimLock { locks: Arc::clone(&self.locks), path: path.to_path_buf() }))
    }
    fn monotonic_nanos(&self) -> u64 {
        self.clock.load(std::sync::atomic::Ordering::Acquire)
    }

    fn lock_holder(&self, path: &Path) -> io::Result<Option<LockHolder>> {
        let held = self.locks.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(held.get(path).map(|pid| LockHolder { pid: Some(*pid) }))
    }
}

/// A held simulated lock: released on drop.
struct SimLock {
    locks: Arc<Locks>,
    path: PathBuf,
}

impl Drop for SimLock {
    fn drop(&mut self) {
        self.locks.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&self.path);
        self.locks.released.notify_all();
    }
}

/// Operator and harness helpers for the simulator (`engine/tests/simulation.rs`):
/// what a person does to the files with `rm`, `mv` or a backup, outside the
/// engine, so never failed, counted or crashed, and durable at once.
impl SimIo {
    /// An operator's `rm`: removes a file's name, live and durable. Returns
    /// whether it existed.
    pub fn remove_raw(&self, path: &Path) -> bool {
        let mut s = self.lock_state();
        s.durable_names.remove(path);
        s.live_names.remove(path).is_some()
    }

    /// Forgets an armed [`SimIo::fail_at`] and a [`SimIo::crash_after_sync`]
    /// that has not fired: the process that met the error restarted (its
    /// written bytes stay in the page cache, unlike after a crash).
    pub fn clear_faults(&self) {
        let mut s = self.lock_state();
        s.fail_at = None;
        s.panic_at = None;
        s.fail_read = None;
        if !s.dead {
            s.crash_after_sync = None;
        }
    }

    /// Whether a [`SimIo::crash_after_sync`] has killed the process.
    #[must_use]
    pub fn is_dead(&self) -> bool {
        self.lock_state().dead
    }

    /// Every file directly in `dir` and its live bytes (works after a crash too).
    #[must_use]
    pub fn files_in(&self, dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
        let s = self.lock_state();
        s.live_names
            .iter()
            .filter(|(p, _)| p.parent() == Some(dir))
            .map(|(p, id)| (p.clone(), s.files.get(id).map(|f| f.live.clone()).unwrap_or_default()))
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_file_in_a_directory_never_fsynced_in_its_parent_is_lost() {
        let io = SimIo::new();
        io.create_dir(Path::new("/root")).unwrap();
        io.create_dir(Path::new("/root/shard")).unwrap();
        io.create(Path::new("/root/shard/f")).unwrap();
        io.write_at(Path::new("/root/shard/f"), 0, b"acked").unwrap();
        io.sync_data(Path::new("/root/shard/f")).unwrap();
        io.sync_dir(Path::new("/root/shard")).unwrap();
        assert_eq!(io.crash().contents(Path::new("/root/shard/f")), None, "the directories were never made durable");
        io.sync_dir(Path::new("/root")).unwrap();
        assert_eq!(io.crash().contents(Path::new("/root/shard/f")), None, "the root itself is not durable in /");
        io.sync_dir(Path::new("/")).unwrap();
        assert_eq!(io.crash().contents(Path::new("/root/shard/f")).unwrap(), b"acked");
    }

    /// `stat`, `canonical` and `open_read` over the images: a handle reads
    /// the file it opened after its name moved, and its reads are reads
    /// (`fail_read_at` reaches them); a planted link points nowhere.
    #[test]
    fn stat_canonical_and_open_read_answer_from_the_live_image() {
        let io = SimIo::new();
        io.put(Path::new("/d/a"), b"hello");
        io.put_symlink(Path::new("/d/l"));
        let a = io.stat(Path::new("/d/a"), Links::Follow).unwrap();
        assert_eq!((a.kind, a.len), (EntryType::File, 5));
        assert_eq!(io.stat(Path::new("/d"), Links::Follow).unwrap().kind, EntryType::Dir);
        assert_eq!(io.stat(Path::new("/d/l"), Links::NoFollow).unwrap().kind, EntryType::Symlink);
        assert_eq!(io.stat(Path::new("/d/l"), Links::Follow).unwrap_err().kind(), io::ErrorKind::NotFound);
        assert_eq!(io.canonical(Path::new("/d/./x/../a")).unwrap(), Path::new("/d/a"));
        assert_eq!(io.canonical(Path::new("/d/b")).unwrap_err().kind(), io::ErrorKind::NotFound);
        assert!(io.open_read(Path::new("/d"), Links::Follow).is_err(), "a directory is not read");
        let handle = io.open_read(Path::new("/d/a"), Links::Follow).unwrap();
        io.rename(Path::new("/d/a"), Path::new("/d/b")).unwrap();
        io.put(Path::new("/d/a"), b"another");
        let mut buf = [0u8; 8];
        assert_eq!(handle.read_at(1, &mut buf).unwrap(), 4);
        assert_eq!(&buf[..4], b"ello");
        assert_eq!(handle.stat().unwrap().identity(), a.identity());
        assert_ne!(io.stat(Path::new("/d/a"), Links::Follow).unwrap().identity(), a.identity());
        io.fail_read_at(1);
        assert!(handle.read_at(0, &mut buf).is_err(), "the handle's read is the one that fails");
        assert_eq!(handle.read_at(0, &mut buf).unwrap(), 5, "once");
    }

    #[test]
    fn link_never_replaces_and_locks_die_with_the_process() {
        let io = SimIo::new();
        io.put(Path::new("/d/a"), b"1");
        io.put(Path::new("/d/b"), b"2");
        assert_eq!(io.link(Path::new("/d/a"), Path::new("/d/b")).unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        io.link(Path::new("/d/a"), Path::new("/d/c")).unwrap();
        assert_eq!(io.contents(Path::new("/d/c")).unwrap(), b"1");
        let _held = io.lock(Path::new("/d"), false).unwrap();
        assert_eq!(io.lock(Path::new("/d"), false).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        let rebooted = io.crash();
        assert_eq!(rebooted.lock_holder(Path::new("/d")).unwrap(), None);
    }
}
