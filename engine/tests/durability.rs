//! The engine's promises, through a simulated filesystem that fails the Nth
//! IO call or freezes at any sync: nothing acknowledged is ever lost,
//! nothing is acknowledged past a failure, and recovery cuts exactly what
//! the spec allows.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::path::PathBuf;
use std::sync::Arc;

use felix_codec::shard::recovery::Action;
use felix_engine::io::sim::SimIo;
use felix_engine::shard::{truncation_point, Config, Recovery, Shard};
use felix_engine::{EngineError, Io};

fn dir() -> PathBuf {
    PathBuf::from("/sim/acme_default_orders_0-0d3aed4b998d2798")
}

fn small() -> Config {
    Config { segment_size_bytes: 400, index_spacing_bytes: 64, ..Config::default() }
}

fn open(io: &Arc<SimIo>, config: Config) -> Result<Shard, EngineError> {
    open_with(io, config).map(|(s, _)| s)
}

fn open_with(io: &Arc<SimIo>, config: Config) -> Result<(Shard, Recovery), EngineError> {
    Shard::open_dir(Arc::clone(io) as Arc<dyn Io>, &dir(), config)
}

fn names(io: &SimIo, ext: &str) -> Vec<String> {
    let mut v: Vec<String> =
        io.list(&dir()).unwrap().into_iter().map(|e| e.name.into_string().unwrap()).filter(|n| n.ends_with(ext)).collect();
    v.sort();
    v
}

fn cuts(r: &Recovery) -> Vec<(&str, u64)> {
    r.plan
        .actions
        .iter()
        .filter_map(|a| if let Action::Cut { kind, position, .. } = a { Some((kind.as_str(), *position)) } else { None })
        .collect()
}

fn rebuilt(r: &Recovery) -> Vec<String> {
    r.plan.actions.iter().filter_map(|a| if let Action::RebuildIndex { file, .. } = a { Some(file.clone()) } else { None }).collect()
}

fn payload(i: u64) -> Vec<u8> {
    format!("record-{i}-{}", "x".repeat((i % 23) as usize)).into_bytes()
}

#[path = "support/shard.rs"]
mod shard_support;
use shard_support::read_all;

/// Appends `n` records in batches of 1..=3 until done or an error; returns what was acknowledged.
fn workload(shard: &Shard, n: u64) -> Vec<(u64, Vec<u8>)> {
    let mut acked = Vec::new();
    let mut i = 0;
    while i < n {
        let batch: Vec<Vec<u8>> = (i..(i + 1 + i % 3).min(n)).map(payload).collect();
        let refs: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
        match shard.append(&refs) {
            Ok(range) => {
                assert_eq!(range.end - range.start, batch.len() as u64);
                i += refs.len() as u64;
                drop(refs);
                acked.extend(range.zip(batch));
            }
            Err(_) => {
                // Fail-stop: every later append is refused too.
                assert!(matches!(shard.append(&[b"after"]), Err(EngineError::FailStopped { .. }) | Err(EngineError::Io { .. })));
                break;
            }
        }
    }
    acked
}

/// Recovery after a crash returns every acknowledged record, in order, and
/// beyond them only records that were attempted (an unacknowledged suffix).
fn check_recovered(io: &SimIo, acked: &[(u64, Vec<u8>)], attempted: u64, label: &str) {
    let io = Arc::new(io.crash());
    let shard = open(&io, small()).unwrap_or_else(|e| panic!("{label}: reopen failed: {e}"));
    let got = read_all(&shard);
    assert!(got.len() >= acked.len(), "{label}: lost acknowledged records ({} < {})", got.len(), acked.len());
    assert_eq!(&got[..acked.len()], acked, "{label}");
    for (offset, bytes) in &got[acked.len()..] {
        assert!(*offset < attempted && *bytes == payload(*offset), "{label}: unexpected record {offset}");
    }
}

#[test]
fn appends_roll_over_and_read_back_from_any_offset() {
    let io = Arc::new(SimIo::new());
    let shard = open(&io, small()).unwrap();
    let acked = workload(&shard, 200);
    assert_eq!(acked.len(), 200);
    let logs = names(&io, ".log").len();
    assert!(logs > 5, "rolled over into {logs} segments");
    for from in [0, 1, 17, 63, 150, 199] {
        let got = shard.read(from, 1).unwrap();
        assert_eq!((got[0].offset, &got[0].payload[..]), (from, &payload(from)[..]), "read from {from}");
    }
    assert!(shard.read(200, 100).unwrap().is_empty(), "past the end reads nothing");
    assert_eq!(read_all(&shard), acked);
    let reopened = open(&Arc::new(io.crash()), small()).unwrap();
    assert_eq!(read_all(&reopened), acked);
}

