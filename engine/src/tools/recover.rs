//! `felix-storage recover`: the plan comes from the same full inspection
//! `felix-storage inspect` runs (`tools::inspect::drive_shard`: every segment
//! scanned, every index checked against its record chain), read through the
//! `Io` the run is given, through the codec's one planner; the real run
//! takes the shard's writer lock, plans under it, and executes exactly that
//! plan with the same executor the engine uses on open. So `recover` never
//! calls a shard clean in which `inspect` finds damage, and never cuts under
//! a live writer.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use felix_codec::format::file_name::{classify, EntryName};
use felix_codec::format::index::IndexEntry;
use felix_codec::format::record::ExpectedOffset;
use felix_codec::format::segment_header::{SegmentHeader, SEGMENT_HEADER_LEN};
use felix_codec::read::reader::ChunkedReader;
use felix_codec::shard::inspect::InputFile;
use felix_codec::shard::recovery::{plan_shard, Action, ShardFacts, ShardPlan};
use felix_codec::verdict::repair::RepairOptions;

use crate::error::EngineError;
use crate::io::{EntryType, Io};
use crate::shard::dir::ShardDir;
use crate::shard::walk::{walk, Flow, Seen, HEADER_CHUNK_BYTES};
use crate::shard::{recovery, MemIndex, Segment};
use crate::tools::inspect::{self, Writer};

/// What a recovery run planned and did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The plan (executed unless refused or a dry run).
    pub plan: ShardPlan,
    /// Whether its actions ran.
    pub executed: bool,
    /// Evidence files written (the names actually used).
    pub evidence: Vec<PathBuf>,
    /// A writer held the shard during a dry run: its tail may be in flight.
    pub writer_live: bool,
    /// The failure that stopped the plan part way (a full disk, an IO
    /// error): only the first [`Outcome::actions_done`] actions ran.
    pub failure: Option<EngineError>,
    /// How many of the plan's actions, from the first, ran to their end.
    pub actions_done: usize,
    /// Why the directory was left as it was without a lock taken, a file
    /// created or removed (the plan is then what `inspect` finds there, never
    /// run): no segment and no index names it a shard.
    pub left_alone: Option<String>,
}

/// Why recovery leaves the directory listed as `listing` as it is: one with
/// no segment and no index is not known to be a shard (a backup of an epochs
/// file, moved evidence, a root holding a loose file), so recovery takes no
/// lock in it, and creates and removes nothing there; `inspect` still judges it.
fn left_alone(listing: &crate::shard::dir::Listing) -> Option<String> {
    (listing.segments.is_empty() && listing.indexes.is_empty()).then(|| {
        "no segment and no index names this folder a shard: recovery took no lock and created or removed nothing here \
         (inspect judges its files)"
            .to_string()
    })
}

/// The plan for the shard in `dir`, from a full inspection. Changes nothing.
///
/// # Errors
/// `NoShard`, `NotRegular` (a link or a file where the shard should be);
/// `NotRegular` for a Felix name on a link; a file that cannot be read.
pub fn plan(io: Arc<dyn Io>, dir: &Path, options: RepairOptions) -> Result<Outcome, EngineError> {
    let shard_dir = ShardDir::new(io, dir);
    shard_dir.must_be_dir()?;
    let before = shard_dir.writer_live();
    let mut outcome = plan_with(&shard_dir, options, Writer::Probe)?;
    outcome.writer_live = before || shard_dir.writer_live();
    Ok(outcome)
}

fn plan_with(dir: &ShardDir, options: RepairOptions, writer: Writer) -> Result<Outcome, EngineError> {
    // A dry run refuses what the real run refuses (a Felix name on a link, a
    // directory, a FIFO), with the same error.
    let listing = dir.listing()?;
    let facts = inspect_for_plan(dir, writer)?;
    Ok(Outcome {
        plan: plan_shard(&facts, options),
        executed: false,
        evidence: Vec::new(),
        writer_live: false,
        failure: None,
        actions_done: 0,
        left_alone: left_alone(&listing),
    })
}

/// The facts a plan is drawn from: the shard inspection `inspect` runs,
/// read through the shard's `Io` (so a simulated disk's faults reach the
/// plan's reads too), over the files with the format's names — a foreign
/// file brings no fact a plan uses, and `listing` has refused a Felix name
/// on anything but a regular file. A reader (`Writer::Probe`) probes the
/// writer's lock again once the newest segment is read: a writer that
/// started meanwhile makes its tail a record in flight, not damage.
fn inspect_for_plan(dir: &ShardDir, writer: Writer) -> Result<ShardFacts, EngineError> {
    let mut entries = dir.io.list(&dir.path)?;
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    let mut files = Vec::new();
    for entry in entries {
        let Some(name) = entry.name.to_str() else { continue };
        if entry.kind != EntryType::File || matches!(classify(name), EntryName::Foreign) {
            continue;
        }
        let path = dir.file(name);
        let size = dir.io.len(&path)?;
        files.push((path, name.to_string(), size));
    }
    let inputs =
        files.iter().map(|(path, name, size)| InputFile { path: path.display().to_string(), name: name.clone(), size: *size }).collect();
    let mut probe = || dir.writer_live();
    let probe: Option<&mut dyn FnMut() -> bool> = (writer == Writer::Probe).then_some(&mut probe);
    let shard = inspect::drive_shard(inspect::shard_name(&**dir.io.inner(), &dir.path), inputs, probe, &mut (), |i, scan, _| {
        let Some((path, _, size)) = files.get(i) else { return Ok(()) };
        if scan.needs_bytes() {
            recovery::feed_file(dir, path, *size, |chunk| scan.feed(chunk, &mut ()))?;
        } else {
            scan.skip(*size);
        }
        Ok::<_, EngineError>(())
    })
    .map_err(|(_, e)| e)?;
    Ok(shard.finish_with_facts(dir.path.display().to_string()).1)
}

