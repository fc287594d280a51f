//! The engine a broker can trust, through its API on the simulated
//! filesystem: one writer per shard, durable directories, fail-stop inside
//! every mutating operation (a fault at every IO call and a crash at every
//! sync of each), evidence never replaced, index hints never trusted,
//! offsets that end, and reads that create nothing.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

/// Acknowledged `(offset, payload)` pairs.
type Acked = Vec<(u64, Vec<u8>)>;
/// A fault to inject, and what to call it.
type Fault = (String, Box<dyn Fn(&SimIo)>);

use std::path::{Path, PathBuf};
use std::sync::Arc;

use felix_codec::format::index::{build_index, IndexEntry, IndexHeader};
use felix_codec::format::record::encode_record;
use felix_codec::format::segment_header::SegmentHeader;
use felix_codec::shard::recovery::Action;
use felix_engine::io::sim::SimIo;
use felix_engine::shard::{Config, Durability, Recovery, Shard};
use felix_engine::{EngineError, Io};

fn dir() -> PathBuf {
    PathBuf::from("/sim/root/acme_default_orders_0-0d3aed4b998d2798")
}

fn small() -> Config {
    Config { segment_size_bytes: 400, index_spacing_bytes: 64, ..Config::default() }
}

fn open(io: &Arc<SimIo>, config: Config) -> Result<(Shard, Recovery), EngineError> {
    Shard::open_dir(Arc::clone(io) as Arc<dyn Io>, &dir(), config)
}

fn payload(i: u64) -> Vec<u8> {
    format!("record-{i}-{}", "x".repeat((i % 23) as usize)).into_bytes()
}

fn append_n(shard: &Shard, from: u64, n: u64) -> Vec<(u64, Vec<u8>)> {
    (from..from + n)
        .map(|i| {
            let p = payload(i);
            let r = shard.append(&[&p]).unwrap();
            (r.start, p)
        })
        .collect()
}

#[path = "support/shard.rs"]
mod shard_support;
use shard_support::read_all;

fn names(io: &SimIo, ext: &str) -> Vec<String> {
    let mut v: Vec<String> =
        io.list(&dir()).unwrap().into_iter().map(|e| e.name.into_string().unwrap()).filter(|n| n.ends_with(ext)).collect();
    v.sort();
    v
}

// ------------------------------------------------------------ one writer

#[test]
fn a_second_writer_is_refused_at_once_and_waits_when_asked() {
    let io = Arc::new(SimIo::new());
    let (first, _) = open(&io, small()).unwrap();
    first.append(&[b"one"]).unwrap();
    let err = open(&io, small()).unwrap_err();
    assert_eq!(err, EngineError::Locked { dir: dir(), pid: Some(std::process::id()) });
    assert!(err.to_string().contains("open for writing by another process (pid"), "{err}");
    // Waiting: the second writer gets the shard the moment the first lets go.
    let waiter = {
        let io = Arc::clone(&io);
        std::thread::spawn(move || open(&io, Config { wait_for_lock: true, ..small() }).map(|(s, _)| s.next_offset()))
    };
    while io.lock_waiters() == 0 {
        std::thread::yield_now();
    }
    drop(first);
    assert_eq!(waiter.join().unwrap().unwrap(), 1, "it sees what the first writer acknowledged");
    // Readers take no lock.
    let (_writer, _) = open(&io, small()).unwrap();
    let (reader, _) = Shard::open_read_only(Arc::clone(&io) as Arc<dyn Io>, &dir(), small()).unwrap();
    assert_eq!(read_all(&reader), [(0, b"one".to_vec())]);
    assert_eq!(reader.append(&[b"x"]), Err(EngineError::ReadOnly));
}

// ------------------------------------------------- directory durability

#[test]
fn a_new_root_and_shard_directory_are_durable_before_the_first_acknowledgement() {
    // Crash after every sync of a fresh open and its first appends: whatever
    // was acknowledged survives, so no directory entry can have been lost.
    let probe = Arc::new(SimIo::new());
    let (shard, _) = open(&probe, small()).unwrap();
    append_n(&shard, 0, 3);
    let total = probe.syncs();
    for k in 1..=total {
        let io = Arc::new(SimIo::new());
        io.crash_after_sync(k);
        let mut acked = Vec::new();
        if let Ok((shard, _)) = open(&io, small()) {
            for i in 0..3 {
                match shard.append(&[&payload(i)]) {
                    Ok(r) => acked.push((r.start, payload(i))),
                    Err(_) => break,
                }
            }
        }
        let rebooted = Arc::new(io.crash());
        if acked.is_empty() {
            continue;
        }
        assert!(rebooted.dir_exists(&dir()), "crash after sync {k}: the shard directory is gone with acknowledged records");
        let (reopened, _) = open(&rebooted, small()).unwrap();
        let got = read_all(&reopened);
        assert_eq!(&got[..acked.len()], &acked[..], "crash after sync {k}");
    }
}

// ------------------------------------------------------------ fail-stop

