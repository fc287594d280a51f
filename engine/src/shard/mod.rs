//! One shard: the durable writer and reader a broker embeds. Every on-disk
//! byte goes through `felix-codec`; every IO call through the shard's one
//! [`CheckedIo`](crate::io::checked::CheckedIo) (fail-stop by construction).
//!
//! | module           | its one job |
//! |------------------|-------------|
//! | [`dir`]          | where files live, durable creation, evidence, the engine's own names, the writer's lock |
//! | [`recovery`]     | what is on disk → the codec's facts → the codec's plan → executed (or, read-only, only applied in memory) |
//! | [`writer`]       | append, group commit, rollover (counting buffered bytes), the interval flusher |
//! | [`reader`]       | reads; index entries verified against the record chain before they are trusted |
//! | [`replication`]  | epochs, divergence truncation |
//! | [`retention`]    | deleting whole oldest segments |
//! | [`walk`]         | the one loop feeding a file to the codec's strict reader in fixed windows |
//!
//! Durability protocol: see `docs/durability.md`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use parking_lot::{Condvar, MutexGuard};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use felix_codec::format::epochs::Epoch;
use felix_codec::format::index::{IndexEntry, IndexPlanner, DEFAULT_INDEX_SPACING_BYTES};
use felix_codec::format::shard_name::ShardKey;
use felix_codec::shard::recovery::ShardPlan;

use crate::error::EngineError;
use crate::io::{Io, LockGuard};

pub(crate) mod dir;
pub(crate) mod published;
pub mod reader;
pub(crate) mod recovery;
pub(crate) mod replication;
pub(crate) mod retention;
pub(crate) mod time;
pub(crate) mod walk;
pub(crate) mod writer;

use dir::ShardDir;

pub use felix_codec::format::epochs::{bound_epochs, truncation_point};
pub use retention::RetentionPass;
pub use writer::{Append, Pending, DEFERRED_BATCH_MAX_BYTES, INLINE_LOCK_PATIENCE, LOCK_CHECK_FRESH, UNWRITTEN_MAX_BYTES};

/// Default segment size: 128 MiB.
pub const DEFAULT_SEGMENT_SIZE_BYTES: u64 = 128 << 20;
/// Most index entries kept in memory per segment (16 MiB of entries); past
/// it every other entry is dropped and the spacing doubles, so memory never
/// follows the size of a file read from disk.
pub const MAX_MEMORY_INDEX_ENTRIES: usize = 1 << 20;

/// When an append is acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// After the `fdatasync` covering it returned (the default). A crash at
    /// any instant loses nothing acknowledged.
    EveryBatch,
    /// Once written; a background flusher fsyncs at most `micros` after the
    /// oldest unsynced write. Bound: a record acknowledged at time *t* is
    /// durable by *t* + `micros` + the duration of one `fdatasync`; a crash
    /// may lose what was acknowledged within that window. Readers see
    /// acknowledged records at once.
    Interval {
        /// The interval in microseconds.
        micros: u64,
    },
    /// Once written, with no fsync of appends at all: the operating system
    /// writes back when it will (a process crash loses nothing written; a
    /// power cut may lose anything not yet written back). Segment creation,
    /// recovery and replaced files are still made durable, and dropping the
    /// shard syncs. Upstream's `FsyncMode::None`.
    NoSync,
}

/// How a shard stores and keeps data. Every field has a named default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Roll to a new segment once the active one would exceed this
    /// ([`DEFAULT_SEGMENT_SIZE_BYTES`]).
    pub segment_size_bytes: u64,
    /// An index entry per this many bytes of segment data (4096).
    pub index_spacing_bytes: u64,
    /// Delete whole oldest segments while the shard holds more (none).
    pub retention_bytes: Option<u64>,
    /// Delete whole oldest segments whose newest record is older (none).
    pub retention_age_micros: Option<u64>,
    /// When appends are acknowledged ([`Durability::EveryBatch`]).
    pub durability: Durability,
    /// Let recovery cut a damaged tail whose damage is rot, not a torn write (off).
    pub repair_checksum_tail: bool,
    /// Wait for another writer to let go of the shard instead of failing at once (off).
    pub wait_for_lock: bool,
    /// Reserve each new segment's `segment_size_bytes` of blocks when it is
    /// created (`fallocate`, keeping the logical size at the end of data) (off:
    /// see the engine bench's preallocation table).
    pub preallocate_segments: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            segment_size_bytes: DEFAULT_SEGMENT_SIZE_BYTES,
            index_spacing_bytes: DEFAULT_INDEX_SPACING_BYTES,
            retention_bytes: None,
            retention_age_micros: None,
            durability: Durability::EveryBatch,
            repair_checksum_tail: false,
            wait_for_lock: false,
            preallocate_segments: false,
        }
    }
}

