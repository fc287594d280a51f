//! What a broker reads about a shard without its lock: the next, durable and
//! first offsets, the bytes a power cut would lose, the segment list and the
//! generation history, as of the shard's last change.
//!
//! A roll, a seal, a truncation or a retention pass holds the shard's lock
//! through `fsync`s, and a broker's async code asks for these on its
//! runtime's threads. So every change stores them before it lets the lock
//! go ([`super::Locked`] does it as it lets go, and before it waits on a
//! condition variable): a caller that sees a change's call return also sees
//! what it changed, and no change goes unpublished, an error's early return
//! included. The truncation count goes first: a caller that sees any other
//! answer a truncation changed sees its count too.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use felix_codec::format::epochs::Epoch;

use super::{Inner, Segment, SegmentInfo};

/// The published answers (one per shard).
///
/// An append changes only numbers — the offsets, the unsynced bytes, the
/// active segment's length — and those are atomics, stored without any lock
/// of their own. The lists change rarely (a roll, a seal, a retention pass,
/// a truncation, a new generation): a publish sees that from their shape,
/// also kept in atomics, and only then rebuilds them, under a short lock and
/// a sequence count, so a reader never pairs one list with another list's
/// numbers.
#[derive(Debug, Default)]
pub(crate) struct Published {
    next: AtomicU64,
    durable: AtomicU64,
    first: AtomicU64,
    unsynced: AtomicU64,
    /// The active segment's length.
    active_len: AtomicU64,
    /// Truncations so far (`Inner::truncations`): a commit that needs no
    /// sync learns from it, without the lock, that nothing cut its batch.
    truncations: AtomicU64,
    /// Odd while a publish rebuilds the lists (a sequence lock's count).
    version: AtomicU64,
    /// The lists' shape as last published ([`shape`]).
    shape: [AtomicU64; SHAPE],
    lists: parking_lot::Mutex<Lists>,
}

/// The lists, shared with readers by `Arc`.
#[derive(Debug, Default)]
struct Lists {
    /// Every segment but the active one, oldest first.
    sealed: Arc<[SegmentInfo]>,
    /// The active segment (the newest): its id and base offset. Its next
    /// offset is the shard's, its length `active_len`.
    active: Option<(u64, u64)>,
    epochs: Arc<[Epoch]>,
}

fn info(s: &Segment) -> SegmentInfo {
    SegmentInfo { id: s.id, base_offset: s.base, next_offset: s.next, size_bytes: s.len }
}

const SHAPE: usize = 7;

/// What a change to the lists moves: the segment count, the oldest
/// segment's id, the active one's id and base, the generation count and
/// the newest generation. Sealed segments change only at the ends —
/// retention removes the oldest, a roll or a seal makes a new active one,
/// a truncation that reaches a sealed segment removes every segment after
/// it — and the generation history only grows at its end and is cut from
/// its end; an append changes none of these. (The simulator compares the
/// whole lists after every step.)
fn shape(g: &Inner) -> [u64; SHAPE] {
    let none = u64::MAX;
    let active = g.segments.last();
    let newest = g.epochs.last();
    [
        g.segments.len() as u64,
        g.segments.first().map_or(none, |s| s.id),
        active.map_or(none, |s| s.id),
        active.map_or(none, |s| s.base),
        g.epochs.len() as u64,
        newest.map_or(none, |e| e.generation),
        newest.map_or(none, |e| e.start_offset),
    ]
}

impl Published {
    /// Stores `g`'s answers (under the shard's lock, as it is let go: one
    /// publisher at a time).
    pub(crate) fn store(&self, g: &Inner) {
        // The truncation count first: whoever sees any answer a truncation
        // changed (a next offset fallen back to its cut, a segment gone)
        // sees its count too, so a commit it makes next, which trusts an
        // unchanged count without the lock ([`super::Shard::try_commit`]),
        // hears of the cut (every later store releases this one).
        self.truncations.store(g.truncations, Ordering::Release);
        let shape = shape(g);
        let reshaped = self.shape.iter().zip(shape).any(|(published, now)| published.load(Ordering::Relaxed) != now);
        if reshaped {
            self.version.fetch_add(1, Ordering::SeqCst);
            let mut lists = self.lists.lock();
            let sealed = g.segments.split_last().map_or(&[][..], |(_, sealed)| sealed);
            lists.sealed = sealed.iter().map(info).collect();
            lists.active = g.segments.last().map(|s| (s.id, s.base));
            lists.epochs = g.epochs.as_slice().into();
            for (published, now) in self.shape.iter().zip(shape) {
                published.store(now, Ordering::Relaxed);
            }
        }
        self.next.store(g.next_offset, Ordering::SeqCst);
        self.durable.store(g.durable_next, Ordering::Release);
        self.first.store(g.first_offset(), Ordering::Release);
        self.unsynced.store(super::writer::unsynced_bytes(g), Ordering::Release);
        self.active_len.store(g.segments.last().map_or(0, |s| s.len), Ordering::SeqCst);
        if reshaped {
            self.version.fetch_add(1, Ordering::SeqCst);
        }
    }

