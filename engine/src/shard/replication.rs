//! Replication: the generation history (epochs) and divergence truncation.

use felix_codec::format::epochs::{self, bound_epochs, truncation_point, Epoch, MAX_EPOCHS};
use felix_codec::format::file_name::EPOCHS_FILE_NAME;
use felix_codec::format::record::ExpectedOffset;
use felix_codec::format::segment_header::SEGMENT_HEADER_LEN;
use felix_codec::read::reader::ChunkedReader;
use felix_codec::{CorruptionSite, Finding, Repair};

use super::walk::{walk, Flow, Seen, READ_CHUNK_BYTES};
use super::{Inner, MemIndex, Shard, Shared};
use crate::error::EngineError;

/// Appends `epoch` to the history, keeps what is still relevant to the
/// retained records (at most `MAX_EPOCHS`), and writes it durably before the
/// history in memory changes.
fn add_epoch(shared: &Shared, g: &mut Inner, epoch: Epoch) -> Result<(), EngineError> {
    let mut entries = g.epochs.clone();
    entries.push(epoch);
    let first = g.first_offset();
    let mut entries = bound_epochs(&entries, first);
    let excess = entries.len().saturating_sub(usize::from(MAX_EPOCHS));
    entries.drain(..excess);
    shared.dir.io.mutation(|| write_epochs(shared, &entries))?;
    g.epochs = entries;
    Ok(())
}

/// The shard's state once every record written so far is durable: a
/// generation recorded from here never starts past the end of the log a
/// power cut leaves (records written and not yet synced — a batch not yet
/// committed, or acknowledged under `Interval` or `NoSync` — would go, and
/// the history would name a start past the log's end: `EpochsBeyondLog`).
fn all_durable(shared: &Shared) -> Result<super::Locked<'_>, EngineError> {
    let g = shared.lock();
    shared.dir.io.mutation(|| super::writer::sync_through(shared, g, u64::MAX))
}

/// Writes the epochs file durably (temp → fsync → rename → fsync directory).
pub(crate) fn write_epochs(shared: &Shared, entries: &[Epoch]) -> Result<(), EngineError> {
    let bytes = epochs::encode(entries).map_err(|kind| {
        let site = CorruptionSite { shard: Some(shared.dir.name.clone()), segment_id: None, position: 0 };
        let finding = Finding { kind, site, end: 0, offset: None, repair: Repair::Never };
        EngineError::Corrupt { path: shared.dir.epochs(), finding: Box::new(finding) }
    })?;
    // A damaged epochs file (it read as empty) is evidence: before a sound one
    // replaces it, it is kept under a name of its own, never replaced.
    if shared.dir.io.kind(&shared.dir.epochs())?.is_some() && !super::recovery::scan_epochs(&shared.dir)?.findings.findings.is_empty() {
        shared.dir.keep_damaged_epochs()?;
    }
    shared.dir.rewrite_own_file(EPOCHS_FILE_NAME, &bytes)
}

/// Where `generation` ends in a history whose log's next offset is
/// `next_offset` (the codec's answer), or `None` when the history does not
/// hold that very generation: a broker refuses rather than answer for
/// another, since the answer becomes a follower's truncation point.
pub(crate) fn known_generation_end(epochs: &[Epoch], next_offset: u64, generation: u64) -> Option<u64> {
    felix_codec::format::epochs::end_of_generation(epochs, next_offset, generation)
        .filter(|(known, _)| *known == generation)
        .map(|(_, end)| end)
}

impl Shard {
    /// The generation history, as of the shard's last change (never waits
    /// for the shard's lock).
    #[must_use]
    pub fn epochs(&self) -> Vec<Epoch> {
        self.shared.published.epochs().to_vec()
    }

