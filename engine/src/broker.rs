//! A drop-in for the broker's durable log: the same async surface as the
//! Felix broker's own `felix-storage` crate (`AppendOnlyLog`, `LogProvider`,
//! `DiskLog`, `DiskLogProvider`, `FsyncMode`, `LogConfig`, the two-phase
//! `append_pending` + `commit`) over this engine's [`Shard`]. Behind the
//! `async` feature (tokio). `docs/broker.md` maps every item to upstream's.
//!
//! Where the blocking happens: an append writes inline (a write into the page
//! cache), unless it rolls the segment or the shard's lock stays taken past
//! `shard::INLINE_LOCK_PATIENCE` (held through another task's syncs); rolls,
//! reads, truncation, sealing, opens and those waits run on tokio's blocking
//! pool (`spawn_blocking`). An `OnCommit` flush runs
//! on a flush leader's blocking thread, never inside a task's poll: a waiter
//! only awaits, so a timeout or an abort ends its wait at once, and no
//! runtime, `LocalSet` or worker is held for an `fdatasync`. Group commit:
//! many appends in flight share one flush. The periodic policy's flusher is
//! the engine's own thread (no timer task), so it works whichever runtime
//! calls in.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use felix_codec::format::epochs::Epoch;

use crate::error::EngineError;
use crate::io::{Io, OsIo};
use crate::metrics_names as names;
use crate::shard::{Append, Config, Durability, Pending, SegmentInfo, Shard};

/// Offsets are `u64`.
pub type Offset = u64;
/// Segment ids are `u64`.
pub type SegmentId = u64;
/// Upstream's error type: the engine's [`EngineError`], which has upstream's
/// variants a broker matches on (`InvalidRange`, `InvalidConfig(_)`,
/// `Trimmed { requested, oldest }`) and the engine's own (`docs/broker.md`).
pub type StorageError = EngineError;
/// The facade's result type.
pub type Result<T> = std::result::Result<T, StorageError>;
/// Length of a segment's header in bytes (upstream's `segment::SEGMENT_HEADER_LEN`, a `u64`).
pub const SEGMENT_HEADER_LEN: u64 = felix_codec::format::segment_header::SEGMENT_HEADER_LEN as u64;
/// Length of a record's header in bytes (upstream's `segment::RECORD_HEADER_LEN`, a `u64`).
pub const RECORD_HEADER_LEN: u64 = felix_codec::format::record::RECORD_HEADER_LEN as u64;
pub use crate::shard::now_micros;
/// A boxed, sendable future (upstream's `BoxFuture`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A shard's key (owned).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ShardKey {
    /// Tenant.
    pub tenant: String,
    /// Namespace.
    pub namespace: String,
    /// Stream.
    pub stream: String,
    /// Shard number.
    pub shard: u32,
}

impl ShardKey {
    fn codec(&self) -> felix_codec::format::shard_name::ShardKey<'_> {
        felix_codec::format::shard_name::ShardKey {
            tenant: &self.tenant,
            namespace: &self.namespace,
            stream: &self.stream,
            shard: self.shard,
        }
    }

    /// `tenant/namespace/stream/shard`, for messages.
    #[must_use]
    pub fn label(&self) -> String {
        format!("{}/{}/{}/{}", self.tenant, self.namespace, self.stream, self.shard)
    }
}

/// A record to append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppendRecord {
    /// Its payload.
    pub payload: Bytes,
    /// Its publish time.
    pub timestamp_micros: u64,
}

/// A record read back, its checksum verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// Its offset.
    pub offset: Offset,
    /// Its publish time.
    pub timestamp_micros: u64,
    /// Its stored checksum.
    pub checksum: u32,
    /// Its payload.
    pub payload: Bytes,
}

/// When an append is acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsyncMode {
    /// Once written; appends are never fsynced (the OS writes back).
    None,
    /// Once written; a flusher makes them durable within `interval`.
    Periodic {
        /// The durability window.
        interval: Duration,
    },
    /// Once the fsync covering it returned.
    OnCommit,
}

/// How logs are stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogConfig {
    /// Roll to a new segment past this size.
    pub segment_size_bytes: u64,
    /// An index entry per this many bytes.
    pub index_spacing_bytes: u64,
    /// When appends are acknowledged.
    pub fsync_mode: FsyncMode,
    /// Most records one `read_range` returns.
    pub max_records_per_read: usize,
    /// Reserve a segment's blocks when it is created (`fallocate`, keep size).
    pub preallocate_segments: bool,
    /// Let recovery cut a damaged tail that is rot, not a torn write.
    pub repair_checksum_tail: bool,
    /// Delete whole oldest segments past this many bytes.
    pub retention_bytes: Option<u64>,
    /// Delete whole oldest segments whose newest record is older.
    pub retention_age: Option<Duration>,
    /// How often retention runs (its own timer, never on a publish).
    pub retention_check_interval: Duration,
    /// Upstream's background rollover threshold, a percentage of
    /// `segment_size_bytes` (100, the default, disables it). Accepted, and
    /// its promise kept: we roll inline, so a segment never exceeds
    /// `segment_size_bytes` whatever this says (`docs/broker.md`).
    pub rollover_threshold_percent: u8,
    /// How far past `segment_size_bytes` upstream lets a segment grow while
    /// a background roll prepares its successor (100). A bound we never
    /// come near: our segments do not overshoot.
    pub max_overshoot_percent: u8,
    /// Verify every record of every segment when the log is opened (off):
    /// open fails with `Corrupt`, naming the file and place, on the first
    /// damaged record. Off, the newest segment is scanned in full and every
    /// read verifies what it returns, as upstream's.
    pub verify_all_on_open: bool,
    /// Wait for another process's writer to let go of a shard instead of
    /// failing at once (ours; upstream has no cross-process lock).
    pub wait_for_lock: bool,
}

