//! `felix-storage diff` as a process, on shards the engine wrote: where two
//! replicas diverge, what blocks the comparison, and what never appears in
//! its output (payload bytes, raw control characters).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use felix_codec::format::record::encode_record;
use felix_codec::format::segment_header::SegmentHeader;
use felix_engine::{Config, OsIo, Shard};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_felix-storage")
}

fn run(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

fn diff_json(a: &Path, b: &Path) -> (Option<i32>, serde_json::Value) {
    let o = run(&["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--json"]);
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code(), v)
}

const SECRET: &str = "PAYLOAD-BYTES-NEVER-SHOWN";

fn payload(side: &str, i: u64) -> Vec<u8> {
    format!("{SECRET}-{side}-{i}").into_bytes()
}

fn small_segments() -> Config {
    Config { segment_size_bytes: 600, ..Config::default() }
}

/// Appends `range` (payloads named by `side`) to the shard in `dir`, in
/// generation `generation` when given.
fn append(dir: &Path, generation: Option<u64>, side: &str, range: std::ops::Range<u64>) {
    let (shard, _) = Shard::open_dir(Arc::new(OsIo::new()), dir, small_segments()).unwrap();
    if let Some(g) = generation {
        shard.begin_generation(g).unwrap();
    }
    for i in range {
        shard.append(&[&payload(side, i)]).unwrap();
    }
    shard.sync().unwrap();
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "writer.lock" {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Replicas A and B of the orders shard, under `tmp` (not yet written).
fn two_replicas(tmp: &Path) -> (PathBuf, PathBuf) {
    let shard = "acme_default_orders_0-0d3aed4b998d2798";
    (tmp.join("a").join(shard), tmp.join("b").join(shard))
}

/// What a command printed, both streams.
fn said(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// After following recover's words on A: recover succeeds, inspect finds
/// nothing, and A is B again.
fn recovers_clean_and_matches(a: &Path, b: &Path) {
    let o = run(&["recover", a.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));
    let o = run(&["inspect", a.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", said(&o));
    assert_eq!(diff_json(b, a).0, Some(0));
}

/// Replica A with 50 records in generation 1; B begins as a byte-for-byte
/// copy of them (as a follower's log is); then A appends 10 more in
/// generation 1 while B, now leader, appends 10 different ones in generation 2.
fn diverged(tmp: &Path) -> (PathBuf, PathBuf) {
    let a = tmp.join("a/acme_default_orders_0-0d3aed4b998d2798");
    let b = tmp.join("b/acme_default_orders_0-0d3aed4b998d2798");
    append(&a, Some(1), "common", 0..50);
    copy_dir(&a, &b);
    append(&a, None, "a", 50..60);
    append(&b, Some(2), "b", 50..60);
    (a, b)
}

#[test]
fn a_follower_copy_then_ten_different_each_diverges_at_50_exit_1() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = diverged(tmp.path());
    let (code, v) = diff_json(&a, &b);
    assert_eq!(code, Some(1));
    assert_eq!(v["diff_version"], 1);
    assert_eq!(v["identical"], false);
    assert_eq!(v["first_divergent_offset"], 50);
    assert_eq!(v["divergent_records"], 10);
    assert_eq!(v["common_range"], serde_json::json!({"from": 0, "to": 60}));
    for side in ["a", "b"] {
        assert_eq!(v[side]["first_offset"], 0);
        assert_eq!(v[side]["next_offset"], 60);
        assert_eq!(v[side]["findings"], serde_json::json!([]));
    }
    assert_eq!(v["a"]["epochs"], serde_json::json!([[1, 0]]));
    assert_eq!(v["b"]["epochs"], serde_json::json!([[1, 0], [2, 50]]));
    // The leader-epoch rule, both ways: A (generation 1 ends at 50 on B) and
    // B (generation 1 ends at 60 on A, but B's own generation 2 starts at 50).
    assert_eq!((v["truncate_a_to"].as_u64(), v["truncate_b_to"].as_u64()), (Some(50), Some(50)));
    let d = &v["divergence"];
    assert_ne!(d["a"]["checksum"], d["b"]["checksum"]);
    assert_eq!(d["a"]["payload_len"].as_u64().unwrap() as usize, payload("a", 50).len());
    // The text says the same, and neither ever carries a payload byte.
    let text = run(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    let out = String::from_utf8(text.stdout).unwrap();
    assert_eq!(text.status.code(), Some(1));
    assert!(out.contains("FIRST DIVERGENT OFFSET 50:"), "{out}");
    assert!(out.contains("A truncates to 50 (drops offsets 50..=59)"), "{out}");
    // Offsets in the words `inspect` uses, the last one included (the JSON's ranges stay half-open).
    assert!(out.contains("common range: offsets 0..=59 (60 records compared)"), "{out}");
    assert!(out.contains(": offsets 0..=59 (60 intact)"), "{out}");
    let json = run(&["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--json"]).stdout;
    for shown in [out.as_bytes(), &json] {
        assert!(!String::from_utf8_lossy(shown).contains(SECRET), "a payload leaked into the diff");
    }
}

#[test]
fn identical_replicas_exit_0_and_roots_with_shard_pick_one() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = diverged(tmp.path());
    let c = tmp.path().join("c/acme_default_orders_0-0d3aed4b998d2798");
    copy_dir(&a, &c);
    let (code, v) = diff_json(&a, &c);
    assert_eq!((code, v["identical"].as_bool(), v["compared_records"].as_u64()), (Some(0), Some(true), Some(60)));
    assert_eq!((v["only_a"].as_array().unwrap().len(), v["only_b"].as_array().unwrap().len()), (0, 0));
    let roots = [tmp.path().join("a"), tmp.path().join("c")].map(|p| p.to_str().unwrap().to_owned());
    let o = run(&["diff", &roots[0], &roots[1], "--shard", "acme/default/orders/0"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).ends_with("identical\n"));
    // A root without --shard is named as such, exit 2.
    let o = run(&["diff", &roots[0], &roots[1]]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--shard"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_torn_tail_is_named_as_damage_not_a_divergence() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = diverged(tmp.path());
    let t = tmp.path().join("t/acme_default_orders_0-0d3aed4b998d2798");
    copy_dir(&a, &t);
    let newest =
        std::fs::read_dir(&t).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "log")).max().unwrap();
    let len = std::fs::metadata(&newest).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&newest).unwrap().set_len(len - 5).unwrap();
    let (code, v) = diff_json(&a, &t);
    assert_eq!(code, Some(1));
    assert_eq!(v["first_divergent_offset"], serde_json::Value::Null, "a torn tail is not a divergence");
    assert_eq!(v["b"]["blocked"], true);
    assert_eq!(v["b"]["next_offset"], 59);
    assert_eq!(v["b"]["findings"][0]["kind"], "Truncated");
    assert_eq!(v["b"]["findings"][0]["offset"], 59);
    assert_eq!(v["only_a"], serde_json::json!([{"from": 59, "to": 60}]));
    assert_eq!(v["compared_records"], 59);
    let out = String::from_utf8(run(&["diff", a.to_str().unwrap(), t.to_str().unwrap()]).stdout).unwrap();
    assert!(out.contains("B damage (blocks the comparison)") && out.contains("Truncated at byte"), "{out}");
}

/// Rot in an older segment: `recover` refuses and says what would make it
/// succeed — the file from a healthy replica — and doing exactly that does.
#[test]
fn following_recovers_words_on_a_refused_shard_makes_it_succeed() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = two_replicas(tmp.path());
    append(&a, Some(1), "common", 0..50);
    copy_dir(&a, &b);
    let oldest = a.join("00000000000000000000.log");
    let mut bytes = std::fs::read(&oldest).unwrap();
    let needle = payload("common", 3);
    let at = bytes.windows(needle.len()).position(|w| w == needle.as_slice()).unwrap();
    bytes[at + 2] ^= 0x20;
    std::fs::write(&oldest, bytes).unwrap();
    let o = run(&["recover", a.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", said(&o));
    assert!(
        said(&o).contains(
            "recover refuses until 00000000000000000000.log (the damaged record at offset 3) is replaced: copy that file from a \
             healthy replica of this shard (`felix-storage diff` against it shows which offsets this copy lost and whether that replica holds them), after moving this \
             replica's copy out of the shard's folder as evidence; then run recover again"
        ),
        "{}",
        said(&o)
    );
    let (code, v) = diff_json(&b, &a);
    assert_eq!((code, &v["b"]["findings"][0]["offset"]), (Some(1), &serde_json::json!(3)), "{v}");
    std::fs::rename(&oldest, tmp.path().join("evidence.log")).unwrap();
    std::fs::copy(b.join("00000000000000000000.log"), &oldest).unwrap();
    recovers_clean_and_matches(&a, &b);
}

/// A segment lost from the middle of a shard (issue 18's second review,
/// F1): the words name the offsets to restore, not the whole file after
/// the gap, and restoring that segment from the replica makes recovery succeed.
#[test]
fn a_segment_lost_from_the_middle_is_restored_from_a_replica_as_recover_says() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = two_replicas(tmp.path());
    append(&a, Some(1), "common", 0..50);
    copy_dir(&a, &b);
    let mut logs: Vec<PathBuf> =
        std::fs::read_dir(&a).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "log")).collect();
    logs.sort();
    assert!(logs.len() >= 3, "small segments: {logs:?}");
    std::fs::remove_file(&logs[1]).unwrap();
    let o = run(&["inspect", a.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", said(&o));
    let text = said(&o);
    let missing = text.split("verdict: offsets ").nth(1).and_then(|t| t.split(' ').next()).unwrap_or_else(|| panic!("{text}"));
    assert!(
        text.contains(&format!("verdict: offsets {missing} are missing between two segments (not repairable: fetch them from a replica)")),
        "{text}"
    );
    let next = logs[2].file_name().unwrap().to_str().unwrap();
    let o = run(&["recover", a.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", said(&o));
    assert!(
        said(&o).contains(&format!(
            "recover refuses until the segment with offsets {missing} (missing before {next}) is restored: copy the segment \
             holding them from a healthy replica of this shard"
        )),
        "{}",
        said(&o)
    );
    assert!(logs[2].exists() && !said(&o).contains("as evidence"), "the file after the gap is whole and stays: {}", said(&o));
    std::fs::copy(b.join(logs[1].file_name().unwrap()), &logs[1]).unwrap();
    recovers_clean_and_matches(&a, &b);
}

/// The newest segments lost (issue 18's third review, F4 and F5): the words
/// say so — an epochs file naming a generation past the log's end, or an
/// index here without its segment — instead of "a damaged epochs file" to
/// copy (the replica's is the same) or "clean"; copying the segments back
/// from the replica, as the words say, makes everything pass.
#[test]
fn lost_newest_segments_are_named_and_restored_from_a_replica() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = two_replicas(tmp.path());
    append(&a, Some(1), "common", 0..50);
    append(&a, Some(2), "more", 50..60);
    copy_dir(&a, &b);
    let report =
        |dir: &Path| -> serde_json::Value { serde_json::from_slice(&run(&["inspect", "--json", dir.to_str().unwrap()]).stdout).unwrap() };
    // Every segment holding offset 49 or later goes, logs and indexes.
    let r = report(&a);
    let late: Vec<String> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "segment" && f["last_offset"].as_u64().is_some_and(|l| l >= 49))
        .map(|f| Path::new(f["path"].as_str().unwrap()).file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    assert!(!late.is_empty() && late.len() < 5, "{late:?}");
    for log in &late {
        std::fs::remove_file(a.join(log)).unwrap();
        std::fs::remove_file(a.join(log.replace(".log", ".index"))).unwrap();
    }
    let o = run(&["inspect", a.to_str().unwrap()]);
    assert!(
        said(&o).contains(
            "verdict: the log's newest segments, which may be lost: the epochs file names a generation past its end (not repairable"
        ),
        "{}",
        said(&o)
    );
    let o = run(&["recover", "--dry-run", a.to_str().unwrap()]);
    assert!(
        said(&o).contains("epochs names a generation that starts past the log's end: the log may have lost its newest segments"),
        "{}",
        said(&o)
    );
    for log in &late {
        std::fs::copy(b.join(log), a.join(log)).unwrap();
    }
    recovers_clean_and_matches(&a, &b);
    // Only the newest log lost, its index left behind: not "clean".
    let newest = late.last().unwrap();
    std::fs::remove_file(a.join(newest)).unwrap();
    let o = run(&["inspect", a.to_str().unwrap()]);
    let text = said(&o);
    assert!(
        text.contains("verdict: the newest segment, whose index is here without it (not repairable: fetch it from a replica)"),
        "{text}"
    );
    assert!(text.contains("newer than every segment here: the newest segment (offsets from "), "{text}");
    std::fs::copy(b.join(newest), a.join(newest)).unwrap();
    assert_eq!(run(&["recover", a.to_str().unwrap()]).status.code(), Some(0));
    assert_eq!(diff_json(&b, &a).0, Some(0));
}

#[test]
fn an_empty_replica_and_a_follower_that_began_mid_log() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = diverged(tmp.path());
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let (code, v) = diff_json(&a, &empty);
    assert_eq!(code, Some(1));
    assert_eq!((v["b"]["first_offset"].clone(), v["b"]["records"].as_u64()), (serde_json::Value::Null, Some(0)));
    assert_eq!(v["common_range"], serde_json::Value::Null);
    assert_eq!(v["only_a"], serde_json::json!([{"from": 0, "to": 60}]));
    assert_eq!(v["first_divergent_offset"], serde_json::Value::Null);
    // A follower whose log begins mid-way (its first segments are gone): the
    // common range starts at its first offset and nothing diverges.
    let m = tmp.path().join("m/acme_default_orders_0-0d3aed4b998d2798");
    copy_dir(&a, &m);
    let mut logs: Vec<PathBuf> =
        std::fs::read_dir(&m).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "log")).collect();
    logs.sort();
    assert!(logs.len() >= 3, "small segments: {logs:?}");
    for old in &logs[..2] {
        std::fs::remove_file(old).unwrap();
        std::fs::remove_file(old.with_extension("index")).unwrap();
    }
    let (code, v) = diff_json(&a, &m);
    assert_eq!(code, Some(1));
    let first = v["b"]["first_offset"].as_u64().unwrap();
    assert!(first > 0);
    assert_eq!(v["common_range"], serde_json::json!({"from": first, "to": 60}));
    assert_eq!(v["only_a"], serde_json::json!([{"from": 0, "to": first}]));
    assert_eq!((v["first_divergent_offset"].clone(), v["b"]["blocked"].as_bool()), (serde_json::Value::Null, Some(false)));
}