#[test]
fn a_record_larger_than_a_segment_gets_a_segment_of_its_own() {
    let io = Arc::new(SimIo::new());
    let shard = open(&io, small()).unwrap();
    shard.append(&[b"small"]).unwrap();
    let big = vec![7u8; 1000];
    let r = shard.append(&[&big]).unwrap();
    shard.append(&[b"after"]).unwrap();
    assert_eq!(shard.read(r.start, 10).unwrap()[0].payload, big);
    assert_eq!(names(&io, ".log").len(), 3);
}

#[test]
fn failing_the_nth_io_call_never_acknowledges_past_it_and_reopens_clean() {
    let probe = Arc::new(SimIo::new());
    workload(&open(&probe, small()).unwrap(), 40);
    let total = probe.mutations();
    for n in 1..=total + 1 {
        let io = Arc::new(SimIo::new());
        io.fail_at(n);
        let acked = match open(&io, small()) {
            Ok(shard) => workload(&shard, 40),
            Err(_) => Vec::new(),
        };
        check_recovered(&io, &acked, 40, &format!("failure at IO call {n} of {total}"));
    }
}

#[test]
fn crashing_at_every_sync_keeps_every_acknowledged_record() {
    let probe = Arc::new(SimIo::new());
    workload(&open(&probe, small()).unwrap(), 40);
    let total = probe.syncs();
    assert!(total > 20);
    for k in 1..=total {
        let io = Arc::new(SimIo::new());
        io.crash_after_sync(k);
        let acked = match open(&io, small()) {
            Ok(shard) => workload(&shard, 40),
            Err(_) => Vec::new(),
        };
        check_recovered(&io, &acked, 40, &format!("crash after sync {k} of {total}"));
    }
}

fn newest_log(io: &SimIo) -> PathBuf {
    dir().join(names(io, ".log").last().unwrap())
}

#[test]
fn truncating_the_newest_segment_at_every_byte_keeps_exactly_the_complete_records() {
    let io = Arc::new(SimIo::new());
    let config = Config { segment_size_bytes: 1 << 20, ..small() };
    let shard = open(&io, config.clone()).unwrap();
    let acked = workload(&shard, 12);
    drop(shard);
    let log = newest_log(&io);
    let full = io.contents(&log).unwrap();
    let mut ends = vec![];
    let mut pos = 32;
    for (_, p) in &acked {
        pos += 28 + p.len();
        ends.push(pos);
    }
    for cut in 0..=full.len() {
        let sim = Arc::new(io.crash());
        sim.put(&log, &full[..cut]);
        let (shard, report) = open_with(&sim, config.clone()).unwrap();
        if cut < 32 {
            // The only segment, shorter than its header: an unfinished creation, removed.
            assert!(read_all(&shard).is_empty(), "cut at {cut}");
            assert!(matches!(report.plan.actions[0], Action::RemoveUnfinished { .. }), "cut at {cut}: {:?}", report.plan);
            assert_eq!(report.evidence.len(), usize::from(cut > 0), "cut at {cut}");
            continue;
        }
        let complete = ends.iter().filter(|e| **e <= cut).count();
        assert_eq!(read_all(&shard), acked[..complete], "cut at {cut}");
        let boundary = cut == 32 || ends.contains(&cut);
        assert_eq!(cuts(&report).is_empty(), boundary, "cut at {cut}");
        if let Some((kind, _)) = cuts(&report).first() {
            assert_eq!(*kind, "Truncated");
            let kept = if complete == 0 { 32 } else { ends[complete - 1] };
            assert_eq!(sim.contents(&report.evidence[0]).unwrap(), full[kept..cut], "the evidence holds exactly the cut bytes");
            assert_eq!(sim.contents(&log).unwrap().len(), kept);
        }
    }
}

#[test]
fn rot_in_the_middle_refuses_to_open_naming_shard_segment_and_byte() {
    let io = Arc::new(SimIo::new());
    let config = Config { segment_size_bytes: 1 << 20, ..small() };
    let shard = open(&io, config.clone()).unwrap();
    workload(&shard, 10);
    drop(shard);
    let log = newest_log(&io);
    let mut bytes = io.contents(&log).unwrap();
    bytes[32 + 28 + 2] ^= 1; // payload of offset 0
    io.put(&log, &bytes);
    let err = open(&io, config.clone()).unwrap_err();
    let EngineError::Corrupt { path, finding } = &err else { panic!("{err}") };
    assert_eq!(path, &log);
    assert_eq!((finding.kind.name(), finding.site.position, finding.offset), ("RecordChecksum", 32, Some(0)));
    assert_eq!(finding.site.shard.as_deref(), Some("acme_default_orders_0-0d3aed4b998d2798"));
    assert_eq!(finding.site.segment_id, Some(0));
    assert!(err.to_string().contains("byte 32 (0x20)"), "{err}");
}

