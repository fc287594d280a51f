//! Retention: deletes whole oldest segments beyond the limits, never the
//! active one, and bounds the epochs history to what is still stored.
//!
//! Failure rule (upstream's, with one exception): a segment that could not be
//! unlinked is not a failure of the shard — its bytes are all still there and
//! nothing acknowledged depends on its removal — so the pass stops, says why,
//! and the next pass tries again. What the pass did delete is still made
//! durable (the directory's fsync) and the epochs bounded; a failure of *that*
//! fsync or of the epochs rewrite stops the shard like every failed sync: the
//! directory's later fsyncs are what acknowledge new segments, and after a
//! failed one they cannot be trusted (fsyncgate).

use std::path::PathBuf;

use felix_codec::format::epochs::bound_epochs;

use super::replication::write_epochs;
use super::Shard;
use crate::error::EngineError;
use crate::metrics_names as names;

/// What one retention pass deleted.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RetentionPass {
    /// The segment files deleted, oldest first.
    pub removed: Vec<PathBuf>,
    /// Their lengths, summed (the segments' bytes; their indexes not counted).
    pub bytes_reclaimed: u64,
    /// The oldest offset still stored after the pass.
    pub first_offset: u64,
}

impl Shard {
    /// Deletes whole oldest segments beyond the retention limits, never the
    /// active one; drops epochs older than the oldest retained record.
    /// Records `retention_segments_deleted_total`, `…_bytes_reclaimed_total`
    /// and `…_base_offset`. While a read or a seek holds retention off
    /// (`Shard::hold_retention`) the pass deletes nothing more while the
    /// shard holds at most twice `retention_bytes` (past that, down to
    /// twice it), and answers only what it deleted (often nothing): the
    /// next pass deletes the rest.
    ///
    /// # Errors
    /// `ReadOnly`, `FailStopped`, `Closed`; an unlink that failed (not
    /// latched: the shard goes on, the next pass retries; what the pass
    /// deleted before it is durable); a failed directory fsync or epochs
    /// rewrite (which stops the shard).
    pub fn apply_retention(&self, now_micros: u64) -> Result<RetentionPass, EngineError> {
        let shared = &*self.shared;
        shared.writable()?;
        let (pass, unlink_failure) = shared.dir.io.mutation(|| self.retain(now_micros))?;
        unlink_failure.map_or(Ok(pass), Err)
    }

    fn retain(&self, now_micros: u64) -> Result<(RetentionPass, Option<EngineError>), EngineError> {
        let shared = &*self.shared;
        let io = &shared.dir.io;
        let mut g = shared.lock();
        let mut pass = RetentionPass::default();
        let mut unlink_failure = None;
        while g.segments.len() > 1 {
            // The oldest may be a segment a sync in flight is flushing (the
            // active one when that sync began, rolled away since).
            shared.spare_flushing(&mut g, |g, id| g.segments.first().is_some_and(|s| s.id == id));
            let total: u64 = g.segments.iter().map(|s| s.len).sum();
            // A read or seek that retention kept overtaking holds it off
            // (looked at after the wait above, which lets the lock go): the
            // pass deletes nothing more, the next one does — unless the log
            // holds more than twice its byte bound ([`held_off`]).
            if g.segments.len() <= 1 || held_off(shared, total) {
                break;
            }
            let Some(oldest) = g.segments.first() else { break };
            let over_bytes = shared.config.retention_bytes.is_some_and(|limit| total > limit);
            let too_old = shared.config.retention_age_micros.is_some_and(|age| now_micros.saturating_sub(oldest.last_timestamp) > age);
            if !over_bytes && !too_old {
                break;
            }
            let (id, len) = (oldest.id, oldest.len);
            // The index first: a segment without its index is still whole
            // (recovery rebuilds the index); an index without its segment is an orphan.
            if let Err(e) =
                io.remove_if_exists_unlatched(&shared.dir.index(id)).and_then(|()| io.remove_if_exists_unlatched(&shared.dir.log(id)))
            {
                unlink_failure = Some(e);
                break;
            }
            g.segments.remove(0);
            pass.removed.push(shared.dir.log(id));
            pass.bytes_reclaimed += len;
        }
        pass.first_offset = g.first_offset();
        if !pass.removed.is_empty() {
            shared.dir.io.sync_dir(&shared.dir.path)?;
            let bounded = bound_epochs(&g.epochs, pass.first_offset);
            if bounded != g.epochs {
                write_epochs(shared, &bounded)?;
                g.epochs = bounded;
            }
            metrics::counter!(names::RETENTION_SEGMENTS_DELETED_TOTAL).increment(pass.removed.len() as u64);
            metrics::counter!(names::RETENTION_BYTES_RECLAIMED_TOTAL).increment(pass.bytes_reclaimed);
            metrics::gauge!(names::SEGMENT_COUNT).set(g.segments.len() as f64);
        }
        metrics::gauge!(names::RETENTION_BASE_OFFSET).set(pass.first_offset as f64);
        Ok((pass, unlink_failure))
    }
}

/// Whether a read's hold stops this pass: while one lives
/// ([`Shard::hold_retention`]) and the log holds at most twice its byte
/// bound (with no byte bound, while one lives). Past twice the bound the
/// pass deletes down to twice it, hold or not: readers that start at the
/// oldest segment while a pass runs every few appends would otherwise hold
/// it off turn after turn (a probe of six such readers grew a log bounded
/// at six segments to 171), and a held read that is overtaken still runs
/// again.
fn held_off(shared: &super::Shared, total: u64) -> bool {
    shared.retention_held.load(std::sync::atomic::Ordering::SeqCst) > 0
        && shared.config.retention_bytes.is_none_or(|limit| total <= limit.saturating_mul(2))
}

