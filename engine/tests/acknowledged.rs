//! Acknowledged records survive what an operator does beside the engine
//! (issue 16, defects 1–4), each through the path a user takes: the engine
//! API a broker embeds, or the `felix-storage` binary.
//!
//! - a segment id at `u64::MAX` is never replaced by a roll: the roll is
//!   refused with nothing written, and a new file never replaces one;
//! - removing `writer.lock` lets no second writer in; a shard directory
//!   moved away under a writer stops it before it acknowledges more;
//! - a reader returns every intact record before damage, then the damage;
//! - after `recover`, `inspect` finds nothing recovery may repair (an
//!   unfinished roll with a torn index beside it; a garbage orphaned index).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod support;

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use felix_codec::format::file_name::{index_file_name, segment_file_name};
use felix_engine::io::sim::SimIo;
use felix_engine::shard::{Config, Shard};
use felix_engine::{EngineError, Io, OsIo};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_felix-storage")
}

fn run(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn small() -> Config {
    Config { segment_size_bytes: 400, index_spacing_bytes: 64, ..Config::default() }
}

fn payload(i: u64) -> Vec<u8> {
    format!("acknowledged-{i:04}").into_bytes()
}

#[path = "support/shard.rs"]
mod shard_support;
use shard_support::read_all;

/// The directory of shard `t/n/s/0` under `root`.
fn shard_of(root: &Path) -> PathBuf {
    let key = felix_codec::format::shard_name::ShardKey { tenant: "t", namespace: "n", stream: "s", shard: 0 };
    Shard::dir_of(root, &key)
}

fn os() -> Arc<dyn Io> {
    Arc::new(OsIo::new())
}

/// A shard at `root/shard` holding `n` acknowledged records, closed.
fn written(root: &Path, config: Config, n: u64) -> PathBuf {
    let dir = root.join("shard");
    let (shard, _) = Shard::open_dir(os(), &dir, config).unwrap();
    for i in 0..n {
        shard.append(&[&payload(i)]).unwrap();
    }
    dir
}

// ---- defect 1: segment ids never saturate into an existing name ----

#[test]
fn a_roll_past_segment_id_u64_max_is_refused_with_nothing_written_and_nothing_replaced() {
    let root = tempfile::tempdir().unwrap();
    let dir = written(root.path(), small(), 10);
    // The operator renames every segment (and index) to the last id there is.
    let mut ids: Vec<u64> = (0..u64::MAX).take_while(|id| dir.join(segment_file_name(*id)).exists()).collect();
    let last = ids.pop().unwrap();
    for id in ids {
        std::fs::remove_file(dir.join(segment_file_name(id))).unwrap();
        std::fs::remove_file(dir.join(index_file_name(id))).unwrap();
    }
    std::fs::rename(dir.join(segment_file_name(last)), dir.join(segment_file_name(u64::MAX))).unwrap();
    std::fs::rename(dir.join(index_file_name(last)), dir.join(index_file_name(u64::MAX))).unwrap();
    let before = std::fs::read(dir.join(segment_file_name(u64::MAX))).unwrap();

    let (shard, _) = Shard::open_dir(os(), &dir, small()).unwrap();
    let kept = read_all(&shard);
    assert!(!kept.is_empty());
    let big = vec![b'x'; 300];
    let e = shard.append(&[&big]).unwrap_err();
    assert_eq!(e, EngineError::SegmentIdsExhausted { dir: dir.clone() });
    assert!(e.to_string().contains("no segment id is left"), "{e}");
    assert_eq!(shard.failure(), None, "a refused roll wrote nothing, so nothing stops the shard");
    assert_eq!(std::fs::read(dir.join(segment_file_name(u64::MAX))).unwrap(), before, "the segment is untouched");
    assert_eq!(read_all(&shard), kept, "every acknowledged record is still read");
    // A batch whose first record fits but whose second would roll is refused whole.
    let next = shard.next_offset();
    assert_eq!(shard.append(&[b"fits", &big]).unwrap_err(), EngineError::SegmentIdsExhausted { dir: dir.clone() });
    assert_eq!(shard.next_offset(), next, "no offset was assigned");
    assert_eq!(shard.seal().unwrap_err(), EngineError::SegmentIdsExhausted { dir: dir.clone() });
    // A record that fits in the active segment is still appended.
    let r = shard.append(&[b"fits"]).unwrap();
    assert_eq!(r.start, next);
    let names: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "no temporary left: {names:?}");
}