#[test]
fn a_rotted_tail_is_cut_only_with_repair_checksum_tail() {
    let io = Arc::new(SimIo::new());
    let config = Config { segment_size_bytes: 1 << 20, ..small() };
    let shard = open(&io, config.clone()).unwrap();
    let acked = workload(&shard, 5);
    drop(shard);
    let log = newest_log(&io);
    let mut bytes = io.contents(&log).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    io.put(&log, &bytes);
    let err = open(&io, config.clone()).unwrap_err();
    assert!(matches!(&err, EngineError::Corrupt { finding, .. } if finding.kind.name() == "RecordChecksum"), "{err}");
    let opt_in = Config { repair_checksum_tail: true, ..config };
    let (shard, report) = open_with(&io, opt_in).unwrap();
    assert_eq!(cuts(&report).len(), 1);
    assert_eq!(read_all(&shard), acked[..4]);
}

#[test]
fn indexes_deleted_short_garbage_or_stale_are_rebuilt_and_random_reads_match_a_scan() {
    let io = Arc::new(SimIo::new());
    let shard = open(&io, small()).unwrap();
    let acked = workload(&shard, 300);
    drop(shard);
    let indexes: Vec<PathBuf> = names(&io, ".index").into_iter().map(|n| dir().join(n)).collect();
    io.remove(&indexes[0]).unwrap();
    let short = io.contents(&indexes[1]).unwrap();
    io.put(&indexes[1], &short[..30]);
    io.put(&indexes[2], b"garbage garbage garbage garbage garbage");
    let mut stale = io.contents(&indexes[3]).unwrap();
    let n = stale.len();
    stale[n - 1] ^= 0x08; // last entry's position points into the middle of a record
    io.put(&indexes[3], &stale);
    let (shard, report) = open_with(&io, small()).unwrap();
    let rebuilt = rebuilt(&report);
    for p in &indexes[..4] {
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        assert!(rebuilt.contains(&name), "{name} not rebuilt: {:?}", report.plan);
    }
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..10_000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let from = seed % 300;
        let got = shard.read(from, (seed >> 40) as usize % 200).unwrap();
        let want: Vec<(u64, Vec<u8>)> = got.iter().map(|r| (r.offset, r.payload.to_vec())).collect();
        assert_eq!(want[..], acked[from as usize..from as usize + got.len()], "read from {from}");
    }
}

#[test]
fn reads_below_the_start_are_trimmed_and_a_shard_may_begin_anywhere() {
    let io = Arc::new(SimIo::new());
    let shard = open(&io, Config { retention_bytes: Some(900), ..small() }).unwrap();
    let acked = workload(&shard, 100);
    let removed = shard.apply_retention(u64::MAX / 2).unwrap().removed;
    assert!(!removed.is_empty());
    let first = shard.first_offset();
    assert!(first > 0);
    assert!(
        matches!(shard.read(first - 1, 10), Err(EngineError::Trimmed { requested, oldest: f }) if requested == first - 1 && f == first)
    );
    assert_eq!(read_all(&shard), acked[first as usize..]);
    let reopened = open(&Arc::new(io.crash()), small()).unwrap();
    assert_eq!(reopened.first_offset(), first, "the base offset comes from the header, not the name");
    assert_eq!(read_all(&reopened), acked[first as usize..]);
}

#[test]
fn epochs_are_recorded_bounded_and_fixed_by_divergence_truncation() {
    let io = Arc::new(SimIo::new());
    let shard = open(&io, small()).unwrap();
    shard.begin_generation(1).unwrap();
    workload(&shard, 10);
    shard.begin_generation(3).unwrap();
    workload(&shard, 5);
    assert!(matches!(shard.begin_generation(2), Err(EngineError::Generation { requested: 2, latest: 3 })));
    let epochs: Vec<(u64, u64)> = shard.epochs().iter().map(|e| (e.generation, e.start_offset)).collect();
    assert_eq!(epochs, [(1, 0), (3, 10)]);
    // The leader says generation 1 ended at offset 8 on its side.
    let point = shard.divergence_point(1, 8);
    assert_eq!(point, 8);
    shard.truncate_after(point - 1).unwrap();
    assert_eq!(shard.next_offset(), 8);
    let epochs: Vec<(u64, u64)> = shard.epochs().iter().map(|e| (e.generation, e.start_offset)).collect();
    assert_eq!(epochs, [(1, 0)]);
    let reopened = open(&Arc::new(io.crash()), small()).unwrap();
    assert_eq!(reopened.next_offset(), 8);
    assert_eq!(reopened.epochs().len(), 1);
    assert_eq!(read_all(&reopened).len(), 8);
    let r = reopened.append(&[b"new"]).unwrap();
    assert_eq!(r.start, 8);
}