/// Takes the shard's writer lock (failing at once with `Locked` unless
/// `wait`), plans from a full inspection and executes the plan (none of it
/// when it refuses). Rebuilt indexes use `index_spacing_bytes`. With
/// `reviewed` (a plan an operator read, from a dry run), the plan made under
/// the lock must do the same work (`ShardPlan::differs_from`), else nothing
/// is changed. A failure once the plan began to run (a full disk) is not an
/// error but the outcome's [`Outcome::failure`], with what ran before it:
/// what was done must still be told.
///
/// # Errors
/// `NoShard`, `Locked`, `NotRegular`, `PlanChanged`; IO failures before
/// anything was changed.
pub fn recover(
    io: Arc<dyn Io>,
    dir: &Path,
    options: RepairOptions,
    wait: bool,
    index_spacing_bytes: u64,
    reviewed: Option<&ShardPlan>,
) -> Result<Outcome, EngineError> {
    let shard_dir = ShardDir::new(io, dir);
    shard_dir.must_be_dir()?;
    // Refuses a Felix name on a link or a directory before anything is changed.
    if left_alone(&shard_dir.listing()?).is_some() {
        return plan_with(&shard_dir, options, Writer::Probe);
    }
    let _lock = shard_dir.lock(wait)?;
    // We hold the lock: no writer is live, and a torn tail is a torn tail.
    let mut outcome = plan_with(&shard_dir, options, Writer::Excluded)?;
    if let Some(what) = reviewed.and_then(|r| outcome.plan.differs_from(r)) {
        return Err(EngineError::PlanChanged { dir: dir.to_path_buf(), what });
    }
    let mut rebuild = |d: &ShardDir, id: u64| rebuild_index(d, id, index_spacing_bytes);
    let mut done = recovery::Executed::default();
    let ran = recovery::execute_counted(&shard_dir, &outcome.plan, &mut rebuild, &mut done);
    outcome.executed = !outcome.plan.refused();
    outcome.actions_done = if outcome.executed { done.actions } else { 0 };
    outcome.failure = ran.err();
    name_evidence_used(&mut outcome.plan, &done.evidence);
    outcome.evidence = done.evidence.into_iter().map(|n| dir.join(n)).collect();
    Ok(outcome)
}

/// Puts the evidence names the run actually used (a name already taken gets
/// a `-N` suffix) into the plan's actions, in the order they were written,
/// so what `recover` prints is what it did.
fn name_evidence_used(plan: &mut ShardPlan, used: &[String]) {
    let mut used = used.iter();
    for action in &mut plan.actions {
        let slot = match action {
            Action::Cut { evidence, .. } => evidence,
            Action::RemoveUnfinished { evidence: Some(evidence), .. } | Action::RemoveOrphanIndex { evidence: Some(evidence), .. } => {
                evidence
            }
            _ => continue,
        };
        if let Some(name) = used.next() {
            name.clone_into(slot);
        }
    }
}

/// Rewrites segment `id`'s index from its record chain (headers walked from
/// the start; the plan ran any cut first).
fn rebuild_index(dir: &ShardDir, id: u64, spacing: u64) -> Result<(), EngineError> {
    let path = dir.log(id);
    let len = dir.io.len(&path)?;
    let mut head = [0u8; SEGMENT_HEADER_LEN];
    let n = usize::try_from(len).unwrap_or(usize::MAX).min(SEGMENT_HEADER_LEN);
    let head = head.get_mut(..n).unwrap_or_default();
    dir.io.read_exact_at(&path, 0, head)?;
    let Ok((header, _)) = SegmentHeader::decode(head) else { return Ok(()) };
    let mut index = MemIndex::new(spacing);
    let reader = ChunkedReader::headers_only(SEGMENT_HEADER_LEN as u64, ExpectedOffset::Exactly(header.base_offset), len);
    walk(&dir.io, &path, len, reader, HEADER_CHUNK_BYTES, |seen| {
        if let Seen::Header(p, h) = seen {
            let _ = index.observe(h.offset, p);
        }
        Flow::Continue
    })?;
    let mut seg = Segment {
        id,
        base: header.base_offset,
        len,
        next: index.entries.last().map_or(header.base_offset, |e: &IndexEntry| e.offset),
        index,
        index_on_disk: 0,
        last_timestamp: 0,
    };
    recovery::write_index(dir, &mut seg)
}