impl Default for LogConfig {
    fn default() -> Self {
        Self {
            segment_size_bytes: 256 << 20,
            index_spacing_bytes: felix_codec::format::index::DEFAULT_INDEX_SPACING_BYTES,
            fsync_mode: FsyncMode::OnCommit,
            max_records_per_read: 10_000,
            preallocate_segments: false,
            repair_checksum_tail: false,
            retention_bytes: None,
            retention_age: None,
            retention_check_interval: Duration::from_secs(60),
            rollover_threshold_percent: 100,
            max_overshoot_percent: 100,
            verify_all_on_open: false,
            wait_for_lock: false,
        }
    }
}

fn invalid(what: &'static str) -> EngineError {
    EngineError::InvalidConfig(what)
}

impl LogConfig {
    /// Rejects configurations that cannot produce a working log.
    ///
    /// # Errors
    /// `InvalidConfig`, saying which setting and why.
    pub fn validate(&self) -> Result<()> {
        let minimum = SEGMENT_HEADER_LEN + RECORD_HEADER_LEN;
        if self.segment_size_bytes < minimum {
            return Err(invalid("segment_size_bytes is too small to hold a single record"));
        }
        if self.index_spacing_bytes == 0 {
            return Err(invalid("index_spacing_bytes must be greater than zero"));
        }
        if self.max_records_per_read == 0 {
            return Err(invalid("max_records_per_read must be greater than zero"));
        }
        if self.retention_bytes == Some(0) {
            return Err(invalid("retention_bytes must be greater than zero; omit it to disable retention"));
        }
        if self.retention_age == Some(Duration::ZERO) {
            return Err(invalid("retention_age must be greater than zero; omit it to disable retention"));
        }
        if (self.retention_bytes.is_some() || self.retention_age.is_some()) && self.retention_check_interval.is_zero() {
            return Err(invalid("retention_check_interval must be greater than zero"));
        }
        if matches!(self.fsync_mode, FsyncMode::Periodic { interval } if interval.is_zero()) {
            return Err(invalid("periodic fsync interval must be greater than zero"));
        }
        Ok(())
    }

    /// Longest window during which an acknowledged record may not be durable
    /// (`None`: unbounded, the OS decides). With `Periodic` the engine's bound
    /// is the interval plus the duration of one `fdatasync`.
    #[must_use]
    pub fn durability_window(&self) -> Option<Duration> {
        match self.fsync_mode {
            FsyncMode::None => None,
            FsyncMode::Periodic { interval } => Some(interval),
            FsyncMode::OnCommit => Some(Duration::ZERO),
        }
    }

    fn engine(&self) -> Config {
        let durability = match self.fsync_mode {
            FsyncMode::None => Durability::NoSync,
            FsyncMode::Periodic { interval } => Durability::Interval { micros: u64::try_from(interval.as_micros()).unwrap_or(u64::MAX) },
            FsyncMode::OnCommit => Durability::EveryBatch,
        };
        Config {
            segment_size_bytes: self.segment_size_bytes,
            index_spacing_bytes: self.index_spacing_bytes,
            retention_bytes: self.retention_bytes,
            retention_age_micros: self.retention_age.map(|a| u64::try_from(a.as_micros()).unwrap_or(u64::MAX)),
            durability,
            repair_checksum_tail: self.repair_checksum_tail,
            wait_for_lock: self.wait_for_lock,
            preallocate_segments: self.preallocate_segments,
        }
    }
}

/// The offsets an append got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendResult {
    /// The first.
    pub first_offset: Offset,
    /// The last.
    pub last_offset: Offset,
}

/// One segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentDescriptor {
    /// Its id.
    pub id: SegmentId,
    /// Its first offset.
    pub base_offset: Offset,
    /// Its last offset (its base offset when empty).
    pub last_offset: Offset,
    /// Its length.
    pub size_bytes: u64,
}

impl From<SegmentInfo> for SegmentDescriptor {
    fn from(s: SegmentInfo) -> Self {
        Self {
            id: s.id,
            base_offset: s.base_offset,
            last_offset: s.next_offset.saturating_sub(1).max(s.base_offset),
            size_bytes: s.size_bytes,
        }
    }
}

/// Where a read starts and how much it may return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadRange {
    /// The first offset.
    pub start: Offset,
    /// About this many payload bytes (always at least one record).
    pub max_bytes: usize,
}

/// A segment made immutable, with a checksum of its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SealedSegment {
    /// The segment.
    pub descriptor: SegmentDescriptor,
    /// Upstream's: the CRC-32 (crc32fast) of the whole segment file, widened
    /// to `u64`, so a sealed segment verifies the same in both.
    pub checksum: u64,
}

/// What one retention pass reclaimed (upstream's `RetentionOutcome`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RetentionOutcome {
    /// Whole segments deleted.
    pub segments_deleted: usize,
    /// Their bytes.
    pub bytes_reclaimed: u64,
    /// The oldest offset still readable after the pass.
    pub base_offset: Offset,
}