#[test]
fn truncation_point_follows_the_leader_epoch_rule() {
    use felix_codec::format::epochs::Epoch;
    let local =
        [Epoch { generation: 1, start_offset: 0 }, Epoch { generation: 2, start_offset: 50 }, Epoch { generation: 4, start_offset: 80 }];
    assert_eq!(truncation_point(&local, 100, 4, 120), 100, "leader is ahead: keep everything");
    assert_eq!(truncation_point(&local, 100, 2, 70), 70, "leader's generation 2 ended at 70");
    assert_eq!(truncation_point(&local, 100, 2, 90), 80, "our generation 2 ended at 80");
    assert_eq!(truncation_point(&local, 100, 3, 95), 80, "we never saw generation 3: cut where our next began");
}

#[test]
fn a_damaged_epochs_file_reads_as_empty_with_a_warning() {
    let io = Arc::new(SimIo::new());
    let shard = open(&io, small()).unwrap();
    shard.begin_generation(5).unwrap();
    drop(shard);
    io.put(&dir().join("epochs"), b"FLEP\0\x01\0\x01junk");
    let (shard, report) = open_with(&io, small()).unwrap();
    assert!(shard.epochs().is_empty());
    assert!(report.warnings[0].contains("read as empty"), "{:?}", report.warnings);
}

#[test]
fn concurrent_appends_get_unique_contiguous_offsets() {
    let io = Arc::new(SimIo::new());
    let shard = Arc::new(open(&io, small()).unwrap());
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let shard = Arc::clone(&shard);
            std::thread::spawn(move || {
                (0..50).map(|i| shard.append(&[format!("t{t}-{i}").as_bytes()]).unwrap().start).collect::<Vec<u64>>()
            })
        })
        .collect();
    let mut offsets: Vec<u64> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
    offsets.sort_unstable();
    assert_eq!(offsets, (0..200).collect::<Vec<u64>>());
    assert_eq!(read_all(&shard).len(), 200);
}

#[test]
fn readers_see_a_growing_prefix_while_a_writer_appends() {
    let io = Arc::new(SimIo::new());
    let shard = Arc::new(open(&io, small()).unwrap());
    let writer = {
        let shard = Arc::clone(&shard);
        std::thread::spawn(move || workload(&shard, 300))
    };
    let mut seen = 0;
    while seen < 300 {
        let got = read_all(&shard);
        assert!(got.len() >= seen, "a reader never sees acknowledged records disappear");
        for (offset, bytes) in &got {
            assert_eq!(*bytes, payload(*offset), "offset {offset} read while appending");
        }
        assert_eq!(got.iter().map(|(o, _)| *o).collect::<Vec<_>>(), (0..got.len() as u64).collect::<Vec<_>>());
        seen = got.len();
    }
    assert_eq!(writer.join().unwrap().len(), 300);
}

#[test]
fn appends_arriving_during_a_sync_share_the_next_one() {
    let io = Arc::new(SimIo::new());
    let shard = Arc::new(open(&io, Config { segment_size_bytes: 1 << 20, ..small() }).unwrap());
    shard.append(&[b"first segment exists"]).unwrap();
    let before = io.syncs();
    io.hold_syncs();
    let spawn = |n: u64| {
        let shard = Arc::clone(&shard);
        std::thread::spawn(move || shard.append(&[format!("t{n}").as_bytes()]).unwrap())
    };
    let leader = spawn(0);
    io.wait_for_held_sync(); // the leader's sync is in flight
    let followers: Vec<_> = (1..=5).map(spawn).collect();
    while shard.next_offset() < 7 {
        std::thread::yield_now(); // every follower has written and waits for a sync
    }
    io.release_syncs();
    leader.join().unwrap();
    for f in followers {
        f.join().unwrap();
    }
    assert_eq!(io.syncs() - before, 2, "one sync for the leader, one shared by the five that came during it");
    assert_eq!(read_all(&shard).len(), 7);
}

#[test]
fn a_large_newest_segment_is_recovered_through_the_read_ahead_path() {
    // Over 32 MiB, recovery reads ahead on a second thread; the verdict must not change.
    let io = Arc::new(SimIo::new());
    let config = Config { segment_size_bytes: 1 << 30, ..small() };
    let shard = open(&io, config.clone()).unwrap();
    let big: Vec<Vec<u8>> = (0..40u8).map(|i| vec![i; 1 << 20]).collect();
    for b in &big {
        shard.append(&[b]).unwrap();
    }
    drop(shard);
    let log = newest_log(&io);
    let full = io.contents(&log).unwrap();
    let sim = Arc::new(io.crash());
    sim.put(&log, &full[..full.len() - 1000]);
    let (shard, report) = open_with(&sim, config).unwrap();
    assert_eq!(cuts(&report).len(), 1);
    assert_eq!(cuts(&report)[0].0, "Truncated");
    let got = read_all(&shard);
    assert_eq!(got.len(), 39);
    assert!(got.iter().zip(&big).all(|((_, a), b)| a == b));
}

