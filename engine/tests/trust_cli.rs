//! The engine a broker can trust, through the command line as an operator
//! (or an attacker) uses it: real processes, real files, hostile names,
//! sparse 100 GiB files and a memory limit on the process.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod support;

use std::io::{BufReader, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use felix_codec::format::index::{IndexEntry, IndexHeader};
use felix_codec::format::record::encode_record;
use felix_codec::format::segment_header::SegmentHeader;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_felix-storage")
}

fn run(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

/// Runs the binary with its address space limited to `mib` MiB: an
/// allocation sized from a file or an input would abort it.
fn run_limited(mib: u64, args: &[&str], stdin: Option<&Path>) -> Output {
    let mut script = format!("ulimit -v {}; exec \"$0\" \"$@\"", mib * 1024);
    if let Some(input) = stdin {
        script = format!("ulimit -v {}; exec \"$0\" \"$@\" < '{}'", mib * 1024, input.display());
    }
    Command::new("sh").arg("-c").arg(script).arg(bin()).args(args).output().unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn shard_dir(root: &Path) -> PathBuf {
    root.join("acme_default_orders_0-0d3aed4b998d2798")
}

const SHARD: &str = "acme/default/orders/0";

fn produce(root: &Path, lines: &[&str]) {
    let mut child = Command::new(bin())
        .args(["produce", root.to_str().unwrap(), "--shard", SHARD])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(lines.join("\n").as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}

/// A producer kept running: returns the child and its acknowledged-offset reader.
fn live_producer(root: &Path, extra: &[&str]) -> (Child, std::io::Lines<BufReader<std::process::ChildStdout>>) {
    support::live_producer(root.to_str().unwrap(), SHARD, extra)
}

fn consume_all(root: &Path) -> Vec<(u64, String)> {
    let o = run(&["consume", root.to_str().unwrap(), "--shard", SHARD, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    out(&o)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["offset"].as_u64().unwrap(), v["payload"].as_str().unwrap_or("").to_string())
        })
        .collect()
}

// ------------------------------------------------------------ one writer

#[test]
fn two_producers_on_one_shard_the_second_is_refused_naming_the_first() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut first, mut acks) = live_producer(tmp.path(), &[]);
    let mut stdin = first.stdin.take().unwrap();
    writeln!(stdin, "from the first").unwrap();
    assert_eq!(acks.next().unwrap().unwrap(), "0", "the first writer holds the shard");
    let mut second = support::producer(tmp.path().to_str().unwrap(), SHARD, &[]);
    // The second may be refused (and gone) before its line is written: a broken pipe then.
    let _ = second.stdin.take().unwrap().write_all(b"from the second\n");
    let refused = second.wait_with_output().unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(out(&refused).is_empty(), "nothing acknowledged twice");
    let line = err(&refused);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.contains("shard is open for writing by another process") && line.contains(&format!("pid {}", first.id())), "{line}");
    // With --wait, the second writer proceeds once the first lets go.
    let (mut waiter, mut waiter_acks) = live_producer(tmp.path(), &["--wait"]);
    let mut waiter_in = waiter.stdin.take().unwrap();
    writeln!(waiter_in, "from the waiter").unwrap();
    writeln!(stdin, "from the first again").unwrap();
    assert_eq!(acks.next().unwrap().unwrap(), "1");
    drop(stdin);
    assert_eq!(first.wait().unwrap().code(), Some(0));
    assert_eq!(waiter_acks.next().unwrap().unwrap(), "2", "the waiter wrote after the first let go");
    drop(waiter_in);
    assert_eq!(waiter.wait().unwrap().code(), Some(0));
    let got: Vec<String> = consume_all(tmp.path()).into_iter().map(|(_, p)| p).collect();
    assert_eq!(got, ["from the first", "from the first again", "from the waiter"]);
}

