//! Recovery on open. It gathers facts with the codec's own judges, asks the
//! codec for the plan ([`felix_codec::shard::recovery::plan_shard`]) and executes
//! exactly that plan — or, read-only, applies it in memory only.
//!
//! What is checked, and what it costs:
//! - the **newest** segment is scanned in full with the codec's scanner and
//!   its index checked against the record chain ([`IndexCheck`]): the same
//!   judges `felix-storage inspect` uses;
//! - a **sealed** segment gets its header decoded, its index structure
//!   checked ([`quick_check`]) and the records after its last entry read
//!   strictly. When that is not enough (no usable index, or the tail does
//!   not read), its record headers are walked from the start (28 bytes per
//!   record, payloads skipped) to rebuild the index, and the last interval is
//!   read strictly. Entries of a quick-checked index are verified against
//!   the record chain lazily, by the first read that uses them;
//! - the epochs file is read up to its largest valid size; anything longer
//!   is damaged and reads as empty.

use felix_codec::format::epochs::{Epoch, MAX_EPOCHS_FILE_LEN};
use felix_codec::format::file_name::{evidence_name, index_evidence_name, index_file_name, segment_file_name};
use felix_codec::format::index::{IndexEntry, IndexHeader};
use felix_codec::format::record::ExpectedOffset;
use felix_codec::format::segment_header::{SegmentHeader, SEGMENT_HEADER_LEN};
use felix_codec::read::reader::{ChunkedReader, ReadError};
use felix_codec::read::scan::index::quick_check;
use felix_codec::read::scan::{EpochsScanner, IndexCheck, IndexScanner, Item, RecordStatus, ScanContext, SegmentScanner};
use felix_codec::shard::recovery::{plan_shard, Action, IndexFacts, IndexFile, IndexProblem, SegmentFacts, ShardFacts, ShardPlan};
use felix_codec::shard::tail::{abandoned_tail, discontinuity, TailShape};
use felix_codec::verdict::repair::{repair_verdict, Place, RepairOptions};
use felix_codec::{CorruptionKind, CorruptionSite, Finding, Repair};

use super::dir::ShardDir;
use super::walk::{walk, Flow, ReadBuf, Seen, HEADER_CHUNK_BYTES, READ_CHUNK_BYTES};
use super::{Config, MemIndex, Recovery, Segment};
use crate::error::EngineError;

/// Bytes read per step when recovery scans a whole segment.
const SCAN_CHUNK_BYTES: usize = 1 << 20;
/// Bytes read per step from an index file.
const INDEX_CHUNK_BYTES: usize = 64 << 10;
/// Segments over this size are read on a second thread while being scanned.
const READ_AHEAD_FROM_BYTES: u64 = 32 << 20;

/// Whether recovery may change the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A writer: the plan is executed.
    Write,
    /// A reader: the plan is applied in memory only.
    ReadOnly,
}

/// The shard as recovery leaves it.
#[derive(Debug)]
pub(crate) struct Recovered {
    pub(crate) segments: Vec<Segment>,
    pub(crate) next_offset: u64,
    pub(crate) next_segment_id: Option<u64>,
    pub(crate) epochs: Vec<Epoch>,
    pub(crate) recovery: Recovery,
    /// A reader's shard that recovery refuses: where reads past the last
    /// readable record stop, and why.
    pub(crate) unreadable: Option<(std::path::PathBuf, Finding)>,
}

/// One segment after its check.
#[derive(Debug)]
struct Checked {
    facts: SegmentFacts,
    index: IndexFacts,
    /// `None` when the segment cannot be used (its damage refuses the shard) or is unfinished.
    state: Option<Segment>,
    /// For a sealed segment whose damage refuses the shard: what a reader
    /// can still use (its header read; records up to the damage), with
    /// `next` past the last record met before it.
    damaged: Option<Segment>,
}

fn finding_from(dir: &ShardDir, id: u64, e: &ReadError, place: Place) -> Finding {
    let site = CorruptionSite { shard: Some(dir.name.clone()), segment_id: Some(id), position: e.position };
    Finding { kind: e.kind.clone(), site, end: e.end, offset: e.offset, repair: repair_verdict(&e.kind, place) }
}

fn ctx(dir: &ShardDir, id: u64, newest: bool, writer_live: bool) -> ScanContext {
    ScanContext { shard: Some(dir.name.clone()), segment_id: Some(id), newest_segment: newest, writer_live }
}