/// Every later mutating call (and read) of a stopped shard answers `FailStopped`.
fn assert_stopped(shard: &Shard, label: &str) {
    let calls: [(&str, Result<(), EngineError>); 6] = [
        ("append", shard.append(&[b"later"]).map(drop)),
        ("begin_generation", shard.begin_generation(1 << 40)),
        ("apply_retention", shard.apply_retention(u64::MAX / 2).map(drop)),
        ("truncate_after", shard.truncate_after(0)),
        ("sync", shard.sync()),
        ("read", shard.read(shard.first_offset(), 1).map(drop)),
    ];
    for (name, r) in calls {
        assert!(matches!(r, Err(EngineError::FailStopped { .. })), "{label}: {name} after the failure returned {r:?}");
    }
}

/// Fails the Nth IO call of `op` for every N, then crashes after every sync
/// of `op`, on a shard prepared by `setup`; `check` judges the reopened shard.
fn sweep(
    name: &str,
    config: &Config,
    setup: &dyn Fn(&Shard) -> Acked,
    op: &dyn Fn(&Shard) -> Result<(), EngineError>,
    check: &dyn Fn(&str, &Acked, &Shard, bool),
) {
    let probe = Arc::new(SimIo::new());
    let (shard, _) = open(&probe, config.clone()).unwrap();
    setup(&shard);
    let (m0, s0) = (probe.mutations(), probe.syncs());
    op(&shard).unwrap();
    let (m1, s1) = (probe.mutations(), probe.syncs());
    assert!(m1 > m0, "{name}: the operation does IO");
    drop(shard);
    let mut faults: Vec<Fault> = Vec::new();
    for n in m0 + 1..=m1 {
        faults.push((format!("{name}: failure at IO call {} of {}", n - m0, m1 - m0), Box::new(move |io: &SimIo| io.fail_at(n))));
    }
    for k in s0 + 1..=s1 {
        faults.push((format!("{name}: crash after sync {} of {}", k - s0, s1 - s0), Box::new(move |io: &SimIo| io.crash_after_sync(k))));
    }
    for (label, fault) in faults {
        let io = Arc::new(SimIo::new());
        let (shard, _) = open(&io, config.clone()).unwrap();
        let acked = setup(&shard);
        assert_eq!(io.mutations(), m0, "{label}: the setup is deterministic");
        fault(&io);
        let result = op(&shard);
        match &result {
            // Retention's one exception: a segment it could not unlink is
            // still whole; the shard goes on and the next pass retries.
            Err(EngineError::Io { op: "remove", .. }) if name == "retention" => {
                assert_eq!(shard.failure(), None, "{label}: a failed unlink stops nothing");
                io.fail_at(u64::MAX); // the disk is well again
                op(&shard).unwrap_or_else(|e| panic!("{label}: the next pass: {e}"));
            }
            Err(_) => assert_stopped(&shard, &label),
            Ok(()) => {}
        }
        drop(shard);
        let rebooted = Arc::new(io.crash());
        let (reopened, _) = open(&rebooted, config.clone()).unwrap_or_else(|e| panic!("{label}: reopen failed: {e}"));
        check(&label, &acked, &reopened, result.is_ok());
    }
}

/// The reopened shard holds every acknowledged record from its first offset
/// on, in order, and beyond them only records that were attempted.
fn holds(label: &str, acked: &[(u64, Vec<u8>)], got: &[(u64, Vec<u8>)]) {
    let first = got.first().map_or(0, |(o, _)| *o);
    let want: Vec<&(u64, Vec<u8>)> = acked.iter().filter(|(o, _)| *o >= first).collect();
    assert!(got.len() >= want.len(), "{label}: lost acknowledged records");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, *w, "{label}");
    }
    for (o, p) in &got[want.len()..] {
        assert_eq!(*p, payload(*o), "{label}: unexpected record {o}");
    }
}

#[test]
fn a_fault_inside_an_append_that_rolls_over_stops_the_shard_and_loses_nothing_acknowledged() {
    let setup = |s: &Shard| append_n(s, 0, 12);
    let op = |s: &Shard| {
        let batch: Vec<Vec<u8>> = (12..20).map(payload).collect();
        let refs: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
        s.append(&refs).map(drop)
    };
    let check = |label: &str, acked: &Acked, re: &Shard, ok: bool| {
        let got = read_all(re);
        holds(label, acked, &got);
        if ok {
            assert_eq!(got.len(), 20, "{label}: the acknowledged batch is there");
        }
    };
    sweep("append", &small(), &setup, &op, &check);
}

#[test]
fn a_fault_inside_retention_stops_the_shard_or_is_retried_and_keeps_a_contiguous_tail() {
    let config = Config { retention_bytes: Some(900), ..small() };
    let setup = |s: &Shard| append_n(s, 0, 60);
    let op = |s: &Shard| s.apply_retention(u64::MAX / 2).map(drop);
    let check = |label: &str, acked: &Acked, re: &Shard, _ok: bool| {
        let got = read_all(re);
        assert_eq!(got.last().map(|(o, _)| *o), Some(59), "{label}: the newest records stay");
        holds(label, acked, &got);
    };
    sweep("retention", &config, &setup, &op, &check);
}

