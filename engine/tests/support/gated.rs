//! A simulated disk with gates: a test parks the engine's thread at the
//! next read of a segment file, at the next directory fsync or just after
//! the next `sync_data`, then lets it go; it can also fake a moved shard
//! directory and a panicking sync (`broker_attacks`, `broker_offsets`,
//! `group_commit`).
#![allow(dead_code, clippy::unwrap_used)]

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use felix_engine::io::sim::SimIo;
use felix_engine::io::{DirEntry, EntryType, LockGuard, LockHolder};
use felix_engine::Io;

/// A gate: a thread parks in it until it is released.
#[derive(Debug, Default)]
pub struct Gate {
    state: Mutex<(bool, bool, bool)>, // (armed, parked, released)
    changed: Condvar,
}

impl Gate {
    pub fn arm(&self) {
        *self.state.lock().unwrap() = (true, false, false);
    }
    /// Parks the caller when armed (once).
    pub fn pass(&self) {
        let mut g = self.state.lock().unwrap();
        if !g.0 {
            return;
        }
        g.0 = false;
        g.1 = true;
        self.changed.notify_all();
        while !g.2 {
            g = self.changed.wait(g).unwrap();
        }
    }
    pub fn wait_parked(&self) {
        let mut g = self.state.lock().unwrap();
        while !g.1 {
            let (next, timeout) = self.changed.wait_timeout(g, Duration::from_secs(30)).unwrap();
            assert!(!timeout.timed_out(), "nothing parked");
            g = next;
        }
    }
    pub fn release(&self) {
        self.state.lock().unwrap().2 = true;
        self.changed.notify_all();
    }
}

/// A simulated disk whose next read of a segment file, once armed, parks
/// before it reads (a reader holding its snapshot of the log while the
/// writer goes on); and whose next directory fsync, once `dir_sync_gate` is
/// armed, parks before it syncs (a retention pass or a cut holds the
/// shard's lock through it: `SimIo::hold_syncs` holds only `sync_data`);
/// and whose next `sync_data`, once `after_sync_gate` is armed, does its
/// work at once (an `fdatasync` that started before later writes) and then
/// parks: the caller's thread is held *after* the sync, while later writes
/// and truncations go on.
#[derive(Debug)]
pub struct Gated {
    pub sim: Arc<SimIo>,
    pub read_gate: Gate,
    reads_armed: AtomicBool,
    pub dir_sync_gate: Gate,
    pub after_sync_gate: Gate,
    /// The shard's directory was moved away: the writer's lock check fails.
    pub moved: Arc<AtomicBool>,
    /// The next `sync_data` panics (an `Io` implementation's bug).
    pub panic_next: AtomicBool,
    /// Every `sync_data` takes at least this long, in microseconds (a real
    /// disk's `fdatasync`, so a lone publisher's flush leader is still
    /// gathering when its next write comes: `lone_spin`).
    pub sync_delay_us: AtomicU64,
    /// The next `sync_data` fails (after its delay): a disk that errs.
    pub fail_next_sync: AtomicBool,
}

impl Gated {
    pub fn new(sim: Arc<SimIo>) -> Self {
        Self {
            sim,
            read_gate: Gate::default(),
            reads_armed: AtomicBool::new(false),
            dir_sync_gate: Gate::default(),
            after_sync_gate: Gate::default(),
            moved: Arc::default(),
            panic_next: AtomicBool::new(false),
            sync_delay_us: AtomicU64::new(0),
            fail_next_sync: AtomicBool::new(false),
        }
    }
    pub fn arm_read(&self) {
        self.read_gate.arm();
        self.reads_armed.store(true, Ordering::SeqCst);
    }
}

impl Io for Gated {
    fn stat(&self, path: &Path, links: felix_engine::io::Links) -> io::Result<felix_engine::io::Stat> {
        self.sim.stat(path, links)
    }
    fn canonical(&self, path: &Path) -> io::Result<PathBuf> {
        self.sim.canonical(path)
    }
    fn open_read(&self, path: &Path, links: felix_engine::io::Links) -> io::Result<Box<dyn felix_engine::io::ReadHandle + '_>> {
        self.sim.open_read(path, links)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<DirEntry>> {
        self.sim.list(dir)
    }
    fn kind(&self, path: &Path) -> io::Result<Option<EntryType>> {
        self.sim.kind(path)
    }
    fn create_dir(&self, dir: &Path) -> io::Result<()> {
        self.sim.create_dir(dir)
    }
    fn len(&self, path: &Path) -> io::Result<u64> {
        self.sim.len(path)
    }
    fn read_at(&self, path: &Path, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
        if path.extension().is_some_and(|e| e == "log") && self.reads_armed.swap(false, Ordering::SeqCst) {
            self.read_gate.pass();
        }
        self.sim.read_at(path, pos, buf)
    }
    fn create(&self, path: &Path) -> io::Result<()> {
        self.sim.create(path)
    }
    fn write_at(&self, path: &Path, pos: u64, data: &[u8]) -> io::Result<()> {
        self.sim.write_at(path, pos, data)
    }
    fn set_len(&self, path: &Path, len: u64) -> io::Result<()> {
        self.sim.set_len(path, len)
    }
    fn sync_data(&self, path: &Path) -> io::Result<()> {
        assert!(!self.panic_next.swap(false, Ordering::SeqCst), "an Io that panics in sync_data");
        let delay = self.sync_delay_us.load(Ordering::SeqCst);
        if delay > 0 {
            std::thread::sleep(Duration::from_micros(delay));
        }
        if self.fail_next_sync.swap(false, Ordering::SeqCst) {
            return Err(io::Error::other("simulated EIO on fdatasync"));
        }
        self.sim.sync_data(path)?;
        self.after_sync_gate.pass();
        Ok(())
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.dir_sync_gate.pass();
        self.sim.sync_dir(dir)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.sim.rename(from, to)
    }
    fn link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.sim.link(from, to)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        self.sim.remove(path)
    }
    fn lock(&self, dir: &Path, wait: bool) -> io::Result<LockGuard> {
        let held = self.sim.lock(dir, wait)?;
        let moved = Arc::clone(&self.moved);
        Ok(LockGuard::checked(held, move || if moved.load(Ordering::SeqCst) { Err(io::Error::other("moved away")) } else { Ok(()) }))
    }
    fn lock_holder(&self, dir: &Path) -> io::Result<Option<LockHolder>> {
        self.sim.lock_holder(dir)
    }
}
