//! `felix-storage inspect` on every core, run as a process: the report does
//! not depend on how many workers made it, and memory does not depend on the
//! size of what is inspected.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::path::Path;
use std::process::{Command, Output};

use felix_codec::format::index::build_index;
use felix_codec::format::record::encode_record;
use felix_codec::format::segment_header::SegmentHeader;
use sha2::{Digest, Sha256};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_felix-storage")
}

fn run(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

/// Runs the binary with its address space limited to `mib` MiB (as
/// `trust_cli` does): a scan that sized anything from the file would fail.
fn run_limited(mib: u64, args: &[&str]) -> Output {
    let script = format!("ulimit -v {}; exec \"$0\" \"$@\"", mib * 1024);
    Command::new("sh").arg("-c").arg(script).arg(bin()).args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// A segment of `n` records from `base` and the positions of its records.
fn segment(base: u64, n: u64, payload_len: usize) -> (Vec<u8>, Vec<u64>) {
    let mut out = SegmentHeader::new(base, 1_700_000_000_000_000).encode().to_vec();
    let mut positions = Vec::new();
    let payload: Vec<u8> = (0..payload_len).map(|i| (i * 7 + base as usize) as u8).collect();
    for i in 0..n {
        positions.push(out.len() as u64);
        encode_record(base + i, 1_700_000_000_000_000 + i, &payload, &mut out).unwrap();
    }
    (out, positions)
}

fn write_segment(dir: &Path, id: u64, base: u64, n: u64, payload_len: usize, damage: impl FnOnce(&mut Vec<u8>, &[u64])) {
    std::fs::create_dir_all(dir).unwrap();
    let (mut seg, pos) = segment(base, n, payload_len);
    let index = build_index(base, pos.iter().enumerate().map(|(i, p)| (base + i as u64, *p)), 4096);
    damage(&mut seg, &pos);
    std::fs::write(dir.join(format!("{id:020}.log")), &seg).unwrap();
    std::fs::write(dir.join(format!("{id:020}.index")), index).unwrap();
}

/// A root of four shards (clean with two segments, a torn tail, a rotted
/// record, a stale index), a stray file at its top and one in a plain directory.
fn write_root(root: &Path) {
    let a = root.join("acme_default_orders_0-0d3aed4b998d2798");
    write_segment(&a, 0, 0, 300, 200, |_, _| {});
    write_segment(&a, 1, 300, 200, 1000, |_, _| {});
    let b = root.join("acme_default_orders_1-1d3aed4b998d2798");
    write_segment(&b, 0, 0, 500, 64, |seg, _| seg.truncate(seg.len() - 10));
    let c = root.join("acme_default_payments_0-2d3aed4b998d2798");
    write_segment(&c, 7, 1000, 400, 512, |seg, pos| seg[pos[123] as usize + 40] ^= 0x10);
    let d = root.join("acme_default_audit_0-3d3aed4b998d2798");
    write_segment(&d, 0, 0, 50, 4000, |_, _| {});
    std::fs::write(d.join("00000000000000000000.index"), [&b"NOPE"[..], &[0u8; 36]].concat()).unwrap();
    std::fs::write(root.join("server.log"), b"a stray file").unwrap();
    std::fs::create_dir_all(root.join("misc")).unwrap();
    std::fs::write(root.join("misc/notes.txt"), b"another").unwrap();
}

#[test]
fn a_root_gets_the_same_report_byte_for_byte_with_any_number_of_workers() {
    let tmp = tempfile::tempdir().unwrap();
    write_root(tmp.path());
    let root = tmp.path().to_str().unwrap();
    let lone = tmp.path().join("acme_default_payments_0-2d3aed4b998d2798/00000000000000000007.log");
    let lone = lone.to_str().unwrap();
    for format in [&["--json"][..], &[][..]] {
        let with = |jobs: Option<&str>| {
            let mut args = vec!["inspect"];
            args.extend_from_slice(format);
            if let Some(j) = jobs {
                args.extend_from_slice(&["--jobs", j]);
            }
            args.extend_from_slice(&[root, lone]);
            run(&args)
        };
        let one = with(Some("1"));
        assert_eq!(one.status.code(), Some(1), "damage found: {}", String::from_utf8_lossy(&one.stderr));
        let out = stdout(&one);
        for kind in ["Truncated", "RecordChecksum", "IndexMagic"] {
            assert!(out.contains(kind), "{kind} in {out}");
        }
        for jobs in [Some("2"), Some("3"), Some("16"), None] {
            let o = with(jobs);
            assert_eq!(o.status.code(), one.status.code(), "--jobs {jobs:?}");
            assert_eq!(stdout(&o), out, "--jobs {jobs:?} {format:?}");
        }
    }
}

#[test]
fn json_carries_each_files_hash_and_text_shows_the_same_verdicts() {
    let tmp = tempfile::tempdir().unwrap();
    write_root(tmp.path());
    let o = run(&["inspect", "--json", tmp.path().to_str().unwrap()]);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let files = report["files"].as_array().unwrap();
    let with_sha = run(&["inspect", "--json", "--sha256", tmp.path().to_str().unwrap()]);
    let with_sha: serde_json::Value = serde_json::from_slice(&with_sha.stdout).unwrap();
    let mut hashed = 0;
    for (f, s) in files.iter().zip(with_sha["files"].as_array().unwrap()) {
        let path = f["path"].as_str().unwrap();
        assert!(f["sha256"].is_null(), "SHA-256 only with --sha256: {path}");
        if f["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with("not part of any shard")) {
            assert!(f["hash"].is_null() && s["sha256"].is_null(), "a stray file is never read: {path}");
            continue;
        }
        let bytes = std::fs::read(path).unwrap();
        let blake3 = blake3::hash(&bytes).to_hex().to_string();
        assert_eq!(f["hash"], serde_json::json!({"algorithm": "blake3", "value": blake3}), "{path}");
        let expected: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(s["sha256"].as_str(), Some(expected.as_str()), "{path}");
        assert_eq!(s["hash"], f["hash"], "--sha256 adds SHA-256; the identity stays BLAKE3");
        hashed += 1;
    }
    assert_eq!(hashed, 10, "every shard file is hashed");
    let text = stdout(&run(&["inspect", tmp.path().to_str().unwrap()]));
    let findings: u64 = files.iter().map(|f| f["findings"].as_array().unwrap().len() as u64).sum();
    assert!(text.ends_with(&format!("{} files, {findings} findings\n", files.len())), "{text}");
}

#[test]
fn a_10_gib_sparse_segment_is_inspected_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("00000000000000000000.log");
    let (seg, pos) = segment(0, 3, 100);
    std::fs::write(&log, &seg).unwrap();
    std::fs::OpenOptions::new().write(true).open(&log).unwrap().set_len(10 << 30).unwrap();
    let end = seg.len() as u64;
    assert_eq!(pos.len(), 3);
    let o = run_limited(96, &["inspect", log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let out = stdout(&o);
    assert!(out.contains("3 intact records (offsets 0..=2)"), "{out}");
    // The zeros after the last record never verify as a header: one finding
    // from there to the end of the file, crossed without holding any of it.
    let finding = format!("RecordHeaderChecksum at byte {end} ({end:#x}), repair never");
    assert!(out.contains(&finding), "{out}");
    assert!(out.ends_with("1 file, 1 finding\n"), "{out}");
}

/// A file larger than a hashing piece (16 MiB) is hashed as BLAKE3 subtrees
/// on every worker: the report carries the hash one pass gives, the same
/// byte for byte with one worker or several.
#[test]
fn a_large_files_hash_from_subtrees_on_several_workers_is_the_one_pass_hash() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("00000000000000000000.log");
    // 40 MiB and a little: subtrees of 16 + 16 + 8 MiB and a short one.
    let (mut seg, _) = segment(0, 10_241, 4096 - 28);
    seg.truncate(seg.len() - 5);
    std::fs::write(&log, &seg).unwrap();
    let want = serde_json::json!({"algorithm": "blake3", "value": blake3::hash(&seg).to_hex().to_string()});
    let mut outs = Vec::new();
    for jobs in ["1", "2", "3"] {
        let o = run(&["inspect", "--json", "--jobs", jobs, log.to_str().unwrap()]);
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(report["files"][0]["hash"], want, "--jobs {jobs}");
        outs.push(o.stdout);
    }
    assert!(outs.windows(2).all(|w| w[0] == w[1]), "the same report with any number of workers");
}

/// Sizes at and around the subtree split (16 MiB pieces, power-of-two
/// left subtrees), lone files and a shard with one large segment beside small
/// ones, with and without --sha256, one worker and several: every BLAKE3 is
/// the one-pass hash, every SHA-256 the one-pass SHA-256, every report the same.
#[test]
fn subtree_hashes_at_awkward_sizes_match_one_pass() {
    let tmp = tempfile::tempdir().unwrap();
    const M: usize = 1 << 20;
    let sizes = [16 * M + 1, 16 * M + 1024, 16 * M + 1025, 32 * M, 33 * M + 1, 48 * M + 1023];
    let pattern: Vec<u8> = (0..(48 * M + 1023) as u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let mut want = std::collections::BTreeMap::new();
    for (k, &size) in sizes.iter().enumerate() {
        let dir = tmp.path().join(format!("lone{k}"));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("00000000000000000000.log");
        std::fs::write(&p, &pattern[k..k + size.min(pattern.len() - k)]).unwrap();
        want.insert(p.to_str().unwrap().to_string(), std::fs::read(&p).unwrap());
    }
    // A shard: one large segment (20 MiB + 3) and two small ones.
    let shard = tmp.path().join("acme_default_orders_0-0d3aed4b998d2798");
    write_segment(&shard, 0, 0, 10, 100, |_, _| {});
    let (mut big, _) = segment(10, 5121, 4096 - 28);
    big.extend_from_slice(&[1, 2, 3]);
    std::fs::write(shard.join(format!("{:020}.log", 1)), &big).unwrap();
    write_segment(&shard, 2, 6000, 10, 100, |_, _| {});
    for entry in std::fs::read_dir(&shard).unwrap() {
        let p = entry.unwrap().path();
        want.insert(p.to_str().unwrap().to_string(), std::fs::read(&p).unwrap());
    }
    let mut outs = Vec::new();
    for jobs in ["1", "2", "5"] {
        for sha in [false, true] {
            let mut args = vec!["inspect", "--json", "--jobs", jobs];
            if sha {
                args.push("--sha256");
            }
            let paths: Vec<String> = (0..sizes.len()).map(|k| tmp.path().join(format!("lone{k}")).to_str().unwrap().to_string()).collect();
            args.extend(paths.iter().map(String::as_str));
            args.push(shard.to_str().unwrap());
            let o = run(&args);
            assert!(!o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
            let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
            let mut seen = 0;
            for f in report["files"].as_array().unwrap() {
                let path = f["path"].as_str().unwrap();
                let Some(bytes) = want.get(path) else { continue };
                seen += 1;
                assert_eq!(
                    f["hash"]["value"].as_str(),
                    Some(blake3::hash(bytes).to_hex().as_str()),
                    "--jobs {jobs} sha {sha}: {path} ({} bytes)",
                    bytes.len()
                );
                if sha {
                    let expected: String = Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
                    assert_eq!(f["sha256"].as_str(), Some(expected.as_str()), "{path}");
                }
            }
            assert_eq!(seen, want.len(), "every file reported");
            outs.push((sha, o.stdout));
        }
    }
    for sha in [false, true] {
        let same: Vec<&Vec<u8>> = outs.iter().filter(|(s, _)| *s == sha).map(|(_, o)| o).collect();
        assert!(same.windows(2).all(|w| w[0] == w[1]), "byte-identical for any --jobs (sha256 {sha})");
    }
}
