//! Issue 20 through the binary: `consume --from-time/--until-time`, `dump
//! --from-time` and `dump --json`, and the times of `diff`'s divergent
//! records, on shards whose producer clock went backwards mid-segment,
//! repeats a microsecond, and holds a damaged record between.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use felix_codec::format::time::format_micros;
use felix_engine::shard::Append;
use felix_engine::{Config, OsIo, Shard};
use serde_json::Value;

mod support;
use support::{bin, err, out, run};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const SHARD: &str = "acme/default/orders/0";

/// `consume ROOT --shard SHARD EXTRA…`: its exit code, the offsets it
/// printed, and its stderr.
fn consume_offsets(root: &Path, extra: &[&str]) -> (Option<i32>, Vec<u64>, String) {
    let mut args = vec!["consume", s(root), "--shard", SHARD];
    args.extend_from_slice(extra);
    let o = run(&args);
    let printed: Vec<u64> = out(&o).lines().map(|l| l.split('\t').next().unwrap().parse().unwrap()).collect();
    (o.status.code(), printed, err(&o))
}
const DIR: &str = "acme_default_orders_0-0d3aed4b998d2798";

/// 2026-12-01T14:00:00Z.
const T0: u64 = 1_796_133_600_000_000;

/// Seconds after `T0`, offset by offset: rising, then a clock that goes
/// back mid-segment (offset 5: 14:01:30, below offset 2's 14:02), two
/// records in the same microsecond (7 and 8: 14:05), rising again.
const SECONDS: [u64; 12] = [0, 60, 120, 180, 240, 90, 90, 300, 300, 360, 420, 480];

fn at(seconds: u64) -> u64 {
    T0 + seconds * 1_000_000
}

/// A shard under `root` holding `SECONDS`' records (payload `record-N`), in
/// segments of about four records each.
fn write_shard(root: &Path, stamps: &[u64]) -> PathBuf {
    let dir = root.join(DIR);
    let config = Config { segment_size_bytes: 200, ..Config::default() };
    let (shard, _) = Shard::open_dir(Arc::new(OsIo::new()), &dir, config).unwrap();
    for (i, &ts) in stamps.iter().enumerate() {
        let payload = format!("record-{i}").into_bytes();
        let pending = shard.write(&[Append { payload: &payload, timestamp_micros: Some(ts) }]).unwrap();
        shard.commit(&pending).unwrap();
    }
    shard.close().unwrap();
    dir
}

fn stamps() -> Vec<u64> {
    SECONDS.iter().map(|&s| at(s)).collect()
}

/// Kafka's rule by a linear scan: the first offset whose timestamp is ≥ `t`.
fn kafka(stamps: &[u64], t: u64) -> Option<u64> {
    stamps.iter().position(|&ts| ts >= t).map(|i| i as u64)
}

/// The offsets `consume ARGS --format json` prints (exit 0 asserted).
fn consumed(root: &Path, extra: &[&str]) -> Vec<u64> {
    let mut args = vec!["consume", s(root), "--shard", SHARD, "--format", "json"];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", err(&o));
    out(&o).lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["offset"].as_u64().unwrap()).collect()
}

/// Every segment file of the shard in `dir`, oldest first.
fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut logs: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "log")).collect();
    logs.sort();
    logs
}

#[test]
fn consume_from_a_time_starts_where_kafka_s_rule_says_across_a_clock_that_went_back() {
    let tmp = tempfile::tempdir().unwrap();
    let stamps = stamps();
    let dir = write_shard(tmp.path(), &stamps);
    assert!(segments(&dir).len() >= 3, "the records span several segments");
    let all: Vec<u64> = (0..stamps.len() as u64).collect();
    // 14:01:30 is first reached at offset 2 (14:02), not at offset 5, stamped
    // 14:01:30 itself: offset order, not time order.
    assert_eq!(consumed(tmp.path(), &["--from-time", "2026-12-01T14:01:30Z"]), all[2..]);
    // Equal timestamps: the first of them.
    assert_eq!(consumed(tmp.path(), &["--from-time", "2026-12-01T14:05:00Z", "--max", "1"]), [7]);
    // An offset, @MICROS, lower-case t and z, and fractions name the same instants.
    assert_eq!(consumed(tmp.path(), &["--from-time", "2026-12-01T16:03:00+02:00"]), all[3..]);
    assert_eq!(consumed(tmp.path(), &["--from-time", &format!("@{}", at(180))]), all[3..]);
    assert_eq!(consumed(tmp.path(), &["--from-time", "2026-12-01t14:02:59.999999z"]), all[3..]);
    assert_eq!(consumed(tmp.path(), &["--from-time", &format!("@{}", at(180) + 1)]), all[4..]);
    // Every instant around every stamp, against a linear scan.
    for &ts in &stamps {
        for t in [ts - 1, ts, ts + 1] {
            let want: Vec<u64> = kafka(&stamps, t).map_or(vec![], |o| all[o as usize..].to_vec());
            assert_eq!(consumed(tmp.path(), &["--from-time", &format!("@{t}")]), want, "@{t}");
        }
    }
}

