//! The shell tools as an operator uses them: demo, inspect, recover, produce,
//! consume, dump — exit codes and output.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_felix-storage")).args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn produce(root: &str, shard: &str, input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_felix-storage"))
        .args(["produce", root, "--shard", shard, "--batch", "2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn dir_named(root: &Path, prefix: &str) -> std::path::PathBuf {
    std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with(prefix))
        .unwrap()
}

#[test]
fn the_demo_shows_every_kind_of_damage_it_promises() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sample");
    assert_eq!(run(&["demo", root.to_str().unwrap()]).status.code(), Some(0));
    let o = run(&["inspect", "--json", root.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let kinds: BTreeSet<(String, String)> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| {
            let shard = f["shard"].as_str().unwrap().split('_').nth(2).unwrap().to_string();
            f["findings"].as_array().unwrap().iter().map(move |x| (shard.clone(), x["kind"].as_str().unwrap().to_string()))
        })
        .collect();
    let want: BTreeSet<(String, String)> =
        [("audit", "RecordChecksum"), ("clicks", "IndexEntryMismatch"), ("payments", "IndexEntryMismatch"), ("payments", "Truncated")]
            .into_iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
    assert_eq!(kinds, want);
    let epochs =
        v["files"].as_array().unwrap().iter().find(|f| f["kind"] == "epochs" && f["shard"].as_str().unwrap().contains("orders")).unwrap();
    assert_eq!(epochs["entries"].as_array().unwrap().len(), 3);
}