#[test]
fn the_cli_refuses_the_roll_and_exits_1_naming_the_shard() {
    let root = tempfile::tempdir().unwrap();
    let shard_path = shard_of(root.path());
    std::fs::create_dir_all(&shard_path).unwrap();
    // A segment at the last id, nearly full at the broker's 256 MiB: four 60 MiB records.
    let mut segment = felix_codec::format::segment_header::SegmentHeader::new(0, 1).encode().to_vec();
    let big = vec![b'r'; 60 << 20];
    for offset in 0..4 {
        felix_codec::format::record::encode_record(offset, 1, &big, &mut segment).unwrap();
    }
    let path = shard_path.join(segment_file_name(u64::MAX));
    std::fs::write(&path, &segment).unwrap();
    drop(big);
    let mut child = support::producer(root.path().to_str().unwrap(), "t/n/s/0", &[]);
    {
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "small").unwrap();
        let _ = writeln!(stdin, "{}", "y".repeat(20 << 20));
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("no segment id is left"), "{}", text(&o.stderr));
    let acked: Vec<u64> = text(&o.stdout).lines().map(|l| l.parse().unwrap()).collect();
    assert!(acked.len() <= 1, "{acked:?}");
    let names: Vec<String> = std::fs::read_dir(&shard_path).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert!(!names.iter().any(|n| n.ends_with(".tmp")), "{names:?}");
    assert_eq!(std::fs::metadata(&path).unwrap().len() as usize, segment.len() + acked.len() * (28 + 5), "only what was acknowledged");
    let (reader, _) = Shard::open_read_only(os(), &shard_path, Config::default()).unwrap();
    assert_eq!((reader.first_offset(), reader.next_offset()), (0, 4 + acked.len() as u64), "every record is kept");
}

#[test]
fn a_new_segment_never_replaces_a_file_that_appeared_under_its_name() {
    let sim = Arc::new(SimIo::new());
    let dir = PathBuf::from("/sim/shard");
    let (shard, _) = Shard::open_dir(Arc::clone(&sim) as Arc<dyn Io>, &dir, small()).unwrap();
    shard.append(&[&payload(0)]).unwrap();
    // An operator copies some file in under the name the next roll would take.
    let planted = dir.join(segment_file_name(1));
    sim.put(&planted, b"not yours to replace");
    let e = shard.append(&[&vec![b'z'; 380]]).unwrap_err();
    assert!(e.to_string().contains("never replaced"), "{e}");
    assert_eq!(sim.contents(&planted).unwrap(), b"not yours to replace");
    assert!(matches!(shard.append(&[b"more"]), Err(EngineError::FailStopped { .. })), "the shard stopped");
    assert!(sim.list(&dir).unwrap().iter().all(|e| !e.name.to_string_lossy().ends_with(".tmp")), "no temporary left");
}

// ---- defect 2: the writer's lock survives `rm writer.lock` ----

fn live_producer(root: &Path, shard: &str) -> (std::process::Child, std::io::Lines<BufReader<std::process::ChildStdout>>) {
    support::live_producer(root.to_str().unwrap(), shard, &[])
}