#[test]
fn consume_until_a_time_stops_before_the_offset_that_time_starts_at() {
    let tmp = tempfile::tempdir().unwrap();
    let stamps = stamps();
    write_shard(tmp.path(), &stamps);
    // From 14:01:30 (offset 2) until 14:05 (offset 7): 2..7, the two records
    // stamped 14:01:30 (5 and 6) among them — they lie between in offset order.
    assert_eq!(consumed(tmp.path(), &["--from-time", "2026-12-01T14:01:30Z", "--until-time", "2026-12-01T14:05:00Z"]), [2, 3, 4, 5, 6]);
    // Until 14:01:30 stops at offset 2, before the clock went back: 5 and 6
    // (stamped 14:01:30) are not printed, as --from-time 14:01:30 starts at 2.
    assert_eq!(consumed(tmp.path(), &["--until-time", "2026-12-01T14:01:30Z"]), [0, 1]);
    // --from past the offset --until-time names: nothing — even where the
    // records from there are stamped before it (5 and 6, 14:01:30 < 14:04).
    assert!(consumed(tmp.path(), &["--from", "9", "--until-time", "2026-12-01T14:05:00Z"]).is_empty());
    assert!(consumed(tmp.path(), &["--from", "5", "--until-time", "2026-12-01T14:04:00Z"]).is_empty());
    // --until-time before --from-time: nothing; --until-time past every record: to the end.
    assert!(consumed(tmp.path(), &["--from-time", "2026-12-01T14:05:00Z", "--until-time", "2026-12-01T14:04:00Z"]).is_empty());
    assert_eq!(consumed(tmp.path(), &["--from", "10", "--until-time", "2030-01-01T00:00:00Z"]), [10, 11]);
    // Against a linear scan, every pair of instants around the stamps.
    let around: Vec<u64> = stamps.iter().flat_map(|&t| [t - 1, t, t + 1]).collect();
    for &from in around.iter().step_by(2) {
        for &until in around.iter().step_by(3) {
            let (f, u) = (kafka(&stamps, from).unwrap_or(u64::MAX), kafka(&stamps, until).unwrap_or(stamps.len() as u64));
            let want: Vec<u64> = (f..u.max(f)).filter(|&o| o < stamps.len() as u64).collect();
            let got = consumed(tmp.path(), &["--from-time", &format!("@{from}"), "--until-time", &format!("@{until}")]);
            assert_eq!(got, want, "@{from} until @{until}");
        }
    }
}

#[test]
fn a_time_past_every_record_prints_nothing_and_says_so_on_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    write_shard(tmp.path(), &stamps());
    let o = run(&["consume", s(tmp.path()), "--shard", SHARD, "--from-time", "2026-12-01T14:08:00.000001Z"]);
    assert_eq!((o.status.code(), out(&o).as_str()), (Some(0), ""));
    assert!(err(&o).contains("no record is at or after 2026-12-01T14:08:00.000001Z (--from-time): nothing to print"), "{}", err(&o));
    // u64::MAX reaches no record here.
    let o = run(&["consume", s(tmp.path()), "--shard", SHARD, "--from-time", &format!("@{}", u64::MAX)]);
    assert_eq!((o.status.code(), out(&o).as_str()), (Some(0), ""));
}

