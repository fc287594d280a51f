//! Appends: encode, write, `fdatasync`, acknowledge. Appends that arrive
//! while a sync is in flight share the next one (group commit). Rollover
//! counts the bytes already buffered in the batch, so no segment overshoots
//! `segment_size_bytes` by more than one record (a record larger than a
//! segment goes alone into a fresh one). Under `Durability::Interval` a
//! background flusher syncs at most one interval after a write.

use std::sync::Arc;

use std::time::{Duration, Instant};

use felix_codec::format::index::{IndexEntry, IndexHeader};
use felix_codec::format::record::{encode_record, RECORD_HEADER_LEN};
use felix_codec::format::segment_header::{SegmentHeader, SEGMENT_HEADER_LEN};
use felix_codec::MAX_PAYLOAD_BYTES;

use super::{now_micros, Durability, Inner, Locked, MemIndex, Segment, Shard, Shared};
use crate::error::EngineError;
use crate::metrics_names as names;

/// One record to append: its payload and, when the caller has one, its
/// publish time (otherwise the time of the append).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Append<'a> {
    /// The payload.
    pub payload: &'a [u8],
    /// Publish time in microseconds since the Unix epoch.
    pub timestamp_micros: Option<u64>,
}

/// A batch written and given offsets, not yet known durable: pass it to
/// [`Shard::commit`] to wait for the configured durability.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// The offsets the batch holds.
    pub offsets: std::ops::Range<u64>,
    /// Truncations the shard had seen when the batch was written.
    truncations: u64,
    /// The opening of the shard that wrote it ([`super::Shared::opening`]).
    opening: u64,
}

impl Shard {
    /// Appends a batch; returns the offsets assigned, once durable (under
    /// `Durability::EveryBatch`; once written under the other policies).
    ///
    /// # Errors
    /// `TooLarge` or `OffsetsExhausted` (nothing written), `ReadOnly`,
    /// `FailStopped`, or the IO failure that stopped the shard.
    pub fn append(&self, payloads: &[&[u8]]) -> Result<std::ops::Range<u64>, EngineError> {
        let started = std::time::Instant::now();
        let records: Vec<Append<'_>> = payloads.iter().map(|p| Append { payload: p, timestamp_micros: None }).collect();
        let pending = self.write(&records)?;
        self.commit(&pending)?;
        metrics::histogram!(names::APPEND_DURATION_SECONDS).record(started.elapsed().as_secs_f64());
        Ok(pending.offsets)
    }