/// Recovers the shard in `dir` (see the module doc).
pub(crate) fn recover(dir: &ShardDir, config: &Config, mode: Mode) -> Result<Recovered, EngineError> {
    let started = std::time::Instant::now();
    let listing = dir.listing()?;
    // A reader probes the writer's lock before and (for the newest segment,
    // whose tail a writer that started meanwhile may be writing) after the scan.
    let mut writer_live = mode == Mode::ReadOnly && dir.writer_live();
    let mut facts = ShardFacts {
        path: dir.path.display().to_string(),
        temporaries: listing.temporaries.clone(),
        evidence_present: listing.evidence.clone(),
        ..ShardFacts::default()
    };
    let mut checked = check_segments(dir, &listing.segments, config, mode, &mut writer_live)?;
    mark_discontinuities(dir, &mut checked)?;
    for &id in &listing.indexes {
        let size = dir.io.len(&dir.index(id))?;
        facts.index_files.push(IndexFile { file: index_file_name(id), id, size });
    }
    let mut warnings = Vec::new();
    let epochs = load_epochs(dir, listing.epochs, &mut facts, &mut warnings)?;
    for c in &checked {
        facts.segments.push(c.facts.clone());
        facts.indexes.push(c.index.clone());
    }
    let plan = plan_shard(&facts, RepairOptions { repair_checksum_tail: config.repair_checksum_tail });
    let refused = plan.refused();
    if refused && mode == Mode::Write {
        return Err(refusal(dir, &plan, &facts));
    }
    let (mut segments, unreadable) = if refused { readable_despite_damage(dir, checked) } else { (usable(checked), None) };
    if refused {
        warnings.extend(refused_warning(&plan, unreadable.as_ref()));
    }
    let evidence = if mode == Mode::Write { execute_with_indexes(dir, &plan, &mut segments)? } else { in_memory(&mut segments) };
    if writer_live {
        warnings.push("shard is open for writing; the tail may be in flight".into());
    }
    if mode == Mode::Write {
        record_metrics(&plan, started, segments.len());
    }
    // A removed unfinished segment's id is free again.
    let next_segment_id = super::id_after(segments.last().map(|s| s.id));
    // With no segment left, the log resumes where its history says it was (never below it).
    let next_offset = segments.last().map_or_else(|| epochs.last().map_or(0, |e| e.start_offset), |s| s.next);
    let recovery = Recovery {
        plan,
        executed: mode == Mode::Write,
        evidence: evidence.into_iter().map(|n| dir.file(&n)).collect(),
        warnings,
        writer_live,
    };
    Ok(Recovered { segments, next_offset, next_segment_id, epochs, recovery, unreadable })
}

/// Every segment checked in order: the newest in full (a reader re-probing
/// the writer's lock after its scan), the sealed ones by their quick check.
fn check_segments(dir: &ShardDir, ids: &[u64], config: &Config, mode: Mode, writer_live: &mut bool) -> Result<Vec<Checked>, EngineError> {
    let mut checked = Vec::with_capacity(ids.len());
    let newest = ids.last().copied();
    for &id in ids {
        let c = if Some(id) == newest {
            check_newest(dir, id, config, (mode == Mode::ReadOnly).then_some(&mut *writer_live))?
        } else {
            check_sealed(dir, id, config)?
        };
        checked.push(c);
    }
    // Newest segments that never took effect (an unfinished creation, a
    // rollover never swapped in) are removed by the plan — the codec's rule,
    // as `inspect` applies it — and the one before them is then the newest:
    // it is scanned in full and judged as the newest now, so that what the
    // next open would find there (a torn tail, an index short of its
    // records) is planned by this recovery (simulator seed 341995).
    let mut shapes: Vec<TailShape> = checked.iter().map(tail_shape).collect();
    // A sealed segment's check stops at its first damage; the end the codec
    // measures the next segment's base by lies after its last intact record,
    // past the damage: a full scan tells it, for the segments before the
    // newest ones that may never have taken effect.
    for k in (1..checked.len()).rev() {
        if !shapes.get(k).is_some_and(|s| s.unfinished || s.empty_at.is_some()) {
            break;
        }
        if let (Some(c), Some(shape)) = (checked.get(k - 1), shapes.get_mut(k - 1)) {
            if c.state.is_none() && c.damaged.is_some() {
                shape.next_offset = scanned_end(dir, c.facts.id)?;
            }
        }
    }
    let gone = abandoned_tail(&shapes);
    let keep = checked.len() - gone;
    for c in checked.iter_mut().skip(keep) {
        c.facts.unfinished = true;
        c.facts.newest = true;
        c.state = None;
        c.damaged = None;
    }
    if let Some(before) = keep.checked_sub(1).filter(|_| gone > 0).and_then(|k| checked.get_mut(k)) {
        let full = check_newest(dir, before.facts.id, config, None)?;
        // A prefix of a header is an unfinished creation only as the newest
        // file: behind a later segment it is damage, as `inspect` judges it
        // (the codec judges the segment before the removed ones as the
        // newest for its tail, never as an unfinished creation).
        if !full.facts.unfinished {
            *before = full;
        }
    }
    Ok(checked)
}

/// The offset after the last intact record of segment `id` (its base when
/// it holds none), as the codec's full scan tells it; `None` when its header
/// is rejected ([`TailShape::next_offset`]).
fn scanned_end(dir: &ShardDir, id: u64) -> Result<Option<u64>, EngineError> {
    Ok(full_scan(dir, id)?.told_end())
}

/// Segment `id` scanned in full by the codec's scanner, as `inspect` scans it.
fn full_scan(dir: &ShardDir, id: u64) -> Result<felix_codec::read::scan::SegmentSummary, EngineError> {
    let path = dir.log(id);
    let len = dir.io.len(&path)?;
    let mut scanner = SegmentScanner::new(ctx(dir, id, false, false));
    let mut sink = |_: Item<'_>| {};
    feed_file(dir, &path, len, |chunk| scanner.feed(chunk, &mut sink))?;
    Ok(scanner.finish(&mut sink))
}

/// What the codec's [`abandoned_tail`] needs of a checked segment.
fn tail_shape(c: &Checked) -> TailShape {
    let state = c.state.as_ref().or(c.damaged.as_ref());
    let header_only = c.facts.size == SEGMENT_HEADER_LEN as u64 && c.facts.findings.is_empty();
    TailShape {
        unfinished: c.facts.unfinished,
        empty_at: state.filter(|s| header_only && s.next == s.base).map(|s| s.base),
        next_offset: state.map(|s| s.next),
    }
}