#[test]
fn a_bad_time_is_refused_naming_the_flag_and_the_character() {
    let tmp = tempfile::tempdir().unwrap();
    write_shard(tmp.path(), &stamps());
    let cases: [(&str, &str, &str); 8] = [
        (
            "--from-time",
            "2026-12-01 14:03:00Z",
            "--from-time \"2026-12-01 14:03:00Z\": character 11 (a space): expected 'T' between the date and the time",
        ),
        (
            "--until-time",
            "2026-12-01T14:03:00",
            "--until-time \"2026-12-01T14:03:00\": the text ends after character 19: expected 'Z' or an offset",
        ),
        ("--from-time", "2026-02-30T00:00:00Z", "character 9 ('3'): day 30 is out of range 1 to 28"),
        ("--from-time", "1969-12-31T23:59:59Z", "character 1 ('1'): the time is before 1970-01-01T00:00:00Z"),
        ("--from-time", "@18446744073709551616", "character 2 ('1'): the number is past 18446744073709551615 microseconds"),
        ("--from-time", "2026-12-01T14:03:00.1234567Z", "character 27 ('7'): more than 6 digits after the point"),
        (
            "--until-time",
            "2026-12-01T14:03:00\u{1b}[2J",
            "\"2026-12-01T14:03:00\\u{1b}[2J\": character 20 (U+001B): expected 'Z' or an offset",
        ),
        ("--from-time", "2026-12-01T14:03:00\u{202e}Z", "character 20 (U+202E)"),
    ];
    for (flag, value, says) in cases {
        let o = run(&["consume", s(tmp.path()), "--shard", SHARD, flag, value]);
        assert_eq!(o.status.code(), Some(2), "{value}");
        assert!(err(&o).contains(says), "{value}: {}", err(&o));
        assert!(!err(&o).contains('\u{1b}') && !err(&o).contains('\u{202e}'), "nothing raw reaches the terminal");
        assert_eq!(out(&o), "");
    }
    let log = segments(&tmp.path().join(DIR))[0].clone();
    let o = run(&["dump", s(&log), "--from-time", "14:03"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("--from-time \"14:03\": character 3 (':'): expected a digit"), "{}", err(&o));
    // --from and --from-time (--from-offset and --from-time) are one or the other.
    let o = run(&["consume", s(tmp.path()), "--shard", SHARD, "--from", "1", "--from-time", "@0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("'--from <FROM>' cannot be used with '--from-time <TIME>'"), "{}", err(&o));
    let o = run(&["dump", s(&log), "--from-offset", "1", "--from-time", "@0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("cannot be used with"), "{}", err(&o));
}

/// `dump FILE --json ARGS`: its exit code and its lines, each parsed.
fn dump_json(log: &Path, extra: &[&str]) -> (Option<i32>, Vec<Value>) {
    let mut args = vec!["dump", s(log), "--json"];
    args.extend_from_slice(extra);
    let o = run(&args);
    let lines = out(&o).lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    (o.status.code(), lines)
}

/// The offsets of a dump's record lines.
fn offsets(lines: &[Value]) -> Vec<u64> {
    lines.iter().filter(|l| l["type"] == "record").map(|l| l["offset"].as_u64().unwrap()).collect()
}

/// One segment holding all of `SECONDS`' records.
fn one_segment(root: &Path) -> PathBuf {
    let dir = root.join(DIR);
    let (shard, _) = Shard::open_dir(Arc::new(OsIo::new()), &dir, Config::default()).unwrap();
    for (i, &ts) in stamps().iter().enumerate() {
        let payload = format!("record-{i}").into_bytes();
        let pending = shard.write(&[Append { payload: &payload, timestamp_micros: Some(ts) }]).unwrap();
        shard.commit(&pending).unwrap();
    }
    shard.close().unwrap();
    segments(&dir).remove(0)
}

#[test]
fn dump_json_gives_a_line_per_record_in_words_a_program_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let log = one_segment(tmp.path());
    let (code, lines) = dump_json(&log, &[]);
    assert_eq!(code, Some(0));
    assert_eq!(lines[0]["type"], "segment");
    assert_eq!((lines[0]["file"].as_str(), lines[0]["base_offset"].as_u64()), (Some(s(&log)), Some(0)));
    assert_eq!(offsets(&lines), (0..12).collect::<Vec<u64>>());
    let mut next = 32;
    for (i, l) in lines[1..].iter().enumerate() {
        let ts = at(SECONDS[i]);
        assert_eq!(l["timestamp_micros"].as_u64(), Some(ts));
        assert_eq!(l["time"].as_str(), Some(format_micros(ts).as_str()));
        let len = format!("record-{i}").len() as u64;
        assert_eq!((l["start"].as_u64(), l["end"].as_u64(), l["payload_len"].as_u64()), (Some(next), Some(next + 28 + len), Some(len)));
        next += 28 + len;
        for crc in ["header_crc", "checksum"] {
            let hex = l[crc].as_str().unwrap();
            assert!(hex.len() == 8 && hex.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_lowercase()), "{l}");
        }
        assert!(!l.to_string().contains("record-"), "no payload bytes in a line");
    }
    assert_eq!(lines[6]["time"], "2026-12-01T14:01:30.000000Z", "offset 5: the clock went back");
    assert_eq!(lines.len(), 13, "a clean segment: no finding");
    // --from-time: Kafka's rule inside the segment; the same lines from there.
    let (_, from) = dump_json(&log, &["--from-time", "2026-12-01T14:01:30Z"]);
    assert_eq!(offsets(&from), (2..12).collect::<Vec<u64>>());
    assert_eq!(from[1..], lines[3..]);
    let (_, equal) = dump_json(&log, &["--from-time", "2026-12-01T16:05:00+02:00"]);
    assert_eq!(offsets(&equal), (7..12).collect::<Vec<u64>>());
    // Past every record: the segment line only (the text says so).
    let (code, none) = dump_json(&log, &["--from-time", "2026-12-01T15:00:00Z"]);
    assert_eq!((code, none.len()), (Some(0), 1));
    let text = out(&run(&["dump", s(&log), "--from-time", "2026-12-01T15:00:00Z"]));
    assert!(text.contains("is at or after 2026-12-01T15:00:00.000000Z (--from-time)"), "{text}");
    // --max-bytes: where it stopped, and from where to go on.
    let (_, cut) = dump_json(&log, &["--from-time", "2026-12-01T14:01:30Z", "--max-bytes", "16"]);
    assert_eq!(offsets(&cut), [2, 3]);
    let last = cut.last().unwrap();
    assert_eq!((last["type"].as_str(), last["next_offset"].as_u64(), last["max_bytes"].as_u64()), (Some("stopped"), Some(4), Some(16)));
    assert_eq!(last["payload_bytes"].as_u64(), Some(16));
}

/// Flips a byte `into` bytes past record `offset`'s first byte in `log`.
fn flip(log: &Path, lines: &[Value], offset: u64, into: u64) {
    let start = lines.iter().find(|l| l["type"] == "record" && l["offset"] == offset).unwrap()["start"].as_u64().unwrap();
    let mut bytes = std::fs::read(log).unwrap();
    bytes[(start + into) as usize] ^= 0x5A;
    std::fs::write(log, bytes).unwrap();
}

#[test]
fn dump_from_a_time_across_a_damaged_record_says_the_damage_in_json() {
    let tmp = tempfile::tempdir().unwrap();
    let log = one_segment(tmp.path());
    let (_, clean) = dump_json(&log, &[]);
    // Offset 4's payload rots (its header, timestamp included, still verifies).
    flip(&log, &clean, 4, 30);
    // The seek walks verified headers: 4 (14:04) is below 14:05 and is passed over; 7 is the answer.
    let (code, lines) = dump_json(&log, &["--from-time", "2026-12-01T14:05:00Z"]);
    assert_eq!((code, offsets(&lines)), (Some(0), (7..12).collect::<Vec<u64>>()));
    // From 14:03 the walk reaches 4 and stops there: the finding, in inspect --json's words.
    let (code, lines) = dump_json(&log, &["--from-time", "2026-12-01T14:03:00Z"]);
    assert_eq!((code, offsets(&lines)), (Some(1), vec![3]));
    let f = lines.last().unwrap();
    assert_eq!((f["type"].as_str(), f["kind"].as_str(), f["offset"].as_u64()), (Some("finding"), Some("RecordChecksum"), Some(4)));
    assert_eq!((f["position"].as_u64(), f["end"].as_u64()), (clean[5]["start"].as_u64(), clean[5]["end"].as_u64()));
    assert_eq!(f["file"].as_str(), Some(s(&log)));
    let report: Value = serde_json::from_slice(&run(&["inspect", "--json", s(&log)]).stdout).unwrap();
    let listed = &report["files"][0]["findings"][0];
    assert_eq!((&listed["kind"], &listed["position"], &listed["message"]), (&f["kind"], &f["position"], &f["message"]), "inspect's words");
    // Offset 4's header rots: no header past it verifies, so a seek past it stops there, exit 1.
    flip(&log, &clean, 4, 10);
    let (code, lines) = dump_json(&log, &["--from-time", "2026-12-01T14:05:00Z"]);
    assert_eq!((code, offsets(&lines)), (Some(1), vec![]));
    assert_eq!((lines[1]["type"].as_str(), lines[1]["kind"].as_str()), (Some("finding"), Some("RecordHeaderChecksum")));
    // Before it, the seek is not disturbed.
    let (code, lines) = dump_json(&log, &["--from-time", "2026-12-01T14:01:00Z", "--max-bytes", "1"]);
    assert_eq!((code, offsets(&lines)), (Some(0), vec![1]));
}

#[test]
fn dump_json_escapes_a_hostile_file_name_as_json_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let log = one_segment(tmp.path());
    let hostile = tmp.path().join("evil\u{1b}[2J\n\"quote\u{202e}.log");
    std::fs::copy(&log, &hostile).unwrap();
    let o = run(&["dump", s(&hostile), "--json", "--max-bytes", "1"]);
    let text = out(&o);
    assert_eq!(text.lines().count(), 3, "one line each: segment, record, stopped: {text}");
    assert!(text.contains("evil\\u001b[2J\\n\\\"quote\u{202e}.log"), "serde_json's escapes, no terminal escaping inside JSON: {text}");
    for l in text.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["file"].as_str(), Some(s(&hostile)), "the name reads back exactly");
    }
}

