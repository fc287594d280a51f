//! Appends: encode, write, `fdatasync`, acknowledge. Appends that arrive
//! while a sync is in flight share the next one (group commit). Rollover
//! counts the bytes already buffered in the batch, so no segment overshoots
//! `segment_size_bytes` by more than one record (a record larger than a
//! segment goes alone into a fresh one). Under `Durability::Interval` a
//! background flusher syncs at most one interval after a write.

use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};

use felix_codec::index::{IndexEntry, IndexHeader};
use felix_codec::record::{encode_record, RECORD_HEADER_LEN};
use felix_codec::segment_header::{SegmentHeader, SEGMENT_HEADER_LEN};
use felix_codec::MAX_PAYLOAD_BYTES;

use super::{now_micros, Durability, Inner, MemIndex, Segment, Shard, Shared};
use crate::error::EngineError;

impl Shard {
    /// Appends a batch; returns the offsets assigned, once durable (or, under
    /// `Durability::Interval`, once written).
    ///
    /// # Errors
    /// `TooLarge` or `OffsetsExhausted` (nothing written), `ReadOnly`,
    /// `FailStopped`, or the IO failure that stopped the shard.
    pub fn append(&self, payloads: &[&[u8]]) -> Result<std::ops::Range<u64>, EngineError> {
        let shared = &*self.shared;
        shared.writable()?;
        if let Some(p) = payloads.iter().find(|p| p.len() > MAX_PAYLOAD_BYTES as usize) {
            return Err(EngineError::TooLarge { len: p.len() });
        }
        let mut g = shared.lock();
        let first = g.next_offset;
        let records = payloads.len() as u64;
        // Offsets up to u64::MAX - 1 are assigned: u64::MAX has no successor.
        if records > u64::MAX - first {
            return Err(EngineError::OffsetsExhausted { next: first, records });
        }
        let now = now_micros();
        shared.dir.io.mutation(move || {
            let mut buf = Vec::new();
            for payload in payloads {
                let record_len = (RECORD_HEADER_LEN + payload.len()) as u64;
                let needs_roll = match g.segments.last() {
                    None => true,
                    Some(s) => {
                        let holds_records = s.next > s.base || !buf.is_empty();
                        holds_records && s.len + buf.len() as u64 + record_len > shared.config.segment_size_bytes
                    }
                };
                if needs_roll {
                    flush(shared, &mut g, &mut buf)?;
                    roll(shared, &mut g)?;
                }
                let offset = g.next_offset;
                let Some(seg) = g.segments.last_mut() else { break };
                let position = seg.len + buf.len() as u64;
                encode_record(offset, now, payload, &mut buf).map_err(|_| EngineError::TooLarge { len: payload.len() })?;
                let _ = seg.index.observe(offset, position);
                seg.index.verified = seg.index.entries.len();
                seg.next = offset + 1;
                seg.last_timestamp = now;
                g.next_offset = offset + 1;
            }
            flush(shared, &mut g, &mut buf)?;
            let end = g.next_offset;
            match shared.config.durability {
                Durability::EveryBatch => drop(sync_through(shared, g, end)?),
                Durability::Interval { .. } => {
                    // Acknowledged once written: visible to readers now, durable within the interval.
                    g.visible_next = g.next_offset;
                    g.visible_len = g.segments.last().map_or(0, |s| s.len);
                    drop(g);
                    shared.flusher_wake.notify_all();
                }
            }
            Ok(first..end)
        })
    }
}

/// Writes buffered records to the active segment, then its new index entries.
fn flush(shared: &Shared, g: &mut Inner, buf: &mut Vec<u8>) -> Result<(), EngineError> {
    if buf.is_empty() {
        return Ok(());
    }
    let dir = &shared.dir;
    let Some(seg) = g.segments.last_mut() else { return Ok(()) };
    dir.io.write_at(&dir.log(seg.id), seg.len, buf)?;
    seg.len += buf.len() as u64;
    buf.clear();
    write_new_index_entries(shared, seg)
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
    shared.dir.io.write_at(&shared.dir.index(seg.id), at, &bytes)?;
    seg.index_on_disk = seg.index.entries.len();
    Ok(())
}

/// Seals the active segment (fsync) and creates the next one.
fn roll(shared: &Shared, g: &mut Inner) -> Result<(), EngineError> {
    if let Some(active) = g.segments.last() {
        shared.dir.io.sync_data(&shared.dir.log(active.id))?;
        g.durable_next = g.next_offset;
        g.durable_len = active.len;
        g.visible_next = g.visible_next.max(g.durable_next);
    }
    let id = g.next_segment_id;
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
    g.next_segment_id = id.saturating_add(1);
    g.durable_len = SEGMENT_HEADER_LEN as u64;
    g.visible_len = SEGMENT_HEADER_LEN as u64;
    Ok(())
}

/// Creates segment `id` at `base`: temp → header → fsync → rename → fsync
/// directory, so a segment under its real name always has a durable header.
/// Its index starts as a bare header (an orphaned index of that id — derived
/// data of a segment that no longer exists — is replaced).
fn create_segment(shared: &Shared, id: u64, base: u64) -> Result<(), EngineError> {
    let dir = &shared.dir;
    let header = SegmentHeader::new(base, now_micros()).encode();
    dir.write_file_durably(&felix_codec::file_name::segment_file_name(id), &header)?;
    let index = dir.index(id);
    dir.io.remove_if_exists(&index)?;
    dir.io.create(&index)?;
    dir.io.write_at(&index, 0, &IndexHeader::new(base).encode())
}

/// Group commit: waits until offsets below `end` are durable, leading a sync
/// when none is in flight, sharing one when it is. Returns the guard.
pub(crate) fn sync_through<'a>(shared: &'a Shared, mut g: MutexGuard<'a, Inner>, end: u64) -> Result<MutexGuard<'a, Inner>, EngineError> {
    loop {
        shared.dir.io.check()?;
        if g.durable_next >= end {
            return Ok(g);
        }
        if g.syncing {
            g = shared.synced.wait(g).unwrap_or_else(std::sync::PoisonError::into_inner);
            continue;
        }
        let Some(seg) = g.segments.last() else { return Ok(g) };
        let (id, path, target_len) = (seg.id, shared.dir.log(seg.id), seg.len);
        let target = g.next_offset;
        g.syncing = true;
        drop(g);
        let result = shared.dir.io.sync_data(&path);
        g = shared.lock();
        g.syncing = false;
        shared.synced.notify_all();
        result?;
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
    }
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
                g = shared.flusher_wake.wait(g).unwrap_or_else(std::sync::PoisonError::into_inner);
                continue;
            }
            let deadline = Instant::now() + interval;
            while let Some(left) = deadline.checked_duration_since(Instant::now()).filter(|d| !d.is_zero()) {
                if g.shutdown {
                    return;
                }
                g = shared.flusher_wake.wait_timeout(g, left).unwrap_or_else(std::sync::PoisonError::into_inner).0;
            }
            let end = g.next_offset;
            g = match sync_through(&shared, g, end) {
                Ok(g) => g,
                Err(_) => return, // latched: every later call reports it
            };
        }
    })
}
