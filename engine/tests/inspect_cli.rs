//! `felix-storage inspect` run as a process, as an operator runs it.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::path::Path;
use std::process::{Command, Output};

use felix_codec::format::epochs::{self, Epoch};
use felix_codec::format::index::build_index;
use felix_codec::format::record::encode_record;
use felix_codec::format::segment_header::SegmentHeader;
use serde_json::Value;

fn segment(base: u64, n: u64, payload: &[u8]) -> (Vec<u8>, Vec<u64>) {
    let mut out = SegmentHeader::new(base, 1_700_000_000_000_000).encode().to_vec();
    let mut positions = Vec::new();
    for i in 0..n {
        positions.push(out.len() as u64);
        encode_record(base + i, 1_700_000_000_000_000 + i, payload, &mut out).unwrap();
    }
    (out, positions)
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_felix-storage")).args(args).output().unwrap()
}

fn text(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap()
}

fn write_shard(dir: &Path) -> (Vec<u8>, Vec<u64>) {
    std::fs::create_dir_all(dir).unwrap();
    let (s0, p0) = segment(0, 10, b"zero");
    let (s1, p1) = segment(10, 5, b"one!");
    std::fs::write(dir.join("00000000000000000000.log"), &s0).unwrap();
    std::fs::write(dir.join("00000000000000000000.index"), build_index(0, p0.iter().enumerate().map(|(i, p)| (i as u64, *p)), 64)).unwrap();
    std::fs::write(dir.join("00000000000000000001.log"), &s1).unwrap();
    std::fs::write(dir.join("00000000000000000001.index"), build_index(10, p1.iter().enumerate().map(|(i, p)| (10 + i as u64, *p)), 64))
        .unwrap();
    let ep = epochs::encode(&[Epoch { generation: 1, start_offset: 0 }, Epoch { generation: 2, start_offset: 12 }]).unwrap();
    std::fs::write(dir.join("epochs"), ep).unwrap();
    (s1, p1)
}

#[test]
fn a_clean_shard_exits_0_and_says_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let shard = tmp.path().join("acme_default_orders_0-0d3aed4b998d2798");
    write_shard(&shard);
    let o = run(&["inspect", shard.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("00000000000000000000.log: clean segment"), "{t}");
    assert!(t.contains("10 intact records (offsets 0..=9)"), "{t}");
    assert!(t.ends_with("5 files, 0 findings\n"), "{t}");
}