#[test]
fn recover_during_large_appends_is_refused_and_never_cuts_an_acknowledged_record() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut producer, mut acks) = live_producer(tmp.path(), &[]);
    let mut stdin = producer.stdin.take().unwrap();
    let big = "x".repeat(4 << 20);
    // The producer's stdin stays open until the last recover ran: it holds
    // the shard the whole time (its acknowledgements may run ahead of us).
    let feeder = std::thread::spawn(move || {
        for i in 0..12 {
            writeln!(stdin, "{i}{big}").unwrap();
        }
        stdin
    });
    // Once the producer acknowledged a record it holds the shard.
    assert!(acks.next().unwrap().is_ok());
    let mut acked = 1;
    while acked < 12 {
        let o = run(&["recover", tmp.path().to_str().unwrap(), "--shard", SHARD]);
        assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
        assert!(err(&o).contains("open for writing by another process"), "{}", err(&o));
        assert!(acks.next().unwrap().is_ok());
        acked += 1;
    }
    drop(feeder.join().unwrap());
    assert_eq!(producer.wait().unwrap().code(), Some(0));
    assert_eq!(consume_all(tmp.path()).len(), 12);
    let o = run(&["inspect", shard_dir(tmp.path()).to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
}

#[test]
fn the_lock_dies_with_a_killed_writer() {
    let tmp = tempfile::tempdir().unwrap();
    let (mut writer, mut acks) = live_producer(tmp.path(), &[]);
    let mut stdin = writer.stdin.take().unwrap();
    writeln!(stdin, "before the kill").unwrap();
    assert_eq!(acks.next().unwrap().unwrap(), "0");
    writer.kill().unwrap(); // SIGKILL
    writer.wait().unwrap();
    produce(tmp.path(), &["after the kill"]);
    assert_eq!(consume_all(tmp.path()).len(), 2);
}

#[test]
fn readers_tolerate_a_live_writer_and_say_its_tail_may_be_in_flight() {
    let tmp = tempfile::tempdir().unwrap();
    produce(tmp.path(), &["a", "b", "c"]);
    let dir = shard_dir(tmp.path());
    let log = dir.join("00000000000000000000.log");
    let bytes = std::fs::read(&log).unwrap();
    std::fs::write(&log, &bytes[..bytes.len() - 1]).unwrap(); // a record the writer is still writing
                                                              // Without a writer, that is damage (repairable).
    let o = run(&["inspect", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    // With a writer holding the shard, it is a record in flight.
    let io = felix_engine::OsIo::new();
    let _held = felix_engine::Io::lock(&io, &dir, false).unwrap();
    let o = run(&["inspect", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(out(&o).contains("shard is open for writing") && out(&o).contains("the tail may be in flight"), "{}", out(&o));
    let o = run(&["consume", tmp.path().to_str().unwrap(), "--shard", SHARD]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(out(&o).lines().count(), 2);
    assert!(err(&o).contains("the tail may be in flight"), "{}", err(&o));
    let o = run(&["recover", tmp.path().to_str().unwrap(), "--dry-run"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    assert!(!out(&o).contains("cut"), "a live writer's tail is never planned to be cut: {}", out(&o));
    let o = run(&["recover", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(std::fs::read(&log).unwrap().len(), bytes.len() - 1, "nothing cut under a live writer");
}

// ------------------------------------------------------ never destroy

#[test]
fn stray_files_at_a_root_hide_no_shard_and_are_never_touched() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    produce(root, &["a", "b"]);
    let mut child = Command::new(bin())
        .args(["produce", root.to_str().unwrap(), "--shard", "acme/default/payments/0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"p\n").unwrap();
    child.wait().unwrap();
    std::fs::write(root.join("server.log"), b"2026-12-01 broker started\n").unwrap();
    std::fs::write(root.join("epochs"), b"not ours").unwrap();
    std::fs::write(root.join("notes.tmp"), b"my notes").unwrap();
    std::fs::write(shard_dir(root).join("notes.tmp"), b"notes in a shard").unwrap();
    let o = run(&["inspect", "--json", root.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let files = v["files"].as_array().unwrap();
    let logs = files.iter().filter(|f| f["kind"] == "segment").count();
    assert_eq!(logs, 2, "both shards are inspected: {}", out(&o));
    for stray in ["server.log", "notes.tmp"] {
        let f = files.iter().find(|f| f["path"].as_str().unwrap() == root.join(stray).to_str().unwrap()).unwrap();
        assert_eq!(f["kind"], "unknown");
        assert!(f["notes"][0].as_str().unwrap().contains("not part of any shard directory"), "{f}");
    }
    // A Felix name loose at the root is judged on its own (issue 16 review,
    // finding 5: never shown clean unread), and left alone by recover.
    let f = files.iter().find(|f| f["path"].as_str().unwrap() == root.join("epochs").to_str().unwrap()).unwrap();
    assert_eq!((f["kind"].as_str(), f["status"].as_str()), (Some("epochs"), Some("damaged")), "{f}");
    let o = run(&["recover", root.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    assert_eq!(std::fs::read(root.join("epochs")).unwrap(), b"not ours");
    assert_eq!(std::fs::read(root.join("notes.tmp")).unwrap(), b"my notes");
    assert_eq!(std::fs::read(shard_dir(root).join("notes.tmp")).unwrap(), b"notes in a shard");
    assert_eq!(std::fs::read(root.join("server.log")).unwrap(), b"2026-12-01 broker started\n");
}

#[test]
fn shards_deeper_than_the_search_get_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let deep = tmp.path().join("a/b/c/d/e");
    produce(&deep, &["deep"]);
    produce(tmp.path(), &["shallow"]);
    let o = run(&["inspect", tmp.path().to_str().unwrap()]);
    assert!(out(&o).contains("not searched deeper than 4 levels"), "{}", out(&o));
}

#[test]
fn demo_refuses_a_directory_that_is_not_empty() {
    let tmp = tempfile::tempdir().unwrap();
    produce(tmp.path(), &["real data"]);
    let before = std::fs::read(shard_dir(tmp.path()).join("00000000000000000000.log")).unwrap();
    let o = run(&["demo", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("not empty"), "{}", err(&o));
    assert_eq!(std::fs::read(shard_dir(tmp.path()).join("00000000000000000000.log")).unwrap(), before);
}

#[test]
fn consuming_a_missing_shard_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("no-root");
    let o = run(&["consume", root.to_str().unwrap(), "--shard", SHARD]);
    assert_eq!(o.status.code(), Some(1));
    assert!(err(&o).contains("no such shard directory"), "{}", err(&o));
    assert!(!root.exists(), "a read created a directory");
    let o = run(&["recover", tmp.path().to_str().unwrap(), "--shard", SHARD]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(!shard_dir(tmp.path()).exists());
}

#[test]
fn a_non_utf8_name_blocks_nothing_and_is_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    produce(tmp.path(), &["a"]);
    let odd = shard_dir(tmp.path()).join(std::ffi::OsStr::from_bytes(b"\xff\xfe.tmp"));
    std::fs::write(&odd, b"whose?").unwrap();
    produce(tmp.path(), &["b"]);
    let o = run(&["recover", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    assert_eq!(std::fs::read(&odd).unwrap(), b"whose?");
    assert_eq!(consume_all(tmp.path()).len(), 2);
}

#[test]
fn a_symlinked_segment_gets_a_verdict_and_is_never_replaced() {
    let tmp = tempfile::tempdir().unwrap();
    produce(tmp.path(), &["a", "b"]);
    let dir = shard_dir(tmp.path());
    let real = tmp.path().join("elsewhere.log");
    std::fs::rename(dir.join("00000000000000000000.log"), &real).unwrap();
    std::os::unix::fs::symlink(&real, dir.join("00000000000000000000.log")).unwrap();
    for args in
        [vec!["consume", tmp.path().to_str().unwrap(), "--shard", SHARD], vec!["recover", tmp.path().to_str().unwrap(), "--shard", SHARD]]
    {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(err(&o).contains("00000000000000000000.log: a symbolic link where a Felix file or shard directory belongs"), "{}", err(&o));
    }
    let mut child = Command::new(bin()).args(["produce", tmp.path().to_str().unwrap(), "--shard", SHARD]).stdin(Stdio::piped()).output();
    let o = child.as_mut().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(std::fs::symlink_metadata(dir.join("00000000000000000000.log")).unwrap().file_type().is_symlink(), "the link was replaced");
    let o = run(&["inspect", dir.to_str().unwrap()]);
    assert!(out(&o).contains("a symbolic link: read through here"), "{}", out(&o));
}

// ------------------------------------------------------------ one judge

#[test]
fn a_forged_index_entry_is_flagged_by_inspect_never_read_and_rebuilt_by_recover() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = shard_dir(tmp.path());
    std::fs::create_dir_all(&dir).unwrap();
    let mut forged = Vec::new();
    encode_record(1, 42, b"FORGED", &mut forged).unwrap();
    let mut seg = SegmentHeader::new(0, 1).encode().to_vec();
    encode_record(0, 1, &[b"pre".as_slice(), &forged].concat(), &mut seg).unwrap();
    encode_record(1, 2, b"real-1", &mut seg).unwrap();
    let real_2 = seg.len() as u64;
    encode_record(2, 3, b"real-2", &mut seg).unwrap();
    let mut index = IndexHeader::new(0).encode().to_vec();
    for e in [IndexEntry { offset: 0, position: 32 }, IndexEntry { offset: 1, position: 63 }, IndexEntry { offset: 2, position: real_2 }] {
        index.extend_from_slice(&e.encode());
    }
    std::fs::write(dir.join("00000000000000000000.log"), &seg).unwrap();
    std::fs::write(dir.join("00000000000000000000.index"), &index).unwrap();
    let mut seg1 = SegmentHeader::new(3, 1).encode().to_vec();
    encode_record(3, 4, b"real-3", &mut seg1).unwrap();
    std::fs::write(dir.join("00000000000000000001.log"), &seg1).unwrap();
    let o = run(&["inspect", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(out(&o).contains("IndexEntryMismatch"), "{}", out(&o));
    let o = run(&["consume", tmp.path().to_str().unwrap(), "--shard", SHARD, "--from", "1", "--max", "1"]);
    assert!(out(&o).trim_end().ends_with("\treal-1"), "{}", out(&o));
    let o = run(&["recover", tmp.path().to_str().unwrap(), "--dry-run"]);
    assert!(out(&o).contains("00000000000000000000.index: would rebuild (IndexEntryMismatch"), "{}", out(&o));
    let o = run(&["recover", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let o = run(&["inspect", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "after recover, inspect finds nothing: {}", out(&o));
}

#[test]
fn recover_never_calls_a_damaged_shard_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sample");
    run(&["demo", root.to_str().unwrap()]);
    // audit: rot in the middle of an older segment.
    let o = run(&["recover", root.to_str().unwrap(), "--shard", "acme/default/audit/0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(out(&o).contains("REFUSED") && out(&o).contains("RecordChecksum"), "{}", out(&o));
    assert!(!out(&o).contains("clean"), "{}", out(&o));
    // orders: a damaged epochs file remains (it reads as empty; recovery has nothing to cut).
    let orders = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).find(|p| p.to_str().unwrap().contains("orders")).unwrap();
    let mut epochs = std::fs::read(orders.join("epochs")).unwrap();
    epochs[20] ^= 1;
    std::fs::write(orders.join("epochs"), epochs).unwrap();
    let o = run(&["recover", root.to_str().unwrap(), "--shard", "acme/default/orders/0"]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    assert!(out(&o).contains("epochs: remains: EpochsChecksum"), "{}", out(&o));
    assert!(!out(&o).contains("clean"), "{}", out(&o));
}

#[test]
fn dump_never_believes_a_length_before_its_header_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let mut seg = SegmentHeader::new(0, 1).encode().to_vec();
    encode_record(0, 1, b"ok", &mut seg).unwrap();
    let mut bad = Vec::new();
    encode_record(1, 1, b"x", &mut bad).unwrap();
    bad[..4].copy_from_slice(&u32::MAX.to_be_bytes()); // a rotted length: 4 GiB
    seg.extend_from_slice(&bad);
    let log = tmp.path().join("00000000000000000000.log");
    std::fs::write(&log, &seg).unwrap();
    let o = run_limited(64, &["dump", log.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(out(&o).contains("RecordHeaderChecksum at byte 62"), "{}", out(&o));
}

// ----------------------------------------------- memory by design, not by disk

fn sparse(path: &Path, len: u64) {
    std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(path).unwrap().set_len(len).unwrap();
}

#[test]
fn a_sparse_100_gib_epochs_file_reads_as_empty_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    produce(tmp.path(), &["a"]);
    sparse(&shard_dir(tmp.path()).join("epochs"), 100 << 30);
    let o = run_limited(128, &["consume", tmp.path().to_str().unwrap(), "--shard", SHARD], None);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(err(&o).contains("read as empty"), "{}", err(&o));
    let o = run_limited(128, &["recover", tmp.path().to_str().unwrap(), "--dry-run"], None);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(out(&o).contains("epochs: remains: EpochsMagic"), "{}", out(&o));
}

#[test]
fn a_sealed_segment_sparse_to_100_gib_is_refused_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    produce(tmp.path(), &["a"]);
    let dir = shard_dir(tmp.path());
    // Segment 0 becomes a sealed segment of 100 GiB (zeros after its record); segment 1 follows it.
    sparse(&dir.join("00000000000000000000.log"), 100 << 30);
    let mut seg1 = SegmentHeader::new(1, 1).encode().to_vec();
    encode_record(1, 1, b"b", &mut seg1).unwrap();
    std::fs::write(dir.join("00000000000000000001.log"), seg1).unwrap();
    let o = run_limited(128, &["consume", tmp.path().to_str().unwrap(), "--shard", SHARD], None);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(
        err(&o).contains("RecordHeaderChecksum at shard acme_default_orders_0-0d3aed4b998d2798, segment 00000000000000000000, byte 61"),
        "{}",
        err(&o)
    );
}

#[test]
fn an_index_of_four_million_entries_opens_in_bounded_memory_and_is_not_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    produce(tmp.path(), &["a", "b"]);
    let index = shard_dir(tmp.path()).join("00000000000000000000.index");
    // 64 MiB of ascending entries (past the first, naming no record): four
    // times the most any reader keeps.
    let mut bytes = IndexHeader::new(0).encode().to_vec();
    bytes.reserve(16 << 22);
    for i in 0..(4u64 << 20) {
        bytes.extend_from_slice(&IndexEntry { offset: i, position: 32 + 29 * i }.encode());
    }
    std::fs::write(&index, &bytes).unwrap();
    let o = run_limited(128, &["consume", tmp.path().to_str().unwrap(), "--shard", SHARD], None);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(out(&o).lines().count(), 2, "{}", out(&o));
    let o = run_limited(128, &["recover", tmp.path().to_str().unwrap(), "--dry-run"], None);
    assert!(out(&o).contains("00000000000000000000.index: would rebuild"), "{}{}", out(&o), err(&o));
    let o = run_limited(128, &["recover", tmp.path().to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    assert!(std::fs::metadata(&index).unwrap().len() < 1024, "rebuilt at the configured spacing");
    assert_eq!(consume_all(tmp.path()).len(), 2);
}

#[test]
fn a_1_gib_damaged_tail_moves_to_evidence_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    produce(tmp.path(), &["a"]);
    let log = shard_dir(tmp.path()).join("00000000000000000000.log");
    let mut bytes = std::fs::read(&log).unwrap();
    let cut = bytes.len() as u64;
    // A verified header claiming more than the limit, then 1 GiB of bytes: opt-in (its claimed end lies past the file's).
    let mut h = vec![0u8; 28];
    h[..4].copy_from_slice(&u32::MAX.to_be_bytes());
    h[4..12].copy_from_slice(&1u64.to_be_bytes());
    let crc = felix_codec::format::be::crc32(&h[..20]);
    h[20..24].copy_from_slice(&crc.to_be_bytes());
    bytes.extend_from_slice(&h);
    std::fs::write(&log, &bytes).unwrap();
    sparse(&log, cut + (1 << 30));
    let o = run_limited(256, &["recover", tmp.path().to_str().unwrap(), "--repair-checksum-tail"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    assert_eq!(std::fs::metadata(&log).unwrap().len(), cut);
    let evidence = shard_dir(tmp.path()).join(format!("00000000000000000000.log.cut-{cut}"));
    assert_eq!(std::fs::metadata(evidence).unwrap().len(), 1 << 30);
}

#[test]
fn produce_refuses_an_endless_line_while_reading_it() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("endless");
    sparse(&input, 80 << 20); // 80 MiB of zero bytes and no newline
    let o = run_limited(512, &["produce", tmp.path().to_str().unwrap(), "--shard", SHARD], Some(&input));
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("<stdin>: line 1: a line is longer than 67108864 bytes"), "{}", err(&o));
    assert!(out(&o).is_empty());
    let o = run(&["produce", tmp.path().to_str().unwrap(), "--shard", SHARD, "--batch", "18446744073709551615"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--batch"), "{}", err(&o));
}

#[test]
fn produce_stops_at_the_last_offset_instead_of_wrapping() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = shard_dir(tmp.path());
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("00000000000000000000.log"), SegmentHeader::new(u64::MAX - 2, 1).encode()).unwrap();
    let mut child = support::producer(tmp.path().to_str().unwrap(), SHARD, &[]);
    child.stdin.take().unwrap().write_all(b"a\nb\nc\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(out(&o), format!("{}\n{}\n", u64::MAX - 2, u64::MAX - 1));
    assert!(err(&o).contains("no offsets left"), "{}", err(&o));
}

// ------------------------------------------------------------ review: hidden and refused shards

#[test]
fn shards_below_a_shard_directory_are_not_hidden() {
    let tmp = tempfile::tempdir().unwrap();
    produce(tmp.path(), &["a"]);
    // A stray copy of a segment at the top makes the root look like a shard.
    std::fs::copy(shard_dir(tmp.path()).join("00000000000000000000.log"), tmp.path().join("00000000000000000000.log")).unwrap();
    let o = run(&["inspect", tmp.path().to_str().unwrap()]);
    let text = out(&o);
    assert!(text.contains("acme_default_orders_0-0d3aed4b998d2798/00000000000000000000.log: clean segment"), "{text}");
    let o = run(&["recover", tmp.path().to_str().unwrap(), "--dry-run"]);
    assert!(out(&o).contains("acme_default_orders_0-0d3aed4b998d2798"), "{}{}", out(&o), err(&o));
}

#[test]
fn a_felix_name_on_a_fifo_a_directory_or_a_dangling_link_refuses_the_shard_everywhere() {
    for what in ["fifo", "dir", "dangling"] {
        let tmp = tempfile::tempdir().unwrap();
        produce(tmp.path(), &["a"]);
        let dir = shard_dir(tmp.path());
        let odd = dir.join("00000000000000000001.log");
        match what {
            "fifo" => assert!(Command::new("mkfifo").arg(&odd).status().unwrap().success()),
            "dir" => std::fs::create_dir(&odd).unwrap(),
            _ => std::os::unix::fs::symlink(tmp.path().join("nowhere"), &odd).unwrap(),
        }
        let before = std::fs::read(dir.join("00000000000000000000.log")).unwrap();
        // inspect names it and exits 1 (the shard cannot be opened as it is).
        let o = run(&["inspect", tmp.path().to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{what}: {}", out(&o));
        assert!(
            out(&o).contains("00000000000000000001.log: note:") && out(&o).contains("the engine refuses to open this shard"),
            "{what}: {}",
            out(&o)
        );
        // A dry run refuses exactly like the real run.
        for args in [vec!["recover", tmp.path().to_str().unwrap(), "--dry-run"], vec!["recover", tmp.path().to_str().unwrap()]] {
            let o = run(&args);
            assert_eq!(o.status.code(), Some(1), "{what} {args:?}: {}{}", out(&o), err(&o));
            assert!(
                err(&o).contains("00000000000000000001.log: ") && err(&o).contains("where a Felix file or shard directory belongs"),
                "{what}: {}",
                err(&o)
            );
        }
        assert_eq!(std::fs::read(dir.join("00000000000000000000.log")).unwrap(), before, "{what}: changed");
    }
}

#[test]
fn a_linked_directory_under_a_root_is_named_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let other = tmp.path().join("other");
    produce(&root, &["a"]);
    produce(&other, &["b"]);
    std::os::unix::fs::symlink(&other, root.join("linked")).unwrap();
    let o = run(&["inspect", root.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(out(&o).contains("/linked: a symbolic link to a directory, not followed"), "{}", out(&o));
    assert_eq!(out(&o).matches("clean segment").count(), 1, "{}", out(&o));
}

#[test]
fn recover_of_a_root_goes_on_past_a_shard_a_writer_holds() {
    let tmp = tempfile::tempdir().unwrap();
    produce(tmp.path(), &["a"]);
    // A second shard, torn, that recover should repair.
    let mut other = Command::new(bin())
        .args(["produce", tmp.path().to_str().unwrap(), "--shard", "acme/default/orders/1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    other.stdin.take().unwrap().write_all(b"x\n").unwrap();
    assert!(other.wait().unwrap().success());
    let second = tmp.path().join(
        std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).find(|n| n.to_str().unwrap().contains("_1-")).unwrap(),
    );
    let log = second.join("00000000000000000000.log");
    let mut bytes = std::fs::read(&log).unwrap();
    let intact = bytes.len() as u64;
    bytes.extend_from_slice(&[0, 0, 0, 9, 1, 2]);
    std::fs::write(&log, bytes).unwrap();
    let (mut writer, mut acks) = live_producer(tmp.path(), &[]);
    writeln!(writer.stdin.as_mut().unwrap(), "held").unwrap();
    assert!(acks.next().unwrap().is_ok());
    let o = run(&["recover", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
    assert!(err(&o).contains("acme_default_orders_0-0d3aed4b998d2798: shard is open for writing by another process"), "{}", err(&o));
    assert_eq!(std::fs::metadata(&log).unwrap().len(), intact, "the other shard was recovered: {}", out(&o));
    drop(writer.stdin.take());
    assert!(writer.wait().unwrap().success());
}

#[test]
fn consume_prints_a_64_mib_record_of_control_bytes_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("line");
    // One record of 64 MiB - 1 control bytes: each prints as 6 characters.
    let mut line = vec![1u8; (64 << 20) - 1];
    line.push(b'\n');
    std::fs::write(&input, &line).unwrap();
    drop(line);
    let o = run_limited(512, &["produce", tmp.path().to_str().unwrap(), "--shard", SHARD], Some(&input));
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    for format in ["text", "json"] {
        let script = format!("ulimit -v {}; exec \"$0\" \"$@\" | wc -c", 256 * 1024);
        let o = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg(bin())
            .args(["consume", tmp.path().to_str().unwrap(), "--shard", SHARD, "--format", format])
            .output()
            .unwrap();
        let printed: u64 = out(&o).trim().parse().unwrap_or(0);
        assert!(
            printed > 5 * ((64 << 20) - 1),
            "{format}: {printed} bytes printed (5 or 6 per byte: the printed form is 320 MiB or more); {}",
            err(&o)
        );
    }
}

#[test]
fn consume_escapes_and_encodes_payloads_as_it_always_did() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("lines");
    std::fs::write(&input, b"plain\n\x1b[2Jtab\there \"q\" \\ \xe6\x9d\xb1\n\xff\xfebin\x01\n").unwrap();
    let o = run_limited(512, &["produce", tmp.path().to_str().unwrap(), "--shard", SHARD], Some(&input));
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let o = run(&["consume", tmp.path().to_str().unwrap(), "--shard", SHARD, "--format", "json"]);
    let lines: Vec<serde_json::Value> = out(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["payload"], "plain");
    assert_eq!(lines[1]["payload"], "\u{1b}[2Jtab\there \"q\" \\ 東");
    assert_eq!(lines[2]["payload_base64"], "//5iaW4B");
    assert!(out(&o).lines().next().unwrap().starts_with("{\"offset\":0,\"payload\":\"plain\",\"timestamp_micros\":"), "{}", out(&o));
    let o = run(&["consume", tmp.path().to_str().unwrap(), "--shard", SHARD]);
    let text = out(&o);
    let fields: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(fields.len(), 3, "{text}");
    // The backslash too (issue 16 review, finding 8): a payload's literal
    // `\n` is told from an escaped newline.
    assert_eq!(fields[1][2], "\\u{1b}[2Jtab\\there \"q\" \\\\ 東");
    assert_eq!(fields[2][2], "\u{fffd}\u{fffd}bin\\u{1}");
}