/// An append-only log: upstream's trait, method for method, plus three
/// provided methods of ours (the generations, from the spec's epochs).
pub trait AppendOnlyLog: Send + Sync {
    /// Appends a batch; returns its offsets once the fsync policy is met.
    fn append(&self, records: &[AppendRecord]) -> BoxFuture<'_, Result<AppendResult>>;
    /// Reads from `range.start`.
    fn read_range(&self, range: ReadRange) -> BoxFuture<'_, Result<Vec<LogRecord>>>;
    /// The offset the next append gets.
    fn tail_offset(&self) -> BoxFuture<'_, Result<Offset>>;
    /// Drops every record at or after `offset`.
    fn truncate(&self, offset: Offset) -> BoxFuture<'_, Result<()>>;
    /// Ours, beyond upstream's trait (the spec's epochs): notes that
    /// `generation` begins at `start_offset`; whether it was recorded.
    ///
    /// # Errors
    /// As [`Shard::record_generation`].
    fn record_generation(&self, _generation: u64, _start_offset: Offset) -> Result<bool> {
        Ok(false)
    }
    /// Ours, beyond upstream's trait: the generation history, oldest first.
    fn generations(&self) -> Vec<Epoch> {
        Vec::new()
    }
    /// Ours, beyond upstream's trait: where `generation` stops given
    /// `tail`; `None` when it is not in the history.
    fn generation_end(&self, _generation: u64, _tail: Offset) -> Option<Offset> {
        None
    }
    /// Makes the active segment immutable and says what it holds.
    fn seal(&self) -> BoxFuture<'_, Result<SealedSegment>>;
}

/// Opens logs by shard key.
pub trait LogProvider: Send + Sync {
    /// The log type.
    type Log: AppendOnlyLog;
    /// Opens (or returns the open) log of `shard`.
    fn open(&self, shard: &ShardKey) -> BoxFuture<'_, Result<Self::Log>>;
}

/// Reads every record of every segment once (each verified by the strict
/// reader), so damage anywhere fails the open instead of a later read.
fn verify_all(shard: &Shard) -> Result<()> {
    let mut at = shard.first_offset();
    let end = shard.next_offset();
    while at < end {
        let Some(last) = shard.read_bounded(at, 1 << 20, usize::MAX)?.last().map(|r| r.offset) else { break };
        at = last + 1;
    }
    Ok(())
}

/// One retention pass on the blocking pool; a failure is counted.
async fn sweep(inner: Arc<LogInner>) -> Result<RetentionOutcome> {
    if inner.config.retention_bytes.is_none() && inner.config.retention_age.is_none() {
        return Ok(RetentionOutcome { base_offset: inner.shard.first_offset(), ..RetentionOutcome::default() });
    }
    let pass = blocking(move || inner.shard.apply_retention(now_micros())).await;
    match pass {
        Ok(pass) => Ok(RetentionOutcome {
            segments_deleted: pass.removed.len(),
            bytes_reclaimed: pass.bytes_reclaimed,
            base_offset: pass.first_offset,
        }),
        Err(e) => {
            metrics::counter!(names::RETENTION_FAILURES_TOTAL).increment(1);
            Err(e)
        }
    }
}

/// The Tokio runtime the caller runs on, or the error that says it needs one
/// (polled by another executor, the facade answers instead of panicking).
fn runtime() -> Result<tokio::runtime::Handle> {
    tokio::runtime::Handle::try_current().map_err(|_| invalid(NO_RUNTIME))
}

const NO_RUNTIME: &str = "the broker facade runs its blocking work on a Tokio runtime: poll it from a task of one";

/// Runs blocking engine work on tokio's blocking pool.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    runtime()?.spawn_blocking(f).await.map_err(|e| EngineError::Io { path: PathBuf::new(), op: "blocking task", message: e.to_string() })?
}

struct LogInner {
    label: String,
    config: LogConfig,
    shard: Shard,
    retention: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// A group commit's flush is in flight.
    flushing: AtomicBool,
    /// Flushes ended (the chain's count: a woken waiter passes the wake on
    /// only when one ended since it began to wait).
    flush_count: AtomicU64,
    /// The chain of wake-ups: a flush's end wakes the first waiter, and each
    /// woken waiter wakes the next, from its own worker.
    chain: tokio::sync::Notify,
    /// Appends begun: a flush's leader waits while this still moves.
    writes: AtomicU64,
    /// `writes` when the last flush started.
    writes_at_flush: AtomicU64,
    /// The write that ends the flush leader's gathering wakes it (`u64::MAX`: none).
    gather_until: AtomicU64,
    /// The flush leader's thread, while there is one.
    leader: Mutex<Option<std::thread::Thread>>,
    /// How long the last flush took, in microseconds (bounds a lone
    /// waiter's spin, [`DiskLog::spin_while_alone`]).
    last_flush_us: AtomicU64,
    /// How many writes the last flush covered (`u64::MAX` before the
    /// first): one says the log has a lone publisher.
    last_covered: AtomicU64,
    /// The number (in `writes`) of the write that completed the flush
    /// leader's last gathering (0: none yet): every publisher the leader
    /// waited for has written, so that write's waiter has no one to make way
    /// for and stays awake through the flush ([`DiskLog::spin_while_alone`]).
    /// A number, not an offset: offsets repeat after a truncation.
    closed_gather_by: AtomicU64,
}