#[test]
fn a_torn_tail_exits_1_with_one_line_naming_kind_position_offset_and_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    let shard = tmp.path().join("s-0000000000000001");
    let (s1, p1) = write_shard(&shard);
    std::fs::write(shard.join("00000000000000000001.log"), &s1[..s1.len() - 3]).unwrap();
    let o = run(&["inspect", shard.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let t = text(&o);
    let at = p1[4];
    let line = t.lines().find(|l| l.contains("Truncated")).unwrap();
    assert!(line.contains("00000000000000000001.log: Truncated"), "{line}");
    assert!(line.contains(&format!("at byte {at} ({at:#x}), offset 14, repair always")), "{line}");
    assert!(line.contains("a write the process never finished"), "{line}");
}

#[test]
fn json_over_a_root_reports_every_file_with_findings_and_hash() {
    let tmp = tempfile::tempdir().unwrap();
    let shard = tmp.path().join("root").join("t_n_s_0-00000000000000aa");
    let (mut s1, p1) = write_shard(&shard);
    let rot = p1[2] as usize + 30;
    s1[rot] ^= 0x20;
    std::fs::write(shard.join("00000000000000000001.log"), &s1).unwrap();
    let o = run(&["inspect", "--json", tmp.path().join("root").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    assert_eq!(v["report_version"], 1);
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 5);
    let seg = files.iter().find(|f| f["path"].as_str().unwrap().ends_with("00000000000000000001.log")).unwrap();
    assert_eq!((seg["kind"].as_str(), seg["records"].as_u64(), seg["base_offset"].as_u64()), (Some("segment"), Some(4), Some(10)));
    let f = &seg["findings"][0];
    assert_eq!((f["kind"].as_str(), f["position"].as_u64(), f["offset"].as_u64()), (Some("RecordChecksum"), Some(p1[2]), Some(12)));
    assert_eq!((f["end"].as_u64(), f["repair"].as_str()), (Some(p1[3]), Some("never")));
    let ep = files.iter().find(|f| f["kind"] == "epochs").unwrap();
    assert_eq!(ep["entries"], serde_json::json!([[1, 0], [2, 12]]));
    assert_eq!(seg["shard"], "t_n_s_0-00000000000000aa");
    assert_eq!((seg["hash"]["algorithm"].as_str(), seg["hash"]["value"].as_str().map(str::len)), (Some("blake3"), Some(64)));
}

#[test]
fn index_bytes_in_a_log_are_a_magic_error_with_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("00000000000000000003.log");
    std::fs::write(&p, build_index(3, [(3, 32)], 4096)).unwrap();
    let o = run(&["inspect", "--json", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    let f = &v["files"][0];
    assert_eq!((f["findings"][0]["kind"].as_str(), f["findings"][0]["end"].as_u64()), (Some("SegmentMagic"), Some(4)));
    assert!(f["notes"][0].as_str().unwrap().contains("a Felix index (FLSI)"), "{}", f["notes"]);
}

#[test]
fn an_unconventionally_named_file_is_known_by_its_magic() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("copy-from-customer.bin");
    std::fs::write(&p, epochs::encode(&[Epoch { generation: 4, start_offset: 9 }]).unwrap()).unwrap();
    let o = run(&["inspect", "--json", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(json(&o)["files"][0]["kind"], "epochs");
}

#[test]
fn unreadable_paths_and_bad_usage_exit_2_with_one_line() {
    let o = run(&["inspect", "/no/such/felix/path"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("felix-storage: /no/such/felix/path: "), "{err}");
    let o = run(&["inspect"]);
    assert_eq!(o.status.code(), Some(2));
    let tmp = tempfile::tempdir().unwrap();
    let o = run(&["inspect", tmp.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8(o.stderr).unwrap().contains("no shard directory (no segment, index, epochs or other Felix file) found here"));
}

/// The same shard or file named twice, in any spelling (`d`, `./d`, a root
/// holding it, a file of it given alone, a link to it), is inspected once:
/// the report lists each file once (the page refuses one that does not),
/// the verdict counts each finding once, and a note says what was given again.
#[test]
fn a_shard_or_file_given_twice_is_inspected_once() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let dir = root.join("acme_default_orders_0-0d3aed4b998d2798");
    std::fs::create_dir_all(&dir).unwrap();
    let (mut bytes, _) = segment(0, 3, b"abc");
    let n = bytes.len();
    bytes[n - 2] ^= 1; // rot in the last record
    std::fs::write(dir.join("00000000000000000000.log"), &bytes).unwrap();
    let file = dir.join("00000000000000000000.log");
    std::os::unix::fs::symlink(&file, tmp.path().join("link.log")).unwrap();
    let dotted = format!("{}/./", dir.display());
    let o = run(&[
        "inspect",
        "--json",
        dir.to_str().unwrap(),
        &dotted,
        root.to_str().unwrap(),
        file.to_str().unwrap(),
        tmp.path().join("link.log").to_str().unwrap(),
    ]);
    let r = json(&o);
    let paths: Vec<&str> = r["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, [file.to_str().unwrap()], "{r:#}");
    assert_eq!(r["files"][0]["findings"].as_array().unwrap().len(), 1);
    let notes: Vec<&str> = r["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert_eq!(notes.iter().filter(|n| n.contains("given more than once")).count(), 2, "{notes:?}");
    assert_eq!(notes.iter().filter(|n| n.contains("also in the shard")).count(), 2, "{notes:?}");
    let o = run(&["inspect", dir.to_str().unwrap(), dir.to_str().unwrap()]);
    assert!(text(&o).contains("1 file, 1 finding"), "{}", text(&o));
}

#[test]
fn a_file_given_twice_or_inside_a_shard_given_too_is_listed_once() {
    // The page refuses a report that lists one file twice: the CLI never makes one.
    let tmp = tempfile::tempdir().unwrap();
    let shard = tmp.path().join("acme_default_orders_0-0d3aed4b998d2798");
    write_shard(&shard);
    let seg = shard.join("00000000000000000000.log");
    let (root, shard, seg) = (tmp.path().to_str().unwrap(), shard.to_str().unwrap(), seg.to_str().unwrap());
    for args in [vec![seg, seg], vec![shard, shard], vec![root, shard], vec![seg, shard], vec![shard, seg]] {
        let o = run(&[&["inspect", "--json"], args.as_slice()].concat());
        let paths: Vec<String> = json(&o)["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap().to_string()).collect();
        let once: std::collections::BTreeSet<&String> = paths.iter().collect();
        assert_eq!(once.len(), paths.len(), "{args:?}: {paths:?}");
        let t = text(&run(&[&["inspect"], args.as_slice()].concat()));
        assert!(t.contains("given more than once") || t.contains("also in the shard"), "{args:?}: {t}");
    }
}

/// Issue 20: every segment and the shard say the time they cover, in UTC
/// with the micros, from intact records only — here a clock that went
/// backwards mid-segment and a damaged record between.
#[test]
fn segments_and_the_shard_say_the_time_they_cover_a_clock_that_went_back_included() {
    let tmp = tempfile::tempdir().unwrap();
    let shard = tmp.path().join("acme_default_orders_0-0d3aed4b998d2798");
    std::fs::create_dir_all(&shard).unwrap();
    // 2026-12-01T14:03:00Z and around it.
    let t0: u64 = 1_796_133_780_000_000;
    let mut s0 = SegmentHeader::new(0, t0).encode().to_vec();
    let mut rotted = 0;
    for (offset, ts) in [(0, t0 + 5), (1, t0 + 9), (2, t0 - 3_000_000), (3, t0 + 1), (4, t0 + 99_999_999_999)] {
        if offset == 4 {
            rotted = s0.len() + 30;
        }
        encode_record(offset, ts, b"payload!", &mut s0).unwrap();
    }
    // Offset 4's payload rots: its timestamp is not believed.
    s0[rotted] ^= 0xFF;
    let mut s1 = SegmentHeader::new(5, t0).encode().to_vec();
    encode_record(5, t0 + 20, b"later", &mut s1).unwrap();
    std::fs::write(shard.join("00000000000000000000.log"), &s0).unwrap();
    std::fs::write(shard.join("00000000000000000005.log"), &s1).unwrap();
    let t = text(&run(&["inspect", shard.to_str().unwrap()]));
    assert!(
        t.contains(
            "4 intact records (offsets 0..=3), written 2026-12-01T14:03:00.000005Z to 2026-12-01T14:03:00.000001Z \
             (timestamps go back: earliest 2026-12-01T14:02:57.000000Z, latest 2026-12-01T14:03:00.000009Z)\n"
        ),
        "{t}"
    );
    assert!(t.contains("1 intact records (offsets 5..=5), written 2026-12-01T14:03:00.000020Z to 2026-12-01T14:03:00.000020Z\n"), "{t}");
    assert!(
        t.contains(
            "acme_default_orders_0-0d3aed4b998d2798: time: the shard's records were written 2026-12-01T14:03:00.000005Z to \
             2026-12-01T14:03:00.000020Z (timestamps go back: earliest 2026-12-01T14:02:57.000000Z, latest 2026-12-01T14:03:00.000020Z)\n"
        ),
        "{t}"
    );
    let v = json(&run(&["inspect", "--json", shard.to_str().unwrap()]));
    let time = &v["files"][0]["time"];
    assert_eq!(
        [&time["first"], &time["last"], &time["min"], &time["max"]],
        [t0 + 5, t0 + 1, t0 - 3_000_000, t0 + 9].map(Value::from).each_ref()
    );
}

/// One shard folder name under two roots (`a/x`, `b/x`) is two shards, each
/// with its own verdict, as `recover` plans them: b's torn newest segment is
/// `recover`'s to cut, not "not repairable" because a holds later segments
/// (issue 18, third review: the two were one sentence, under a's name only).
#[test]
fn one_folder_name_under_two_roots_gets_two_verdicts() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a/x"), tmp.path().join("b/x"));
    write_shard(&a);
    std::fs::create_dir_all(&b).unwrap();
    let (s0, _) = segment(0, 3, b"torn");
    std::fs::write(b.join("00000000000000000000.log"), &s0[..s0.len() - 2]).unwrap();
    let o = run(&["inspect", a.to_str().unwrap(), b.to_str().unwrap()]);
    let t = text(&o);
    let verdicts: Vec<&str> = t.lines().filter(|l| l.contains(": verdict: ")).collect();
    assert_eq!(
        verdicts,
        [
            format!("{}: verdict: clean: nothing to do", a.display()),
            format!("{}: verdict: a torn tail that `recover` would fix", b.display())
        ],
        "{t}"
    );
    let plan = run(&["recover", "--dry-run", b.to_str().unwrap()]);
    assert!(text(&plan).contains("would cut"), "recover cuts what the verdict says it would: {}", text(&plan));
}

/// A record header damaged in the middle of a segment is placed by its
/// neighbours' offsets when exactly one is missing between them: the verdict
/// names the offset to fetch from a replica, as it does for a damaged payload.
/// Two headers in a row damaged cannot be told apart: the verdict says so.
#[test]
fn a_damaged_record_header_is_placed_by_its_neighbours_offsets() {
    let tmp = tempfile::tempdir().unwrap();
    for (damaged, placed) in [(&[4usize][..], Some(4u64)), (&[4, 5][..], None)] {
        let shard = tmp.path().join(format!("acme_default_orders_{}-0d3aed4b998d2798", damaged.len()));
        std::fs::create_dir_all(&shard).unwrap();
        let (mut bytes, positions) = segment(0, 10, b"payload");
        for &i in damaged {
            // Byte 2 of the header: its payload length, which the header's checksum covers.
            bytes[positions[i] as usize + 2] ^= 0x40;
        }
        std::fs::write(shard.join("00000000000000000000.log"), &bytes).unwrap();
        let o = run(&["inspect", shard.to_str().unwrap(), "--json"]);
        assert_eq!(o.status.code(), Some(1));
        let v = json(&o);
        let findings = &v["files"][0]["findings"];
        assert_eq!(findings.as_array().unwrap().len(), 1, "{findings}");
        assert_eq!(findings[0]["kind"], "RecordHeaderChecksum");
        assert_eq!(findings[0]["position"], positions[damaged[0]]);
        assert_eq!(findings[0]["offset"].as_u64(), placed);
        let t = text(&run(&["inspect", shard.to_str().unwrap()]));
        let verdict = t.lines().find(|l| l.contains(": verdict: ")).unwrap();
        match placed {
            Some(o) => assert!(
                verdict.ends_with(&format!("1 record lost to rot at offset {o} (not repairable: fetch it from a replica)")),
                "{verdict}"
            ),
            None => assert!(verdict.contains("1 damaged record header (not repairable"), "{verdict}"),
        }
    }
}

/// An intact record at an offset past the one expected (offset 3 missing
/// from a segment) is not "lost to rot": the verdict says it is intact and
/// out of order, and that records before it are missing (hostile review).
#[test]
fn an_intact_record_out_of_order_is_not_called_lost_to_rot() {
    let tmp = tempfile::tempdir().unwrap();
    let shard = tmp.path().join("acme_default_orders_0-0d3aed4b998d2798");
    std::fs::create_dir_all(&shard).unwrap();
    let mut bytes = SegmentHeader::new(0, 1_700_000_000_000_000).encode().to_vec();
    for o in [0u64, 1, 2, 4, 5] {
        encode_record(o, 1_700_000_000_000_000 + o, b"payload", &mut bytes).unwrap();
    }
    std::fs::write(shard.join("00000000000000000000.log"), &bytes).unwrap();
    let t = text(&run(&["inspect", shard.to_str().unwrap()]));
    let verdict = t.lines().find(|l| l.contains(": verdict: ")).unwrap();
    assert!(
        verdict.ends_with(
            ": verdict: 1 intact record out of order at offset 4 (records before it missing or misplaced) (not repairable: fetch it from a replica)"
        ),
        "{verdict}"
    );
}