#[test]
fn a_fault_inside_begin_generation_stops_the_shard_and_the_history_is_old_or_new() {
    let setup = |s: &Shard| {
        s.begin_generation(1).unwrap();
        append_n(s, 0, 10)
    };
    let op = |s: &Shard| s.begin_generation(4);
    let check = |label: &str, acked: &Acked, re: &Shard, ok: bool| {
        holds(label, acked, &read_all(re));
        let gens: Vec<u64> = re.epochs().iter().map(|e| e.generation).collect();
        assert!(gens == [1] || gens == [1, 4], "{label}: {gens:?}");
        if ok {
            assert_eq!(gens, [1, 4], "{label}");
        }
    };
    sweep("begin_generation", &small(), &setup, &op, &check);
}

#[test]
fn a_fault_inside_truncate_after_stops_the_shard_and_never_appends_past_a_half_done_cut() {
    let setup = |s: &Shard| {
        s.begin_generation(1).unwrap();
        let a = append_n(s, 0, 25);
        s.begin_generation(2).unwrap();
        [a, append_n(s, 25, 15)].concat()
    };
    let op = |s: &Shard| s.truncate_after(19);
    let check = |label: &str, acked: &Acked, re: &Shard, ok: bool| {
        let got = read_all(re);
        assert!(got.len() >= 20, "{label}: the kept prefix is there");
        assert_eq!(&got[..], &acked[..got.len()], "{label}: what remains is a prefix of what was acknowledged");
        if ok {
            assert_eq!((got.len(), re.next_offset()), (20, 20), "{label}");
            assert_eq!(re.epochs().len(), 1, "{label}: generation 2 began past the cut");
        }
    };
    sweep("truncate_after", &small(), &setup, &op, &check);
}