/// The operator's `recover` reads its plan through the `Io` it is given: a
/// read that fails anywhere in the dry run or the real run's plan (every
/// read counted, one at a time) fails that run with the IO error and changes
/// nothing; without the fault the same plan cuts the torn tail.
#[test]
fn a_read_error_in_recover_s_plan_fails_the_run_and_changes_nothing() {
    use felix_codec::verdict::repair::RepairOptions;
    use felix_engine::tools::recover;
    let io = Arc::new(SimIo::new());
    let config = Config { segment_size_bytes: 1 << 20, ..small() };
    let shard = open(&io, config.clone()).unwrap();
    workload(&shard, 12);
    drop(shard);
    let log = newest_log(&io);
    let full = io.contents(&log).unwrap();
    io.put(&log, &full[..full.len() - 5]);
    let before = io.files_in(&dir());
    let dyn_io = || Arc::clone(&io) as Arc<dyn Io>;
    let options = RepairOptions::default();
    let start = io.reads();
    let dry = recover::plan(dyn_io(), &dir(), options).unwrap();
    let reads = io.reads() - start;
    assert!(reads > 0, "the dry run read nothing through the Io");
    assert_eq!(cuts_of(&dry.plan), 1);
    for n in 1..=reads {
        io.fail_read_at(n);
        let e = recover::plan(dyn_io(), &dir(), options).unwrap_err();
        assert!(e.to_string().contains("simulated read error"), "read {n}: {e}");
        assert_eq!(io.files_in(&dir()), before, "read {n}");
        // The real run fails in its plan, under the lock, before any change.
        io.fail_read_at(n);
        let e = recover::recover(dyn_io(), &dir(), options, false, 64, Some(&dry.plan)).unwrap_err();
        assert!(e.to_string().contains("simulated read error"), "read {n}: {e}");
        assert_eq!(io.files_in(&dir()), before, "read {n}");
    }
    let done = recover::recover(dyn_io(), &dir(), options, false, 64, Some(&dry.plan)).unwrap();
    assert!(done.executed && done.failure.is_none());
    assert_ne!(io.files_in(&dir()), before);
}

fn cuts_of(plan: &felix_codec::shard::recovery::ShardPlan) -> usize {
    plan.actions.iter().filter(|a| matches!(a, Action::Cut { .. })).count()
}

// ------------------------------------------- the unwritten tail (EveryBatch)

fn one(payload: &[u8]) -> [felix_engine::shard::Append<'_>; 1] {
    [felix_engine::shard::Append { payload, timestamp_micros: Some(1) }]
}

/// Bytes the active segment counts that its file does not hold yet.
fn unwritten(io: &SimIo, shard: &Shard) -> u64 {
    let counted = shard.segments().last().unwrap().size_bytes;
    counted - io.contents(&newest_log(io)).unwrap().len() as u64
}

/// Under `EveryBatch` an append's records wait in memory for the sync that
/// acknowledges them, and that sync writes every waiting append at once:
/// 64 appends, no IO call until the group commit, then a handful for all
/// of them — not one write an append.
#[test]
fn a_group_commit_writes_every_append_waiting_for_it_in_one_go() {
    let io = Arc::new(SimIo::new());
    let shard = open(&io, Config::default()).unwrap();
    // The first append creates the segment.
    shard.append(&[&payload(0)]).unwrap();
    let before = io.mutations();
    let pending: Vec<_> = (1..=64).map(|i| shard.write(&one(&payload(i))).unwrap()).collect();
    assert_eq!(io.mutations(), before, "an append wrote before its sync");
    assert!(unwritten(&io, &shard) > 0);
    assert!(!shard.try_commit(&pending[0]).unwrap(), "acknowledged before any sync");
    shard.sync_for_commit().unwrap();
    let calls = io.mutations() - before;
    assert!(calls <= 4, "one group commit of 64 appends made {calls} mutating IO calls");
    assert_eq!(unwritten(&io, &shard), 0);
    assert!(pending.iter().all(|p| shard.try_commit(p).unwrap()));
    let want: Vec<(u64, Vec<u8>)> = (0..=64).map(|i| (i, payload(i))).collect();
    assert_eq!(read_all(&shard), want);
    drop(shard);
    assert_eq!(read_all(&open(&io, Config::default()).unwrap()), want);
}

