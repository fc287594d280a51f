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
//! included.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use felix_codec::format::epochs::Epoch;

use super::{Inner, Segment, SegmentInfo};

/// The published answers (one per shard).
#[derive(Debug, Default)]
pub(crate) struct Published {
    next: AtomicU64,
    durable: AtomicU64,
    first: AtomicU64,
    unsynced: AtomicU64,
    /// The segment list and the generation history: a short lock of their
    /// own, never held across IO.
    lists: parking_lot::Mutex<Lists>,
}

/// The lists, shared with readers by `Arc`: they change rarely (a roll,
/// a retention pass, a truncation, a new generation), so a publish rebuilds
/// one only when it changed — an append changes the active segment alone.
#[derive(Debug, Default)]
struct Lists {
    /// Every segment but the active one, oldest first.
    sealed: Arc<[SegmentInfo]>,
    /// The active segment (the newest), if there is one.
    active: Option<SegmentInfo>,
    epochs: Arc<[Epoch]>,
}

fn info(s: &Segment) -> SegmentInfo {
    SegmentInfo { id: s.id, base_offset: s.base, next_offset: s.next, size_bytes: s.len }
}

/// Whether `published` still describes `now`, judged by its length, its
/// first and its last entry. The sealed segments change only at the ends:
/// retention removes the oldest, a roll or a seal adds the newest, and a
/// truncation cuts from the newest back — each moves the length or an end.
/// (The simulator compares the whole lists after every step.)
fn same_sealed(published: &[SegmentInfo], now: &[Segment]) -> bool {
    published.len() == now.len()
        && published.first().map(|s| s.id) == now.first().map(|s| s.id)
        && published.last().copied() == now.last().map(info)
}

/// The same judgement for the generation history, which only grows at its
/// end and is cut from its end.
fn same_epochs(published: &[Epoch], now: &[Epoch]) -> bool {
    published.len() == now.len() && published.first() == now.first() && published.last() == now.last()
}

impl Published {
    /// Stores `g`'s answers (under the shard's lock, as it is let go).
    pub(crate) fn store(&self, g: &Inner) {
        self.next.store(g.next_offset, Ordering::Release);
        self.durable.store(g.durable_next, Ordering::Release);
        self.first.store(first_offset(g), Ordering::Release);
        self.unsynced.store(super::writer::unsynced_bytes(g), Ordering::Release);
        let mut lists = self.lists.lock();
        let (active, sealed) = match g.segments.split_last() {
            Some((active, sealed)) => (Some(info(active)), sealed),
            None => (None, &[][..]),
        };
        if !same_sealed(&lists.sealed, sealed) {
            lists.sealed = sealed.iter().map(info).collect();
        }
        lists.active = active;
        if !same_epochs(&lists.epochs, &g.epochs) {
            lists.epochs = g.epochs.as_slice().into();
        }
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

    /// Every segment, oldest first, the active one last (one publish's list).
    pub(crate) fn segments(&self) -> Vec<SegmentInfo> {
        let lists = self.lists.lock();
        let (sealed, active) = (Arc::clone(&lists.sealed), lists.active);
        drop(lists);
        sealed.iter().copied().chain(active).collect()
    }

    pub(crate) fn epochs(&self) -> Arc<[Epoch]> {
        Arc::clone(&self.lists.lock().epochs)
    }

    /// Where the published answers differ from `g`'s, compared in full
    /// (`Err` names the first): the simulator's check after every step.
    pub(crate) fn check(&self, g: &Inner) -> Result<(), String> {
        let truth = [
            ("next offset", g.next_offset, self.next_offset()),
            ("durable offset", g.durable_next, self.durable_offset()),
            ("first offset", first_offset(g), self.first_offset()),
            ("unsynced bytes", super::writer::unsynced_bytes(g), self.unsynced_bytes()),
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

/// The oldest stored offset: the first segment's base, or the next offset
/// when no segment is left.
fn first_offset(g: &Inner) -> u64 {
    g.segments.first().map_or(g.next_offset, |s| s.base)
}