    /// Assigns offsets and writes a batch without waiting for durability: the
    /// records hold their offsets from here whether or not the wait that
    /// follows ([`Shard::commit`]) succeeds. Readers see them once durable
    /// (`EveryBatch`) or at once (the other policies). Under `EveryBatch`
    /// the records may wait in memory, in the shard's unwritten tail (at most
    /// [`UNWRITTEN_MAX_BYTES`]), for the sync that acknowledges them, which
    /// writes every append waiting for it in one write: until then a crash
    /// loses them as it would lose them unsynced, and nothing acknowledged
    /// is ever among them.
    ///
    /// # Errors
    /// As [`Shard::append`].
    pub fn write(&self, records: &[Append<'_>]) -> Result<Pending, EngineError> {
        // Without a patience `admit` waits for the lock: it answers `Some`.
        loop {
            if let Some((g, _)) = self.admit(records, None)? {
                return self.write_admitted(g, records);
            }
        }
    }

    /// As [`Shard::write`], but only when the batch fits the active segment
    /// and the shard's lock comes within [`INLINE_LOCK_PATIENCE`]: `None`
    /// (nothing written) when it would start a new one — a roll syncs the
    /// segment it leaves and creates the next (two `fsync`s of files and one
    /// of the directory) — or when the lock stays taken longer (a roll, a
    /// seal, a truncation or a retention pass holds it through its syncs).
    /// So an async caller writes inline on its own thread when this succeeds
    /// and moves to a blocking thread otherwise: no runtime worker waits for
    /// an fsync.
    ///
    /// # Errors
    /// As [`Shard::append`].
    pub fn write_unless_roll(&self, records: &[Append<'_>]) -> Result<Option<Pending>, EngineError> {
        match self.admit(records, Some(INLINE_LOCK_PATIENCE))? {
            Some((g, 0)) => self.write_admitted(g, records).map(Some),
            _ => Ok(None),
        }
    }

    /// Checks that `records` may be written (the shard is writable, each
    /// record fits, offsets and segment ids are left for them) and returns
    /// the shard's lock with how many new segments they would start; `None`
    /// when the lock did not come within `patience` (`None`: no limit).
    fn admit(&self, records: &[Append<'_>], patience: Option<Duration>) -> Result<Option<(Locked<'_>, u64)>, EngineError> {
        let shared = &*self.shared;
        shared.writable()?;
        if let Some(r) = records.iter().find(|r| r.payload.len() > MAX_PAYLOAD_BYTES as usize) {
            return Err(EngineError::TooLarge { len: r.payload.len() });
        }
        if shared.config.durability != Durability::EveryBatch {
            // Acknowledged once written: the lock guarded this directory a
            // moment ago (else the shard stops). Checked before the shard's
            // lock is taken, so a path lookup never holds up other appends.
            self.verify_lock_recent()?;
        }
        // Taken at once (or after a spin of a few microseconds), the check
        // above is as fresh as it was; when this
        // append queued for the shard's lock (behind a roll's syncs, a
        // truncation) the check may have gone stale meanwhile: checked again,
        // or every queued append would be acknowledged on a check made
        // before the directory moved.
        let g = match shared.try_lock().or_else(|| self.spin_lock()) {
            Some(g) => g,
            None => {
                let g = match patience {
                    None => shared.lock(),
                    Some(patience) => match shared.lock_within(patience) {
                        Some(g) => g,
                        None => return Ok(None),
                    },
                };
                if shared.config.durability != Durability::EveryBatch && self.lock_check_stale() {
                    self.verify_lock_recent()?;
                }
                g
            }
        };
        let (first, count) = (g.next_offset, records.len() as u64);
        // Offsets up to u64::MAX - 1 are assigned: u64::MAX has no successor.
        if count > u64::MAX - first {
            return Err(EngineError::OffsetsExhausted { next: first, records: count });
        }
        let rolls = rolls_needed(&g, records, shared.config.segment_size_bytes);
        if rolls > 0 && g.next_segment_id.and_then(|id| id.checked_add(rolls - 1)).is_none() {
            return Err(EngineError::SegmentIdsExhausted { dir: shared.dir.path.clone() });
        }
        Ok(Some((g, rolls)))
    }

    /// Writes admitted `records` under the shard's lock `g`.
    fn write_admitted(&self, mut g: Locked<'_>, records: &[Append<'_>]) -> Result<Pending, EngineError> {
        let shared = &*self.shared;
        let (first, count) = (g.next_offset, records.len() as u64);
        // The interval flusher sleeps until there is something to sync: only
        // the write that ends its sleep wakes it (not every write: a wake per
        // append costs a context switch per append).
        let flusher_idle = g.durable_next >= g.next_offset;
        let (pending, bytes, unsynced) = shared.dir.io.mutation(move || {
            let bytes = write_records(shared, &mut g, records)?;
            g.appends_since_sync += 1;
            if shared.config.durability != Durability::EveryBatch {
                // Acknowledged once written (`admit` checked the lock), and
                // visible to readers.
                g.visible_next = g.next_offset;
                g.visible_len = g.segments.last().map_or(0, |s| s.len);
            }
            Ok((Pending { offsets: first..g.next_offset, truncations: g.truncations, opening: shared.opening }, bytes, unsynced_bytes(&g)))
        })?;
        // Past the lock: appends queue on it, and metrics need none of it.
        if flusher_idle && matches!(shared.config.durability, Durability::Interval { .. }) {
            shared.flusher_wake.notify_all();
        }
        metrics::counter!(names::APPEND_RECORDS_TOTAL).increment(count);
        metrics::counter!(names::APPEND_BYTES_TOTAL).increment(bytes);
        metrics::histogram!(names::APPEND_BATCH_RECORDS).record(count as f64);
        metrics::gauge!(names::UNSYNCED_BYTES).set(unsynced as f64);
        Ok(pending)
    }

    /// Waits until `pending` satisfies the configured durability: its fsync
    /// under `EveryBatch` (shared with every append written before it
    /// started: group commit); nothing under the other policies.
    ///
    /// # Errors
    /// `FailStopped`, or the IO failure that stopped the shard.
    pub fn commit(&self, pending: &Pending) -> Result<(), EngineError> {
        if self.try_commit(pending)? {
            return Ok(());
        }
        let shared = &*self.shared;
        drop(shared.dir.io.mutation(|| sync_through(shared, shared.lock(), pending.offsets.end))?);
        if self.try_commit(pending)? {
            return Ok(());
        }
        // Durable through `end` unless a truncation cut it, which `try_commit` reported.
        Err(EngineError::TruncatedAway { offsets: pending.offsets.clone(), cut_at: pending.offsets.start })
    }

    /// Whether `pending` may be acknowledged now, without waiting: under
    /// `EveryBatch`, once a sync covered it and the writer's lock was
    /// verified after that sync (by [`Shard::sync_for_commit`], or here, once
    /// for every batch the sync covered); at once under the other policies.
    ///
    /// # Errors
    /// `TruncatedAway` when a truncation cut the batch; `NotWrittenHere`
    /// when another shard (or this one before it was opened again) wrote
    /// it; `FailStopped`, or the IO failure that stopped the shard.
    pub fn try_commit(&self, pending: &Pending) -> Result<bool, EngineError> {
        self.try_commit_within(pending, None).map(|answer| answer.unwrap_or(false))
    }

    /// As [`Shard::try_commit`], `None` when the shard's lock did not come
    /// within [`INLINE_LOCK_PATIENCE`] (an async caller then asks from a
    /// blocking thread: no runtime worker waits for another task's fsync).
    ///
    /// # Errors
    /// As [`Shard::try_commit`].
    pub fn try_commit_inline(&self, pending: &Pending) -> Result<Option<bool>, EngineError> {
        self.try_commit_within(pending, Some(INLINE_LOCK_PATIENCE))
    }

    fn try_commit_within(&self, pending: &Pending, patience: Option<Duration>) -> Result<Option<bool>, EngineError> {
        let shared = &*self.shared;
        shared.dir.io.check()?;
        if pending.opening != shared.opening {
            return Err(EngineError::NotWrittenHere { dir: shared.dir.path.clone(), offsets: pending.offsets.clone() });
        }
        // Acknowledged by `write`, which checked the lock, and no truncation
        // since (as of the last change published): answered without the
        // lock, which every append of every publisher also takes. A
        // truncation publishing meanwhile comes after this answer.
        if shared.config.durability != Durability::EveryBatch && shared.published.truncations() == pending.truncations {
            return Ok(Some(true));
        }
        let end = pending.offsets.end;
        let g = match patience {
            None => shared.lock(),
            Some(patience) => match shared.lock_within(patience) {
                Some(g) => g,
                None => return Ok(None),
            },
        };
        if let Some(cut_at) = g.cut_since(pending.truncations, end) {
            return Err(EngineError::TruncatedAway { offsets: pending.offsets.clone(), cut_at });
        }
        if shared.config.durability != Durability::EveryBatch || g.verified_next >= end {
            return Ok(Some(true)); // acknowledged by `write`, which checked the lock; or vouched for
        }
        if g.durable_next < end {
            return Ok(Some(false));
        }
        drop(g);
        self.vouch()?;
        Ok(Some(true))
    }

    /// Group commit's leader: makes everything written so far durable with
    /// one sync and verifies the writer's lock once after it, so every batch
    /// written before the call is then acknowledged by [`Shard::try_commit`]
    /// without a sync or a check of its own.
    ///
    /// # Errors
    /// `FailStopped`, or the IO failure that stopped the shard.
    pub fn sync_for_commit(&self) -> Result<(), EngineError> {
        self.sync()?;
        self.vouch()
    }

    /// Verifies the writer's lock and marks every offset durable before the
    /// check as acknowledgeable (unless a truncation came in between).
    fn vouch(&self) -> Result<(), EngineError> {
        let shared = &*self.shared;
        let (durable, truncations) = {
            let g = shared.lock();
            (g.durable_next, g.truncations)
        };
        self.verify_lock()?;
        let mut g = shared.lock();
        if g.truncations == truncations {
            g.verified_next = g.verified_next.max(durable);
        }
        Ok(())
    }

    /// `fdatasync`s of segment files since the shard was opened (a bench's
    /// appends per fsync).
    #[must_use]
    pub fn data_syncs(&self) -> u64 {
        self.shared.data_syncs.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Under `Interval` and `NoSync`, where an append is all CPU: checks the
    /// shard's lock [`SPIN_FOR_LOCK`] times (a few microseconds, about one
    /// other append's write) before the caller queues for it, so two workers
    /// appending at once take turns without a `sched_yield` or a futex sleep
    /// each (`parking_lot` yields to the kernel after a few spins). Not under
    /// `EveryBatch`: there the lock is also taken by acknowledged waiters and
    /// the flush leader's thread, which may be off its core, and spinning
    /// measured slower.
    fn spin_lock(&self) -> Option<Locked<'_>> {
        let m = &self.shared.inner;
        if self.shared.config.durability == Durability::EveryBatch {
            return None;
        }
        for _ in 0..SPIN_FOR_LOCK {
            std::hint::spin_loop();
            if !m.is_locked() {
                if let Some(g) = self.shared.try_lock() {
                    return Some(g);
                }
            }
        }
        None
    }

    /// Whether the last check of the writer's lock is older than [`LOCK_CHECK_FRESH`].
    fn lock_check_stale(&self) -> bool {
        let now = self.shared.dir.io.monotonic_nanos();
        now.saturating_sub(self.lock_checked.at.load(std::sync::atomic::Ordering::Acquire)) >= LOCK_CHECK_FRESH.as_nanos() as u64
    }

    /// Before an acknowledgement that needs no sync (`Interval`, `NoSync`):
    /// the writer's lock guarded this shard's directory at most
    /// [`LOCK_CHECK_FRESH`] ago, checked again when it is older. A check
    /// cannot keep a directory from being moved right after it anyway (the
    /// records written before then move with it), so what it buys is the
    /// stop: a writer whose directory was moved or replaced stops within
    /// that bound instead of at once, and a path lookup (`stat`, about as
    /// dear as the write) is paid once per bound, not once per append.
    fn verify_lock_recent(&self) -> Result<(), EngineError> {
        if !self.lock_check_stale() {
            return self.shared.dir.io.check();
        }
        let now = self.shared.dir.io.monotonic_nanos();
        self.verify_lock()?;
        self.lock_checked.at.fetch_max(now, std::sync::atomic::Ordering::AcqRel);
        Ok(())
    }

    /// Before an acknowledgement: the writer's lock still guards this
    /// shard's directory (it was not moved away or replaced under us).
    /// When it does not, the shard stops: nothing more is acknowledged.
    fn verify_lock(&self) -> Result<(), EngineError> {
        let held = self.writer_lock.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        let dir = &self.shared.dir;
        // None: read-only (nothing to verify), or closed (check says so).
        let Some(lock) = held.as_ref() else { return dir.io.check() };
        lock.verify().map_err(|e| dir.io.latch(EngineError::io(&dir.path, "check the writer's lock", &e)))
    }

    /// Makes the active segment durable and, when it holds records, starts a
    /// new one so it stays immutable; returns it and a checksum of its bytes:
    /// upstream's (`checksum_file`), the CRC-32 (crc32fast) of the whole
    /// file widened to `u64`, so a sealed segment verifies the same in both.
    /// Upstream's `seal`.
    ///
    /// # Errors
    /// `ReadOnly`, `FailStopped`, IO failures.
    pub fn seal(&self) -> Result<(super::SegmentInfo, u64), EngineError> {
        let shared = &*self.shared;
        shared.writable()?;
        let mut g = shared.lock();
        let rolls = g.segments.last().is_none_or(|s| s.next > s.base);
        if rolls && g.next_segment_id.is_none() {
            return Err(EngineError::SegmentIdsExhausted { dir: shared.dir.path.clone() });
        }
        shared.dir.io.mutation(|| {
            let Some(active) = g.segments.last().cloned() else {
                start_segment(shared, &mut g)?;
                return self.seal_info(&g);
            };
            let path = shared.dir.log(active.id);
            let info = super::SegmentInfo { id: active.id, base_offset: active.base, next_offset: active.next, size_bytes: active.len };
            if active.next > active.base {
                roll(shared, &mut g)?;
            } else {
                timed_sync(shared, &path, std::mem::take(&mut g.appends_since_sync))?;
                g.durable_next = g.next_offset;
                g.durable_len = active.len;
            }
            g.visible_next = g.visible_next.max(g.durable_next);
            let checksum = file_checksum(shared, &path, active.len)?;
            Ok((info, checksum))
        })
    }

    fn seal_info(&self, g: &Inner) -> Result<(super::SegmentInfo, u64), EngineError> {
        let s = g.segments.last().ok_or_else(|| EngineError::Io {
            path: self.dir().to_path_buf(),
            op: "seal",
            message: "no segment".into(),
        })?;
        let info = super::SegmentInfo { id: s.id, base_offset: s.base, next_offset: s.next, size_bytes: s.len };
        Ok((info, file_checksum(&self.shared, &self.shared.dir.log(s.id), s.len)?))
    }

    /// Bytes written but not yet durable: what a power cut would lose now.
    #[must_use]
    pub fn unsynced_bytes(&self) -> u64 {
        self.shared.published.unsynced_bytes()
    }

    /// Everything below this offset is durable (never waits for the
    /// shard's lock: the shard publishes it each time the lock is let go).
    #[must_use]
    pub fn durable_offset(&self) -> u64 {
        self.shared.published.durable_offset()
    }
}

/// How old a check of the writer's lock may be when an append that needs no
/// sync is acknowledged (`docs/durability.md`).
pub const LOCK_CHECK_FRESH: Duration = Duration::from_millis(1);

/// When the writer's lock was last checked, on the `Io`'s clock
/// ([`crate::Io::monotonic_nanos`]: a simulation's own).
#[derive(Debug)]
pub(crate) struct LockChecked {
    /// The clock's reading when the last check began.
    pub(crate) at: std::sync::atomic::AtomicU64,
}

impl LockChecked {
    /// Checked at `nanos` (the open checks the lock once it is taken).
    pub(crate) fn at(nanos: u64) -> Self {
        Self { at: std::sync::atomic::AtomicU64::new(nanos) }
    }
}

/// The most an append reserves for its encoded batch at once (a larger
/// batch grows the buffer as it is encoded; the payloads are the caller's,
/// in memory already).
const ENCODE_RESERVE_MAX_BYTES: u64 = 8 << 20;

/// The largest encode buffer a shard keeps between appends.
const KEPT_ENCODE_BUF_BYTES: usize = 1 << 20;

/// The most bytes of records an `EveryBatch` shard keeps unwritten until the
/// next sync (the shard's unwritten tail): a batch that would pass it is
/// written at once, with the tail. At 128-byte records, about 1,600 of them:
/// more than a group commit of 64 publishers at batch 16 gathers.
pub const UNWRITTEN_MAX_BYTES: usize = 256 << 10;

/// The largest batch (encoded) that waits in the unwritten tail; a larger one
/// is written at once, inline. Merging writes pays for small batches, whose
/// write costs mostly its syscall; a large batch's write costs the same
/// wherever it runs, and run by the flush leader under the shard's lock it
/// made a lone publisher of 64 KiB batches wait for that lock: 4 KiB × 16 ×
/// 1 publisher measured 0.92 of the build that wrote every batch inline
/// (7 alternating runs a side, 2026-12-03, load 1.4), and 1.0 with this bound.
pub const DEFERRED_BATCH_MAX_BYTES: usize = 32 << 10;

/// The piece a sealed segment's checksum reads at a time.
const CHECKSUM_CHUNK_BYTES: usize = 1 << 20;

/// The CRC-32 (crc32fast: IEEE) of a file's first `len` bytes — the whole
/// segment: its length is the end of its data — read in pieces, widened to
/// `u64`: upstream's sealed-segment checksum.
fn file_checksum(shared: &Shared, path: &std::path::Path, len: u64) -> Result<u64, EngineError> {
    let mut hasher = crc32fast::Hasher::new();
    let mut buf = vec![0u8; CHECKSUM_CHUNK_BYTES];
    let mut pos = 0u64;
    while pos < len {
        let n = usize::try_from(len - pos).unwrap_or(usize::MAX).min(buf.len());
        let chunk = buf.get_mut(..n).unwrap_or_default();
        shared.dir.io.read_exact_at(path, pos, chunk)?;
        hasher.update(&*chunk);
        pos += n as u64;
    }
    Ok(u64::from(hasher.finalize()))
}

/// The longest an async caller's inline append or commit waits for the
/// shard's lock before it moves to a blocking thread: appends hold it for
/// microseconds, while a roll, a seal, a truncation or a retention pass
/// holds it through `fsync`s.
pub const INLINE_LOCK_PATIENCE: Duration = Duration::from_millis(1);

/// How many times an append checks the shard's lock before it queues for it ([`Shard::spin_lock`]).
const SPIN_FOR_LOCK: usize = 256;

pub(crate) fn unsynced_bytes(g: &Inner) -> u64 {
    g.segments.last().map_or(0, |s| s.len.saturating_sub(g.durable_len))
}

/// Encodes `records` at the next offsets and writes them to the active
/// segment, rolling where a record would take it past its size; returns
/// the bytes written.
fn write_records(shared: &Shared, g: &mut Inner, records: &[Append<'_>]) -> Result<u64, EngineError> {
    // The time of the append, for records that bring none (read once, if at all).
    let mut now = None;
    // Sized once for the batch (up to a segment's worth: a roll flushes it).
    let batch_bytes: u64 = records.iter().map(|r| (RECORD_HEADER_LEN + r.payload.len()) as u64).sum();
    // The shard's encode buffer, kept between appends (no allocation per
    // append); one larger than a big batch's is not kept.
    let mut buf = std::mem::take(&mut g.encode_buf);
    buf.clear();
    buf.reserve(usize::try_from(batch_bytes.min(shared.config.segment_size_bytes).min(ENCODE_RESERVE_MAX_BYTES)).unwrap_or(0));
    let mut bytes = 0u64;
    for record in records {
        let record_len = (RECORD_HEADER_LEN + record.payload.len()) as u64;
        let active = g.segments.last().map(|s| (s.len, s.next > s.base));
        if needs_roll(active, buf.len() as u64, record_len, shared.config.segment_size_bytes) {
            flush(shared, g, &mut buf)?;
            roll(shared, g)?;
        }
        let offset = g.next_offset;
        let Some(seg) = g.segments.last_mut() else { break };
        let position = seg.len + buf.len() as u64;
        let timestamp = record.timestamp_micros.unwrap_or_else(|| *now.get_or_insert_with(now_micros));
        encode_record(offset, timestamp, record.payload, &mut buf).map_err(|_| EngineError::TooLarge { len: record.payload.len() })?;
        bytes += record_len;
        let _ = seg.index.observe(offset, position);
        seg.index.verified = seg.index.entries.len();
        seg.next = offset + 1;
        seg.last_timestamp = seg.last_timestamp.max(timestamp);
        g.next_offset = offset + 1;
    }
    if !(shared.config.durability == Durability::EveryBatch && defer(g, &mut buf)) {
        flush(shared, g, &mut buf)?;
    }
    if buf.capacity() <= KEPT_ENCODE_BUF_BYTES {
        g.encode_buf = buf;
    }
    Ok(bytes)
}

/// Under `EveryBatch`, moves the batch's encoded records from `buf` to the
/// shard's unwritten tail, for the sync that acknowledges them to write with
/// every other append's since the last one (one write a group commit, not
/// one an append, and a shorter hold of the shard's lock). Leaves them in
/// `buf` (and answers `false`: write them now, with the tail) when the
/// batch is larger than [`DEFERRED_BATCH_MAX_BYTES`] or the tail would pass
/// [`UNWRITTEN_MAX_BYTES`].
fn defer(g: &mut Inner, buf: &mut Vec<u8>) -> bool {
    if buf.len() > DEFERRED_BATCH_MAX_BYTES || g.unwritten.len().saturating_add(buf.len()) > UNWRITTEN_MAX_BYTES {
        return false;
    }
    let Some(seg) = g.segments.last_mut() else { return false };
    seg.len += buf.len() as u64;
    if g.unwritten.is_empty() && buf.capacity() <= UNWRITTEN_MAX_BYTES {
        // The first append since the last flush: its buffer becomes the
        // tail, uncopied — unless it holds more memory than the tail may
        // (a batch's buffer that grew for the records a roll already wrote).
        std::mem::swap(&mut g.unwritten, buf);
    } else {
        // Grown by doubling, never past the bound: `extend` alone would
        // double it to nearly twice the bound's length.
        let need = g.unwritten.len() + buf.len();
        if need > g.unwritten.capacity() {
            let grown = need.max(g.unwritten.capacity().saturating_mul(2)).min(UNWRITTEN_MAX_BYTES);
            g.unwritten.reserve_exact(grown - g.unwritten.len());
        }
        g.unwritten.extend_from_slice(buf);
        buf.clear();
    }
    true
}

/// Writes the shard's unwritten tail, then the records in `buf`, to the
/// active segment, then its new index entries.
fn flush(shared: &Shared, g: &mut Inner, buf: &mut Vec<u8>) -> Result<(), EngineError> {
    if buf.is_empty() && g.unwritten.is_empty() {
        return Ok(());
    }
    let dir = &shared.dir;
    let Some(seg) = g.segments.last_mut() else { return Ok(()) };
    let path = dir.log_path(seg.id);
    if !g.unwritten.is_empty() {
        dir.io.write_at(&path, seg.len - g.unwritten.len() as u64, &g.unwritten)?;
        g.unwritten.clear();
    }
    if !buf.is_empty() {
        dir.io.write_at(&path, seg.len, buf)?;
        seg.len += buf.len() as u64;
        buf.clear();
    }
    write_new_index_entries(shared, seg)
}

/// Writes the records appended under `EveryBatch` and not yet written (the
/// shard's unwritten tail) to the active segment. Everything that syncs,
/// seals, rolls, cuts or closes the active segment calls it first: past it,
/// the file holds every byte the active segment's `len` counts.
///
/// # Errors
/// The write's IO failure.
pub(crate) fn write_out(shared: &Shared, g: &mut Inner) -> Result<(), EngineError> {
    flush(shared, g, &mut Vec::new())
}

/// Whether a record of `record_len` bytes starts a new segment: there is no
/// active segment, or it (with `buffered` bytes of the batch not yet
/// written) holds records and the record would take it past `size`.
/// `active` is the active segment's `(len, holds records)`.
fn needs_roll(active: Option<(u64, bool)>, buffered: u64, record_len: u64, size: u64) -> bool {
    match active {
        None => true,
        Some((len, holds_records)) => (holds_records || buffered > 0) && len + buffered + record_len > size,
    }
}

/// How many new segments appending `records` would create, counted with
/// the same rule the write follows ([`needs_roll`]), before anything is
/// written: a batch that needs an id no segment may take is refused whole.
fn rolls_needed(g: &Inner, records: &[Append<'_>], size: u64) -> u64 {
    let mut active = g.segments.last().map(|s| (s.len, s.next > s.base));
    let (mut buffered, mut rolls) = (0u64, 0u64);
    for record in records {
        let record_len = (RECORD_HEADER_LEN + record.payload.len()) as u64;
        if needs_roll(active, buffered, record_len, size) {
            active = Some((SEGMENT_HEADER_LEN as u64, false));
            buffered = 0;
            rolls += 1;
        }
        buffered += record_len;
    }
    rolls
}

/// Appends the entries not yet in the index file (or rewrites it when the
/// in-memory index was thinned). Index writes are not synced: an index is
/// never trusted, and recovery rebuilds one that disagrees.
fn write_new_index_entries(shared: &Shared, seg: &mut Segment) -> Result<(), EngineError> {
    if seg.index.rewrite {
        return super::recovery::write_index(&shared.dir, seg);
    }
    let fresh = seg.index.entries.get(seg.index_on_disk..).unwrap_or(&[]);
    if fresh.is_empty() {
        return Ok(());
    }
    let bytes: Vec<u8> = fresh.iter().flat_map(IndexEntry::encode).collect();
    let at = IndexEntry::file_position(seg.index_on_disk as u64);
    shared.dir.io.write_at(&shared.dir.index_path(seg.id), at, &bytes)?;
    seg.index_on_disk = seg.index.entries.len();
    Ok(())
}

/// Seals the active segment (fsync) and creates the next one.
fn roll(shared: &Shared, g: &mut Inner) -> Result<(), EngineError> {
    write_out(shared, g)?;
    if let Some(active) = g.segments.last() {
        timed_sync(shared, &shared.dir.log(active.id), std::mem::take(&mut g.appends_since_sync))?;
        // A sealed segment's index is made durable once (its directory entry
        // with the next segment's): after a crash only the newest is rebuilt.
        let index = shared.dir.index(active.id);
        if shared.dir.io.kind(&index)?.is_some() {
            shared.dir.io.sync_data(&index)?;
        }
        g.durable_next = g.next_offset;
        g.durable_len = active.len;
        g.visible_next = g.visible_next.max(g.durable_next);
    }
    start_segment(shared, g)
}

/// Creates the next segment at the next offset and makes it the active one.
pub(crate) fn start_segment(shared: &Shared, g: &mut Inner) -> Result<(), EngineError> {
    let id = g.next_segment_id.ok_or_else(|| EngineError::SegmentIdsExhausted { dir: shared.dir.path.clone() })?;
    let base = g.next_offset;
    create_segment(shared, id, base)?;
    g.segments.push(Segment {
        id,
        base,
        len: SEGMENT_HEADER_LEN as u64,
        next: base,
        index: MemIndex::new(shared.config.index_spacing_bytes),
        index_on_disk: 0,
        last_timestamp: 0,
    });
    g.next_segment_id = id.checked_add(1);
    g.durable_len = SEGMENT_HEADER_LEN as u64;
    g.visible_len = SEGMENT_HEADER_LEN as u64;
    metrics::counter!(names::SEGMENT_ROLL_TOTAL).increment(1);
    metrics::gauge!(names::SEGMENT_COUNT).set(g.segments.len() as f64);
    Ok(())
}

/// Creates segment `id` at `base`: its index first (a bare header, created
/// exclusively: recovery already moved an orphaned index of that id to
/// evidence, and one that appeared since stops the shard), then the segment:
/// temp → header → fsync → link → fsync directory, so a segment under its
/// real name always has a durable header and never replaces a file of that
/// name (a name taken there stops the shard and removes the index just made).
fn create_segment(shared: &Shared, id: u64, base: u64) -> Result<(), EngineError> {
    let dir = &shared.dir;
    // The index first, exclusively: a name taken there stops the shard before
    // any segment of that id exists (which a reopen would index over it).
    let index = dir.index(id);
    dir.io.create(&index)?;
    dir.io.write_at(&index, 0, &IndexHeader::new(base).encode())?;
    let header = SegmentHeader::new(base, now_micros()).encode();
    if let Err(e) = dir.create_file_durably(&felix_codec::format::file_name::segment_file_name(id), &header) {
        // Ours, a header only, and nothing indexes through it yet.
        let _ = dir.io.inner().remove(&index);
        return Err(e);
    }
    if shared.config.preallocate_segments {
        dir.io.preallocate(&dir.log(id), shared.config.segment_size_bytes)?;
    }
    Ok(())
}

/// Group commit: waits until offsets below `end` are durable, leading a sync
/// when none is in flight, sharing one when it is. Returns the guard.
pub(crate) fn sync_through<'a>(shared: &'a Shared, mut g: Locked<'a>, end: u64) -> Result<Locked<'a>, EngineError> {
    loop {
        shared.dir.io.check()?;
        // Nothing past the next offset exists (a truncation may have cut it): never wait for it.
        if g.durable_next >= end.min(g.next_offset) {
            return Ok(g);
        }
        if g.syncing.is_some() {
            g.wait(&shared.synced);
            continue;
        }
        write_out(shared, &mut g)?;
        let Some(seg) = g.segments.last() else { return Ok(g) };
        let (id, path, target_len) = (seg.id, shared.dir.log(seg.id), seg.len);
        let (target, truncations) = (g.next_offset, g.truncations);
        let appends = std::mem::take(&mut g.appends_since_sync);
        g.syncing = Some(id);
        drop(g);
        // Even if the sync panics (an `Io`'s bug), the mark goes: a stuck
        // one would hold every later sync, and the drop's, forever.
        let in_flight = SyncInFlight(shared);
        let result = timed_sync(shared, &path, appends);
        std::mem::forget(in_flight);
        g = shared.lock();
        g.syncing = None;
        shared.synced.notify_all();
        result?;
        // A truncation during the sync cut what it covered, and the offsets
        // it freed may hold new records this sync never saw: claim nothing.
        if g.truncations != truncations {
            continue;
        }
        // Everything below `target` was in this segment or in one a roll synced.
        g.durable_next = g.durable_next.max(target);
        // A roll during the sync made another segment active: its length is not ours to set.
        if g.segments.last().is_some_and(|s| s.id == id) {
            g.durable_len = g.durable_len.max(target_len);
        }
        if g.visible_next < g.durable_next {
            g.visible_next = g.durable_next;
        }
        if g.segments.last().is_some_and(|s| s.id == id) {
            g.visible_len = g.visible_len.max(g.durable_len);
        }
        metrics::gauge!(names::UNSYNCED_BYTES).set(unsynced_bytes(&g) as f64);
    }
}

/// Clears the "a sync is in flight" mark if the sync unwinds.
struct SyncInFlight<'a>(&'a Shared);

impl Drop for SyncInFlight<'_> {
    fn drop(&mut self) {
        self.0.lock().syncing = None;
        self.0.synced.notify_all();
    }
}

/// One `fdatasync`, with its metrics: duration, the appends it covers (the
/// group-commit fan-in), and failures.
fn timed_sync(shared: &Shared, path: &std::path::Path, appends: u64) -> Result<(), EngineError> {
    let started = Instant::now();
    shared.data_syncs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let result = shared.dir.io.sync_data(path);
    match &result {
        Ok(()) => {
            metrics::counter!(names::SYNC_TOTAL).increment(1);
            metrics::histogram!(names::SYNC_DURATION_SECONDS).record(started.elapsed().as_secs_f64());
            metrics::histogram!(names::SYNC_BATCH_APPENDS).record(appends as f64);
        }
        Err(_) => metrics::counter!(names::SYNC_FAILURES_TOTAL).increment(1),
    }
    result
}

/// The `Durability::Interval` flusher: syncs everything written at most
/// `micros` after the first unsynced write (later writes do not push the
/// deadline back); stops when the shard is dropped or stopped.
///
/// # Errors
/// The thread could not be started.
pub(crate) fn spawn_flusher(shared: Arc<Shared>, micros: u64) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new().name("felix-flusher".into()).spawn(move || {
        let interval = Duration::from_micros(micros.max(1));
        let mut g = shared.lock();
        loop {
            if g.shutdown || shared.dir.io.failure().is_some() {
                return;
            }
            if g.durable_next >= g.next_offset {
                g.wait(&shared.flusher_wake);
                continue;
            }
            let deadline = Instant::now() + interval;
            while let Some(left) = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) {
                if g.shutdown {
                    return;
                }
                g.wait_for(&shared.flusher_wake, left);
            }
            let end = g.next_offset;
            // A mutating operation like any other: a panic in it (an `Io`'s,
            // a broker's metrics recorder's) stops the shard, never only
            // this thread, which would leave appends acknowledged unsynced.
            g = match shared.dir.io.mutation(|| sync_through(&shared, g, end)) {
                Ok(g) => g,
                Err(_) => return, // latched: every later call reports it
            };
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::{Append, RECORD_HEADER_LEN, UNWRITTEN_MAX_BYTES};
    use crate::io::sim::SimIo;
    use crate::shard::{Config, Shard};

    /// The bound is on the tail's memory, not only its length: a batch
    /// whose buffer grew for records a roll wrote, then leaves its last
    /// record waiting, does not hand that buffer over as the tail; and a
    /// tail grown by 31 batches of 8,000 bytes, then small ones, holds at
    /// most 256 KiB (a `Vec` grown by doubling would keep nearly twice that).
    #[test]
    fn the_unwritten_tail_never_holds_more_memory_than_its_bound() {
        let io = Arc::new(SimIo::new());
        let config = Config { segment_size_bytes: 1 << 20, ..Config::default() };
        let (shard, _) = Shard::open_dir(io, Path::new("/sim/acme_default_orders_0-0d3aed4b998d2798"), config).unwrap();
        let (big, last) = (vec![1u8; 255 << 10], vec![2u8; 10 << 10]);
        let rolled: Vec<Append<'_>> =
            [&big, &big, &big, &big, &last].iter().map(|p| Append { payload: p, timestamp_micros: Some(1) }).collect();
        shard.write(&rolled).unwrap();
        {
            let g = shard.shared.lock();
            assert_eq!((g.segments.len(), g.unwritten.len()), (2, last.len() + RECORD_HEADER_LEN), "the last record waits, past a roll");
            assert!(g.unwritten.capacity() <= UNWRITTEN_MAX_BYTES, "the tail holds {} bytes of memory", g.unwritten.capacity());
        }
        shard.sync().unwrap();
        for _ in 0..31 {
            shard.write(&[Append { payload: &[1u8; 8000], timestamp_micros: Some(1) }]).unwrap();
        }
        for _ in 0..8 {
            shard.write(&[Append { payload: &[2u8; 100], timestamp_micros: Some(1) }]).unwrap();
        }
        let g = shard.shared.lock();
        assert_eq!(g.unwritten.len(), 31 * 8000 + 8 * 100 + 39 * RECORD_HEADER_LEN, "every batch still waits");
        assert!(g.unwritten.capacity() <= UNWRITTEN_MAX_BYTES, "the tail holds {} bytes of memory", g.unwritten.capacity());
    }
}