/// Consecutive segments continue each other's offsets, by the codec's rule
/// ([`discontinuity`], as `inspect` judges them): a segment whose base is not
/// where its predecessor tells the log ends gets a `SegmentDiscontinuity`.
/// A sealed segment whose damage refuses the shard is scanned in full first,
/// as `inspect` scans it: every finding of it is planned (the quick check
/// stops at the first), and the end it tells lies past its damage.
fn mark_discontinuities(dir: &ShardDir, checked: &mut [Checked]) -> Result<(), EngineError> {
    // The end the segment before tells, and whether its tail is damaged.
    let mut told: (Option<u64>, bool) = (None, false);
    for c in checked {
        // A segment recovery removes continues nothing.
        if c.facts.unfinished {
            continue;
        }
        let scanned = match (&c.state, &c.damaged) {
            (None, Some(_)) if !c.facts.newest => Some(rescan_damaged(dir, &mut c.facts)?),
            _ => None,
        };
        let base = c.state.as_ref().or(c.damaged.as_ref()).map(|s| s.base);
        if let Some(kind) = base.and_then(|base| discontinuity(told.0, told.1, base)) {
            let at = felix_codec::format::segment_header::BASE_OFFSET_AT as u64;
            let site = CorruptionSite { shard: Some(dir.name.clone()), segment_id: Some(c.facts.id), position: at };
            c.facts.findings.push(Finding { kind, site, end: at + 8, offset: None, repair: Repair::Never });
            // In byte order, as `inspect` lists them.
            c.facts.findings.sort_by_key(Finding::position);
        }
        told = match (scanned, &c.state) {
            (Some(s), _) => s,
            (None, Some(s)) => (Some(s.next), false),
            (None, None) => (None, false),
        };
    }
    Ok(())
}

/// Scans a damaged sealed segment in full with the codec's scanner: its
/// findings become every one the scanner reports (the quick check stops at
/// the first), its clean prefix the scanner's; returns the end it tells and
/// whether its tail is damaged.
fn rescan_damaged(dir: &ShardDir, facts: &mut SegmentFacts) -> Result<(Option<u64>, bool), EngineError> {
    let summary = full_scan(dir, facts.id)?;
    let told = (summary.told_end(), summary.tail_damaged());
    facts.findings = summary.findings.findings;
    facts.findings.sort_by_key(Finding::position);
    facts.clean_prefix_end = summary.clean_prefix_end;
    Ok(told)
}

/// The plan executed, each rebuilt index written from its segment's entries,
/// then every other index the check asked to rewrite; the evidence names.
fn execute_with_indexes(dir: &ShardDir, plan: &ShardPlan, segments: &mut [Segment]) -> Result<Vec<String>, EngineError> {
    let mut rebuild = |dir: &ShardDir, id: u64| match segments.iter_mut().find(|s| s.id == id) {
        Some(seg) => write_index(dir, seg),
        None => Ok(()),
    };
    let evidence = execute(dir, plan, &mut rebuild)?;
    for seg in segments.iter_mut().filter(|s| s.index.rewrite) {
        write_index(dir, seg)?;
    }
    Ok(evidence)
}

/// A reader applies the plan in memory only: its indexes count as on disk.
fn in_memory(segments: &mut [Segment]) -> Vec<String> {
    for s in segments {
        s.index_on_disk = s.index.entries.len();
    }
    Vec::new()
}

fn record_metrics(plan: &ShardPlan, started: std::time::Instant, segments: usize) {
    use crate::metrics_names as names;
    for action in &plan.actions {
        match action {
            Action::Cut { bytes, .. } => metrics::counter!(names::RECOVERY_TRUNCATED_BYTES).increment(*bytes),
            Action::RemoveUnfinished { .. } => metrics::counter!(names::RECOVERY_ABANDONED_ROLLS_TOTAL).increment(1),
            Action::RebuildIndex { .. } => metrics::counter!(names::RECOVERY_INDEX_REBUILDS_TOTAL).increment(1),
            _ => {}
        }
    }
    metrics::histogram!(names::RECOVERY_DURATION_SECONDS).record(started.elapsed().as_secs_f64());
    #[allow(clippy::cast_precision_loss)]
    metrics::gauge!(names::SEGMENT_COUNT).set(segments as f64);
}

/// The segments a shard whose plan is not refused keeps (an unfinished one
/// is removed by the plan).
fn usable(checked: Vec<Checked>) -> Vec<Segment> {
    checked.into_iter().filter_map(|c| c.state).collect()
}

