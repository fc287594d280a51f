//! A simulated filesystem for crash and fault tests, after redb's
//! `crash_consistency` backend. It keeps a *live* image (what reads see) and
//! a *durable* image (what survives a crash): file bytes become durable at
//! `sync_data`, directory entries (create, rename, remove) at `sync_dir`.
//!
//! Faults: fail the Nth mutating call ([`SimIo::fail_at`]), or freeze at the
//! Nth sync ([`SimIo::crash_after_sync`]): that sync completes, then every
//! later call fails, as if the process died. [`SimIo::crash`] returns the
//! durable image as a fresh filesystem, the way a reboot would find it.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};

use super::Io;

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
    mutations: u64,
    syncs: u64,
    fail_at: Option<u64>,
    crash_after_sync: Option<u64>,
    dead: bool,
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct SimIo {
    state: Mutex<State>,
    gate: Mutex<Gate>,
    gate_changed: Condvar,
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
    io::Error::new(io::ErrorKind::NotFound, format!("{}: no such file", path.display()))
}

impl SimIo {
    /// An empty filesystem.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes the `n`th mutating call (counted from 1) fail, and every one after it.
    pub fn fail_at(&self, n: u64) {
        self.lock().fail_at = Some(n);
    }

    /// Lets the `n`th sync (counted from 1) complete, then kills the process.
    pub fn crash_after_sync(&self, n: u64) {
        self.lock().crash_after_sync = Some(n);
    }

    /// Mutating calls made so far.
    #[must_use]
    pub fn mutations(&self) -> u64 {
        self.lock().mutations
    }

    /// Syncs made so far.
    #[must_use]
    pub fn syncs(&self) -> u64 {
        self.lock().syncs
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

    /// The filesystem as a reboot would find it: only durable names and bytes.
    #[must_use]
    pub fn crash(&self) -> SimIo {
        let s = self.lock();
        let mut next = State { next_id: s.next_id, ..State::default() };
        for (path, id) in &s.durable_names {
            let bytes = s.files.get(id).map(|f| f.durable.clone()).unwrap_or_default();
            next.files.insert(*id, FileData { live: bytes.clone(), durable: bytes });
            next.live_names.insert(path.clone(), *id);
            next.durable_names.insert(path.clone(), *id);
        }
        SimIo { state: Mutex::new(next), ..SimIo::default() }
    }

    /// Current (live) bytes of a file.
    #[must_use]
    pub fn contents(&self, path: &Path) -> Option<Vec<u8>> {
        let s = self.lock();
        s.live_names.get(path).and_then(|id| s.files.get(id)).map(|f| f.live.clone())
    }

    /// Replaces a file's bytes, live and durable (for damage injection in tests).
    pub fn put(&self, path: &Path, bytes: &[u8]) {
        let mut s = self.lock();
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

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn mutate<T>(&self, f: impl FnOnce(&mut State) -> io::Result<T>) -> io::Result<T> {
        let mut s = self.lock();
        if s.dead {
            return Err(dead());
        }
        s.mutations += 1;
        if s.fail_at.is_some_and(|n| s.mutations >= n) {
            return Err(io::Error::other(format!("injected failure at mutating call {}", s.mutations)));
        }
        f(&mut s)
    }

    fn sync(&self, f: impl FnOnce(&mut State)) -> io::Result<()> {
        self.mutate(|s| {
            f(s);
            s.syncs += 1;
            if s.crash_after_sync.is_some_and(|n| s.syncs >= n) {
                s.dead = true;
            }
            Ok(())
        })
    }
}

fn file<'a>(s: &'a mut State, path: &Path) -> io::Result<&'a mut FileData> {
    let id = *s.live_names.get(path).ok_or_else(|| not_found(path))?;
    s.files.get_mut(&id).ok_or_else(|| not_found(path))
}

impl Io for SimIo {
    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let s = self.lock();
        if s.dead {
            return Err(dead());
        }
        Ok(s.live_names
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect())
    }
    fn create_dir_all(&self, _dir: &Path) -> io::Result<()> {
        Ok(())
    }
    fn len(&self, path: &Path) -> io::Result<u64> {
        let mut s = self.lock();
        Ok(file(&mut s, path)?.live.len() as u64)
    }
    fn read_at(&self, path: &Path, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut s = self.lock();
        if s.dead {
            return Err(dead());
        }
        let data = &file(&mut s, path)?.live;
        let start = usize::try_from(pos).unwrap_or(usize::MAX).min(data.len());
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        Ok(n)
    }
    fn create(&self, path: &Path) -> io::Result<()> {
        self.mutate(|s| {
            if s.live_names.contains_key(path) {
                return Err(io::Error::new(io::ErrorKind::AlreadyExists, format!("{} exists", path.display())));
            }
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
        let path = path.to_path_buf();
        let mut missing = false;
        self.sync(|s| match file(s, &path) {
            Ok(f) => f.durable = f.live.clone(),
            Err(_) => missing = true,
        })?;
        if missing {
            return Err(not_found(&path));
        }
        Ok(())
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.sync(|s| {
            s.durable_names.retain(|p, _| p.parent() != Some(dir));
            let live: Vec<(PathBuf, u64)> =
                s.live_names.iter().filter(|(p, _)| p.parent() == Some(dir)).map(|(p, i)| (p.clone(), *i)).collect();
            s.durable_names.extend(live);
        })
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.mutate(|s| {
            let id = s.live_names.remove(from).ok_or_else(|| not_found(from))?;
            s.live_names.insert(to.to_path_buf(), id);
            Ok(())
        })
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        self.mutate(|s| s.live_names.remove(path).map(|_| ()).ok_or_else(|| not_found(path)))
    }
}