#[test]
fn bad_arguments_exit_2_naming_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = diverged(tmp.path());
    let missing = tmp.path().join("nope");
    let file = a.join("epochs");
    let foreign = tmp.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), b"hello").unwrap();
    for (other, says) in [(&missing, "nope"), (&file, "not a directory"), (&foreign, "not a shard directory")] {
        let o = run(&["diff", a.to_str().unwrap(), other.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(says) && err.lines().count() == 1, "{err}");
    }
    let o = run(&["diff", "x", "y", "--shard", "acme/../0"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["diff", "only-one"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn hostile_directory_names_are_escaped_in_the_text() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = diverged(tmp.path());
    let evil = tmp.path().join("evil\x1b[2J\x07\nforged line");
    copy_dir(&a, &evil);
    let o = run(&["diff", a.to_str().unwrap(), evil.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
    assert!(out.contains("evil\\u{1b}[2J\\u{7}"), "{out}");
    let (_, v) = diff_json(&a, &evil);
    assert_eq!(v["b"]["path"].as_str().unwrap(), evil.to_str().unwrap(), "JSON carries the name as data");
}

/// A segment of `n` records of 8-byte payloads from `base`, the payload
/// of offset `o` being `salt ^ o`.
fn write_big(dir: &Path, base: u64, n: u64, salt: impl Fn(u64) -> u64) {
    std::fs::create_dir_all(dir).unwrap();
    let mut out = SegmentHeader::new(base, 1).encode().to_vec();
    out.reserve(usize::try_from(n).unwrap() * 36);
    for o in base..base + n {
        encode_record(o, 1, &(salt(o) ^ o).to_le_bytes(), &mut out).unwrap();
    }
    std::fs::write(dir.join(format!("{base:020}.log")), out).unwrap();
}

/// Runs the binary with its address space limited to `mib` MiB (as
/// `inspect_parallel` does): a diff that held either side would fail.
fn run_limited(mib: u64, args: &[&str]) -> Output {
    let script = format!("ulimit -v {}; exec \"$0\" \"$@\"", mib * 1024);
    Command::new("sh").arg("-c").arg(script).arg(bin()).args(args).output().unwrap()
}

#[test]
fn replicas_of_very_different_sizes_diff_in_bounded_memory() {
    // 3 million records (108 MB) against 2 million that agree on the first
    // million: holding either side's summaries (48 bytes a record) would
    // need far more than the limit.
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    write_big(&a, 0, 3_000_000, |_| 0);
    write_big(&b, 0, 2_000_000, |o| if o < 1_000_000 { 0 } else { 0xFF });
    let o = run_limited(128, &["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["first_divergent_offset"], 1_000_000);
    assert_eq!(v["divergent_records"], 1_000_000);
    assert_eq!(v["only_a"], serde_json::json!([{"from": 2_000_000, "to": 3_000_000}]));
    assert_eq!((v["a"]["records"].as_u64(), v["b"]["records"].as_u64()), (Some(3_000_000), Some(2_000_000)));
    // A missing index is noted on each side, and blocks nothing.
    assert_eq!(v["a"]["blocked"], false);
}

/// The 4 bytes that, appended to `prefix` as the payload of record
/// `offset` published at `timestamp`, give that record the checksum
/// `target`: CRC-32 is affine in its input, so 33 encodings and a solve
/// over GF(2) forge it (what rot or an attacker can do to a 32-bit check).
fn forge_payload(offset: u64, timestamp: u64, prefix: &[u8], target: u32) -> Vec<u8> {
    let checksum = |x: u32| {
        let mut payload = prefix.to_vec();
        payload.extend_from_slice(&x.to_le_bytes());
        let mut out = Vec::new();
        encode_record(offset, timestamp, &payload, &mut out).unwrap();
        u32::from_be_bytes(out[24..28].try_into().unwrap())
    };
    let zero = checksum(0);
    let mut basis: Vec<(u32, u32)> = Vec::new();
    let reduce = |basis: &[(u32, u32)], mut v: u32, mut m: u32| {
        for &(bv, bm) in basis {
            if v ^ bv < v {
                v ^= bv;
                m ^= bm;
            }
        }
        (v, m)
    };
    for i in 0..32 {
        let (v, m) = reduce(&basis, checksum(1 << i) ^ zero, 1 << i);
        if v != 0 {
            basis.push((v, m));
            basis.sort_by_key(|b| std::cmp::Reverse(b.0));
        }
    }
    let (rest, x) = reduce(&basis, target ^ zero, 0);
    assert_eq!(rest, 0, "CRC-32 is affine: every target is reachable");
    let mut payload = prefix.to_vec();
    payload.extend_from_slice(&x.to_le_bytes());
    assert_eq!(checksum(x), target);
    payload
}

#[test]
fn a_record_with_the_same_checksum_but_another_publish_time_or_length_diverges() {
    // Offset 5 on B carries another publish time (and another payload,
    // longer by 4 bytes) under the very checksum A's offset 5 has: a 32-bit
    // checksum is no proof of sameness, and the header fields it covers are
    // right there to compare.
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    let write = |dir: &Path, at5: Option<(u64, Vec<u8>)>| {
        std::fs::create_dir_all(dir).unwrap();
        let mut out = SegmentHeader::new(0, 1).encode().to_vec();
        for o in 0..10u64 {
            match (&at5, o) {
                (Some((ts, p)), 5) => encode_record(o, *ts, p, &mut out).unwrap(),
                _ => encode_record(o, 1_000 + o, &payload("common", o), &mut out).unwrap(),
            }
        }
        std::fs::write(dir.join("00000000000000000000.log"), out).unwrap();
    };
    write(&a, None);
    let mut original = Vec::new();
    encode_record(5, 1_005, &payload("common", 5), &mut original).unwrap();
    let target = u32::from_be_bytes(original[24..28].try_into().unwrap());
    write(&b, Some((9_999_999, forge_payload(5, 9_999_999, &payload("common", 5), target))));
    let (code, v) = diff_json(&a, &b);
    assert_eq!(v["b"]["findings"], serde_json::json!([]), "B's records are all intact");
    assert_eq!(v["first_divergent_offset"], 5, "{v:#}");
    assert_eq!((code, v["identical"].as_bool(), v["divergent_records"].as_u64()), (Some(1), Some(false), Some(1)));
    let d = &v["divergence"];
    assert_eq!(d["a"]["checksum"], d["b"]["checksum"], "the forged checksum matches");
    assert_eq!((d["a"]["timestamp_micros"].as_u64(), d["b"]["timestamp_micros"].as_u64()), (Some(1_005), Some(9_999_999)));
}

#[test]
fn a_felix_name_on_a_fifo_or_a_directory_is_refused_not_skipped() {
    // inspect names these and the engine refuses to open such a shard; a
    // diff that skipped them would call B identical to A while B's newest
    // segment (the directory holds records 60..70) is unread.
    let tmp = tempfile::tempdir().unwrap();
    let (a, _) = diverged(tmp.path());
    for (name, make) in [("fifo", 0), ("dir", 1), ("dangling", 2)] {
        let b = tmp.path().join(name);
        copy_dir(&a, &b);
        let claimed = b.join("00000000000000000099.log");
        match make {
            0 => assert!(Command::new("mkfifo").arg(&claimed).status().unwrap().success()),
            1 => write_big(&claimed, 60, 10, |_| 0),
            _ => std::os::unix::fs::symlink(tmp.path().join("nowhere"), &claimed).unwrap(),
        }
        for (x, y) in [(&a, &b), (&b, &a)] {
            let o = run(&["diff", x.to_str().unwrap(), y.to_str().unwrap(), "--json"]);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{name}: {}{err}", String::from_utf8_lossy(&o.stdout));
            assert!(err.contains("00000000000000000099.log") && err.lines().count() == 1, "{name}: {err}");
            assert!(o.stdout.is_empty(), "{name}: no verdict is printed");
        }
    }
}

#[test]
fn a_writer_that_starts_while_diff_reads_makes_the_torn_tail_a_record_in_flight() {
    // As inspect does: the lock is probed again once the newest segment was
    // read, so a record a writer is mid-way through appending is not damage
    // that blocks the comparison.
    use felix_engine::io::Io as _;
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    write_big(&a, 0, 2, |_| 0);
    write_big(&b, 0, 2, |_| 0);
    let log = b.join("00000000000000000000.log");
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(&[0, 0, 0, 5, 0, 0, 0, 0, 0, 0]);
    std::fs::write(&log, bytes).unwrap();
    let files = |d: &Path| felix_engine::tools::diff::replica_files(&OsIo::new(), d).unwrap();
    let (fa, fb) = (files(&a), files(&b));
    let d = felix_engine::tools::diff::diff(&OsIo::new(), (&a, &fa), (&b, &fb), &|_| {}).unwrap();
    assert_eq!(d.b.findings.iter().map(|f| f.finding.kind.as_str()).collect::<Vec<_>>(), ["Truncated"], "no writer: damage");
    // A writer takes B's lock while the diff reads (at the first bytes either side read).
    let held = std::sync::Mutex::new(None);
    let on_bytes = |_: u64| {
        let mut held = held.lock().unwrap();
        if held.is_none() {
            *held = Some(OsIo::new().lock(&b, false).unwrap());
        }
    };
    let d = felix_engine::tools::diff::diff(&OsIo::new(), (&a, &fa), (&b, &fb), &on_bytes).unwrap();
    assert!(held.lock().unwrap().is_some());
    assert!(d.b.findings.is_empty() && !d.b.blocked, "{:?}", d.b.findings);
    assert!(d.identical, "{}", d.to_text());
    // The diff says that B is being written (its answer may change), and by whom; not A.
    let pid = std::process::id();
    let note =
        format!("B: {} is open for writing (pid {pid}); the tail may be in flight, and the diff may change as it writes", b.display());
    assert_eq!(d.notes.first(), Some(&note), "{:?}", d.notes);
    assert!(!d.notes.iter().any(|n| n.starts_with("A: ")), "{:?}", d.notes);
    // So does the command, in its text and its JSON, while the writer holds B.
    let o = run(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains(&note), "{}", String::from_utf8_lossy(&o.stdout));
    let (code, v) = diff_json(&a, &b);
    assert_eq!((code, v["notes"][0].as_str()), (Some(0), Some(note.as_str())));
    // Once it lets go, nothing is said.
    drop(held.lock().unwrap().take());
    let (_, v) = diff_json(&a, &b);
    assert!(!v["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("open for writing")), "{v}");
}

/// Issue 18: two different shards of a `demo` root (orders, payments) are
/// warned of in the text and the JSON, and neither is advised to truncate;
/// the same shard under two parents, reached as `.`, is not warned of.
#[test]
fn two_different_shards_are_warned_of_and_no_truncation_is_advised() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(&["demo", tmp.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let orders = tmp.path().join("acme_default_orders_0-0d3aed4b998d2798");
    let payments = tmp.path().join("acme_default_payments_0-feaf85568f3eb5b0");
    let o = run(&["diff", orders.to_str().unwrap(), payments.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains(
            "WARNING: A and B are different shards: A is acme_default_orders_0-0d3aed4b998d2798, \
             B is acme_default_payments_0-feaf85568f3eb5b0 (their shard names and keys differ)"
        ),
        "{text}"
    );
    assert!(
        !text.contains("truncates to") && text.contains("B is no follower of A (a different shard): do not truncate it to match"),
        "{text}"
    );
    let (code, v) = diff_json(&orders, &payments);
    assert_eq!(code, Some(1));
    let d = &v["different_shards"];
    assert_eq!((d["names_differ"].as_bool(), d["keys_differ"].as_bool()), (Some(true), Some(true)), "{v}");
    assert_eq!(d["b_dir"], "acme_default_payments_0-feaf85568f3eb5b0");
    assert!(v["truncate_a_to"].is_null() && v["truncate_b_to"].is_null(), "{v}");
    // The same shard copied under another parent, one side given as `.`: one shard, no warning.
    let copy = tmp.path().join("copy/acme_default_orders_0-0d3aed4b998d2798");
    copy_dir(&orders, &copy);
    let o = Command::new(bin()).current_dir(&copy).args(["diff", ".", orders.to_str().unwrap(), "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["different_shards"].is_null() && v["identical"] == true, "{v}");
    // Two folders whose names are no shard names tell nothing either way.
    let (x, y) = (tmp.path().join("x"), tmp.path().join("y"));
    copy_dir(&orders, &x);
    copy_dir(&payments, &y);
    let (_, v) = diff_json(&x, &y);
    assert!(v["different_shards"].is_null(), "{v}");
    // The same key in upper case: a folder the broker never writes (it
    // writes lower case), so not the same shard's folder — warned of.
    let upper = tmp.path().join("upper/acme_default_orders_0-0D3AED4B998D2798");
    copy_dir(&orders, &upper);
    let o = run(&["diff", orders.to_str().unwrap(), upper.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("their keys differ in case only: the broker writes lower case"), "{text}");
    let (_, v) = diff_json(&orders, &upper);
    assert_eq!(v["different_shards"]["keys_differ"], true, "{v}");
}

/// Issue 18: when B's only problem is rot, the diff names the offset B lost
/// and that A still holds it, in the text and the JSON (the codec's words).
#[test]
fn an_offset_lost_to_rot_is_named_with_the_replica_that_holds_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = two_replicas(tmp.path());
    append(&a, Some(1), "common", 0..20);
    copy_dir(&a, &b);
    // Rot one payload byte of offset 3 in B's first segment.
    let seg = b.join("00000000000000000000.log");
    let mut bytes = std::fs::read(&seg).unwrap();
    let at = bytes.windows(SECRET.len() + 10).position(|w| w.ends_with(b"-common-3")).unwrap();
    bytes[at] ^= 0x20;
    std::fs::write(&seg, &bytes).unwrap();
    let o = run(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    let (_, v) = diff_json(&a, &b);
    assert!(v["first_divergent_offset"].is_null(), "{v}");
    let lost = &v["lost_b"][0];
    assert_eq!((lost["range"]["from"].as_u64(), lost["range"]["to"].as_u64()), (Some(3), Some(4)), "{v}");
    assert_eq!(lost["held_at"]["file"], "00000000000000000000.log");
    let position = lost["held_at"]["position"].as_u64().unwrap();
    let sentence = format!(
        "B lost offset 3 (RecordChecksum at byte {position} of 00000000000000000000.log); A still holds it intact, \
         at byte {position} of 00000000000000000000.log: copy it from A"
    );
    assert!(text.contains(&sentence), "{text}");
    assert!(v["lost_a"].as_array().unwrap().is_empty());
}

#[test]
fn one_directory_given_as_both_replicas_is_named_not_just_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = diverged(tmp.path());
    let same = "A and B are the same directory: a replica compared with itself is always identical; give two replicas of the shard";
    let dotted = a.parent().unwrap().join(".").join(a.file_name().unwrap());
    let (code, v) = diff_json(&a, &dotted);
    assert_eq!((code, v["identical"].as_bool()), (Some(0), Some(true)));
    assert_eq!(v["notes"][0].as_str(), Some(same), "{}", v["notes"]);
    let o = run(&["diff", a.to_str().unwrap(), a.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("note: {same}")), "{}", String::from_utf8_lossy(&o.stdout));
    // Two replicas: no such note.
    let (_, v) = diff_json(&a, &b);
    assert!(!v["notes"].to_string().contains("same directory"), "{}", v["notes"]);
}