/// A reader's view of a shard recovery refuses: the log up to its first
/// damage. Every segment before the first damaged one, each continuing the
/// one before (a gap or an overlap is damage too: nothing after it is kept);
/// the damaged one too when its damage lies past its header (whole: a read
/// meets the damage and stops there, after the intact records before it);
/// and where reads past the last readable record stop: the earliest finding
/// of the segment that ends the readable log. Nothing after the damage is
/// read, so a reader never skips over it.
fn readable_despite_damage(dir: &ShardDir, checked: Vec<Checked>) -> (Vec<Segment>, Option<(std::path::PathBuf, Finding)>) {
    let mut segments: Vec<Segment> = Vec::new();
    for c in checked {
        let id = c.facts.id;
        let mut first = c.facts.findings.iter().min_by_key(|f| f.position()).cloned();
        let seg = match (c.state, c.damaged) {
            (Some(s), _) | (None, Some(s)) => s,
            (None, None) if c.facts.unfinished && c.facts.newest => break,
            (None, None) => return (segments, first.map(|f| (dir.log(id), f))),
        };
        if let Some(expected) = segments.last().map(|p| p.next).filter(|n| *n != seg.base) {
            let kind = CorruptionKind::SegmentDiscontinuity { expected, found: seg.base };
            let at = felix_codec::format::segment_header::BASE_OFFSET_AT as u64;
            let site = CorruptionSite { shard: Some(dir.name.clone()), segment_id: Some(id), position: at };
            first = Some(Finding { kind, site, end: at + 8, offset: None, repair: Repair::Never });
        }
        let Some(f) = first else {
            segments.push(seg);
            continue;
        };
        if f.position() >= SEGMENT_HEADER_LEN as u64 {
            segments.push(seg);
        }
        return (segments, Some((dir.log(id), f)));
    }
    (segments, None)
}

/// What a reader is told of a shard recovery refuses: the damage reads stop
/// at — and, when the only refusals are for want of evidence names (damage a
/// writer's open would cut, had its evidence a name; or a whole file it would
/// remove, which reads never meet), the plan's words too. `None` only for a
/// refusal with neither.
fn refused_warning(plan: &ShardPlan, unreadable: Option<&(std::path::PathBuf, Finding)>) -> Option<String> {
    let damage = unreadable.map(|(path, f)| format!("{} at byte {} of {}", f.kind.name(), f.position(), path.display()));
    let refusals = || plan.actions.iter().filter(|a| matches!(a, Action::Refuse { .. }));
    let names = match refusals().find(|a| a.is_names_exhausted()) {
        Some(Action::Refuse { file, reason, .. }) if refusals().all(Action::is_names_exhausted) => Some(format!("{file}: {reason}")),
        _ => None,
    };
    let (why, reads) = match (damage, names) {
        (Some(damage), Some(names)) => (format!("{damage}; {names}"), STOP_AT_DAMAGE),
        (Some(damage), None) => (damage, STOP_AT_DAMAGE),
        (None, Some(names)) => (names, "a writer's open fails until then; reads meet no damage"),
        (None, None) => return None,
    };
    Some(format!("recovery refuses this shard ({why}): {reads}"))
}

/// What a reader's reads do in a refused shard with damage.
const STOP_AT_DAMAGE: &str = "reads return every intact record before the damage, then stop there with it";

/// The error for a refused plan: its first refusal, with the finding's full
/// site — or, for evidence with no free name (not damage), the plan's words,
/// naming the file and the evidence name.
fn refusal(dir: &ShardDir, plan: &ShardPlan, facts: &ShardFacts) -> EngineError {
    let first = plan.actions.iter().find(|a| matches!(a, Action::Refuse { .. }));
    let Some(Action::Refuse { file, position, kind, reason, .. }) = first else {
        return EngineError::Io { path: dir.path.clone(), op: "recover", message: "refused".into() };
    };
    if first.is_some_and(Action::is_names_exhausted) {
        return EngineError::Io { path: dir.file(file), op: "recover", message: reason.clone() };
    }
    let (file, position, kind) = (file.clone(), *position, kind.clone());
    let finding = facts
        .segments
        .iter()
        .filter(|s| s.file == file)
        .flat_map(|s| s.findings.iter())
        .find(|f| f.position() == position && f.kind.name() == kind)
        .cloned();
    match finding {
        Some(f) => EngineError::Corrupt { path: dir.file(&file), finding: Box::new(f) },
        None => EngineError::Io { path: dir.file(&file), op: "recover", message: format!("refused: {kind} at byte {position}") },
    }
}

/// Runs a plan's actions in order (a refused plan runs none); returns the
/// evidence names written. `rebuild` writes segment `id`'s index.
pub(crate) fn execute(
    dir: &ShardDir,
    plan: &ShardPlan,
    rebuild: &mut dyn FnMut(&ShardDir, u64) -> Result<(), EngineError>,
) -> Result<Vec<String>, EngineError> {
    let mut done = Executed::default();
    execute_counted(dir, plan, rebuild, &mut done)?;
    Ok(done.evidence)
}

/// How far [`execute_counted`] got: the plan's first `actions` actions ran
/// to their end, and these evidence names were written (a failure part way
/// leaves both saying what was done, so it can be told).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Executed {
    pub(crate) actions: usize,
    pub(crate) evidence: Vec<String>,
}