/// Memory bounded by design: however many appends wait for a sync that does
/// not come, the tail kept in memory stays under 256 KiB; a batch that
/// would pass it is written at once, with the tail, and nothing is lost.
#[test]
fn the_unwritten_tail_never_passes_256_kib() {
    let io = Arc::new(SimIo::new());
    let shard = open(&io, Config::default()).unwrap();
    let big = vec![7u8; 3000];
    let mut peak = 0;
    for i in 0..400u64 {
        shard.write(&one(&big)).unwrap();
        let left = unwritten(&io, &shard);
        assert!(left <= felix_engine::shard::UNWRITTEN_MAX_BYTES as u64, "append {i}: {left} bytes unwritten");
        peak = peak.max(left);
    }
    assert!(peak > 200 << 10, "the tail never filled ({peak} bytes)");
    // A batch larger than the bound goes straight to the file.
    let huge = vec![9u8; 300 << 10];
    shard.write(&one(&huge)).unwrap();
    assert_eq!(unwritten(&io, &shard), 0);
    shard.sync().unwrap();
    assert_eq!(read_all(&shard).len(), 401);
    // A batch past `DEFERRED_BATCH_MAX_BYTES` never waits, even with room in the tail.
    let large = vec![5u8; felix_engine::shard::DEFERRED_BATCH_MAX_BYTES];
    shard.write(&one(&large)).unwrap();
    assert_eq!(unwritten(&io, &shard), 0);
    shard.write(&one(&big)).unwrap();
    assert!(unwritten(&io, &shard) > 0);
}

/// Everything that works on the active segment's file first writes the
/// unwritten tail: a cut inside it, a cut below it, a restart, a seal (whose
/// checksum is the file's own CRC-32), a close and a drop each leave the
/// file holding exactly the records the shard says it holds.
#[test]
fn cuts_seals_and_closes_see_the_records_still_waiting_for_a_sync() {
    let write = |shard: &Shard, n: u64| {
        for i in 0..n {
            shard.write(&one(&payload(i))).unwrap();
        }
    };
    let offsets = |shard: &Shard| read_all(shard).into_iter().map(|(o, _)| o).collect::<Vec<_>>();
    // A cut inside the tail, then one below what the file held.
    let io = Arc::new(SimIo::new());
    let shard = open(&io, Config::default()).unwrap();
    write(&shard, 6);
    shard.sync().unwrap();
    write(&shard, 10);
    shard.truncate_after(11).unwrap();
    assert_eq!(offsets(&shard), (0..12).collect::<Vec<_>>());
    write(&shard, 3);
    shard.truncate_after(3).unwrap();
    write(&shard, 2);
    shard.sync().unwrap();
    assert_eq!(offsets(&shard), (0..6).collect::<Vec<_>>());
    drop(shard);
    assert_eq!(offsets(&open(&io, Config::default()).unwrap()), (0..6).collect::<Vec<_>>());
    // A restart below the oldest record, with records waiting.
    let shard = open(&io, Config::default()).unwrap();
    write(&shard, 4);
    shard.truncate_from(0).unwrap();
    write(&shard, 2);
    shard.sync().unwrap();
    assert_eq!(offsets(&shard), vec![0, 1]);
    // A seal: the checksum covers every record, and is the file's.
    write(&shard, 5);
    let (info, checksum) = shard.seal().unwrap();
    let sealed = io.contents(&dir().join(felix_codec::format::file_name::segment_file_name(info.id))).unwrap();
    assert_eq!(sealed.len() as u64, info.size_bytes);
    assert_eq!(checksum, u64::from(crc32fast::hash(&sealed)));
    assert_eq!(info.next_offset, 7);
    // A close, and a drop, with records waiting: both write and sync them.
    write(&shard, 3);
    shard.close().unwrap();
    drop(shard);
    let shard = open(&io, Config::default()).unwrap();
    assert_eq!(offsets(&shard), (0..10).collect::<Vec<_>>());
    write(&shard, 2);
    drop(shard);
    let io = Arc::new(io.crash());
    assert_eq!(offsets(&open(&io, Config::default()).unwrap()), (0..12).collect::<Vec<_>>());
}

/// `close` syncs, then — under the shard's lock, so nothing slips in after —
/// syncs again whatever was written while its first sync was in flight.
/// That second sync must write the unwritten tail first: a write that
/// returned before the close took the lock was promised durable by the
/// close (its commit answers `Closed`, but the record is the log's), and a
/// power cut after a clean close must find it.
#[test]
fn a_close_writes_the_records_appended_while_its_first_sync_was_in_flight() {
    let io = Arc::new(SimIo::new());
    let shard = Arc::new(open(&io, Config::default()).unwrap());
    shard.append(&[b"the segment exists"]).unwrap();
    shard.write(&one(b"waiting when the close starts")).unwrap();
    io.hold_syncs();
    let closer = {
        let shard = Arc::clone(&shard);
        std::thread::spawn(move || shard.close())
    };
    io.wait_for_held_sync(); // the close's first sync is in flight, the shard's lock free
    let late = shard.write(&one(b"written during the close's first sync")).unwrap();
    io.release_syncs();
    closer.join().unwrap().unwrap();
    assert!(matches!(shard.commit(&late), Err(EngineError::Closed { .. })));
    drop(shard);
    let io = Arc::new(io.crash());
    let got: Vec<Vec<u8>> = read_all(&open(&io, Config::default()).unwrap()).into_iter().map(|(_, p)| p).collect();
    let want: [&[u8]; 3] = [b"the segment exists", b"waiting when the close starts", b"written during the close's first sync"];
    assert_eq!(got, want.map(<[u8]>::to_vec));
}