/// A record read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRecord {
    /// Its offset.
    pub offset: u64,
    /// Its publish time.
    pub timestamp_micros: u64,
    /// Its stored `checksum` (CRC-32 over its header prefix and payload), verified.
    pub checksum: u32,
    /// Its payload: a slice of the buffer the read filled, shared, not
    /// copied. The whole buffer (up to a megabyte) lives as long as any
    /// payload cut from it: copy a payload you keep for long
    /// (`Bytes::copy_from_slice`).
    pub payload: bytes::Bytes,
}

/// One segment as a broker sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentInfo {
    /// Its id (the file name's number).
    pub id: u64,
    /// Its first offset.
    pub base_offset: u64,
    /// The offset after its last record (`base_offset` when empty).
    pub next_offset: u64,
    /// Its length in bytes.
    pub size_bytes: u64,
}

/// What recovery did on open (or, opened read-only, what it would do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// The plan: the codec's, from the facts on disk.
    pub plan: ShardPlan,
    /// Whether the plan was executed (a writer) or only applied in memory (a reader).
    pub executed: bool,
    /// Evidence files written (the names actually used).
    pub evidence: Vec<PathBuf>,
    /// Things to tell a person (a damaged epochs file that reads as empty, …).
    pub warnings: Vec<String>,
    /// A reader found a writer holding the shard: its tail may be in flight.
    pub writer_live: bool,
}

/// In-memory index entries of one segment, bounded by [`MAX_MEMORY_INDEX_ENTRIES`].
#[derive(Debug, Clone)]
pub(crate) struct MemIndex {
    pub(crate) entries: Vec<IndexEntry>,
    planner: IndexPlanner,
    spacing: u64,
    /// Entries `..verified` are known to lie on the segment's record chain.
    pub(crate) verified: usize,
    /// The entries no longer match the index file (thinned): rewrite it.
    pub(crate) rewrite: bool,
}

impl MemIndex {
    pub(crate) fn new(spacing: u64) -> Self {
        let spacing = spacing.max(1);
        Self { entries: Vec::new(), planner: IndexPlanner::new(spacing), spacing, verified: 0, rewrite: false }
    }

    /// An index continuing from `entries` (ascending, as on disk).
    pub(crate) fn from_entries(spacing: u64, entries: Vec<IndexEntry>) -> Self {
        let mut ix = Self::new(spacing);
        for e in entries {
            ix.push(e);
        }
        ix.rewrite = false;
        ix
    }

    /// Seeds the planner with an existing entry without planning it.
    fn push(&mut self, e: IndexEntry) {
        let _ = self.planner.observe(e.offset, e.position);
        self.entries.push(e);
        self.thin_if_full();
    }

    /// Called for each record appended or scanned in order; returns the entry
    /// planned for it, if any.
    pub(crate) fn observe(&mut self, offset: u64, position: u64) -> Option<IndexEntry> {
        let e = self.planner.observe(offset, position)?;
        self.entries.push(e);
        let thinned = self.thin_if_full();
        (!thinned).then_some(e)
    }