    /// Records that generation `generation` begins at the next offset.
    ///
    /// # Errors
    /// `Generation` when it does not exceed the latest; `ReadOnly`;
    /// `FailStopped`; IO failures (which stop the shard).
    pub fn begin_generation(&self, generation: u64) -> Result<(), EngineError> {
        let shared = &*self.shared;
        shared.writable()?;
        let mut g = all_durable(shared)?;
        if let Some(latest) = g.epochs.last().map(|e| e.generation) {
            if generation <= latest {
                return Err(EngineError::Generation { requested: generation, latest });
            }
        }
        let start_offset = g.next_offset;
        add_epoch(shared, &mut g, Epoch { generation, start_offset })?;
        Ok(())
    }

    /// Notes that `generation` begins at `start_offset`, durably. Returns
    /// whether anything was recorded: a generation at or below the newest
    /// already held is ignored (a leader re-reporting its own is ordinary,
    /// an older one is stale). Upstream's `record_generation`.
    ///
    /// # Errors
    /// `Generation` when `start_offset` lies before the newest generation's
    /// start or past the log's end; `ReadOnly`; `FailStopped`; IO failures.
    pub fn record_generation(&self, generation: u64, start_offset: u64) -> Result<bool, EngineError> {
        let shared = &*self.shared;
        shared.writable()?;
        let mut g = all_durable(shared)?;
        let latest = g.epochs.last().copied();
        if latest.is_some_and(|e| generation <= e.generation) {
            return Ok(false);
        }
        if latest.is_some_and(|e| start_offset < e.start_offset) || start_offset > g.next_offset {
            return Err(EngineError::Generation { requested: generation, latest: latest.map_or(0, |e| e.generation) });
        }
        add_epoch(shared, &mut g, Epoch { generation, start_offset })?;
        Ok(true)
    }

    /// Where `generation` stops in this log: the answer a leader gives a
    /// follower. `None` when the history holds no such generation (refuse
    /// rather than guess: the answer becomes a truncation point).
    ///
    /// Never waits for the shard's lock: it reads the published history and
    /// next offset, both of one publish.
    #[must_use]
    pub fn generation_end(&self, generation: u64) -> Option<u64> {
        let (epochs, next_offset) = self.shared.published.epochs_and_next();
        known_generation_end(&epochs, next_offset, generation)
    }

    /// Drops every record at or after `offset` (upstream's `truncate`):
    /// at or past the end, nothing; below the oldest record, the log is
    /// emptied and restarts at `offset`.
    ///
    /// # Errors
    /// As [`Shard::truncate_after`].
    pub fn truncate_from(&self, offset: u64) -> Result<(), EngineError> {
        self.truncate(offset, true)
    }

    /// Where this replica must cut its log, given the leader's answer to
    /// "where does generation `g` end": see [`truncation_point`].
    #[must_use]
    pub fn divergence_point(&self, leader_generation: u64, leader_end_offset: u64) -> u64 {
        let g = self.shared.lock();
        truncation_point(&g.epochs, g.next_offset, leader_generation, leader_end_offset)
    }

    /// Removes every record with an offset above `offset` (keeps `..=offset`),
    /// across segments, fixing indexes and epochs. Every change is made on
    /// disk (and synced) before the in-memory state follows it; a failure
    /// stops the shard, so nothing is ever appended past a half-done cut.
    ///
    /// # Errors
    /// `Trimmed` when `offset + 1` is below the oldest record; `ReadOnly`;
    /// `FailStopped`; damage met while finding the cut; IO failures.
    pub fn truncate_after(&self, offset: u64) -> Result<(), EngineError> {
        self.truncate(offset.saturating_add(1), false)
    }