/// The flush leader, on a blocking thread: flushes, wakes the waiters, and
/// while writes are left unsynced leads the next flush itself (no hand-off
/// to another thread). Before each next flush it gathers: it waits for as
/// many new writes as the last flush acknowledged — the publishers it woke,
/// writing their next batches — but never longer than that flush took, so
/// one `fdatasync` covers all of them, not half. Then it lets go, and wakes
/// the waiters once more so one of them leads if it came in as it left.
fn lead_flushes(inner: &LogInner) {
    *inner.leader.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(std::thread::current());
    // Lets go however this ends, a panic in the flush included: a leader
    // that never lets go strands every waiter.
    let _lets_go = LetGo(inner);
    loop {
        let at_start = inner.writes.load(Ordering::Acquire);
        let covered = at_start.saturating_sub(inner.writes_at_flush.swap(at_start, Ordering::AcqRel));
        let started = std::time::Instant::now();
        let flushed = inner.shard.sync_for_commit();
        let took = started.elapsed();
        inner.last_flush_us.store(u64::try_from(took.as_micros()).unwrap_or(u64::MAX), Ordering::Relaxed);
        inner.last_covered.store(covered, Ordering::Relaxed);
        let target = inner.writes.load(Ordering::Acquire).saturating_add(covered);
        inner.gather_until.store(target, Ordering::Release);
        wake_waiters(inner);
        if flushed.is_err() {
            break;
        }
        let now = std::time::Instant::now();
        let deadline = now + took.min(MAX_GATHER);
        // Briefly yield-spin first: a publisher's next write usually comes
        // within tens of microseconds, and waking a parked thread costs as
        // much again (an idle virtual CPU's wake-up, above all).
        let spin_until = now + SPIN_BEFORE_PARK.min(took);
        while inner.writes.load(Ordering::Acquire) < target {
            let now = std::time::Instant::now();
            if now < spin_until {
                std::thread::yield_now();
                continue;
            }
            match deadline.checked_duration_since(now) {
                Some(left) if !left.is_zero() => std::thread::park_timeout(left),
                _ => break,
            }
        }
        inner.gather_until.store(u64::MAX, Ordering::Release);
        if inner.shard.durable_offset() >= inner.shard.next_offset() {
            break;
        }
    }
}

/// The flush leader letting go: no leader, no flush, and the waiters woken
/// so one of them leads if anything is left.
struct LetGo<'a>(&'a LogInner);

impl Drop for LetGo<'_> {
    fn drop(&mut self) {
        let inner = self.0;
        *inner.leader.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        inner.flushing.store(false, Ordering::Release);
        wake_waiters(inner);
    }
}

/// Wakes the tasks waiting for a flush, as a chain: the first waiter only,
/// which wakes the next from its own worker before it looks whether the
/// flush covered it, and so on ([`DiskLog::commit`]) — each wake goes to the
/// waking worker's own queue and the publisher's next append follows on that
/// worker, with no thread hop, as upstream's mutex hand-off does.
fn wake_waiters(inner: &LogInner) {
    inner.flush_count.fetch_add(1, Ordering::AcqRel);
    inner.chain.notify_one();
}

/// The turn to spin through a flush ([`DiskLog::spin_while_alone`]): one
/// waiter in the whole process at a time, so however many shards have a
/// lone publisher or a gathering's closer, at most one worker is kept busy
/// waiting.
struct SpinTurn;

static SPINNING: AtomicBool = AtomicBool::new(false);

impl SpinTurn {
    /// The turn, if no one holds it and the caller runs on a multi-threaded
    /// runtime with another worker (a spin on a current-thread runtime would
    /// stop everything else on it, its timers included).
    fn take() -> Option<Self> {
        let multi = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread && h.metrics().num_workers() >= 2);
        (multi && !SPINNING.swap(true, Ordering::AcqRel)).then_some(Self)
    }
}

impl Drop for SpinTurn {
    fn drop(&mut self) {
        SPINNING.store(false, Ordering::Release);
    }
}

/// Why a waiter has no one to make way for ([`DiskLog::alone`]).
#[derive(Clone, Copy)]
enum Alone {
    /// The last flush covered one write: a lone publisher.
    Lone,
    /// Its write completed the flush leader's gathering.
    LastWriter,
}

impl Alone {
    /// The `waiter` label of [`names::FLUSH_SPINS_TOTAL`].
    fn label(self) -> &'static str {
        match self {
            Self::Lone => "lone",
            Self::LastWriter => "last_writer",
        }
    }
}

/// The shortest and longest a waiter spins through a flush: twice the
/// last flush, within these; past it the waiter sleeps as any other does.
const SPIN_THROUGH_FLUSH_US: (u64, u64) = (100, 2_000);

/// Most scheduler rounds a task that starts a flush leader lets others write first.
const GATHER_ROUNDS: usize = 8;

/// How long a gathering flush leader yield-spins before it parks.
const SPIN_BEFORE_PARK: std::time::Duration = std::time::Duration::from_micros(50);

/// The longest a flush leader gathers writes before its next flush.
const MAX_GATHER: std::time::Duration = std::time::Duration::from_millis(2);

impl LogInner {
    /// Counts a write and returns its number (from 1); the one the
    /// gathering flush leader waits for wakes it. Only `OnCommit` has a
    /// leader: the other policies count nothing (a counter two workers take
    /// turns on costs every append) and every write is number 0.
    fn note_write(&self) -> u64 {
        if self.config.fsync_mode != FsyncMode::OnCommit {
            return 0;
        }
        let n = self.writes.fetch_add(1, Ordering::AcqRel).wrapping_add(1);
        if n == self.gather_until.load(Ordering::Acquire) {
            self.closed_gather_by.store(n, Ordering::Release);
            if let Some(leader) = self.leader.lock().unwrap_or_else(std::sync::PoisonError::into_inner).as_ref() {
                leader.unpark();
            }
        }
        n
    }
}