    fn thin_if_full(&mut self) -> bool {
        if self.entries.len() < MAX_MEMORY_INDEX_ENTRIES {
            return false;
        }
        let kept: Vec<IndexEntry> = self.entries.iter().step_by(2).copied().collect();
        self.verified = self.verified.div_ceil(2).min(kept.len());
        self.entries = kept;
        self.spacing = self.spacing.saturating_mul(2);
        self.planner = IndexPlanner::new(self.spacing);
        if let Some(last) = self.entries.last() {
            let _ = self.planner.observe(last.offset, last.position);
        }
        self.rewrite = true;
        true
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Segment {
    pub(crate) id: u64,
    pub(crate) base: u64,
    /// Bytes written (all durable for sealed segments).
    pub(crate) len: u64,
    /// Offset after the last record written.
    pub(crate) next: u64,
    pub(crate) index: MemIndex,
    /// Entries of `index` written to the index file (the active segment appends after them).
    pub(crate) index_on_disk: usize,
    /// The newest record's timestamp (0 when empty).
    pub(crate) last_timestamp: u64,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub(crate) segments: Vec<Segment>,
    /// Next offset to assign.
    pub(crate) next_offset: u64,
    /// Offsets below this are durable.
    pub(crate) durable_next: u64,
    /// Offsets below this are durable and the writer's lock was verified
    /// after they became so: a batch below it is acknowledged without a
    /// check of its own (one check per group commit, not per append).
    pub(crate) verified_next: u64,
    /// Active segment length covered by the last sync.
    pub(crate) durable_len: u64,
    /// Offsets below this are visible to reads (durable, or acknowledged under `Interval`).
    pub(crate) visible_next: u64,
    /// Active segment length visible to reads.
    pub(crate) visible_len: u64,
    /// The segment a sync in flight is flushing (by path, outside the
    /// shard's lock): what removes segment files spares it
    /// ([`Shared::spare_flushing`]).
    pub(crate) syncing: Option<u64>,
    pub(crate) epochs: Vec<Epoch>,
    pub(crate) warnings: Vec<String>,
    pub(crate) shutdown: bool,
    /// The id the next new segment gets; `None` once a segment holds id
    /// `u64::MAX` (no id is left: a roll is refused, never a replace).
    pub(crate) next_segment_id: Option<u64>,
    /// Appends written since the last sync started (the next sync's fan-in).
    pub(crate) appends_since_sync: u64,
    /// Truncations so far, and where they cut ([`Inner::note_cut`]): a
    /// pending batch written before one that cut below its end is gone, and
    /// its commit says so.
    pub(crate) truncations: u64,
    pub(crate) recent_cuts: std::collections::VecDeque<(u64, u64)>,
    /// A reader's shard that recovery refuses: reads past the last readable
    /// record stop with this damage (the file and its finding).
    pub(crate) unreadable: Option<(PathBuf, felix_codec::Finding)>,
    /// The append path's encode buffer, reused.
    pub(crate) encode_buf: Vec<u8>,
    /// Under `EveryBatch`: records encoded and given their offsets and
    /// positions (the active segment's `len` counts them) but not yet
    /// written to its file — the tail of the active segment. The next sync
    /// writes them first, in one write, so a group commit makes one write
    /// and one `fdatasync` instead of a write per append
    /// ([`writer::write_out`]). Never more than [`UNWRITTEN_MAX_BYTES`].
    pub(crate) unwritten: Vec<u8>,
    /// Each segment's time index, built by the first seek by time that reaches it.
    pub(crate) times: time::TimeIndexes,
}

/// The id a new segment gets after the newest one `newest` (0 for an empty
/// shard); `None` when the newest holds `u64::MAX`: ids never wrap or
/// saturate, so a new segment can never take an existing one's name.
pub(crate) fn id_after(newest: Option<u64>) -> Option<u64> {
    newest.map_or(Some(0), |id| id.checked_add(1))
}

/// The most entries the truncation history keeps ([`Inner::note_cut`]).
pub(crate) const TRUNCATION_HISTORY: usize = 64;

impl Inner {
    /// The oldest stored offset: the first segment's base, or the next
    /// offset when no segment is left.
    pub(crate) fn first_offset(&self) -> u64 {
        self.segments.first().map_or(self.next_offset, |s| s.base)
    }

    /// Records truncation number `truncations + 1`, which cut every record
    /// from `cut_at` on. The history (`recent_cuts`, `(number, cut)`) keeps,
    /// for every `seen`, the lowest cut of the truncations after it as the
    /// cut of its first entry numbered past `seen`: a later truncation that
    /// cut as low or lower makes the entries before it with higher cuts
    /// useless, so they go, and the cuts rise from front to back. Past
    /// [`TRUNCATION_HISTORY`] entries the two oldest merge into the later
    /// number with the lower cut — never a cut missed, at worst an older
    /// pending batch told it was cut a little lower than it was.
    pub(crate) fn note_cut(&mut self, cut_at: u64) {
        self.verified_next = self.verified_next.min(cut_at);
        self.truncations += 1;
        while self.recent_cuts.back().is_some_and(|(_, c)| *c >= cut_at) {
            self.recent_cuts.pop_back();
        }
        self.recent_cuts.push_back((self.truncations, cut_at));
        if self.recent_cuts.len() > TRUNCATION_HISTORY {
            if let (Some((_, lowest)), Some(next)) = (self.recent_cuts.pop_front(), self.recent_cuts.front_mut()) {
                next.1 = lowest;
            }
        }
    }

    /// Where a truncation after `seen` cut below `end`, if one did (the
    /// lowest such cut).
    pub(crate) fn cut_since(&self, seen: u64, end: u64) -> Option<u64> {
        if self.truncations == seen {
            return None;
        }
        self.recent_cuts.iter().find(|(n, _)| *n > seen).map(|(_, c)| *c).filter(|c| *c < end)
    }
}

/// What every part of a shard shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) dir: ShardDir,
    pub(crate) config: Config,
    pub(crate) read_only: bool,
    pub(crate) inner: parking_lot::Mutex<Inner>,
    /// Signalled when a sync completes (or the shard stops).
    pub(crate) synced: Condvar,
    /// Signalled to wake the interval flusher.
    pub(crate) flusher_wake: Condvar,
    /// `fdatasync`s of segment files so far (a bench's appends per fsync).
    pub(crate) data_syncs: std::sync::atomic::AtomicU64,
    /// Reads and seeks that retention overtook and that hold it off now
    /// ([`retention::RetentionHeld`]).
    pub(crate) retention_held: std::sync::atomic::AtomicU64,
    /// What the accessors answer without the lock, published by every change.
    pub(crate) published: published::Published,
    /// Which opening of a shard in this process this is (a count): a batch
    /// is committed only by the opening that wrote it — another shard's
    /// durable offset, or this one's after a reopen, says nothing of it.
    pub(crate) opening: u64,
}

/// Openings of shards in this process so far ([`Shared::opening`]).
static OPENINGS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The shard's lock, held. Letting it go publishes what the accessors
/// answer without it ([`published`]), and so does waiting on a condition
/// variable (which lets it go too): every change happens under the lock, so
/// none goes unpublished — an error's early return included.
pub(crate) struct Locked<'a> {
    shared: &'a Shared,
    g: MutexGuard<'a, Inner>,
}