/// How many times in a row retention (or a truncation) may overtake a read
/// or a seek before it holds retention off ([`Shard::hold_retention`]).
pub(crate) const OVERTAKEN_BEFORE_HOLDING: u32 = 2;

/// A read or a seek holding retention off: while one lives, a retention
/// pass deletes nothing more (one that deleted before the hold came either
/// finishes before the read's next snapshot, taken under the shard's lock,
/// or stops at its next segment if it let the lock go meanwhile). Without
/// it, a read that walks files without the lock could be overtaken by every
/// pass — a seek starved of the CPU beside a writer whose retention deletes
/// a segment every few appends failed on a removed file after 64 tries.
pub(crate) struct RetentionHeld<'a>(&'a std::sync::atomic::AtomicU64);

impl Shard {
    /// Holds retention off until the returned guard drops.
    pub(crate) fn hold_retention(&self) -> RetentionHeld<'_> {
        let held = &self.shared.retention_held;
        held.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        RetentionHeld(held)
    }
}

impl Drop for RetentionHeld<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use crate::io::sim::SimIo;
    use crate::shard::{Append, Config, Shard};

    /// A shard of 150-byte segments bounded at `retention_bytes`.
    fn bounded(retention_bytes: u64) -> Shard {
        let config = Config { segment_size_bytes: 150, retention_bytes: Some(retention_bytes), ..Config::default() };
        Shard::open_dir(Arc::new(SimIo::new()), Path::new("/sim/acme_default_orders_0-0d3aed4b998d2798"), config).unwrap().0
    }

    /// Appends one 40-byte record, committed.
    fn append(shard: &Shard, t: u64) {
        let pending = shard.write(&[Append { payload: &[b'x'; 40], timestamp_micros: Some(t) }]).unwrap();
        shard.commit(&pending).unwrap();
    }

    /// Bytes in every segment.
    fn total(shard: &Shard) -> u64 {
        shard.segments().iter().map(|s| s.size_bytes).sum()
    }

    /// While a read or a seek holds retention off, a pass deletes nothing
    /// (the log past its bound, within twice it); once the hold drops, the
    /// next pass deletes what the bound says. Two holds: both must go.
    #[test]
    fn a_pass_deletes_nothing_while_a_read_holds_retention_off() {
        let shard = bounded(300);
        let mut t = 0;
        while total(&shard) <= 450 {
            append(&shard, t);
            t += 1;
        }
        assert!(total(&shard) <= 600, "{:?}", shard.segments());
        let segments = shard.segments().len();
        let (a, b) = (shard.hold_retention(), shard.hold_retention());
        assert!(shard.apply_retention(0).unwrap().removed.is_empty());
        drop(a);
        assert!(shard.apply_retention(0).unwrap().removed.is_empty(), "one hold is left");
        assert_eq!(shard.segments().len(), segments);
        drop(b);
        let pass = shard.apply_retention(0).unwrap();
        assert!(!pass.removed.is_empty());
        assert!(total(&shard) <= 300 + 150, "{:?}", shard.segments());
    }

    /// A hold is honoured only while the log holds at most twice its byte
    /// bound: past that, a pass deletes down to twice the bound, so readers
    /// holding retention off turn after turn cannot grow the log without
    /// end; the hold gone, the next pass deletes down to the bound.
    #[test]
    fn a_hold_gives_way_past_twice_the_byte_bound() {
        let shard = bounded(300);
        let held = shard.hold_retention();
        let mut t = 0;
        while total(&shard) <= 600 {
            append(&shard, t);
            t += 1;
            if total(&shard) <= 600 {
                assert!(shard.apply_retention(0).unwrap().removed.is_empty(), "held within twice the bound ({} bytes)", total(&shard));
            }
        }
        let pass = shard.apply_retention(0).unwrap();
        assert!(!pass.removed.is_empty(), "past twice the bound the hold gives way");
        assert!((301..=600).contains(&total(&shard)), "down to twice the bound, no further: {:?}", shard.segments());
        drop(held);
        assert!(!shard.apply_retention(0).unwrap().removed.is_empty());
        assert!(total(&shard) <= 300, "{:?}", shard.segments());
    }

    /// A read that retention overtook twice holds it off on its third run
    /// (a pass then deletes nothing), and a read that panics while holding
    /// lets the hold go as it unwinds: the next pass deletes again.
    #[test]
    fn a_read_holds_retention_from_its_third_run_and_a_panic_in_it_leaks_no_hold() {
        let shard = bounded(400);
        let appends = |n: u64| (0..n).for_each(|t| append(&shard, t));
        appends(10);
        let deleted = std::cell::RefCell::new(Vec::new());
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            shard.consistently(|| -> Result<(), crate::error::EngineError> {
                // New segments, then a pass: unless held, it deletes the
                // oldest and the read is overtaken (the log stays within
                // twice its bound, where a hold is honoured).
                appends(2);
                deleted.borrow_mut().push(shard.apply_retention(0).unwrap().removed.len());
                assert!(deleted.borrow().len() < 3, "the third run panics");
                Ok(())
            })
        }));
        assert!(unwound.is_err());
        let deleted = deleted.into_inner();
        assert!(deleted.len() == 3 && deleted[0] > 0 && deleted[1] > 0 && deleted[2] == 0, "{deleted:?}");
        assert_eq!(shard.shared.retention_held.load(std::sync::atomic::Ordering::SeqCst), 0, "the hold leaked");
        assert!(!shard.apply_retention(0).unwrap().removed.is_empty());
    }
}