/// [`execute`], keeping count in `done` as each action ends.
pub(crate) fn execute_counted(
    dir: &ShardDir,
    plan: &ShardPlan,
    rebuild: &mut dyn FnMut(&ShardDir, u64) -> Result<(), EngineError>,
    done: &mut Executed,
) -> Result<(), EngineError> {
    let evidence = &mut done.evidence;
    if plan.refused() {
        return Ok(());
    }
    let mut names_changed = false;
    let id_of = |file: &str| felix_codec::format::file_name::parse_file_name(file).map_or(0, |(id, _)| id);
    for action in &plan.actions {
        match action {
            Action::RemoveTemporary { file, .. } => {
                dir.io.remove_if_exists(&dir.file(file))?;
                names_changed = true;
            }
            Action::RemoveUnfinished { file, bytes, reason, .. } => {
                let path = dir.file(file);
                if *bytes > 0 {
                    let note = note(&path, "unfinished creation", 0, *bytes, *bytes, reason);
                    let id = id_of(file);
                    evidence.push(dir.keep_evidence(&|k| evidence_name(id, 0, k), &path, 0, *bytes, &note)?);
                }
                dir.io.remove_if_exists(&path)?;
                names_changed = true;
            }
            Action::RemoveOrphanIndex { file, bytes, reason, .. } => {
                let path = dir.file(file);
                if *bytes > 0 {
                    let note = note(&path, "orphaned index", 0, *bytes, *bytes, reason);
                    let id = id_of(file);
                    evidence.push(dir.keep_whole_as_evidence(&|k| index_evidence_name(id, k), &path, &note)?);
                }
                dir.io.remove_if_exists(&path)?;
                names_changed = true;
            }
            Action::Cut { file, position, bytes, kind, reason, .. } => {
                let path = dir.file(file);
                let note = note(&path, kind, *position, *bytes, position + bytes, reason);
                let (id, at) = (id_of(file), *position);
                evidence.push(dir.keep_evidence(&|k| evidence_name(id, at, k), &path, *position, *bytes, &note)?);
                dir.io.set_len(&path, *position)?;
                dir.io.sync_data(&path)?;
            }
            Action::RebuildIndex { file, .. } => rebuild(dir, id_of(file))?,
            Action::Refuse { .. } => {}
        }
        done.actions += 1;
    }
    if names_changed {
        dir.io.sync_dir(&dir.path)?;
    }
    Ok(())
}

/// Rewrites a segment's index file from its in-memory entries, durably.
pub(crate) fn write_index(dir: &ShardDir, seg: &mut Segment) -> Result<(), EngineError> {
    let mut bytes = IndexHeader::new(seg.base).encode().to_vec();
    for e in &seg.index.entries {
        bytes.extend_from_slice(&e.encode());
    }
    dir.rewrite_own_file(&index_file_name(seg.id), &bytes)?;
    seg.index_on_disk = seg.index.entries.len();
    seg.index.rewrite = false;
    Ok(())
}

fn note(path: &std::path::Path, kind: &str, at: u64, bytes: u64, len_before: u64, reason: &str) -> serde_json::Value {
    serde_json::json!({
        "segment": path.display().to_string(),
        "kind": kind,
        "cut_at": at,
        "cut_bytes": bytes,
        "segment_len_before": len_before,
        "reason": reason,
    })
}

/// Streams the index file of segment `id` through the codec's index scanner.
fn scan_index(dir: &ShardDir, id: u64, newest: bool) -> Result<Option<felix_codec::read::scan::IndexSummary>, EngineError> {
    let path = dir.index(id);
    if dir.io.kind(&path)?.is_none() {
        return Ok(None);
    }
    let len = dir.io.len(&path)?;
    let mut scanner = IndexScanner::new(ctx(dir, id, newest, false));
    let mut buf = vec![0u8; INDEX_CHUNK_BYTES];
    let mut pos = 0;
    while pos < len {
        let n = usize::try_from(len - pos).unwrap_or(usize::MAX).min(buf.len());
        let chunk = buf.get_mut(..n).unwrap_or_default();
        dir.io.read_exact_at(&path, pos, chunk)?;
        scanner.feed(chunk, &mut ());
        pos += n as u64;
    }
    Ok(Some(scanner.finish(&mut ())))
}

/// Reads a segment's header (as much of it as the file holds).
fn read_header(dir: &ShardDir, id: u64, len: u64) -> Result<Result<SegmentHeader, ReadError>, EngineError> {
    let mut buf = [0u8; SEGMENT_HEADER_LEN];
    let n = usize::try_from(len).unwrap_or(usize::MAX).min(SEGMENT_HEADER_LEN);
    let head = buf.get_mut(..n).unwrap_or_default();
    dir.io.read_exact_at(&dir.log(id), 0, head)?;
    Ok(SegmentHeader::decode(head).map(|(h, _)| h).map_err(|d| ReadError { kind: d.kind, position: 0, end: d.end as u64, offset: None }))
}

/// The newest segment: a full scan with the codec's scanner, its index
/// checked against the record chain as it goes.
///
/// `writer_live` (a reader's only): whether a writer holds the shard, probed
/// again after the bytes are read (and updated).
fn check_newest(dir: &ShardDir, id: u64, config: &Config, writer_live: Option<&mut bool>) -> Result<Checked, EngineError> {
    let path = dir.log(id);
    let len = dir.io.len(&path)?;
    let index_summary = scan_index(dir, id, true)?;
    let scan = scan_newest(dir, id, len, config, index_summary.as_ref(), writer_live)?;
    let summary = &scan.summary;
    let facts = SegmentFacts {
        file: segment_file_name(id),
        id,
        size: len,
        newest: true,
        findings: summary.findings.findings.clone(),
        clean_prefix_end: summary.clean_prefix_end,
        unfinished: summary.unfinished,
    };
    let base = summary.header.map(|h| h.base_offset);
    let problem = match (&index_summary, base) {
        (None, _) => Some(IndexProblem::Missing),
        (Some(s), Some(base)) => quick_check(s, &ctx(dir, id, true, false), base, summary.clean_prefix_end.max(SEGMENT_HEADER_LEN as u64))
            .or_else(|| scan.first_mismatch.clone().map(IndexProblem::Finding))
            .or_else(|| scan.lagging.then_some(IndexProblem::Lagging)),
        (Some(_), None) => Some(IndexProblem::Unusable("its segment's header was rejected".into())),
    };
    let on_disk = index_summary.filter(|_| problem.is_none());
    let state = newest_state(id, config, scan, on_disk);
    Ok(Checked { facts, index: IndexFacts { segment_id: id, problem }, state, damaged: None })
}