impl std::ops::Deref for Locked<'_> {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.g
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut Inner {
        &mut self.g
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // A panic while the lock is held (in an operation's own code,
            // outside any IO call — a bug, a broker's metrics recorder): what
            // the lock guards may be half changed. The shard stops before
            // the lock lets go, or another thread's append could take it in
            // between and be acknowledged behind the half-done change (the
            // operation's own latch runs only after its closure unwound).
            self.shared.dir.io.latch_panic();
        }
        self.shared.published.store(&self.g);
    }
}

impl Locked<'_> {
    /// Waits on `cv`, letting the lock go meanwhile.
    pub(crate) fn wait(&mut self, cv: &Condvar) {
        self.shared.published.store(&self.g);
        cv.wait(&mut self.g);
    }

    /// Waits on `cv` at most `timeout`, letting the lock go meanwhile.
    pub(crate) fn wait_for(&mut self, cv: &Condvar, timeout: std::time::Duration) {
        self.shared.published.store(&self.g);
        cv.wait_for(&mut self.g, timeout);
    }
}

impl Shared {
    pub(crate) fn lock(&self) -> Locked<'_> {
        self.held(self.inner.lock())
    }

    /// The lock within `patience`, or `None`.
    pub(crate) fn lock_within(&self, patience: std::time::Duration) -> Option<Locked<'_>> {
        self.inner.try_lock_for(patience).map(|g| self.held(g))
    }

    /// The lock if it is free now, or `None`.
    pub(crate) fn try_lock(&self) -> Option<Locked<'_>> {
        self.inner.try_lock().map(|g| self.held(g))
    }

    fn held<'a>(&'a self, g: MutexGuard<'a, Inner>) -> Locked<'a> {
        Locked { shared: self, g }
    }

    /// Waits, on the shard's lock `g`, while a sync in flight is flushing a
    /// segment `doomed` says the caller will remove. The sync names its
    /// segment by path and runs outside the lock: removing that file under
    /// it fails the sync ("no such file") and stops the shard, a fail-stop
    /// no disk caused. A cut inside the segment being synced does not wait
    /// (the sync's own check of the truncations claims nothing it cut).
    ///
    /// Says whether it waited: the lock was let go meanwhile, so what the
    /// caller decided before may no longer hold.
    pub(crate) fn spare_flushing(&self, g: &mut Locked<'_>, doomed: impl Fn(&Inner, u64) -> bool) -> bool {
        let mut waited = false;
        while let Some(id) = g.syncing {
            if !doomed(g, id) {
                break;
            }
            g.wait(&self.synced);
            waited = true;
        }
        waited
    }

    pub(crate) fn writable(&self) -> Result<(), EngineError> {
        if self.read_only {
            return Err(EngineError::ReadOnly);
        }
        self.dir.io.check()
    }
}