    pub(crate) fn truncations(&self) -> u64 {
        self.truncations.load(Ordering::Acquire)
    }

    pub(crate) fn next_offset(&self) -> u64 {
        self.next.load(Ordering::Acquire)
    }

    pub(crate) fn durable_offset(&self) -> u64 {
        self.durable.load(Ordering::Acquire)
    }

    pub(crate) fn first_offset(&self) -> u64 {
        self.first.load(Ordering::Acquire)
    }

    pub(crate) fn unsynced_bytes(&self) -> u64 {
        self.unsynced.load(Ordering::Acquire)
    }

    /// Every segment, oldest first, the active one last: one publish's
    /// list, the active entry's next offset and length each as of that
    /// publish or a later one's of the same segment.
    pub(crate) fn segments(&self) -> Vec<SegmentInfo> {
        let ((sealed, active), (next, len)) = self.consistent(
            |lists| (Arc::clone(&lists.sealed), lists.active),
            || (self.next.load(Ordering::SeqCst), self.active_len.load(Ordering::SeqCst)),
        );
        let active = active.map(|(id, base)| SegmentInfo { id, base_offset: base, next_offset: next, size_bytes: len });
        sealed.iter().copied().chain(active).collect()
    }

    pub(crate) fn epochs(&self) -> Arc<[Epoch]> {
        Arc::clone(&self.lists.lock().epochs)
    }

    /// The generation history and the next offset of one publish (the
    /// offset possibly of a later one's that left the history as it was):
    /// where a generation ends is computed from both, and a history read
    /// before a new generation began paired with a next offset read after
    /// its appends would make the older generation end past the newer
    /// one's start (an answer that becomes a follower's truncation point).
    pub(crate) fn epochs_and_next(&self) -> (Arc<[Epoch]>, u64) {
        self.consistent(|lists| Arc::clone(&lists.epochs), || self.next.load(Ordering::SeqCst))
    }

    /// `from_lists` of the published lists and `numbers` read after them,
    /// retried until no publish rebuilt the lists in between (the sequence
    /// count: a publish stores the numbers after the lists, before its
    /// count is even again).
    fn consistent<L, N>(&self, from_lists: impl Fn(&Lists) -> L, numbers: impl Fn() -> N) -> (L, N) {
        loop {
            let before = self.version.load(Ordering::SeqCst);
            if before % 2 == 1 {
                std::thread::yield_now();
                continue;
            }
            let lists = from_lists(&self.lists.lock());
            let numbers = numbers();
            if self.version.load(Ordering::SeqCst) == before {
                return (lists, numbers);
            }
        }
    }

    /// Where the published answers differ from `g`'s, compared in full
    /// (`Err` names the first): the simulator's check after every step.
    pub(crate) fn check(&self, g: &Inner) -> Result<(), String> {
        let truth = [
            ("next offset", g.next_offset, self.next_offset()),
            ("durable offset", g.durable_next, self.durable_offset()),
            ("first offset", g.first_offset(), self.first_offset()),
            ("unsynced bytes", super::writer::unsynced_bytes(g), self.unsynced_bytes()),
            ("truncation count", g.truncations, self.truncations()),
        ];
        if let Some((what, locked, published)) = truth.iter().find(|(_, locked, published)| locked != published) {
            return Err(format!("{what} published as {published}, {locked} under the lock"));
        }
        let segments: Vec<SegmentInfo> = g.segments.iter().map(info).collect();
        if self.segments() != segments {
            return Err(format!("segments published as {:?}, {segments:?} under the lock", self.segments()));
        }
        if *self.epochs() != *g.epochs {
            return Err(format!("generations published as {:?}, {:?} under the lock", self.epochs(), g.epochs));
        }
        Ok(())
    }
}