/// What the full scan of the newest segment found.
struct NewestScan {
    summary: felix_codec::read::scan::SegmentSummary,
    /// The first index entry the records contradict.
    first_mismatch: Option<Finding>,
    /// The writer's planner would have added an entry past the last on disk.
    lagging: bool,
    /// (offset, timestamp) of the last record of the clean prefix.
    last: Option<(u64, u64)>,
    /// The index the clean prefix calls for, built as it was scanned.
    fresh: MemIndex,
}

/// Scans the newest segment in full, checking its index entries against
/// the records met and re-probing the writer's lock (a reader) after the
/// bytes were read.
fn scan_newest(
    dir: &ShardDir,
    id: u64,
    len: u64,
    config: &Config,
    index_summary: Option<&felix_codec::read::scan::IndexSummary>,
    writer_live: Option<&mut bool>,
) -> Result<NewestScan, EngineError> {
    let live_before = writer_live.as_deref().copied().unwrap_or(false);
    // Memory: the entries are held twice at most (the summary's, which the
    // quick check reads, and the check's copy), each at most
    // MAX_CHECKED_ENTRIES; the in-memory index is built from the summary's.
    let mut check = index_summary.filter(|s| s.header.is_some()).map(|s| IndexCheck::new(ctx(dir, id, true, false), s.kept.clone()));
    let last_disk = index_summary.and_then(|s| s.kept.last()).map(|(_, e)| *e);
    let mut fresh = MemIndex::new(config.index_spacing_bytes);
    // Only whether the writer's planner would add an entry after the last
    // one on disk matters while scanning (a lagging index).
    let mut continued = MemIndex::from_entries(config.index_spacing_bytes, last_disk.into_iter().collect());
    let mut lagging = false;
    let mut clean = true;
    let mut last: Option<(u64, u64)> = None;
    let mut scanner = SegmentScanner::new(ctx(dir, id, true, live_before));
    let mut sink = |item: Item<'_>| {
        if let Some(c) = check.as_mut() {
            c.item(&item);
        }
        match item {
            Item::Finding(_) => clean = false,
            Item::Record(r) if clean && r.status == RecordStatus::Intact => {
                let _ = fresh.observe(r.header.offset, r.position);
                if last_disk.is_none_or(|l| r.position > l.position) && continued.observe(r.header.offset, r.position).is_some() {
                    lagging = true;
                }
                last = Some((r.header.offset, r.header.timestamp_micros));
            }
            _ => {}
        }
    };
    feed_file(dir, &dir.log(id), len, |chunk| scanner.feed(chunk, &mut sink))?;
    if let Some(live) = writer_live {
        if !*live && dir.writer_live() {
            *live = true;
            scanner.set_writer_live(true);
        }
    }
    let summary = scanner.finish(&mut sink);
    let first_mismatch = check.map(IndexCheck::finish).and_then(|(m, _)| m.into_iter().next());
    Ok(NewestScan { summary, first_mismatch, lagging, last, fresh })
}

/// The newest segment as the writer resumes it, unless its header is
/// damaged or it is unfinished: its clean prefix, with the index on disk
/// when that one is sound (`on_disk`), else the one its scan built.
fn newest_state(id: u64, config: &Config, scan: NewestScan, on_disk: Option<felix_codec::read::scan::IndexSummary>) -> Option<Segment> {
    let summary = &scan.summary;
    let h = summary.header.filter(|_| !summary.unfinished)?;
    if summary.findings.findings.iter().any(|f| f.position() < SEGMENT_HEADER_LEN as u64) {
        return None;
    }
    // A sound index is the one on disk (not lagging: the scan planned
    // no entry past its last one).
    let mut index = match on_disk {
        Some(s) => MemIndex::from_entries(config.index_spacing_bytes, s.kept.into_iter().map(|(_, e)| e).collect()),
        None => scan.fresh,
    };
    index.verified = index.entries.len();
    Some(Segment {
        id,
        base: h.base_offset,
        len: summary.clean_prefix_end,
        next: scan.last.map_or(h.base_offset, |(o, _)| o.saturating_add(1)),
        index_on_disk: index.entries.len(),
        index,
        last_timestamp: scan.last.map_or(0, |(_, t)| t),
    })
}