/// One shard directory. `Shard` is `Sync`: share it between threads with an `Arc`.
#[derive(Debug)]
pub struct Shard {
    shared: Arc<Shared>,
    flusher: Mutex<Option<JoinHandle<()>>>,
    /// The writer's lock, held until the shard is closed or dropped (`None`
    /// when read-only or closed), verified before every acknowledgement.
    pub(crate) writer_lock: std::sync::RwLock<Option<LockGuard>>,
    /// When the lock was last checked (appends that need no sync reuse a recent check).
    pub(crate) lock_checked: writer::LockChecked,
}

/// Microseconds since the Unix epoch.
#[must_use]
pub fn now_micros() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

impl Shard {
    /// The directory of `key` under `root`.
    #[must_use]
    pub fn dir_of(root: &Path, key: &ShardKey<'_>) -> PathBuf {
        root.join(key.dir_name())
    }

    /// Opens (creating if needed) the shard `key` under `root` for writing.
    /// See [`Shard::open_dir`].
    ///
    /// # Errors
    /// See [`Shard::open_dir`].
    pub fn open(io: Arc<dyn Io>, root: &Path, key: &ShardKey<'_>, config: Config) -> Result<(Self, Recovery), EngineError> {
        Self::open_dir(io, &Self::dir_of(root, key), config)
    }

    /// Opens the shard in `dir` for writing: creates it (and a missing root)
    /// durably, takes the writer's lock for the life of the handle (failing
    /// at once with `Locked` when another writer holds it, unless
    /// `config.wait_for_lock`), then recovers as the codec's plan says.
    ///
    /// # Errors
    /// `Locked`; `NotRegular`; IO failures; damage recovery may not repair
    /// (`Corrupt`, with its full site).
    pub fn open_dir(io: Arc<dyn Io>, dir: &Path, config: Config) -> Result<(Self, Recovery), EngineError> {
        let shard_dir = ShardDir::new(io, dir);
        shard_dir.create()?;
        let lock = shard_dir.lock(config.wait_for_lock)?;
        let recovered = recovery::recover(&shard_dir, &config, recovery::Mode::Write)?;
        // What recovery found is what the next appends build on: make it
        // durable first — the newest segment's bytes and the directory's
        // names. A writer that stopped between a write and its fsync, or
        // between a rename or remove and its directory fsync, leaves what a
        // power cut would undo (records a new generation would start after;
        // segments a truncation removed, back past records acknowledged
        // since; an epochs file).
        if let Some(newest) = recovered.segments.last() {
            shard_dir.io.sync_data(&shard_dir.log(newest.id))?;
        }
        shard_dir.io.sync_dir(&shard_dir.path)?;
        Self::assemble(shard_dir, config, false, Some(lock), recovered)
    }

    /// Opens the shard in `dir` for reading only: takes no lock, creates and
    /// changes nothing. Recovery's plan is applied in memory only (a
    /// repairable torn tail is simply not read). A live writer is tolerated:
    /// bytes past its last sync may be a record in flight, not damage.
    ///
    /// # Errors
    /// `NoShard` when there is no such directory; `NotRegular`; IO failures;
    /// damage recovery would not repair.
    pub fn open_read_only(io: Arc<dyn Io>, dir: &Path, config: Config) -> Result<(Self, Recovery), EngineError> {
        let shard_dir = ShardDir::new(io, dir);
        shard_dir.must_be_dir()?;
        let recovered = recovery::recover(&shard_dir, &config, recovery::Mode::ReadOnly)?;
        Self::assemble(shard_dir, config, true, None, recovered)
    }