#[test]
fn removing_writer_lock_lets_no_second_writer_in() {
    let root = tempfile::tempdir().unwrap();
    let (mut a, mut acks) = live_producer(root.path(), "t/n/s/0");
    let mut a_in = a.stdin.take().unwrap();
    writeln!(a_in, "a-0").unwrap();
    assert_eq!(acks.next().unwrap().unwrap(), "0");
    let shard_path = shard_of(root.path());
    std::fs::remove_file(shard_path.join("writer.lock")).unwrap();
    // A second producer is refused at once, and writes nothing.
    let mut b = support::producer(root.path().to_str().unwrap(), "t/n/s/0", &[]);
    // The refused producer may exit before this write: a broken pipe then, which changes nothing asserted below.
    let _ = b.stdin.take().unwrap().write_all(b"b-0\nb-1\n");
    let o = b.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains(&format!("pid {}", a.id())), "the refusal names the holder: {}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "", "nothing acknowledged");
    // `inspect` still sees the live writer.
    let inspected = run(&["inspect", shard_path.to_str().unwrap()]);
    assert!(text(&inspected.stdout).contains(&format!("shard is open for writing (pid {})", a.id())), "{}", text(&inspected.stdout));
    // A keeps acknowledging; every offset once.
    for i in 1..4 {
        writeln!(a_in, "a-{i}").unwrap();
        assert_eq!(acks.next().unwrap().unwrap(), i.to_string());
    }
    drop(a_in);
    assert!(a.wait().unwrap().success());
    let consumed = run(&["consume", root.path().to_str().unwrap(), "--shard", "t/n/s/0"]);
    let payloads: Vec<&str> = text(&consumed.stdout).leak().lines().map(|l| l.rsplit('\t').next().unwrap()).collect();
    assert_eq!(payloads, ["a-0", "a-1", "a-2", "a-3"]);
}

#[test]
fn a_writer_whose_directory_is_moved_away_stops_before_acknowledging_more() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("shard");
    let (shard, _) = Shard::open_dir(os(), &dir, small()).unwrap();
    shard.append(&[b"before"]).unwrap();
    std::fs::rename(&dir, root.path().join("moved")).unwrap();
    std::fs::create_dir(&dir).unwrap();
    let e = shard.append(&[b"after"]).unwrap_err();
    assert!(e.to_string().contains("no longer the directory this writer locked"), "{e}");
    assert!(matches!(shard.append(&[b"later"]), Err(EngineError::FailStopped { .. })));
    // The new directory at the path is free for a new writer, and holds nothing of ours.
    drop(Shard::open_dir(os(), &dir, small()).unwrap());
}

// ---- defect 3: intact records before damage are read ----