    /// Keeps the records below `keep_next`. Below the oldest record it
    /// restarts the log at `keep_next` when `restart` (upstream's
    /// `truncate`), else answers `Trimmed`. Decided under the shard's lock,
    /// and decided again after any wait that let the lock go: a retention
    /// pass that ran meanwhile moved the oldest record.
    fn truncate(&self, keep_next: u64, restart: bool) -> Result<(), EngineError> {
        let shared = &*self.shared;
        shared.writable()?;
        let mut g = shared.lock();
        loop {
            let first = g.first_offset();
            let cut = !restart || keep_next > first;
            // A cut removes every segment after the oldest that starts at or
            // past it; a restart every segment but the oldest (which it replaces).
            let waited = if cut {
                shared.spare_flushing(&mut g, |g, id| {
                    keep_next < g.next_offset && g.segments.iter().skip(1).any(|s| s.id == id && s.base >= keep_next)
                })
            } else {
                shared.spare_flushing(&mut g, |g, id| g.segments.iter().skip(1).any(|s| s.id == id))
            };
            if waited {
                continue;
            }
            if cut {
                if keep_next >= g.next_offset {
                    return Ok(());
                }
                if keep_next < first {
                    return Err(EngineError::Trimmed { requested: keep_next, oldest: first });
                }
                return shared.dir.io.mutation(|| cut_after(shared, &mut g, keep_next));
            }
            if keep_next >= g.next_offset && g.segments.iter().all(|s| s.next == s.base) {
                return Ok(());
            }
            return shared.dir.io.mutation(|| restart_at(shared, &mut g, keep_next));
        }
    }
}

/// Empties the log and restarts it at `offset`, crash-safely: the newer
/// segments go first (newest first), then the oldest is replaced atomically
/// by an empty segment based at `offset` (temp → fsync → rename → fsync
/// directory). A crash in between leaves a prefix of the old log — never an
/// empty directory a reopen would restart at offset 0.
fn restart_at(shared: &Shared, g: &mut Inner, offset: u64) -> Result<(), EngineError> {
    // Nothing at or past `offset` is kept, and nothing is below it once the
    // log restarts: from here `durable_offset` claims no more than that (a
    // failure below stops the shard with this claim, never the old end).
    g.durable_next = g.durable_next.min(offset);
    g.verified_next = g.verified_next.min(offset);
    super::writer::write_out(shared, g)?;
    // The history first: a failure past this point leaves no generation
    // starting past the end of what remains (with no segment at all too).
    let epochs: Vec<Epoch> = g.epochs.iter().copied().filter(|e| e.start_offset < offset).collect();
    if epochs != g.epochs {
        write_epochs(shared, &epochs)?;
    }
    g.epochs = epochs;
    let Some(oldest) = g.segments.first().map(|s| s.id) else {
        g.next_offset = offset;
        g.durable_next = offset;
        g.verified_next = g.verified_next.min(offset);
        g.visible_next = offset;
        // Counted as a cut like any other, though no segment held a record:
        // a pending batch compares its count, never the shape of the log.
        g.note_cut(offset);
        return super::writer::start_segment(shared, g);
    };
    for s in g.segments.iter().skip(1).rev() {
        shared.dir.io.remove_if_exists(&shared.dir.index(s.id))?;
        shared.dir.io.remove_if_exists(&shared.dir.log(s.id))?;
    }
    shared.dir.io.sync_dir(&shared.dir.path)?;
    let header = felix_codec::format::segment_header::SegmentHeader::new(offset, super::now_micros()).encode();
    shared.dir.replace_file_durably(&felix_codec::format::file_name::segment_file_name(oldest), &header)?;
    let mut seg = super::Segment {
        id: oldest,
        base: offset,
        len: SEGMENT_HEADER_LEN as u64,
        next: offset,
        index: MemIndex::new(shared.config.index_spacing_bytes),
        index_on_disk: 0,
        last_timestamp: 0,
    };
    super::recovery::write_index(&shared.dir, &mut seg)?;
    g.segments = vec![seg];
    g.next_offset = offset;
    g.durable_next = offset;
    g.durable_len = SEGMENT_HEADER_LEN as u64;
    g.visible_next = offset;
    g.visible_len = SEGMENT_HEADER_LEN as u64;
    g.next_segment_id = super::id_after(Some(oldest));
    g.note_cut(offset);
    Ok(())
}