/// Feeds a whole file to `feed` in fixed chunks; large files are read on a
/// second thread while the previous chunk is scanned (two buffers in flight).
pub(crate) fn feed_file(dir: &ShardDir, path: &std::path::Path, len: u64, mut feed: impl FnMut(&[u8])) -> Result<(), EngineError> {
    // Page-aligned buffers: the kernel's copy into a buffer just past a page
    // boundary measured ~4x slower here (see `walk::ReadBuf`).
    if len <= READ_AHEAD_FROM_BYTES {
        let mut buf = ReadBuf::new();
        let mut pos = 0;
        while pos < len {
            let n = usize::try_from(len - pos).unwrap_or(usize::MAX).min(SCAN_CHUNK_BYTES);
            buf.set_len(n);
            dir.io.read_exact_at(path, pos, buf.bytes_mut())?;
            feed(buf.bytes());
            pos += n as u64;
        }
        return Ok(());
    }
    std::thread::scope(|scope| -> Result<(), EngineError> {
        let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Result<ReadBuf, EngineError>>(1);
        let (empty_tx, empty_rx) = std::sync::mpsc::channel::<ReadBuf>();
        for _ in 0..2 {
            let mut buf = ReadBuf::new();
            buf.set_len(SCAN_CHUNK_BYTES);
            let _ = empty_tx.send(buf);
        }
        let io = &dir.io;
        scope.spawn(move || {
            let mut pos = 0;
            while pos < len {
                let Ok(mut buf) = empty_rx.recv() else { return };
                let want = usize::try_from(len - pos).unwrap_or(usize::MAX).min(SCAN_CHUNK_BYTES);
                buf.set_len(want);
                let read = io.read_exact_at(path, pos, buf.bytes_mut()).map(|()| buf);
                let failed = read.is_err();
                if full_tx.send(read).is_err() || failed {
                    return;
                }
                pos += want as u64;
            }
        });
        for chunk in full_rx {
            let chunk = chunk?;
            feed(chunk.bytes());
            let _ = empty_tx.send(chunk);
        }
        Ok(())
    })
}

/// A sealed segment: header, index structure, and a strict read of the
/// records after the last entry; on doubt, a headers-only walk from the
/// start (see the module doc).
fn check_sealed(dir: &ShardDir, id: u64, config: &Config) -> Result<Checked, EngineError> {
    let path = dir.log(id);
    let len = dir.io.len(&path)?;
    let mut facts = SegmentFacts {
        file: segment_file_name(id),
        id,
        size: len,
        newest: false,
        findings: Vec::new(),
        clean_prefix_end: len,
        unfinished: false,
    };
    let header = match read_header(dir, id, len)? {
        Ok(h) => h,
        Err(e) => {
            facts.findings.push(finding_from(dir, id, &e, Place::SegmentHeader));
            facts.clean_prefix_end = 0;
            return Ok(Checked { facts, index: IndexFacts { segment_id: id, problem: None }, state: None, damaged: None });
        }
    };
    let base = header.base_offset;
    let first = SEGMENT_HEADER_LEN as u64;
    let index_summary = scan_index(dir, id, false)?;
    let mut problem = match &index_summary {
        None => Some(IndexProblem::Missing),
        Some(s) => quick_check(s, &ctx(dir, id, false, false), base, len),
    };
    if problem.is_none() {
        let entries: Vec<IndexEntry> = index_summary.as_ref().map(|s| s.kept.iter().map(|(_, e)| *e).collect()).unwrap_or_default();
        let start = entries.last().copied().unwrap_or(IndexEntry { offset: base, position: first });
        if let Some((next, last_ts)) = strict_tail(dir, id, len, start)? {
            let index = MemIndex::from_entries(config.index_spacing_bytes, entries);
            let state = Segment { id, base, len, next, index_on_disk: index.entries.len(), index, last_timestamp: last_ts };
            return Ok(Checked { facts, index: IndexFacts { segment_id: id, problem: None }, state: Some(state), damaged: None });
        }
    }
    // Walk every record header from the start: it rebuilds the index and
    // proves (or refutes) each entry on disk.
    let disk: Vec<(u64, IndexEntry)> =
        if problem.is_none() { index_summary.as_ref().map(|s| s.kept.clone()).unwrap_or_default() } else { Vec::new() };
    let disk_last = disk.last().map(|(_, e)| *e);
    let headers = walk_headers(dir, id, len, base, config, disk)?;
    let mut index = headers.index;
    if let Some(e) = headers.defect {
        let damaged = Segment { id, base, len, next: headers.next, index_on_disk: 0, index, last_timestamp: 0 };
        return Ok(refused_sealed(dir, facts, problem, &e, damaged));
    }
    if problem.is_none() {
        problem = headers.first_mismatch.map(IndexProblem::Finding);
    }
    // A sound index whose tail did not read: the damage is real, in the last interval.
    let start = match (problem.is_none(), disk_last) {
        (true, Some(e)) => e,
        _ => index.entries.last().copied().unwrap_or(IndexEntry { offset: base, position: first }),
    };
    let tail = read_records_from(dir, id, len, start)?;
    if let Some(e) = tail.defect {
        let damaged = Segment { id, base, len, next: tail.next, index_on_disk: 0, index, last_timestamp: tail.last_timestamp };
        return Ok(refused_sealed(dir, facts, problem, &e, damaged));
    }
    if problem.is_none() {
        let disk_entries = index_summary.map(|s| s.kept.into_iter().map(|(_, e)| e).collect()).unwrap_or_default();
        index = MemIndex::from_entries(config.index_spacing_bytes, disk_entries);
    }
    index.verified = index.entries.len();
    let state = Segment { id, base, len, next: tail.next, index_on_disk: 0, index, last_timestamp: tail.last_timestamp };
    Ok(Checked { facts, index: IndexFacts { segment_id: id, problem }, state: Some(state), damaged: None })
}