/// The engine's view of a batch (borrowed: nothing is copied).
fn engine_batch(records: &[AppendRecord]) -> Vec<Append<'_>> {
    records.iter().map(|r| Append { payload: &r.payload, timestamp_micros: Some(r.timestamp_micros) }).collect()
}

/// A durable log for one shard: cheap to clone, every clone the same log.
#[derive(Clone)]
pub struct DiskLog {
    inner: Arc<LogInner>,
}

impl std::fmt::Debug for DiskLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskLog")
            .field("label", &self.inner.label)
            .field("fsync_mode", &self.inner.config.fsync_mode)
            .finish_non_exhaustive()
    }
}

/// A batch written and given offsets, not yet known durable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingAppend {
    /// Its offsets.
    pub result: AppendResult,
    pending: Pending,
    /// Its number among the log's `OnCommit` writes (0: none counted).
    write: u64,
}

impl PendingAppend {
    fn new(pending: Pending) -> Self {
        let result = AppendResult { first_offset: pending.offsets.start, last_offset: pending.offsets.end.saturating_sub(1) };
        Self { result, pending, write: 0 }
    }

    /// The first offset.
    #[must_use]
    pub fn first_offset(&self) -> Offset {
        self.result.first_offset
    }
    /// The last offset.
    #[must_use]
    pub fn last_offset(&self) -> Offset {
        self.result.last_offset
    }
}

impl DiskLog {
    /// Opens (creating and recovering) the log in `dir`, taking its writer's
    /// lock for the life of the last clone.
    ///
    /// # Errors
    /// An invalid configuration; everything [`Shard::open_dir`] refuses.
    pub fn open(dir: impl Into<PathBuf>, label: impl Into<String>, config: LogConfig) -> Result<Self> {
        Self::open_with_io(Arc::new(OsIo::new()), dir, label, config)
    }

    /// As [`DiskLog::open`], through `io` (the crash tests' simulated disk).
    ///
    /// # Errors
    /// As [`DiskLog::open`].
    pub fn open_with_io(io: Arc<dyn Io>, dir: impl Into<PathBuf>, label: impl Into<String>, config: LogConfig) -> Result<Self> {
        config.validate()?;
        let retains = config.retention_bytes.is_some() || config.retention_age.is_some();
        let runtime = tokio::runtime::Handle::try_current();
        if retains && runtime.is_err() {
            // A retention bound that never runs is a full disk later: refuse.
            return Err(invalid(
                "retention needs a Tokio runtime; open the log from async code or leave retention_bytes and retention_age unset",
            ));
        }
        let (shard, _) = Shard::open_dir(io, &dir.into(), config.engine())?;
        if config.verify_all_on_open {
            verify_all(&shard)?;
        }
        let inner = Arc::new(LogInner {
            label: label.into(),
            config,
            shard,
            retention: Mutex::new(None),
            flushing: AtomicBool::new(false),
            flush_count: AtomicU64::new(0),
            chain: tokio::sync::Notify::new(),
            writes: AtomicU64::new(0),
            writes_at_flush: AtomicU64::new(0),
            gather_until: AtomicU64::new(u64::MAX),
            leader: Mutex::new(None),
            last_flush_us: AtomicU64::new(0),
            last_covered: AtomicU64::new(u64::MAX),
            closed_gather_by: AtomicU64::new(0),
        });
        if let (true, Ok(runtime)) = (retains, runtime) {
            let weak = Arc::downgrade(&inner);
            let every = inner.config.retention_check_interval;
            let task = runtime.spawn(async move {
                let mut tick = tokio::time::interval(every);
                // A stall does not queue a burst of passes; the first tick is
                // at once and skipped: nothing is deleted before the caller
                // has read anything (upstream's rule).
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                tick.tick().await;
                loop {
                    tick.tick().await;
                    let Some(inner) = weak.upgrade() else { return };
                    // A failed pass is counted (`retention_failures_total`) and
                    // the next tick retries; one that stopped the shard
                    // (a failed fsync) answers every later call anyway.
                    let _ = sweep(inner).await;
                }
            });
            *inner.retention.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(task);
        }
        Ok(Self { inner })
    }