    fn assemble(
        dir: ShardDir,
        config: Config,
        read_only: bool,
        lock: Option<LockGuard>,
        r: recovery::Recovered,
    ) -> Result<(Self, Recovery), EngineError> {
        let next_offset = r.next_offset;
        let active_len = r.segments.last().map_or(0, |s| s.len);
        let next_segment_id = r.next_segment_id;
        let interval = match config.durability {
            Durability::Interval { micros } if !read_only => Some(micros),
            _ => None,
        };
        let inner = Inner {
            segments: r.segments,
            next_offset,
            durable_next: next_offset,
            verified_next: next_offset,
            durable_len: active_len,
            visible_next: next_offset,
            visible_len: active_len,
            syncing: None,
            epochs: r.epochs,
            warnings: r.recovery.warnings.clone(),
            shutdown: false,
            next_segment_id,
            appends_since_sync: 0,
            truncations: 0,
            recent_cuts: std::collections::VecDeque::new(),
            unreadable: r.unreadable,
            encode_buf: Vec::new(),
            unwritten: Vec::new(),
            times: time::TimeIndexes::default(),
        };
        let shared = Arc::new(Shared {
            dir,
            config,
            read_only,
            inner: parking_lot::Mutex::new(inner),
            synced: Condvar::new(),
            flusher_wake: Condvar::new(),
            data_syncs: std::sync::atomic::AtomicU64::new(0),
            retention_held: std::sync::atomic::AtomicU64::new(0),
            published: published::Published::default(),
            opening: OPENINGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        });
        drop(shared.lock()); // publishes what the accessors answer
        let flusher = match interval {
            Some(micros) => {
                let path = shared.dir.path.clone();
                Some(
                    writer::spawn_flusher(Arc::clone(&shared), micros)
                        .map_err(|e| EngineError::io(&path, "start the flusher thread", &e))?,
                )
            }
            None => None,
        };
        let lock_checked = writer::LockChecked::at(shared.dir.io.monotonic_nanos());
        Ok((Self { shared, flusher: Mutex::new(flusher), writer_lock: std::sync::RwLock::new(lock), lock_checked }, r.recovery))
    }

    /// The shard directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.shared.dir.path
    }

    /// Whether the shard was opened for reading only.
    #[must_use]
    pub fn is_read_only(&self) -> bool {
        self.shared.read_only
    }

    /// Things met while the shard was open that a person should know
    /// (recovery's warnings, index entries found off the record chain).
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        self.shared.lock().warnings.clone()
    }

    /// The first IO failure, once the shard stopped on one.
    #[must_use]
    pub fn failure(&self) -> Option<String> {
        self.shared.dir.io.failure().map(str::to_string)
    }

    /// The offset the next append gets (never waits for the shard's lock:
    /// the shard publishes it each time the lock is let go).
    #[must_use]
    pub fn next_offset(&self) -> u64 {
        self.shared.published.next_offset()
    }

    /// The oldest stored offset (never waits for the shard's lock).
    #[must_use]
    pub fn first_offset(&self) -> u64 {
        self.shared.published.first_offset()
    }

    /// The simulator's check that every change published what the
    /// accessors answer without the lock: the published answers against the
    /// shard's own state, read under its lock and compared in full (`Err`
    /// names what differs). Not for production use.
    ///
    /// # Errors
    /// A description of the first answer that differs.
    #[doc(hidden)]
    pub fn check_published(&self) -> Result<(), String> {
        let g = self.shared.lock();
        self.shared.published.check(&g)
    }

    /// Every segment, oldest first (the active one last), as of the shard's
    /// last change (never waits for the shard's lock).
    #[must_use]
    pub fn segments(&self) -> Vec<SegmentInfo> {
        self.shared.published.segments()
    }

    /// Makes everything written durable now (the interval flusher's work, on demand).
    ///
    /// # Errors
    /// `FailStopped` or the IO failure that stopped the shard.
    pub fn sync(&self) -> Result<(), EngineError> {
        let shared = &*self.shared;
        shared.dir.io.mutation(|| {
            let g = shared.lock();
            let end = g.next_offset;
            writer::sync_through(shared, g, end).map(drop)
        })
    }
}