/// A payload that says what it must be: `w{t}-{i}-{j}:` then a body its
/// header determines (writer `t`, batch `i`, record `j`); some are nearly a
/// segment long, so rolls come in the middle of a batch and of the tail.
fn racing_payload(t: u64, i: u64, j: u64) -> Vec<u8> {
    let len = if i % 40 == 7 { 3900 } else { (i * 37 + j * 11 + t * 5) % 700 };
    let mut p = format!("w{t}-{i}-{j}:").into_bytes();
    p.extend(vec![b'a' + ((t * 7 + i + j) % 26) as u8; len as usize]);
    p
}

/// Whether `p` is a payload [`racing_payload`] makes, byte for byte.
fn racing_payload_intact(p: &[u8]) -> bool {
    let Some(colon) = p.iter().position(|b| *b == b':') else { return false };
    let head = String::from_utf8_lossy(&p[..colon]).into_owned();
    let n: Vec<u64> = head.trim_start_matches('w').split('-').filter_map(|x| x.parse().ok()).collect();
    n.len() == 3 && racing_payload(n[0], n[1], n[2]) == p
}

/// Four threads append — committed at once, left waiting for a later
/// commit, or never committed — while a fifth cuts inside and below the
/// unwritten tail, seals, applies retention, begins generations, reads,
/// seeks by time and opens a reader beside the writer. Every read returns
/// intact, consecutive records; no call fails; and after a clean close a
/// power cut loses nothing the log held, every acknowledged record no cut
/// could reach is there, and every segment's file holds exactly the bytes
/// the shard counts.
#[test]
fn appends_racing_cuts_seals_retention_and_readers_lose_and_corrupt_nothing() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Mutex;
    let io = Arc::new(SimIo::new());
    let config = Config { segment_size_bytes: 4096, index_spacing_bytes: 128, retention_bytes: Some(12 * 4096), ..Config::default() };
    let shard = Arc::new(open(&io, config.clone()).unwrap());
    let clock = Arc::new(AtomicU64::new(0));
    // (offset, payload, when its write began) of every acknowledged record; (keep, when the cut ended) of every cut.
    let acked = Arc::new(Mutex::new(Vec::<(u64, Vec<u8>, u64)>::new()));
    let cuts = Arc::new(Mutex::new(Vec::<(u64, u64)>::new()));
    let done = Arc::new(AtomicBool::new(false));
    // Reads the whole log; one that retention overtakes starts again from the oldest.
    let check_read = |shard: &Shard, what: &str| {
        let mut at = shard.first_offset();
        let mut got: Vec<(u64, Vec<u8>)> = Vec::new();
        loop {
            let batch = match shard.read(at, 1 << 20) {
                Ok(batch) => batch,
                Err(EngineError::Trimmed { oldest, .. }) => {
                    (at, got) = (oldest, Vec::new());
                    continue;
                }
                Err(e) => panic!("{what}: a read from {at} failed: {e}"),
            };
            let Some(last) = batch.last() else { break };
            at = last.offset + 1;
            got.extend(batch.iter().map(|r| (r.offset, r.payload.to_vec())));
        }
        for w in got.windows(2) {
            assert_eq!(w[1].0, w[0].0 + 1, "{what}: offsets not consecutive");
        }
        for (o, p) in &got {
            assert!(racing_payload_intact(p), "{what}: offset {o} read back damaged ({} bytes)", p.len());
        }
        got
    };
    let writers: Vec<_> = (0..4u64)
        .map(|t| {
            let (shard, clock, acked) = (Arc::clone(&shard), Arc::clone(&clock), Arc::clone(&acked));
            std::thread::spawn(move || {
                let mut waiting = Vec::new();
                for i in 0..250u64 {
                    let payloads: Vec<Vec<u8>> = (0..1 + (i + t) % 3).map(|j| racing_payload(t, i, j)).collect();
                    let records: Vec<felix_engine::shard::Append<'_>> =
                        payloads.iter().map(|p| felix_engine::shard::Append { payload: p, timestamp_micros: Some(i) }).collect();
                    let began = clock.fetch_add(1, Ordering::SeqCst);
                    let pending = shard.write(&records).unwrap();
                    waiting.push((pending, payloads, began));
                    if i % 3 == 1 {
                        continue; // waits for a later commit, or none at all
                    }
                    for (pending, payloads, began) in waiting.drain(..).filter(|_| i % 5 != 0) {
                        match shard.commit(&pending) {
                            Ok(()) => acked.lock().unwrap().extend(pending.offsets.clone().zip(payloads).map(|(o, p)| (o, p, began))),
                            Err(EngineError::TruncatedAway { .. }) => {}
                            Err(e) => panic!("writer {t}: commit failed: {e}"),
                        }
                    }
                }
            })
        })
        .collect();
    let operator = {
        let (shard, io, clock, cuts, done) =
            (Arc::clone(&shard), Arc::clone(&io), Arc::clone(&clock), Arc::clone(&cuts), Arc::clone(&done));
        let config = config.clone();
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !done.load(Ordering::SeqCst) {
                n += 1;
                match n % 8 {
                    0 => {
                        let next = shard.next_offset();
                        let keep = next.saturating_sub(n % 7).max(shard.first_offset() + 1);
                        match shard.truncate_after(keep - 1) {
                            Ok(()) | Err(EngineError::Trimmed { .. }) => {}
                            Err(e) => panic!("truncate_after: {e}"),
                        }
                        cuts.lock().unwrap().push((keep, clock.fetch_add(1, Ordering::SeqCst)));
                    }
                    1 => drop(shard.seal().unwrap()),
                    2 => drop(shard.apply_retention(felix_engine::shard::now_micros()).unwrap()),
                    3 => shard.begin_generation(n).unwrap(),
                    4 => drop(shard.offset_for_time(n % 250).unwrap()),
                    5 => {
                        let (reader, _) = Shard::open_read_only(Arc::clone(&io) as Arc<dyn Io>, &dir(), config.clone()).unwrap();
                        drop(check_read(&reader, "a reader beside the writer"));
                    }
                    _ => drop(check_read(&shard, "the writer")),
                }
            }
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    done.store(true, Ordering::SeqCst);
    operator.join().unwrap();
    shard.close().unwrap();
    for s in shard.segments() {
        let file = io.contents(&dir().join(felix_codec::format::file_name::segment_file_name(s.id))).unwrap();
        assert_eq!(file.len() as u64, s.size_bytes, "segment {} after the close", s.id);
    }
    drop(shard);
    let io = Arc::new(io.crash());
    let reopened = open(&io, config).unwrap();
    let got = check_read(&reopened, "after the close and a power cut");
    let first = reopened.first_offset();
    let held: std::collections::BTreeMap<u64, Vec<u8>> = got.into_iter().collect();
    let cuts = cuts.lock().unwrap();
    for (o, p, began) in acked.lock().unwrap().iter() {
        // A cut that ended after this write began may have taken it.
        let reachable = cuts.iter().any(|(keep, ended)| keep <= o && ended > began);
        if *o >= first && !reachable {
            assert_eq!(held.get(o), Some(p), "acknowledged offset {o} lost or changed");
        }
    }
}