    /// The shard's name, for messages.
    #[must_use]
    pub fn label(&self) -> &str {
        &self.inner.label
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &LogConfig {
        &self.inner.config
    }

    /// The engine's shard underneath.
    #[must_use]
    pub fn shard(&self) -> &Shard {
        &self.inner.shard
    }

    /// The oldest readable offset.
    #[must_use]
    pub fn base_offset(&self) -> Offset {
        self.inner.shard.first_offset()
    }

    /// Everything below this offset survives a crash.
    #[must_use]
    pub fn durable_offset(&self) -> Offset {
        self.inner.shard.durable_offset()
    }

    /// Bytes written but not yet flushed (never waits for the shard's lock).
    #[must_use]
    pub fn unsynced_bytes(&self) -> u64 {
        self.inner.shard.unsynced_bytes()
    }

    /// Every segment, oldest first, as of the log's last change (never
    /// waits for the shard's lock).
    #[must_use]
    pub fn segments(&self) -> Vec<SegmentDescriptor> {
        self.inner.shard.segments().into_iter().map(SegmentDescriptor::from).collect()
    }

    /// Assigns offsets and writes `records` without waiting for durability
    /// (they hold their offsets from here, whatever the commit does).
    ///
    /// # Errors
    /// `InvalidRange` for an empty batch (nothing written); as [`Shard::write`].
    pub async fn append_pending(&self, records: &[AppendRecord]) -> Result<PendingAppend> {
        if records.is_empty() {
            return Err(EngineError::InvalidRange);
        }
        // A write into the page cache costs less than a hop to a blocking
        // thread: it runs inline unless it would roll the segment.
        let written = match self.inner.shard.write_unless_roll(&engine_batch(records))? {
            Some(pending) => PendingAppend::new(pending),
            None => {
                let inner = Arc::clone(&self.inner);
                let records = records.to_vec();
                blocking(move || inner.shard.write(&engine_batch(&records)).map(PendingAppend::new)).await?
            }
        };
        let written = PendingAppend { write: self.inner.note_write(), ..written };
        Ok(written)
    }

    /// Waits until `pending` meets the fsync policy (`OnCommit`: its flush,
    /// shared with every append written before it started).
    ///
    /// Group commit: when no flush is in flight, the first waiter starts one
    /// on a blocking thread, covering everything written so far; every other
    /// waiter sleeps as a task (no thread of its own) until a flush ends, and
    /// is acknowledged if that flush covered it, or starts the next. So one
    /// `fdatasync` and one check of the writer's lock serve every append
    /// written while the previous one ran. A lone publisher's waiter, and the
    /// one whose write completed the leader's gathering, stay awake through
    /// the flush instead ([`DiskLog::spin_while_alone`]).
    ///
    /// # Errors
    /// `FailStopped` or the IO failure that stopped the shard.
    pub async fn commit(&self, pending: &PendingAppend) -> Result<()> {
        if self.committed(&pending.pending).await? {
            return Ok(());
        }
        // One spin an append: a second (its flush still hung, a spare
        // notification passed on earlier making the first wait ready) would
        // only burn another 2 ms of a core, and yield once more.
        let mut may_spin = true;
        loop {
            // Waiting before looking: a flush that ends in between wakes this one.
            let seen = self.inner.flush_count.load(Ordering::Acquire);
            let notified = self.inner.chain.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.committed(&pending.pending).await? {
                return Ok(());
            }
            if !self.inner.flushing.load(Ordering::Acquire) {
                self.gather().await;
                if self.committed(&pending.pending).await? {
                    return Ok(());
                }
            }
            if !self.inner.flushing.load(Ordering::Acquire) {
                // Looked up before the mark is set: without a runtime no
                // leader could start, and a mark left set would strand
                // every waiter.
                let runtime = runtime()?;
                if !self.inner.flushing.swap(true, Ordering::AcqRel) {
                    let inner = Arc::clone(&self.inner);
                    // Not tied to this future: a cancelled append cannot
                    // strand the other waiters. A failed flush stops the
                    // shard, which every waiter's `try_commit` then reports.
                    runtime.spawn_blocking(move || lead_flushes(&inner));
                }
            }
            if let Some(waiter) = self.alone(pending.write).filter(|_| may_spin) {
                // Once an append, to the runtime first, while the flush runs:
                // a spin's flush usually ends inside it, so `notified` is
                // then ready and nothing here would return to the runtime
                // (`Notify` spends no coop budget) — a publisher appending
                // in a loop would hold its thread for the whole loop, its
                // `select!` and `timeout` branches, the worker's LIFO slot
                // and a `LocalSet`'s other tasks all stopped (`lone_spin`).
                // Yielded here, the turn costs nothing after the flush.
                may_spin = false;
                tokio::task::yield_now().await;
                self.spin_while_alone(seen, waiter);
            }
            notified.await;
            // The chain: pass the wake on (no await in between, so a
            // cancelled append cannot break it; a wake that reaches a
            // dropped waiter goes on to the next) — unless no flush ended
            // since this one began to wait: then every waiter behind it came
            // later still, and the next flush's end wakes them.
            if self.inner.flush_count.load(Ordering::Acquire) != seen {
                self.inner.chain.notify_one();
            }
            if self.committed(&pending.pending).await? {
                return Ok(());
            }
        }
    }

    /// A waiter with no one to make way for ([`DiskLog::alone`]: a lone
    /// publisher's, or the one whose write completed the leader's gathering)
    /// stays on its worker through the flush, yielding its core between
    /// looks, until the flush ends, another write comes or twice the last
    /// flush has passed ([`SPIN_THROUGH_FLUSH_US`]). The flush's end then
    /// finds a worker awake: no wake-up of a parked worker before the
    /// acknowledged publishers run again (a lone publisher's every append
    /// otherwise pays one, and its next write a thread hop). It still
    /// acknowledges only through [`DiskLog::committed`], after `notified`.
    /// A worker's core spent for a flush's length (`docs/broker.md`, "A lone
    /// publisher"), counted in [`names::FLUSH_SPINS_TOTAL`].
    fn spin_while_alone(&self, seen: u64, waiter: Alone) {
        let inner = &self.inner;
        let Some(_turn) = SpinTurn::take() else { return };
        metrics::counter!(names::FLUSH_SPINS_TOTAL, "waiter" => waiter.label()).increment(1);
        let (least, most) = SPIN_THROUGH_FLUSH_US;
        let budget = inner.last_flush_us.load(Ordering::Relaxed).saturating_mul(2).clamp(least, most);
        let until = std::time::Instant::now() + std::time::Duration::from_micros(budget);
        let writes = inner.writes.load(Ordering::Acquire);
        while inner.flush_count.load(Ordering::Acquire) == seen
            && inner.writes.load(Ordering::Acquire) == writes
            && std::time::Instant::now() < until
        {
            std::thread::yield_now();
        }
    }

    /// Whether this waiter has no one to make way for while a flush is in
    /// flight: a lone publisher's (the last flush covered one write), or the
    /// one whose write completed the leader's gathering (every publisher the
    /// leader waited for has written, and waits too).
    fn alone(&self, write: u64) -> Option<Alone> {
        if !self.inner.flushing.load(Ordering::Acquire) {
            None
        } else if self.inner.last_covered.load(Ordering::Relaxed) <= 1 {
            Some(Alone::Lone)
        } else if write != 0 && self.inner.closed_gather_by.load(Ordering::Acquire) == write {
            Some(Alone::LastWriter)
        } else {
            None
        }
    }

    /// Whether `pending` may be acknowledged now ([`Shard::try_commit`]),
    /// asked inline — unless the shard's lock stays taken past
    /// [`crate::shard::INLINE_LOCK_PATIENCE`] (a roll, a seal, a truncation
    /// or retention holds it through its syncs): then from a blocking thread.
    async fn committed(&self, pending: &Pending) -> Result<bool> {
        if let Some(answer) = self.inner.shard.try_commit_inline(pending)? {
            return Ok(answer);
        }
        let (inner, pending) = (Arc::clone(&self.inner), pending.clone());
        blocking(move || inner.shard.try_commit(&pending)).await
    }

    /// Before leading a flush: lets the tasks that are ready run first, for
    /// as long as they keep writing (at most [`GATHER_ROUNDS`] scheduler
    /// rounds). The publishers a flush just acknowledged write their next
    /// batches, and this flush covers them instead of the one after; alone,
    /// one yield finds nothing written and the flush starts at once.
    async fn gather(&self) {
        let mut seen = self.inner.writes.load(Ordering::Acquire);
        for _ in 0..GATHER_ROUNDS {
            tokio::task::yield_now().await;
            let now = self.inner.writes.load(Ordering::Acquire);
            if now == seen {
                return;
            }
            seen = now;
        }
    }

    /// Flushes now, whatever the policy.
    ///
    /// # Errors
    /// `FailStopped` or the IO failure that stopped the shard.
    pub async fn sync(&self) -> Result<()> {
        let inner = Arc::clone(&self.inner);
        blocking(move || inner.shard.sync()).await
    }

    /// Runs one retention pass now instead of waiting for the timer
    /// (upstream's): deletes whole oldest segments past `retention_bytes` or
    /// whose newest record is older than `retention_age`, never the active
    /// one. With no bound configured it deletes nothing. Nor while a read
    /// or a time seek that retention kept overtaking holds it off
    /// (docs/broker.md), up to twice `retention_bytes`: then it answers
    /// `segments_deleted: 0` (or what it deleted before the hold) even past
    /// the bound, and the next pass — the timer's or another call — deletes
    /// what the bound says.
    ///
    /// # Errors
    /// A segment that could not be unlinked (the log goes on; the next pass
    /// retries); a failed directory fsync (which stops the log, as every
    /// failed fsync does); `FailStopped`, `Closed`. Each failure counts in
    /// `felix_storage_retention_failures_total`.
    pub async fn enforce_retention_now(&self) -> Result<RetentionOutcome> {
        sweep(Arc::clone(&self.inner)).await
    }

    /// Ours, beyond upstream's log (Kafka's `offsetsForTimes`): the first
    /// offset whose record's publish time is at or after `timestamp_micros`
    /// — in offset order, so a producer clock that went backwards never
    /// hides a later match; `None` when no record reaches it. Answered from
    /// each segment's sparse time index and one interval's record headers
    /// (`Shard::offset_for_time`).
    ///
    /// # Errors
    /// As [`Shard::offset_for_time`]; `Closed` after shutdown.
    pub async fn offset_for_time(&self, timestamp_micros: u64) -> Result<Option<Offset>> {
        let inner = Arc::clone(&self.inner);
        blocking(move || inner.shard.offset_for_time(timestamp_micros)).await
    }

    /// Stops background work, flushes everything one last time and releases
    /// the shard's writer lock — even while clones of this log are alive, so
    /// the directory can be opened again at once. Every later append, read,
    /// truncation, seal, sync or retention pass on any clone answers
    /// `Closed` (the accessors report the state at shutdown); a second
    /// `shutdown` does nothing.
    ///
    /// # Errors
    /// As [`DiskLog::sync`] (the lock is released all the same).
    pub async fn shutdown(&self) -> Result<()> {
        if let Some(task) = self.inner.retention.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
            task.abort();
        }
        let inner = Arc::clone(&self.inner);
        blocking(move || inner.shard.close()).await
    }
}