#[test]
fn consume_by_time_on_a_shard_with_a_damaged_record_between_stops_at_the_damage_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_shard(tmp.path(), &stamps());
    let logs = segments(&dir);
    let (_, lines) = dump_json(&logs[1], &[]);
    assert_eq!(offsets(&lines), [4, 5, 6, 7], "the clock goes back inside this segment, at 5");
    flip(&logs[1], &lines, 5, 30);
    let consume = |extra: &[&str]| consume_offsets(tmp.path(), extra);
    // Before the damage: as on a clean shard, then the damage, named, exit 1.
    let (code, printed, said) = consume(&["--from-time", "2026-12-01T14:01:30Z"]);
    assert_eq!((code, printed), (Some(1), vec![2, 3, 4]));
    assert!(said.contains("RecordChecksum") && said.contains("record offset 5"), "{said}");
    // Stopping before it: clean, exit 0.
    let (code, printed, _) = consume(&["--from-time", "2026-12-01T14:01:30Z", "--until-time", "2026-12-01T14:04:00Z"]);
    assert_eq!((code, printed), (Some(0), vec![2, 3]));
    // A time only records past the damage reach: reads stop at the damage,
    // which is said (exit 1) — never "no record" with exit 0.
    let (code, printed, said) = consume(&["--from-time", "2026-12-01T14:05:00Z"]);
    assert_eq!((code, printed), (Some(1), vec![]));
    assert!(said.contains("RecordChecksum") && !said.contains("nothing to print"), "{said}");
}