#[test]
fn recover_dry_run_changes_nothing_and_recover_keeps_the_cut_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sample");
    run(&["demo", root.to_str().unwrap()]);
    let payments = dir_named(&root, "acme_default_payments_0");
    let log = payments.join("00000000000000000001.log");
    let before = std::fs::read(&log).unwrap();
    let o = run(&["recover", root.to_str().unwrap(), "--shard", "acme/default/payments/0", "--dry-run"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("would cut at byte 1064"), "{}", stdout(&o));
    assert_eq!(std::fs::read(&log).unwrap(), before, "a dry run changes nothing");
    let o = run(&["recover", root.to_str().unwrap(), "--shard", "acme/default/payments/0"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let after = std::fs::read(&log).unwrap();
    assert_eq!(after.len(), 1064);
    let sidecar = std::fs::read(payments.join("00000000000000000001.log.cut-1064")).unwrap();
    assert_eq!([after, sidecar].concat(), before, "the cut bytes are kept, byte for byte");
    let why: serde_json::Value =
        serde_json::from_slice(&std::fs::read(payments.join("00000000000000000001.log.cut-1064.json")).unwrap()).unwrap();
    assert_eq!((why["kind"].as_str(), why["cut_at"].as_u64(), why["cut_bytes"].as_u64()), (Some("Truncated"), Some(1064), Some(77)));
    let o = run(&["recover", root.to_str().unwrap(), "--shard", "acme/default/payments/0"]);
    assert!(stdout(&o).contains("clean, nothing to do"), "{}", stdout(&o));
    let o = run(&["inspect", payments.to_str().unwrap()]);
    assert!(stdout(&o).contains("00000000000000000001.log: clean segment"), "{}", stdout(&o));
}

#[test]
fn produce_then_consume_round_trips_text_and_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_str().unwrap();
    let o = produce(root, "t/n/s/1", b"first\nsecond\n\xff\xfe\nlast");
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(stdout(&o), "0\n1\n2\n3\n");
    let o = run(&["consume", root, "--shard", "t/n/s/1", "--from", "1", "--max", "2", "--format", "json"]);
    let lines: Vec<serde_json::Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!((lines[0]["offset"].as_u64(), lines[0]["payload"].as_str()), (Some(1), Some("second")));
    assert_eq!(lines[1]["payload_base64"], "//4=");
    assert!(lines[1].get("payload").is_none());
    let o = run(&["consume", root, "--shard", "t/n/s/1", "--from", "3"]);
    assert!(stdout(&o).starts_with("3\t") && stdout(&o).trim_end().ends_with("\tlast"), "{}", stdout(&o));
}

#[test]
fn dump_starts_at_the_requested_offset_through_the_index() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sample");
    run(&["demo", root.to_str().unwrap()]);
    let log = dir_named(&root, "acme_default_orders_0").join("00000000000000000003.log");
    let o = run(&["dump", log.to_str().unwrap(), "--from-offset", "180", "--max-bytes", "100"]);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    let records: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert!(records[0].starts_with("180\t"), "{}", stdout(&o));
    assert_eq!(records.len(), 2, "bounded by --max-bytes: {}", stdout(&o));
    let audit = dir_named(&root, "acme_default_audit_0").join("00000000000000000000.log");
    let o = run(&["dump", audit.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("RecordChecksum at byte 1990"), "{}", stdout(&o));
}

#[test]
fn bad_usage_exits_2_with_one_line() {
    let o = run(&["produce", "/tmp", "--shard", "a/b/c"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1);
    assert!(err.contains("expected TENANT/NAMESPACE/STREAM/N"), "{err}");
}

#[test]
fn a_reader_that_stops_early_ends_the_output_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sample");
    run(&["demo", root.to_str().unwrap()]);
    let log = dir_named(&root, "acme_default_orders_0").join("00000000000000000000.log");
    // Quietly, with the status the run earned before (issue 16 review: the
    // demo root's damage remains, so `recover` exits 1, never 0).
    for (args, code) in [
        (vec!["recover", root.to_str().unwrap(), "--dry-run"], 1),
        (vec!["dump", log.to_str().unwrap()], 0),
        (vec!["consume", root.to_str().unwrap(), "--shard", "acme/default/orders/0"], 0),
    ] {
        let mut child =
            Command::new(env!("CARGO_BIN_EXE_felix-storage")).args(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        drop(child.stdout.take()); // the reader goes away before reading anything
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// `bench`: upstream's `felix-log-tool bench` flags and JSON line, over the
/// broker facade — what it appended is a log the engine reads back whole,
/// and concurrent publishers share flushes (appends per fsync above 1).
#[test]
fn bench_prints_upstream_s_json_line_and_leaves_a_readable_log() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("log");
    let o = run(&[
        "bench",
        "--dir",
        dir.to_str().unwrap(),
        "--records",
        "640",
        "--concurrency",
        "64",
        "--payload-bytes",
        "100",
        "--warmup-records",
        "10",
        "--segment-bytes",
        "8192",
        "--no-preallocate",
        "--label",
        "t",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(line["event"], "bench");
    assert_eq!(line["label"], "t");
    assert_eq!(line["fsync"], "on_commit");
    assert_eq!(line["records"], 640);
    assert_eq!(line["appends"], 640);
    assert_eq!(line["concurrency"], 64);
    for p in ["p50", "p90", "p99", "p999", "max"] {
        assert!(line["latency_us"][p].is_number(), "{p}");
    }
    let (appends, fsyncs) = (line["appends"].as_f64().unwrap(), line["fsyncs"].as_f64().unwrap());
    assert!(fsyncs >= 1.0 && fsyncs < appends, "64 publishers shared no flush: {fsyncs} fsyncs");
    assert_eq!(line["appends_per_fsync"].as_f64().unwrap(), appends / fsyncs);
    // The log: the warmup's 10 records and the 640 measured, in 8 KiB segments.
    let (shard, _) =
        felix_engine::Shard::open_read_only(std::sync::Arc::new(felix_engine::OsIo::new()), &dir, felix_engine::Config::default()).unwrap();
    assert_eq!(shard.next_offset(), 650);
    assert!(shard.segments().len() > 5);
    assert_eq!(shard.read(0, usize::MAX).unwrap().len(), 650);

    // Fewer records than publishers: exactly the records asked for, and the
    // rate counts those; none at all is a rate of 0, not 1 per run.
    let few = tmp.path().join("few");
    let o = run(&["bench", "--dir", few.to_str().unwrap(), "--records", "10", "--concurrency", "64", "--warmup-records", "0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(line["appends"], 10);
    let (shard, _) =
        felix_engine::Shard::open_read_only(std::sync::Arc::new(felix_engine::OsIo::new()), &few, felix_engine::Config::default()).unwrap();
    assert_eq!(shard.next_offset(), 10);
    let none = tmp.path().join("none");
    let o = run(&["bench", "--dir", none.to_str().unwrap(), "--records", "0", "--warmup-records", "0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!((line["appends"].as_u64(), line["records_per_second"].as_f64()), (Some(0), Some(0.0)));
    assert!(line["appends_per_fsync"].is_null());

    let bad = run(&["bench", "--dir", dir.to_str().unwrap(), "--concurrency", "0"]);
    assert_eq!(bad.status.code(), Some(2));
    let bad = run(&["bench", "--dir", dir.to_str().unwrap(), "--fsync", "always"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// `bench` with flags whose product cannot be held in memory (every
/// publisher builds its batch of payloads before appending): refused with
/// exit 2 before `--dir` is created, not an allocation abort after. Run
/// under a 2 GB address-space limit so a build without the check dies fast
/// instead of eating the machine.
#[test]
fn bench_refuses_a_load_it_cannot_hold_in_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("never");
    let script = format!(
        "ulimit -v 2000000; exec '{}' bench --dir '{}' --payload-bytes 67108864 --batch 65536 --records 65536 --warmup-records 0",
        env!("CARGO_BIN_EXE_felix-storage"),
        dir.display()
    );
    let out = Command::new("sh").arg("-c").arg(&script).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!dir.exists(), "--dir created for a run that cannot start");
}