impl AppendOnlyLog for DiskLog {
    fn append(&self, records: &[AppendRecord]) -> BoxFuture<'_, Result<AppendResult>> {
        let records = records.to_vec();
        Box::pin(async move {
            let started = std::time::Instant::now();
            let pending = self.append_pending(&records).await?;
            // Under `Periodic` and `None` the write acknowledged it (after
            // checking the writer's lock); only `OnCommit` waits for a flush.
            if self.inner.config.fsync_mode == FsyncMode::OnCommit {
                self.commit(&pending).await?;
            }
            metrics::histogram!(names::APPEND_DURATION_SECONDS).record(started.elapsed().as_secs_f64());
            Ok(pending.result)
        })
    }

    fn read_range(&self, range: ReadRange) -> BoxFuture<'_, Result<Vec<LogRecord>>> {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            blocking(move || {
                let max = inner.config.max_records_per_read;
                let records = inner.shard.read_bounded(range.start, range.max_bytes, max)?;
                Ok(records
                    .into_iter()
                    .map(|r| LogRecord { offset: r.offset, timestamp_micros: r.timestamp_micros, checksum: r.checksum, payload: r.payload })
                    .collect())
            })
            .await
        })
    }

    /// Never waits for the shard's lock (a roll's or a truncation's syncs
    /// hold it): the shard publishes its offsets after every change.
    fn tail_offset(&self) -> BoxFuture<'_, Result<Offset>> {
        Box::pin(async move { Ok(self.inner.shard.next_offset()) })
    }

    fn truncate(&self, offset: Offset) -> BoxFuture<'_, Result<()>> {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move { blocking(move || inner.shard.truncate_from(offset)).await })
    }

    fn record_generation(&self, generation: u64, start_offset: Offset) -> Result<bool> {
        self.inner.shard.record_generation(generation, start_offset)
    }

    fn generations(&self) -> Vec<Epoch> {
        self.inner.shard.epochs()
    }

    fn generation_end(&self, generation: u64, tail: Offset) -> Option<Offset> {
        crate::shard::replication::known_generation_end(&self.inner.shard.epochs(), tail, generation)
    }

    fn seal(&self) -> BoxFuture<'_, Result<SealedSegment>> {
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            blocking(move || {
                let (info, checksum) = inner.shard.seal()?;
                Ok(SealedSegment { descriptor: info.into(), checksum })
            })
            .await
        })
    }
}