/// A replica under `root` holding `(payload, seconds after T0)` records.
fn replica(root: &Path, records: &[(&str, u64)]) -> PathBuf {
    let dir = root.join(DIR);
    let (shard, _) = Shard::open_dir(Arc::new(OsIo::new()), &dir, Config { segment_size_bytes: 200, ..Config::default() }).unwrap();
    for &(payload, seconds) in records {
        let pending = shard.write(&[Append { payload: payload.as_bytes(), timestamp_micros: Some(at(seconds)) }]).unwrap();
        shard.commit(&pending).unwrap();
    }
    shard.close().unwrap();
    dir
}

#[test]
fn diff_says_when_each_side_s_divergent_records_were_written() {
    let tmp = tempfile::tempdir().unwrap();
    let common = [("c0", 0), ("c1", 60), ("c2", 120)];
    // From offset 3 they differ: A's clock goes back at 5 (to 14:02:30),
    // B's records rise; offset 6 is the same on both (not divergent).
    let a: Vec<(&str, u64)> = common.iter().copied().chain([("a3", 180), ("a4", 240), ("a5", 150), ("x6", 400), ("a7", 200)]).collect();
    let b: Vec<(&str, u64)> = common.iter().copied().chain([("b3", 181), ("b4", 185), ("b5", 190), ("x6", 400), ("b7", 195)]).collect();
    let (da, db) = (replica(&tmp.path().join("a"), &a), replica(&tmp.path().join("b"), &b));
    let o = run(&["diff", s(&da), s(&db), "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["first_divergent_offset"].as_u64(), v["divergent_records"].as_u64()), (Some(3), Some(4)));
    let span = |side: &str| {
        let t = &v["divergent_time"][side];
        [&t["first"], &t["last"], &t["min"], &t["max"]].map(|x| x.as_u64().unwrap())
    };
    assert_eq!(span("a"), [at(180), at(200), at(150), at(240)]);
    assert_eq!(span("b"), [at(181), at(195), at(181), at(195)]);
    assert_eq!(v["divergence"]["a"]["timestamp_micros"].as_u64(), Some(at(180)), "the first divergent record's time, on each side");
    assert_eq!(v["divergence"]["b"]["timestamp_micros"].as_u64(), Some(at(181)));
    let text = out(&run(&["diff", s(&da), s(&db)]));
    let want = "divergent records' times: A's written 2026-12-01T14:03:00.000000Z to 2026-12-01T14:03:20.000000Z \
                (timestamps go back: earliest 2026-12-01T14:02:30.000000Z, latest 2026-12-01T14:04:00.000000Z); \
                B's written 2026-12-01T14:03:01.000000Z to 2026-12-01T14:03:15.000000Z\n";
    assert!(text.contains(want), "{text}");
    // Identical replicas: no times, `null` in the JSON.
    let same = run(&["diff", s(&da), s(&da), "--json"]);
    let v: Value = serde_json::from_slice(&same.stdout).unwrap();
    assert_eq!((same.status.code(), &v["divergent_time"]), (Some(0), &Value::Null));
    assert!(!out(&run(&["diff", s(&da), s(&da)])).contains("divergent records' times"));
}

#[test]
fn consume_by_time_reads_up_to_a_rotted_header_in_a_sealed_segment_when_the_answer_lies_before_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_shard(tmp.path(), &stamps());
    let logs = segments(&dir);
    assert!(logs.len() >= 3, "segment 1 is sealed");
    let (_, lines) = dump_json(&logs[1], &[]);
    assert_eq!(offsets(&lines), [4, 5, 6, 7]);
    // Offset 5's header rots: recovery refuses; reads give 0..=4, then the damage.
    flip(&logs[1], &lines, 5, 10);
    let consume = |extra: &[&str]| consume_offsets(tmp.path(), extra);
    // 14:03:30's answer is offset 4 (14:04), in the damaged segment but before
    // the damage: printed as `--from 4` prints it, then the damage, exit 1.
    let (code, printed, said) = consume(&["--from-time", "2026-12-01T14:03:30Z"]);
    assert_eq!((code, printed), (Some(1), vec![4]), "{said}");
    assert!(said.contains("RecordHeaderChecksum"), "{said}");
    // Until a time only records past the damage reach: every readable record, then the damage.
    let (code, printed, said) = consume(&["--from-time", "2026-12-01T14:01:00Z", "--until-time", "2026-12-01T14:04:30Z"]);
    assert_eq!((code, printed), (Some(1), vec![1, 2, 3, 4]), "{said}");
    // Stopping before the damage: clean.
    let (code, printed, _) = consume(&["--until-time", "2026-12-01T14:04:00Z"]);
    assert_eq!((code, printed), (Some(0), vec![0, 1, 2, 3]));
    // A time only records past the damage reach: the damage, never "nothing to print".
    let (code, printed, said) = consume(&["--from-time", "2026-12-01T14:05:00Z"]);
    assert_eq!((code, printed), (Some(1), vec![]));
    assert!(said.contains("RecordHeaderChecksum") && !said.contains("nothing to print"), "{said}");
}

#[test]
fn a_time_that_is_not_utf8_is_refused_naming_the_flag_and_the_character() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = tempfile::tempdir().unwrap();
    write_shard(tmp.path(), &stamps());
    let log = segments(&tmp.path().join(DIR))[0].clone();
    let value = std::ffi::OsStr::from_bytes(b"2026-12\xff-01T14:03:00Z");
    for (args, flag) in [
        (
            vec!["consume".as_ref(), tmp.path().as_os_str(), "--shard".as_ref(), SHARD.as_ref(), "--from-time".as_ref(), value],
            "--from-time",
        ),
        (
            vec!["consume".as_ref(), tmp.path().as_os_str(), "--shard".as_ref(), SHARD.as_ref(), "--until-time".as_ref(), value],
            "--until-time",
        ),
        (vec!["dump".as_ref(), log.as_os_str(), "--from-time".as_ref(), value], "--from-time"),
    ] {
        let o = Command::new(bin()).args(&args).output().unwrap();
        assert_eq!((o.status.code(), out(&o).as_str()), (Some(2), ""));
        let said = err(&o);
        assert!(said.contains(&format!("{flag} \"2026-12\u{fffd}-01T14:03:00Z\": character 8 is not UTF-8 (byte 0xFF)")), "{said}");
    }
}