impl Shard {
    /// Stops the interval flusher (if any) and waits for it.
    fn stop_flusher(&self) {
        self.shared.lock().shutdown = true;
        self.shared.flusher_wake.notify_all();
        let flusher = self.flusher.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        if let Some(h) = flusher {
            let _ = h.join();
        }
    }

    /// Whether [`Shard::close`] ran (on this handle or a clone).
    #[must_use]
    pub fn is_closed(&self) -> bool {
        self.shared.dir.io.is_closed()
    }

    /// Closes the shard while other holders may still share it: stops the
    /// flusher, makes everything written durable, then — under the shard's
    /// lock, so no write slips in between — syncs what was written meanwhile,
    /// marks the shard closed and releases the writer's lock (another handle,
    /// or process, may open the shard at once). Every later call through
    /// this handle answers [`EngineError::Closed`]. Closing again does nothing.
    ///
    /// # Errors
    /// `FailStopped` or the IO failure of the last sync (the lock is released
    /// all the same).
    pub fn close(&self) -> Result<(), EngineError> {
        let shared = &*self.shared;
        if shared.dir.io.is_closed() {
            return Ok(());
        }
        self.stop_flusher();
        // However this ends — the result below, or a panic in either sync
        // (which stops the shard) — the shard ends closed and its lock goes.
        let _closes = ClosesOnExit(self);
        // A stopped shard cannot flush one last time: say so (its lock goes all the same).
        let stopped = shared.dir.io.check();
        let writable = !shared.read_only && stopped.is_ok();
        let mut result = if writable { self.sync() } else { stopped };
        let mut g = shared.lock();
        if result.is_ok() && writable && g.durable_next < g.next_offset {
            // Written after the sync above: the active segment holds it
            // (a roll syncs the segment it leaves).
            if let Some(seg) = g.segments.last() {
                let id = seg.id;
                result = shared.dir.io.mutation(|| {
                    writer::write_out(shared, &mut g)?;
                    shared.dir.io.sync_data(&shared.dir.log(id))?;
                    // Durable now, and said so: the accessors report the
                    // state at close.
                    g.durable_next = g.next_offset;
                    g.durable_len = g.segments.last().map_or(g.durable_len, |s| s.len);
                    Ok(())
                });
            }
        }
        // Under the shard's lock: no write slips in between.
        shared.dir.io.close(&shared.dir.path);
        drop(g);
        result
    }
}

/// The end of [`Shard::close`], however it ends: marks the shard closed
/// (again, if it already is: a no-op), wakes whoever waits for a sync, and
/// releases the writer's lock.
struct ClosesOnExit<'a>(&'a Shard);

impl Drop for ClosesOnExit<'_> {
    fn drop(&mut self) {
        let shard = self.0;
        shard.shared.dir.io.close(&shard.shared.dir.path);
        shard.shared.synced.notify_all();
        drop(shard.writer_lock.write().unwrap_or_else(std::sync::PoisonError::into_inner).take());
    }
}

impl Drop for Shard {
    fn drop(&mut self) {
        self.stop_flusher();
        if !self.shared.read_only && self.shared.dir.io.failure().is_none() && !self.shared.dir.io.is_closed() {
            // A clean close leaves nothing acknowledged unsynced (Interval).
            let _ = self.sync();
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::io::sim::SimIo;

    /// A panic while the shard's lock is held, outside any mutating
    /// operation's latch, stops the shard before the lock lets go: what the
    /// lock guards may be half changed, and an operation's own latch runs
    /// only once its closure (which took the lock) has unwound — another
    /// thread's append could take the lock in between.
    #[test]
    fn a_panic_under_the_shards_lock_stops_the_shard_before_the_lock_lets_go() {
        let sim = Arc::new(SimIo::new());
        let config = Config { durability: Durability::NoSync, ..Config::default() };
        let (shard, _) = Shard::open_dir(sim as Arc<dyn Io>, Path::new("/sim/locked-panic"), config).unwrap();
        shard.append(&[b"before"]).unwrap();
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut g = shard.shared.lock();
            g.next_offset += 1; // half of a change
            panic!("a bug under the lock");
        }));
        assert!(unwound.is_err());
        let after = shard.append(&[b"after"]);
        assert!(matches!(after, Err(EngineError::FailStopped { .. })), "{after:?}");
        assert!(shard.failure().is_some_and(|cause| cause.contains("panic")));
    }
}