/// Opens one [`DiskLog`] per shard under a root; repeated opens of a shard
/// return the same log (one writer per shard: the engine's lock enforces it
/// across processes too).
#[derive(Debug)]
pub struct DiskLogProvider {
    root: PathBuf,
    config: LogConfig,
    io: Arc<dyn Io>,
    open_logs: Arc<Mutex<HashMap<ShardKey, DiskLog>>>,
}

impl DiskLogProvider {
    /// A provider over `root` (created, durably, with the first shard).
    ///
    /// # Errors
    /// An invalid configuration.
    pub fn new(root: impl Into<PathBuf>, config: LogConfig) -> Result<Self> {
        Self::with_io(Arc::new(OsIo::new()), root, config)
    }

    /// As [`DiskLogProvider::new`], through `io`.
    ///
    /// # Errors
    /// An invalid configuration.
    pub fn with_io(io: Arc<dyn Io>, root: impl Into<PathBuf>, config: LogConfig) -> Result<Self> {
        config.validate()?;
        Ok(Self { root: root.into(), config, io, open_logs: Arc::new(Mutex::new(HashMap::new())) })
    }

    /// The root.
    #[must_use]
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The configuration every log gets.
    #[must_use]
    pub fn config(&self) -> &LogConfig {
        &self.config
    }

    /// Opens, or returns the open, log of `shard` — opened anew when the
    /// one it handed out was shut down (upstream's logs stay usable after
    /// theirs; ours release the shard's lock, so the provider opens it again).
    /// Blocking: it may wait for the shard's lock (`wait_for_lock`) and runs
    /// recovery; async code opens through [`LogProvider::open`], which runs
    /// it on the blocking pool.
    ///
    /// # Errors
    /// As [`DiskLog::open`].
    pub fn open_shard(&self, shard: &ShardKey) -> Result<DiskLog> {
        let dir = Shard::dir_of(&self.root, &shard.codec());
        open_cached(&self.open_logs, shard, || DiskLog::open_with_io(Arc::clone(&self.io), dir, shard.label(), self.config.clone()))
    }

    /// The shards open now.
    #[must_use]
    pub fn open_shards(&self) -> Vec<ShardKey> {
        self.open_logs.lock().unwrap_or_else(std::sync::PoisonError::into_inner).keys().cloned().collect()
    }

    /// Flushes and stops every open log; the first error, after trying them all.
    ///
    /// # Errors
    /// The first log's failure.
    pub async fn shutdown(&self) -> Result<()> {
        // The provider lets go of every log: once its callers drop theirs, the
        // shards' locks are released; a later open_shard opens (and recovers) anew.
        let logs: Vec<DiskLog> =
            self.open_logs.lock().unwrap_or_else(std::sync::PoisonError::into_inner).drain().map(|(_, log)| log).collect();
        let mut first = None;
        for log in logs {
            if let Err(e) = log.shutdown().await {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl LogProvider for DiskLogProvider {
    type Log = DiskLog;

    fn open(&self, shard: &ShardKey) -> BoxFuture<'_, Result<Self::Log>> {
        let shard = shard.clone();
        let (open_logs, io, config) = (Arc::clone(&self.open_logs), Arc::clone(&self.io), self.config.clone());
        let dir = Shard::dir_of(&self.root, &shard.codec());
        // On the blocking pool: an open may wait for the shard's lock and
        // recovers, neither of which may hold a runtime's worker.
        Box::pin(blocking(move || open_cached(&open_logs, &shard, || DiskLog::open_with_io(io, dir, shard.label(), config))))
    }
}

/// The provider's open log of `shard`, or the one `open` makes (also when
/// the cached one was shut down). The map stays locked through the open, so
/// one shard is never opened twice at once.
fn open_cached(open_logs: &Mutex<HashMap<ShardKey, DiskLog>>, shard: &ShardKey, open: impl FnOnce() -> Result<DiskLog>) -> Result<DiskLog> {
    let mut logs = open_logs.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(log) = logs.get(shard).filter(|log| !log.inner.shard.is_closed()) {
        return Ok(log.clone());
    }
    let log = open()?;
    logs.insert(shard.clone(), log.clone());
    Ok(log)
}