/// The IO of [`Shard::truncate_after`]: any failure in it stops the shard.
fn cut_after(shared: &Shared, g: &mut Inner, keep_next: u64) -> Result<(), EngineError> {
    // The records past the cut are going: from here `durable_offset` claims
    // none of them (a failure below stops the shard with this claim, never
    // the old end a power cut may no longer keep).
    g.durable_next = g.durable_next.min(keep_next);
    g.verified_next = g.verified_next.min(keep_next);
    // The cut walks the active segment's file: every record it counts is in it.
    super::writer::write_out(shared, g)?;
    // The history first: a failure (or crash) anywhere below leaves every
    // generation starting at or before the end of the log that remains, as
    // the codec requires (`EpochsBeyondLog`); the records past the cut then
    // belong to the last generation kept until the cut is made again.
    let epochs: Vec<Epoch> = g.epochs.iter().copied().filter(|e| e.start_offset < keep_next).collect();
    if epochs != g.epochs {
        write_epochs(shared, &epochs)?;
    }
    g.epochs = epochs;
    // Whole segments that start at or after the cut go first, newest first.
    let mut drop_from = g.segments.len();
    while drop_from > 1 && g.segments.get(drop_from - 1).is_some_and(|s| s.base >= keep_next) {
        drop_from -= 1;
    }
    let doomed: Vec<u64> = g.segments.get(drop_from..).unwrap_or(&[]).iter().rev().map(|s| s.id).collect();
    for id in &doomed {
        shared.dir.io.remove_if_exists(&shared.dir.index(*id))?;
        shared.dir.io.remove_if_exists(&shared.dir.log(*id))?;
    }
    if !doomed.is_empty() {
        shared.dir.io.sync_dir(&shared.dir.path)?;
    }
    g.segments.truncate(drop_from);
    let Some(seg) = g.segments.last().cloned() else { return Ok(()) };
    // Find where `keep_next` starts by walking the record headers from the
    // segment's start (the chain, not an index hint), planning the kept
    // records' index entries on the way.
    let path = shared.dir.log(seg.id);
    let mut cut = seg.len;
    let mut index = MemIndex::new(shared.config.index_spacing_bytes);
    let mut last_timestamp = 0;
    // Every kept record is verified whole (payload too): new records are
    // never appended behind a damaged one, where no reader could reach them.
    let reader = ChunkedReader::new(SEGMENT_HEADER_LEN as u64, ExpectedOffset::Exactly(seg.base), seg.len);
    let walked = walk(&shared.dir.io, &path, seg.len, reader, READ_CHUNK_BYTES, |seen| {
        let Seen::Record(p, r) = seen else { return Flow::Continue };
        let h = r.header;
        if h.offset >= keep_next {
            cut = p;
            return Flow::Stop;
        }
        let _ = index.observe(h.offset, p);
        last_timestamp = h.timestamp_micros;
        Flow::Continue
    })?;
    if let Some(e) = walked.defect {
        let site = CorruptionSite { shard: Some(shared.dir.name.clone()), segment_id: Some(seg.id), position: e.position };
        let finding = Finding { kind: e.kind, site, end: e.end, offset: e.offset, repair: Repair::Never };
        return Err(EngineError::Corrupt { path, finding: Box::new(finding) });
    }
    shared.dir.io.set_len(&path, cut)?;
    shared.dir.io.sync_data(&path)?;
    index.verified = index.entries.len();
    let mut rebuilt = seg;
    rebuilt.index = index;
    rebuilt.len = cut;
    rebuilt.next = keep_next;
    rebuilt.last_timestamp = last_timestamp;
    super::recovery::write_index(&shared.dir, &mut rebuilt)?;
    if let Some(last) = g.segments.last_mut() {
        *last = rebuilt;
    }
    g.next_offset = keep_next;
    g.durable_next = keep_next;
    g.durable_len = cut;
    g.visible_next = keep_next;
    g.visible_len = cut;
    g.next_segment_id = super::id_after(g.segments.last().map(|s| s.id));
    g.note_cut(keep_next);
    Ok(())
}