/// A group commit's sync names its segment by path and runs outside the
/// shard's lock. A cut below that segment's base removes it: done while the
/// sync is in flight, the sync found no such file and the shard stopped —
/// a fail-stop no disk caused, and every later append refused. The cut
/// waits for the sync in flight instead.
#[test]
fn a_cut_that_removes_the_segment_a_sync_is_flushing_waits_for_the_sync() {
    let io = Arc::new(SimIo::new());
    let shard = Arc::new(open(&io, Config::default()).unwrap());
    shard.append(&[b"0", b"1"]).unwrap();
    let (sealed, _) = shard.seal().unwrap();
    let active = dir().join(felix_codec::format::file_name::segment_file_name(sealed.id + 1));
    let pending = shard.write(&one(b"2, in the active segment's tail")).unwrap();
    io.hold_syncs();
    let leader = {
        let shard = Arc::clone(&shard);
        std::thread::spawn(move || shard.commit(&pending))
    };
    io.wait_for_held_sync(); // the leader's sync of the active segment is in flight
    let cutter = {
        let shard = Arc::clone(&shard);
        std::thread::spawn(move || shard.truncate_after(1))
    };
    // Time for a cut that does not wait to remove the active segment.
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(300);
    while io.contents(&active).is_some() && std::time::Instant::now() < deadline {
        std::thread::yield_now();
    }
    io.release_syncs();
    let committed = leader.join().unwrap();
    let cut = cutter.join().unwrap();
    assert_eq!(shard.failure(), None, "a cut during a sync stopped the shard");
    cut.unwrap();
    assert!(matches!(committed, Ok(()) | Err(EngineError::TruncatedAway { .. })), "{committed:?}");
    assert_eq!(read_all(&shard).into_iter().map(|(o, _)| o).collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(shard.append(&[b"after the cut"]).unwrap(), 2..3);
}