fn demo(root: &Path) {
    let o = run(&["demo", root.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}

#[test]
fn consume_prints_every_intact_record_before_rot_then_names_the_byte() {
    let root = tempfile::tempdir().unwrap();
    demo(root.path());
    let r = root.path().to_str().unwrap();
    let o = run(&["consume", r, "--shard", "acme/default/audit/0", "--max", "24", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let offsets: Vec<u64> =
        text(&o.stdout).lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["offset"].as_u64().unwrap()).collect();
    assert_eq!(offsets, (0..24).collect::<Vec<_>>());
    // Without a limit: every intact record up to the rot, then the error naming its byte.
    let o = run(&["consume", r, "--shard", "acme/default/audit/0", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let printed = text(&o.stdout).lines().count();
    assert!(printed >= 24, "{printed} records printed");
    let stderr = text(&o.stderr);
    assert!(stderr.contains("RecordChecksum") && stderr.contains("byte "), "{stderr}");
    assert!(stderr.contains(&format!("record offset {printed}")), "the damage is the record after the last one printed: {stderr}");
}

#[test]
fn a_reader_of_a_newest_segment_with_rot_gets_the_records_before_it() {
    let root = tempfile::tempdir().unwrap();
    let dir = written(root.path(), Config::default(), 20);
    // Rot in record 10's payload: a checksum mismatch with intact records after it (not a torn tail).
    let log = dir.join(segment_file_name(0));
    let mut bytes = std::fs::read(&log).unwrap();
    let record_len = 28 + payload(0).len();
    let at = 32 + 10 * record_len + 28 + 3;
    bytes[at] ^= 0x40;
    std::fs::write(&log, &bytes).unwrap();
    assert!(Shard::open_dir(os(), &dir, Config::default()).is_err(), "a writer refuses the shard");
    let (reader, recovery) = Shard::open_read_only(os(), &dir, Config::default()).unwrap();
    assert!(recovery.warnings.iter().any(|w| w.contains("reads return every intact record before the damage")), "{:?}", recovery.warnings);
    let got = reader.read(0, 1 << 20).unwrap();
    assert_eq!(got.iter().map(|r| r.offset).collect::<Vec<_>>(), (0..10).collect::<Vec<_>>());
    assert_eq!(got[9].payload.as_ref(), payload(9).as_slice());
    let Err(EngineError::Corrupt { path, finding }) = reader.read(10, 1 << 20) else { panic!("the damage is reported") };
    assert_eq!(path, log);
    assert_eq!(finding.position(), (32 + 10 * record_len) as u64, "the damaged record's first byte");
}

#[test]
fn a_read_across_a_damaged_sealed_segment_returns_what_precedes_it_then_the_damage() {
    let root = tempfile::tempdir().unwrap();
    let (dir, segments) = several_segments(root.path());
    let second = &segments[1];
    let log = dir.join(segment_file_name(second.id));
    let mut bytes = std::fs::read(&log).unwrap();
    let record_len = 28 + payload(0).len();
    bytes[32 + record_len + 28 + 1] ^= 1; // the second record's payload
    std::fs::write(&log, &bytes).unwrap();
    let (reader, _) = Shard::open_read_only(os(), &dir, small()).unwrap();
    let got = reader.read(0, 1 << 20).unwrap();
    assert_eq!(got.last().unwrap().offset, second.base_offset, "up to the damaged record");
    // A reader going on from where it stopped gets the damage, naming its byte: it never steps over it.
    let Err(EngineError::Corrupt { path, finding }) = reader.read(got.last().unwrap().offset + 1, 1 << 20) else { panic!("the damage") };
    assert_eq!((path, finding.position()), (log, (32 + record_len) as u64));
}

// ---- defect 4: after recover, inspect finds nothing recovery may repair ----

fn produce(root: &Path, lines: usize) {
    let mut child = Command::new(bin())
        .args(["produce", root.to_str().unwrap(), "--shard", "t/n/s/0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input: String = (0..lines).map(|i| format!("line {i}\n")).collect();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    assert!(child.wait_with_output().unwrap().status.success());
}

fn recover_then_inspect_is_clean(root: &Path, shard_path: &Path) -> String {
    let r = root.to_str().unwrap();
    let o = run(&["recover", r]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    let said = text(&o.stdout);
    let inspected = run(&["inspect", shard_path.to_str().unwrap()]);
    assert_eq!(inspected.status.code(), Some(0), "inspect after recover: {}", text(&inspected.stdout));
    let again = run(&["recover", r]);
    assert_eq!(again.status.code(), Some(0));
    // A shard recovery emptied of segments and indexes (evidence alone) is
    // no longer named a shard: the second run leaves it alone.
    let again = text(&again.stdout);
    assert!(again.contains("nothing to do") || again.contains(": left alone: "), "{again}");
    said
}

#[test]
fn recover_removes_an_unfinished_roll_and_its_torn_index_keeping_the_bytes() {
    let root = tempfile::tempdir().unwrap();
    produce(root.path(), 5);
    let shard_path = shard_of(root.path());
    std::fs::write(shard_path.join(segment_file_name(1)), b"").unwrap();
    std::fs::write(shard_path.join(index_file_name(1)), b"FLSI\0\x02").unwrap();
    let before = run(&["inspect", shard_path.to_str().unwrap()]);
    assert_eq!(before.status.code(), Some(1), "{}", text(&before.stdout));
    let said = recover_then_inspect_is_clean(root.path(), &shard_path);
    assert!(said.contains(&index_file_name(1)), "{said}");
    let evidence = shard_path.join(format!("{}.cut-0", index_file_name(1)));
    assert_eq!(std::fs::read(&evidence).unwrap(), b"FLSI\0\x02", "the index's bytes are kept as evidence");
    let consumed = run(&["consume", root.path().to_str().unwrap(), "--shard", "t/n/s/0"]);
    assert_eq!(text(&consumed.stdout).lines().count(), 5);
}

#[test]
fn recover_moves_a_garbage_orphaned_index_to_evidence() {
    let root = tempfile::tempdir().unwrap();
    produce(root.path(), 3);
    let shard_path = shard_of(root.path());
    let garbage: Vec<u8> = (0..200u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(shard_path.join(index_file_name(7)), &garbage).unwrap();
    let dry = run(&["recover", "--dry-run", root.path().to_str().unwrap()]);
    assert!(text(&dry.stdout).contains("would remove"), "{}", text(&dry.stdout));
    recover_then_inspect_is_clean(root.path(), &shard_path);
    assert_eq!(std::fs::read(shard_path.join(format!("{}.cut-0", index_file_name(7)))).unwrap(), garbage);
    // The engine's own open does the same on a fresh orphan.
    std::fs::write(shard_path.join(index_file_name(9)), b"FLSI").unwrap();
    let (shard, recovery) = Shard::open_dir(os(), &shard_path, Config::default()).unwrap();
    assert!(recovery.plan.actions.iter().any(|a| a.file() == index_file_name(9)), "{:?}", recovery.plan);
    drop(shard);
    assert!(!shard_path.join(index_file_name(9)).exists());
    assert_eq!(run(&["inspect", shard_path.to_str().unwrap()]).status.code(), Some(0));
}

// ---- found by the hostile review of the fixes above ----

#[test]
fn a_writer_that_acknowledges_once_written_stops_too_when_its_directory_is_moved() {
    for durability in [felix_engine::Durability::NoSync, felix_engine::Durability::Interval { micros: 200_000 }] {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("shard");
        let (shard, _) = Shard::open_dir(os(), &dir, Config { durability, ..small() }).unwrap();
        shard.append(&[b"before"]).unwrap();
        std::fs::rename(&dir, root.path().join("moved")).unwrap();
        std::fs::create_dir(&dir).unwrap();
        // An append that needs no sync reuses a check of the lock at most
        // LOCK_CHECK_FRESH old: past that bound, the next one stops.
        std::thread::sleep(felix_engine::shard::LOCK_CHECK_FRESH * 2);
        let e = shard.append(&[b"after"]).unwrap_err();
        assert!(e.to_string().contains("no longer the directory this writer locked"), "{durability:?}: {e}");
        assert!(matches!(shard.append(&[b"later"]), Err(EngineError::FailStopped { .. })), "{durability:?}");
    }
}

/// 40 records over several small segments; returns the shard directory and the segments.
fn several_segments(root: &Path) -> (PathBuf, Vec<felix_engine::shard::SegmentInfo>) {
    let dir = written(root, small(), 40);
    let (shard, _) = Shard::open_read_only(os(), &dir, small()).unwrap();
    let segments = shard.segments();
    assert!(segments.len() >= 4, "{segments:?}");
    (dir, segments)
}

#[test]
fn a_reader_never_steps_over_a_missing_segment_before_damage() {
    let root = tempfile::tempdir().unwrap();
    let (dir, segs) = several_segments(root.path());
    std::fs::remove_file(dir.join(segment_file_name(segs[1].id))).unwrap();
    let later = dir.join(segment_file_name(segs[2].id));
    let len = std::fs::metadata(&later).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&later).unwrap().set_len(len - 5).unwrap();
    let (reader, _) = Shard::open_read_only(os(), &dir, small()).unwrap();
    let got = reader.read(0, 1 << 20).unwrap();
    assert_eq!(got.iter().map(|r| r.offset).collect::<Vec<_>>(), (0..segs[1].base_offset).collect::<Vec<_>>());
    let Err(EngineError::Corrupt { finding, .. }) = reader.read(segs[1].base_offset, 1 << 20) else { panic!("the gap") };
    assert_eq!(finding.kind.name(), "SegmentDiscontinuity");
}

#[test]
fn a_reader_never_steps_over_a_gap_before_rot_in_the_newest_segment() {
    let root = tempfile::tempdir().unwrap();
    let (dir, segs) = several_segments(root.path());
    let newest = segs.last().unwrap();
    std::fs::remove_file(dir.join(segment_file_name(segs[segs.len() - 2].id))).unwrap();
    let log = dir.join(segment_file_name(newest.id));
    let mut bytes = std::fs::read(&log).unwrap();
    let record_len = 28 + payload(0).len();
    bytes[32 + 2 * record_len + 28 + 1] ^= 1;
    std::fs::write(&log, &bytes).unwrap();
    let (reader, _) = Shard::open_read_only(os(), &dir, small()).unwrap();
    let mut at = 0;
    let mut seen = Vec::new();
    let e = loop {
        match reader.read(at, 1 << 20) {
            Ok(batch) if batch.is_empty() => panic!("ended without the damage"),
            Ok(batch) => {
                at = batch.last().unwrap().offset + 1;
                seen.extend(batch.into_iter().map(|r| r.offset));
            }
            Err(e) => break e,
        }
    };
    assert_eq!(seen, (0..segs[segs.len() - 2].base_offset).collect::<Vec<_>>(), "contiguous, up to the gap");
    let EngineError::Corrupt { finding, .. } = e else { panic!("{e}") };
    assert_eq!(finding.kind.name(), "SegmentDiscontinuity");
}

#[test]
fn a_reader_never_steps_back_over_an_overlapping_copy() {
    let root = tempfile::tempdir().unwrap();
    let (dir, segs) = several_segments(root.path());
    // Segment 2 replaced by a cut copy of segment 0 (base 0 again).
    let first = std::fs::read(dir.join(segment_file_name(segs[0].id))).unwrap();
    std::fs::write(dir.join(segment_file_name(segs[2].id)), &first[..first.len() - 3]).unwrap();
    let (reader, _) = Shard::open_read_only(os(), &dir, small()).unwrap();
    let mut at = 0;
    let mut seen = Vec::new();
    while let Ok(batch) = reader.read(at, 1 << 20) {
        let Some(last) = batch.last() else { break };
        at = last.offset + 1;
        seen.extend(batch.into_iter().map(|r| r.offset));
    }
    assert_eq!(seen, (0..segs[2].base_offset).collect::<Vec<_>>(), "every record before the overlap, in order");
}

#[test]
fn recover_of_a_shard_holding_only_an_unfinished_roll_leaves_a_shard_inspect_judges() {
    let root = tempfile::tempdir().unwrap();
    let shard_path = shard_of(root.path());
    std::fs::create_dir_all(&shard_path).unwrap();
    std::fs::write(shard_path.join(segment_file_name(0)), b"").unwrap();
    std::fs::write(shard_path.join(index_file_name(0)), b"FLSI\0\x02").unwrap();
    recover_then_inspect_is_clean(root.path(), &shard_path);
}

#[test]
fn a_file_planted_under_the_next_index_stops_the_roll_and_is_kept_on_reopen() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("shard");
    let (shard, _) = Shard::open_dir(os(), &dir, small()).unwrap();
    shard.append(&[&payload(0)]).unwrap();
    std::fs::write(dir.join(index_file_name(1)), b"operator bytes").unwrap();
    assert!(shard.append(&[&vec![b'z'; 380]]).is_err());
    drop(shard);
    assert!(!dir.join(segment_file_name(1)).exists(), "no segment was created beside it");
    let (_shard, recovery) = Shard::open_dir(os(), &dir, small()).unwrap();
    assert!(recovery.plan.actions.iter().any(|a| a.summary().starts_with("remove-orphan-index")), "{:?}", recovery.plan);
    assert_eq!(std::fs::read(dir.join(format!("{}.cut-0", index_file_name(1)))).unwrap(), b"operator bytes");
}

#[test]
fn an_orphaned_index_is_kept_by_a_second_name_never_copied() {
    use std::os::unix::fs::MetadataExt as _;
    let root = tempfile::tempdir().unwrap();
    produce(root.path(), 2);
    let shard_path = shard_of(root.path());
    let orphan = shard_path.join(index_file_name(5));
    // Sparse: 1 GiB of hole. A copy would write it all.
    std::fs::File::create(&orphan).unwrap().set_len(1 << 30).unwrap();
    let inode = std::fs::metadata(&orphan).unwrap().ino();
    let o = run(&["recover", root.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", text(&o.stdout), text(&o.stderr));
    let kept = std::fs::metadata(shard_path.join(format!("{}.cut-0", index_file_name(5)))).unwrap();
    assert_eq!((kept.ino(), kept.len()), (inode, 1 << 30), "the same file under a second name");
    assert!(kept.blocks() < 64, "still sparse: {} blocks", kept.blocks());
    let inspected = run(&["inspect", shard_path.to_str().unwrap()]);
    assert!(text(&inspected.stdout).contains("an orphaned index recovery removed"), "{}", text(&inspected.stdout));
}

/// Found by the simulator (seed 1557): a truncation kept a record an
/// operator's bit flip had damaged, and new records went in behind it,
/// where no reader reaches them.
#[test]
fn a_truncation_never_keeps_a_damaged_record_to_append_behind() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("shard");
    let (shard, _) = Shard::open_dir(os(), &dir, Config::default()).unwrap();
    for i in 0..10 {
        shard.append(&[&payload(i)]).unwrap();
    }
    let log = dir.join(segment_file_name(0));
    let mut bytes = std::fs::read(&log).unwrap();
    let record_len = 28 + payload(0).len();
    bytes[32 + 5 * record_len + 28 + 2] ^= 0x10;
    std::fs::write(&log, &bytes).unwrap();
    let Err(EngineError::Corrupt { path, finding }) = shard.truncate_after(7) else { panic!("the damage is met") };
    assert_eq!((path, finding.position(), finding.kind.name()), (log, (32 + 5 * record_len) as u64, "RecordChecksum"));
    assert!(matches!(shard.append(&[b"behind"]), Err(EngineError::FailStopped { .. })), "nothing goes in behind it");
}

/// A damaged epochs file is kept by a copy of its bytes (the simulator's seed
/// 212451: a second name of the same file, left by a crash before the new
/// history's rename, let an operator's change to `epochs` change the
/// evidence), unless it is far longer than any epochs file: a file planted
/// there, kept by a second name, so none of its bytes are written again.
#[test]
fn a_damaged_epochs_file_is_copied_as_evidence_and_a_planted_huge_one_is_linked() {
    use std::os::unix::fs::MetadataExt as _;
    for huge in [false, true] {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("shard");
        let (shard, _) = Shard::open_dir(os(), &dir, Config::default()).unwrap();
        shard.append(&[b"one"]).unwrap();
        shard.begin_generation(1).unwrap();
        drop(shard);
        let epochs = dir.join("epochs");
        if huge {
            // Sparse: 1 GiB of hole. A copy would write it all.
            std::fs::File::create(&epochs).unwrap().set_len(1 << 30).unwrap();
        } else {
            let mut bytes = std::fs::read(&epochs).unwrap();
            *bytes.last_mut().unwrap() ^= 1;
            std::fs::write(&epochs, &bytes).unwrap();
        }
        let (inode, before) = (std::fs::metadata(&epochs).unwrap().ino(), std::fs::metadata(&epochs).unwrap().len());
        let damaged = (!huge).then(|| std::fs::read(&epochs).unwrap());
        let (shard, _) = Shard::open_dir(os(), &dir, Config::default()).unwrap();
        shard.begin_generation(2).unwrap();
        drop(shard);
        let kept = std::fs::metadata(dir.join("epochs.damaged")).unwrap();
        assert_eq!(kept.len(), before);
        if huge {
            assert_eq!(kept.ino(), inode, "the planted file under a second name");
            assert!(kept.blocks() < 64, "still sparse: {} blocks", kept.blocks());
        } else {
            assert_eq!(std::fs::read(dir.join("epochs.damaged")).ok(), damaged, "the damaged bytes, copied");
        }
        assert!(!dir.join("epochs.tmp").exists(), "no temporary left");
    }
}