/// Found by the simulator (`tests/simulation.rs`): a truncation that failed
/// after cutting the log but before rewriting the epochs file left a
/// generation starting past the log's end — `inspect` reported
/// `EpochsBeyondLog`, and every later `begin_generation` failed
/// (`EpochsOrder`) and stopped the shard. Now the history is cut first.
#[test]
fn a_truncation_that_fails_anywhere_leaves_no_generation_past_the_log_end() {
    let setup = |s: &Shard| {
        s.begin_generation(1).unwrap();
        let a = append_n(s, 0, 25);
        s.begin_generation(2).unwrap();
        [a, append_n(s, 25, 15)].concat()
    };
    type Op<'a> = (&'a str, &'a dyn Fn(&Shard) -> Result<(), EngineError>);
    let ops: [Op<'_>; 2] = [("truncate_after", &|s: &Shard| s.truncate_after(19)), ("truncate_from", &|s: &Shard| s.truncate_from(0))];
    for (name, op) in ops {
        let probe = Arc::new(SimIo::new());
        let (shard, _) = open(&probe, small()).unwrap();
        setup(&shard);
        let (m0, m1) = (probe.mutations(), {
            op(&shard).unwrap();
            probe.mutations()
        });
        drop(shard);
        for n in m0 + 1..=m1 {
            for restart in [false, true] {
                let label =
                    format!("{name}: failure at IO call {} of {}, {}", n - m0, m1 - m0, if restart { "restart" } else { "power cut" });
                let io = Arc::new(SimIo::new());
                let (shard, _) = open(&io, small()).unwrap();
                setup(&shard);
                io.fail_at(n);
                assert!(op(&shard).is_err(), "{label}");
                drop(shard);
                let io = if restart {
                    io.clear_faults();
                    io
                } else {
                    Arc::new(io.crash())
                };
                let (re, _) = open(&io, small()).unwrap_or_else(|e| panic!("{label}: reopen failed: {e}"));
                let end = re.next_offset();
                assert!(re.epochs().iter().all(|e| e.start_offset <= end), "{label}: {:?} past the end {end}", re.epochs());
                re.begin_generation(3).unwrap_or_else(|e| panic!("{label}: a new generation is refused: {e}"));
            }
        }
    }
}

/// Found by the simulator (`tests/simulation.rs`): a truncation that
/// failed before its directory fsync, a restarted writer that appended on
/// what it found (the removals, not yet durable), then a power cut: the
/// removed segments came back behind the new records and the shard was
/// refused (`SegmentDiscontinuity`), every record acknowledged since
/// unreadable. Now a writing open makes the names it recovered durable.
#[test]
fn a_writer_restarted_after_a_failed_truncation_builds_only_on_durable_names() {
    let setup = |s: &Shard| {
        s.begin_generation(1).unwrap();
        append_n(s, 0, 40)
    };
    let probe = Arc::new(SimIo::new());
    let (shard, _) = open(&probe, small()).unwrap();
    setup(&shard);
    let m0 = probe.mutations();
    shard.truncate_after(9).unwrap();
    let m1 = probe.mutations();
    drop(shard);
    for n in m0 + 1..=m1 {
        let label = format!("failure at IO call {} of {}", n - m0, m1 - m0);
        let io = Arc::new(SimIo::new());
        let (shard, _) = open(&io, small()).unwrap();
        let acked = setup(&shard);
        io.fail_at(n);
        assert!(shard.truncate_after(9).is_err(), "{label}");
        drop(shard);
        io.clear_faults(); // the process restarts: what it wrote stays in the page cache
        let (restarted, _) = open(&io, small()).unwrap_or_else(|e| panic!("{label}: restart failed: {e}"));
        let next = restarted.next_offset();
        // A record small enough for the segment the cut would have kept: no roll (whose fsync would hide this).
        let later = vec![(restarted.append(&[b"z"]).unwrap().start, b"z".to_vec())];
        drop(restarted);
        let rebooted = Arc::new(io.crash());
        let (re, _) = open(&rebooted, small()).unwrap_or_else(|e| panic!("{label}: after the power cut: {e}"));
        let got = read_all(&re);
        let kept: Vec<(u64, Vec<u8>)> = acked.iter().filter(|(o, _)| *o < next).cloned().chain(later).collect();
        assert_eq!(got, kept, "{label}");
    }
}

/// Found by the simulator (`tests/simulation.rs`): a generation begun while
/// a batch was written but not yet durable recorded a start past what a
/// power cut leaves; after the crash the history named a generation past
/// the log's end (`EpochsBeyondLog`) and every later `begin_generation`
/// failed (`EpochsOrder`), stopping the shard. Now what a generation starts
/// after is made durable first — under every durability.
#[test]
fn a_generation_never_starts_past_the_log_a_power_cut_leaves() {
    use felix_engine::shard::Append;
    for durability in [Durability::EveryBatch, Durability::NoSync] {
        for record in [false, true] {
            let label = format!("{durability:?}, record_generation {record}");
            let config = Config { durability, ..small() };
            let io = Arc::new(SimIo::new());
            let (shard, _) = open(&io, config.clone()).unwrap();
            append_n(&shard, 0, 12);
            shard.write(&[Append { payload: b"written, not committed", timestamp_micros: None }]).unwrap();
            if record {
                assert!(shard.record_generation(1, shard.next_offset()).unwrap(), "{label}");
            } else {
                shard.begin_generation(1).unwrap();
            }
            let start = shard.epochs()[0].start_offset;
            let rebooted = Arc::new(io.crash());
            std::mem::forget(shard); // the power cut: no clean close
            let (re, _) = open(&rebooted, config).unwrap();
            assert!(start <= re.next_offset(), "{label}: generation 1 starts at {start}, the log ends at {}", re.next_offset());
            re.begin_generation(2).unwrap_or_else(|e| panic!("{label}: {e}"));
        }
    }
}

/// Found by the simulator (`tests/simulation.rs`, seed 10040): a shard with
/// no segment left (an operator removed them) resumes at its history's last
/// start; `truncate_from` below it restarted the log there but kept the
/// history, which then named a generation past the log's end.
#[test]
fn truncating_a_shard_with_no_segment_cuts_its_history_too() {
    let io = Arc::new(SimIo::new());
    let (shard, _) = open(&io, small()).unwrap();
    append_n(&shard, 0, 7);
    shard.begin_generation(1).unwrap();
    drop(shard);
    for name in [names(&io, ".log"), names(&io, ".index")].concat() {
        io.remove_raw(&dir().join(name));
    }
    let (shard, _) = open(&io, small()).unwrap();
    assert_eq!(shard.next_offset(), 7, "it resumes where its history says");
    shard.truncate_from(5).unwrap();
    assert_eq!(shard.next_offset(), 5);
    assert!(shard.epochs().iter().all(|e| e.start_offset <= 5), "{:?}", shard.epochs());
    shard.begin_generation(2).unwrap();
}

/// Found by the simulator (`tests/simulation.rs`, seed 13365): a writer
/// stopped after writing a record but before its fsync; the restarted
/// writer (page cache intact) read the record back, took it as durable and
/// began a generation after it; a power cut took the record and left the
/// generation past the log's end. Now a writing open makes the newest
/// segment durable before anything builds on it.
#[test]
fn a_writer_restarted_after_a_failed_append_begins_generations_only_after_durable_records() {
    let probe = Arc::new(SimIo::new());
    let (shard, _) = open(&probe, small()).unwrap();
    append_n(&shard, 0, 5);
    let m0 = probe.mutations();
    shard.append(&[&payload(5)]).unwrap();
    let m1 = probe.mutations();
    drop(shard);
    for n in m0 + 1..=m1 {
        let label = format!("failure at IO call {} of {} of an append", n - m0, m1 - m0);
        let io = Arc::new(SimIo::new());
        let (shard, _) = open(&io, small()).unwrap();
        append_n(&shard, 0, 5);
        io.fail_at(n);
        assert!(shard.append(&[&payload(5)]).is_err(), "{label}");
        drop(shard);
        io.clear_faults(); // the process restarts: what it wrote stays in the page cache
        let (restarted, _) = open(&io, small()).unwrap_or_else(|e| panic!("{label}: restart failed: {e}"));
        restarted.begin_generation(1).unwrap();
        let start = restarted.epochs()[0].start_offset;
        drop(restarted);
        let rebooted = Arc::new(io.crash());
        let (re, _) = open(&rebooted, small()).unwrap_or_else(|e| panic!("{label}: after the power cut: {e}"));
        assert!(start <= re.next_offset(), "{label}: generation 1 starts at {start}, the log ends at {}", re.next_offset());
        re.begin_generation(2).unwrap_or_else(|e| panic!("{label}: {e}"));
    }
}

#[test]
fn a_fault_inside_recovery_fails_the_open_and_the_next_open_recovers_everything() {
    // A shard needing every recovery action: a torn tail, a missing index, a leftover temporary.
    let base = Arc::new(SimIo::new());
    let (shard, _) = open(&base, small()).unwrap();
    let acked = append_n(&shard, 0, 30);
    drop(shard);
    let logs = names(&base, ".log");
    let newest = dir().join(logs.last().unwrap());
    let bytes = base.contents(&newest).unwrap();
    base.put(&newest, &bytes[..bytes.len() - 3]);
    base.remove(&dir().join(names(&base, ".index")[0].clone())).unwrap();
    base.put(&dir().join("epochs.tmp"), b"half");
    let prepare = || {
        let io = Arc::new(base.crash());
        io.sync_dir(&dir()).unwrap();
        io
    };
    let probe = prepare();
    let (m0, s0) = (probe.mutations(), probe.syncs());
    let (_, recovery) = open(&probe, small()).unwrap();
    let kinds: Vec<&str> = recovery
        .plan
        .actions
        .iter()
        .map(|a| match a {
            Action::RemoveTemporary { .. } => "remove-temporary",
            Action::Cut { .. } => "cut",
            Action::RebuildIndex { .. } => "rebuild-index",
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(kinds.contains(&"remove-temporary") && kinds.contains(&"cut") && kinds.contains(&"rebuild-index"), "{kinds:?}");
    let (m1, s1) = (probe.mutations(), probe.syncs());
    let expect = &acked[..29];
    for n in m0 + 1..=m1 {
        let io = prepare();
        io.fail_at(n);
        assert!(open(&io, small()).is_err(), "failure at recovery call {}", n - m0);
        let (re, _) = open(&Arc::new(io.crash()), small()).unwrap();
        assert_eq!(read_all(&re), expect, "failure at recovery call {}", n - m0);
    }
    for k in s0 + 1..=s1 {
        let io = prepare();
        io.crash_after_sync(k);
        let _ = open(&io, small());
        let (re, _) = open(&Arc::new(io.crash()), small()).unwrap();
        assert_eq!(read_all(&re), expect, "crash after recovery sync {}", k - s0);
    }
}

#[test]
fn rollover_counts_the_bytes_already_in_the_batch() {
    let io = Arc::new(SimIo::new());
    let (shard, _) = open(&io, small()).unwrap();
    let batch: Vec<Vec<u8>> = (0..40).map(|i| vec![b'a' + (i % 26) as u8; 50]).collect();
    let refs: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
    shard.append(&refs).unwrap();
    for name in names(&io, ".log") {
        let len = io.contents(&dir().join(&name)).unwrap().len();
        assert!(len <= 400, "{name} is {len} bytes, over segment_size_bytes 400");
    }
    assert_eq!(read_all(&shard).len(), 40);
}

#[test]
fn interval_durability_acknowledges_readable_records_and_the_flusher_syncs_them() {
    let io = Arc::new(SimIo::new());
    let config = Config { durability: Durability::Interval { micros: 1_000 }, ..small() };
    let (shard, _) = open(&io, config.clone()).unwrap();
    shard.append(&[b"creates the first segment"]).unwrap();
    shard.sync().unwrap();
    let r = shard.append(&[b"acked once written"]).unwrap();
    let before = io.syncs();
    assert_eq!(read_all(&shard)[1], (r.start, b"acked once written".to_vec()), "readable at once");
    // No later append: the flusher alone makes it durable.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while io.syncs() == before {
        assert!(std::time::Instant::now() < deadline, "the flusher never synced");
        std::thread::yield_now();
    }
    let (rebooted, _) = open(&Arc::new(io.crash()), config).unwrap();
    assert_eq!(read_all(&rebooted).len(), 2, "durable without another append");
}

// ------------------------------------------------------ never destroy

fn tear_newest(io: &SimIo, bytes_off: usize) -> PathBuf {
    let newest = dir().join(names(io, ".log").last().unwrap());
    let bytes = io.contents(&newest).unwrap();
    io.put(&newest, &bytes[..bytes.len() - bytes_off]);
    newest
}

#[test]
fn a_second_cut_at_the_same_byte_keeps_the_first_evidence() {
    let io = Arc::new(SimIo::new());
    let config = Config { segment_size_bytes: 1 << 20, ..small() };
    let (shard, _) = open(&io, config.clone()).unwrap();
    append_n(&shard, 0, 5);
    drop(shard);
    tear_newest(&io, 4);
    let (shard, first) = open(&io, config.clone()).unwrap();
    let first_evidence = io.contents(&first.evidence[0]).unwrap();
    // The same record is written again and torn again at the same byte.
    shard.append(&[&payload(4)]).unwrap();
    drop(shard);
    tear_newest(&io, 4);
    let (_, second) = open(&io, config).unwrap();
    assert_ne!(first.evidence[0], second.evidence[0], "a new name: {:?}", second.evidence);
    assert!(second.evidence[0].to_str().unwrap().ends_with(".cut-") || second.evidence[0].to_str().unwrap().ends_with("-2"));
    assert_eq!(io.contents(&first.evidence[0]).unwrap(), first_evidence, "the first evidence is untouched");
    let note = |p: &Path| io.contents(&PathBuf::from(format!("{}.json", p.display()))).unwrap();
    assert_ne!(note(&first.evidence[0]), note(&second.evidence[0]));
}

#[test]
fn reads_create_nothing() {
    let io = Arc::new(SimIo::new());
    let err = Shard::open_read_only(Arc::clone(&io) as Arc<dyn Io>, &dir(), small()).unwrap_err();
    assert_eq!(err, EngineError::NoShard { dir: dir() });
    assert!(!io.dir_exists(&dir()) && !io.dir_exists(Path::new("/sim")), "a read created a directory");
    assert_eq!(io.mutations(), 0);
    // A torn tail is not cut by a reader: only not read.
    let (shard, _) = open(&io, small()).unwrap();
    append_n(&shard, 0, 3);
    drop(shard);
    let log = tear_newest(&io, 2);
    let before = (io.mutations(), io.contents(&log));
    let (reader, recovery) = Shard::open_read_only(Arc::clone(&io) as Arc<dyn Io>, &dir(), small()).unwrap();
    assert_eq!(read_all(&reader).len(), 2);
    assert!(!recovery.executed && recovery.evidence.is_empty());
    assert_eq!((io.mutations(), io.contents(&log)), before, "a reader changed the disk");
}

#[test]
fn a_symlink_where_a_segment_belongs_is_refused_never_followed_or_replaced() {
    let io = Arc::new(SimIo::new());
    let (shard, _) = open(&io, small()).unwrap();
    append_n(&shard, 0, 3);
    drop(shard);
    let link = dir().join("00000000000000000009.log");
    io.put_symlink(&link);
    for result in [open(&io, small()).map(drop), Shard::open_read_only(Arc::clone(&io) as Arc<dyn Io>, &dir(), small()).map(drop)] {
        assert_eq!(result.unwrap_err(), EngineError::NotRegular { path: link.clone(), what: "a symbolic link" });
    }
}

// ------------------------------------------------------------ one judge

/// A sealed segment whose index entry for offset 1 points inside offset 0's
/// payload, where the bytes form a valid record claiming offset 1 (and,
/// when `last`, that forged entry is the index's last).
fn forged_index_shard(io: &SimIo, last: bool) -> Vec<(String, Vec<u8>)> {
    let mut forged = Vec::new();
    encode_record(1, 42, b"FORGED", &mut forged).unwrap();
    let mut seg = SegmentHeader::new(0, 1).encode().to_vec();
    let mut p0 = b"pre".to_vec();
    p0.extend_from_slice(&forged);
    encode_record(0, 1, &p0, &mut seg).unwrap();
    encode_record(1, 2, b"the real offset 1", &mut seg).unwrap();
    let real_2 = seg.len() as u64;
    encode_record(2, 3, b"the real offset 2", &mut seg).unwrap();
    let mut index = IndexHeader::new(0).encode().to_vec();
    index.extend_from_slice(&IndexEntry { offset: 0, position: 32 }.encode());
    index.extend_from_slice(&IndexEntry { offset: 1, position: 32 + 28 + 3 }.encode());
    if !last {
        index.extend_from_slice(&IndexEntry { offset: 2, position: real_2 }.encode());
    }
    let mut seg1 = SegmentHeader::new(3, 1).encode().to_vec();
    encode_record(3, 3, b"three", &mut seg1).unwrap();
    let files = vec![
        ("00000000000000000000.log".to_string(), seg),
        ("00000000000000000000.index".to_string(), index),
        ("00000000000000000001.log".to_string(), seg1),
        ("00000000000000000001.index".to_string(), build_index(3, [(3, 32)], 64)),
    ];
    for (name, bytes) in &files {
        io.put(&dir().join(name), bytes);
    }
    files
}

#[test]
fn an_index_entry_inside_a_payload_is_never_trusted() {
    for last in [false, true] {
        let io = Arc::new(SimIo::new());
        let files = forged_index_shard(&io, last);
        // The one judge: inspect flags the entry…
        let refs: Vec<(String, &[u8])> = files.iter().map(|(n, b)| (n.clone(), b.as_slice())).collect();
        let report = felix_codec::shard::scan::inspect_in_memory(Some("acme_default_orders_0-0d3aed4b998d2798".into()), &refs, 4096);
        let flagged: Vec<&str> = report.files.iter().flat_map(|f| f.findings.iter().map(|x| x.kind.as_str())).collect();
        assert_eq!(flagged, ["IndexEntryMismatch"], "last={last}");
        // …and a read never returns the forged record.
        let (reader, recovery) = Shard::open_read_only(Arc::clone(&io) as Arc<dyn Io>, &dir(), small()).unwrap();
        let got = reader.read(1, 1).unwrap();
        assert_eq!(got[0].payload[..], b"the real offset 1"[..], "last={last}: a read returned bytes off the record chain");
        assert_eq!(read_all(&reader).len(), 4);
        let rebuilds: Vec<&Action> = recovery.plan.actions.iter().filter(|a| matches!(a, Action::RebuildIndex { .. })).collect();
        if last {
            // The open's own check of the last interval caught it: the index is rebuilt.
            assert!(
                matches!(rebuilds[..], [Action::RebuildIndex { file, reason }] if file == "00000000000000000000.index" && reason.starts_with("IndexEntryMismatch")),
                "{rebuilds:?}"
            );
        } else {
            // Only a read meets it: the hint is verified before it is used, dropped, and said.
            assert!(rebuilds.is_empty(), "{rebuilds:?}");
            assert!(reader.warnings().iter().any(|w| w.contains("does not land on a record")), "{:?}", reader.warnings());
        }
    }
}

// --------------------------------------------------------------- offsets

#[test]
fn offsets_end_at_u64_max_minus_one_and_the_writer_refuses_past_it() {
    let io = Arc::new(SimIo::new());
    io.put(&dir().join("00000000000000000000.log"), &SegmentHeader::new(u64::MAX - 3, 1).encode());
    let (shard, _) = open(&io, small()).unwrap();
    assert_eq!(shard.append(&[b"a", b"b"]).unwrap(), u64::MAX - 3..u64::MAX - 1);
    assert_eq!(shard.append(&[b"c", b"d"]), Err(EngineError::OffsetsExhausted { next: u64::MAX - 1, records: 2 }));
    assert_eq!(shard.append(&[b"c"]).unwrap(), u64::MAX - 1..u64::MAX);
    assert_eq!(shard.append(&[b"e"]), Err(EngineError::OffsetsExhausted { next: u64::MAX, records: 1 }));
    assert_eq!(read_all(&shard).len(), 3);
}

// ------------------------------------------- the broker's crash states

#[test]
fn an_unfinished_newest_segment_is_removed_and_every_acknowledged_record_kept() {
    for leftover in [0usize, 17] {
        let io = Arc::new(SimIo::new());
        let (shard, _) = open(&io, small()).unwrap();
        let acked = append_n(&shard, 0, 30);
        drop(shard);
        // Killed during a roll: the next segment exists with part of its header (or none).
        let next_id = names(&io, ".log").len() as u64;
        io.put(&dir().join(felix_codec::format::file_name::segment_file_name(next_id)), &SegmentHeader::new(30, 99).encode()[..leftover]);
        let (shard, recovery) = open(&io, small()).unwrap();
        assert!(
            matches!(&recovery.plan.actions[..], [Action::RemoveUnfinished { bytes, .. }] if *bytes == leftover as u64),
            "{:?}",
            recovery.plan
        );
        assert_eq!(read_all(&shard), acked, "{leftover} bytes: every acknowledged record is kept");
        assert_eq!(recovery.evidence.len(), usize::from(leftover > 0));
        if leftover > 0 {
            assert_eq!(io.contents(&recovery.evidence[0]).unwrap().len(), leftover, "its bytes are kept as evidence");
        }
        assert_eq!(shard.append(&[b"next"]).unwrap().start, 30, "the log continues where it was");
        drop(shard);
        let (again, recovery) = open(&Arc::new(io.crash()), small()).unwrap();
        let rebuilt: Vec<&Action> = recovery.plan.actions.iter().filter(|a| !matches!(a, Action::RebuildIndex { .. })).collect();
        assert!(rebuilt.is_empty(), "{:?}", recovery.plan);
        assert!(
            recovery.plan.actions.len() <= 1,
            "only the newest segment's index (never synced) may need rebuilding: {:?}",
            recovery.plan
        );
        assert_eq!(read_all(&again).len(), 31);
    }
}

// ------------------------------------------- commits and truncations

#[test]
fn a_pending_batch_cut_away_by_a_truncation_is_never_acknowledged() {
    use felix_engine::shard::Append;
    let io = Arc::new(SimIo::new());
    let (shard, _) = open(&io, small()).unwrap();
    append_n(&shard, 0, 5);
    let pending = shard.write(&[Append { payload: b"in flight", timestamp_micros: None }]).unwrap();
    assert_eq!(pending.offsets, 5..6);
    shard.truncate_after(2).unwrap();
    // Later appends pass the batch's end: its offset now holds another record.
    append_n(&shard, 3, 5);
    let err = shard.commit(&pending).unwrap_err();
    assert_eq!(err, EngineError::TruncatedAway { offsets: 5..6, cut_at: 3 });
    // Below the oldest record too (the log restarts).
    let pending = shard.write(&[Append { payload: b"again", timestamp_micros: None }]).unwrap();
    shard.truncate_from(0).unwrap();
    assert!(matches!(shard.commit(&pending), Err(EngineError::TruncatedAway { cut_at: 0, .. })));
    // A batch written after the cut commits normally.
    let fresh = shard.write(&[Append { payload: b"fresh", timestamp_micros: None }]).unwrap();
    shard.commit(&fresh).unwrap();
    assert_eq!(read_all(&shard), [(0, b"fresh".to_vec())]);
}

#[test]
fn truncating_below_the_oldest_record_never_restarts_below_the_target_after_a_crash() {
    let config = Config { retention_bytes: Some(600), ..small() };
    let setup = |io: &Arc<SimIo>| {
        let (shard, _) = open(io, config.clone()).unwrap();
        append_n(&shard, 0, 50);
        shard.apply_retention(u64::MAX / 2).unwrap();
        shard
    };
    let probe = Arc::new(SimIo::new());
    let shard = setup(&probe);
    let first = shard.first_offset();
    assert!(first > 10, "retention left [{first}, 50)");
    let s0 = probe.syncs();
    shard.truncate_from(10).unwrap();
    let s1 = probe.syncs();
    drop(shard);
    for k in s0 + 1..=s1 {
        let io = Arc::new(SimIo::new());
        let shard = setup(&io);
        io.crash_after_sync(k);
        let _ = shard.truncate_from(10);
        drop(shard);
        let (re, _) = open(&Arc::new(io.crash()), config.clone()).unwrap();
        let got = read_all(&re);
        let label = format!("crash after sync {} of {}", k - s0, s1 - s0);
        if got.is_empty() {
            assert_eq!((re.first_offset(), re.next_offset()), (10, 10), "{label}: an empty log restarts at the target");
        } else {
            assert_eq!(got[0].0, first, "{label}: else a prefix of the old log");
            assert!(re.next_offset() >= 10, "{label}");
        }
    }
}

#[test]
fn a_damaged_epochs_file_is_kept_as_evidence_before_a_new_one_replaces_it() {
    let epochs = dir().join("epochs");
    let damage = |io: &SimIo, tag: u8| -> Vec<u8> {
        let mut bytes = io.contents(&epochs).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= tag;
        io.put(&epochs, &bytes);
        bytes
    };
    let io = Arc::new(SimIo::new());
    let (shard, _) = open(&io, small()).unwrap();
    append_n(&shard, 0, 3);
    shard.begin_generation(1).unwrap();
    drop(shard);
    let first = damage(&io, 0x01);
    // The next generation: the damaged history is kept under a name of its own.
    let (shard, recovery) = open(&io, small()).unwrap();
    assert!(recovery.warnings.iter().any(|w| w.contains("epochs")), "{:?}", recovery.warnings);
    assert!(shard.epochs().is_empty(), "a damaged history reads as empty");
    let syncs_before = io.syncs();
    shard.begin_generation(2).unwrap();
    let syncs_after = io.syncs();
    drop(shard);
    assert_eq!(io.contents(&dir().join("epochs.damaged")), Some(first.clone()));
    // Damaged again: the first evidence stays, the second gets the next name.
    let second = damage(&io, 0x02);
    let (shard, _) = open(&io, small()).unwrap();
    shard.begin_generation(3).unwrap();
    assert_eq!(shard.epochs().iter().map(|e| e.generation).collect::<Vec<_>>(), [3]);
    drop(shard);
    assert_eq!(io.contents(&dir().join("epochs.damaged")), Some(first.clone()));
    assert_eq!(io.contents(&dir().join("epochs.damaged-2")), Some(second));
    // inspect calls it evidence, not damage.
    let files: Vec<(String, Vec<u8>)> =
        ["epochs", "epochs.damaged", "epochs.damaged-2"].iter().map(|n| ((*n).to_string(), io.contents(&dir().join(n)).unwrap())).collect();
    let refs: Vec<(String, &[u8])> = files.iter().map(|(n, b)| (n.clone(), b.as_slice())).collect();
    let report = felix_codec::shard::scan::inspect_in_memory(Some("acme_default_orders_0-0d3aed4b998d2798".into()), &refs, 4096);
    assert_eq!(report.finding_count(), 0);
    assert!(report.files[1].notes[0].starts_with("evidence: a damaged epochs file"), "{:?}", report.files[1].notes);

    // A crash after each sync of that generation change: the damaged bytes
    // survive under one name or the other.
    for k in 1..=(syncs_after - syncs_before) {
        let io = Arc::new(SimIo::new());
        let (shard, _) = open(&io, small()).unwrap();
        append_n(&shard, 0, 3);
        shard.begin_generation(1).unwrap();
        drop(shard);
        let damaged = damage(&io, 0x01);
        let (shard, _) = open(&io, small()).unwrap();
        io.crash_after_sync(io.syncs() + k);
        let _ = shard.begin_generation(2);
        drop(shard);
        let rebooted = io.crash();
        let kept = [dir().join("epochs"), dir().join("epochs.damaged")].iter().any(|p| rebooted.contents(p) == Some(damaged.clone()));
        assert!(kept, "crash after sync {k}: the damaged epochs file is gone");
        open(&Arc::new(rebooted), small()).unwrap_or_else(|e| panic!("crash after sync {k}: {e}"));
    }
}