/// A sealed segment whose records do not all read: its damage refuses the
/// shard, and a reader keeps what precedes it (`damaged`).
fn refused_sealed(dir: &ShardDir, mut facts: SegmentFacts, problem: Option<IndexProblem>, e: &ReadError, mut damaged: Segment) -> Checked {
    facts.clean_prefix_end = e.position;
    facts.findings.push(finding_from(dir, facts.id, e, Place::Elsewhere));
    damaged.index.verified = damaged.index.entries.len();
    let segment_id = facts.id;
    Checked { facts, index: IndexFacts { segment_id, problem }, state: None, damaged: Some(damaged) }
}

/// What a headers-only walk of a sealed segment found.
struct HeaderWalk {
    /// The index its records call for.
    index: MemIndex,
    /// The offset after the last header read.
    next: u64,
    /// Where the walk stopped short, if it did.
    defect: Option<ReadError>,
    /// The first entry on disk the headers contradict.
    first_mismatch: Option<Finding>,
}

fn walk_headers(
    dir: &ShardDir,
    id: u64,
    len: u64,
    base: u64,
    config: &Config,
    disk: Vec<(u64, IndexEntry)>,
) -> Result<HeaderWalk, EngineError> {
    let mut check = IndexCheck::new(ctx(dir, id, false, false), disk);
    let mut index = MemIndex::new(config.index_spacing_bytes);
    let mut next = base;
    let reader = ChunkedReader::headers_only(SEGMENT_HEADER_LEN as u64, ExpectedOffset::Exactly(base), len);
    let walked = walk(&dir.io, &dir.log(id), len, reader, HEADER_CHUNK_BYTES, |seen| {
        if let Seen::Header(position, header) = seen {
            check.item(&Item::Record(felix_codec::read::scan::RecordItem { position, header, status: RecordStatus::Intact }));
            let _ = index.observe(header.offset, position);
            next = header.offset.saturating_add(1);
        }
        Flow::Continue
    })?;
    let first_mismatch = check.finish().0.into_iter().next();
    Ok(HeaderWalk { index, next, defect: walked.defect, first_mismatch })
}

/// What a strict read of a sealed segment's records from one entry found.
struct TailRead {
    next: u64,
    last_timestamp: u64,
    defect: Option<ReadError>,
}

fn read_records_from(dir: &ShardDir, id: u64, len: u64, start: IndexEntry) -> Result<TailRead, EngineError> {
    let reader = ChunkedReader::new(start.position, ExpectedOffset::Exactly(start.offset), len);
    let mut next = start.offset;
    let mut last_timestamp = 0;
    let walked = walk(&dir.io, &dir.log(id), len, reader, READ_CHUNK_BYTES, |seen| {
        if let Seen::Record(_, r) = seen {
            next = r.header.offset.saturating_add(1);
            last_timestamp = r.header.timestamp_micros;
        }
        Flow::Continue
    })?;
    Ok(TailRead { next, last_timestamp, defect: walked.defect })
}

/// Reads the records from `start` to the end strictly; `Some((next offset,
/// last timestamp))` when they all verify and end exactly at `len`.
fn strict_tail(dir: &ShardDir, id: u64, len: u64, start: IndexEntry) -> Result<Option<(u64, u64)>, EngineError> {
    let mut next = start.offset;
    let mut last_ts = 0;
    let reader = ChunkedReader::new(start.position, ExpectedOffset::Exactly(start.offset), len);
    let walked = walk(&dir.io, &dir.log(id), len, reader, READ_CHUNK_BYTES, |seen| {
        if let Seen::Record(_, r) = seen {
            next = r.header.offset.saturating_add(1);
            last_ts = r.header.timestamp_micros;
        }
        Flow::Continue
    })?;
    Ok((walked.defect.is_none() && walked.reader.position() == len).then_some((next, last_ts)))
}

/// The epochs file, read up to its largest valid size; damaged or too long,
/// it reads as empty and its finding is kept for the plan's report.
fn load_epochs(dir: &ShardDir, present: bool, facts: &mut ShardFacts, warnings: &mut Vec<String>) -> Result<Vec<Epoch>, EngineError> {
    if !present {
        return Ok(Vec::new());
    }
    let path = dir.epochs();
    let summary = scan_epochs(dir)?;
    for f in &summary.findings.findings {
        warnings.push(format!("{}: {} — read as empty: divergence cannot be repaired automatically", path.display(), f.kind));
        facts.other_findings.push((felix_codec::format::file_name::EPOCHS_FILE_NAME.into(), f.clone()));
    }
    Ok(summary.entries)
}

/// Scans the epochs file: read up to its largest valid size (16,396 bytes),
/// the rest only counted.
pub(crate) fn scan_epochs(dir: &ShardDir) -> Result<felix_codec::read::scan::EpochsSummary, EngineError> {
    let path = dir.epochs();
    let len = dir.io.len(&path)?;
    let mut scanner = EpochsScanner::new(ScanContext { shard: Some(dir.name.clone()), ..ScanContext::default() });
    let take = len.min(MAX_EPOCHS_FILE_LEN as u64 + 1);
    let mut buf = vec![0u8; usize::try_from(take).unwrap_or(0)];
    dir.io.read_exact_at(&path, 0, &mut buf)?;
    scanner.feed(&buf, &mut ());
    scanner.skip(len - take);
    Ok(scanner.finish(&mut ()))
}
