//! What operators and attackers found by trying things (issue 16, defects
//! 5–11), each through the path a user takes: the `felix-storage` binary as
//! a process, on real files. Every test names the defect it holds shut.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod support;
use support::{bin, err, out, run};

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: stdout {:?}, stderr {}", out(o), err(o)))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A `demo` root in `dir/name`.
fn demo(dir: &Path, name: &str) -> PathBuf {
    let root = dir.join(name);
    let o = run(&["demo", s(&root)]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    root
}

const CLICKS: &str = "acme_default_clicks_0-d8511d3bceccd6e0";
const ORDERS: &str = "acme_default_orders_0-0d3aed4b998d2798";

/// `dir` copied to `to`, without the writer's lock file.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() && e.file_name() != "writer.lock" {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Defect 5: the same records on both sides, and B's index cut to its first
/// six bytes (or B's epochs file cut to 20): the finding is `Truncated`, a
/// kind met in every file, and it is in an index (or the epochs file), which
/// the diff never reads records from. Named, blocks nothing: identical, exit 0.
#[test]
fn diff_a_short_index_or_epochs_file_blocks_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = demo(tmp.path(), "a");
    // clicks has no epochs file; orders has one and a clean log.
    for (shard, file, keep) in [(CLICKS, "00000000000000000001.index", 6usize), (ORDERS, "epochs", 20)] {
        let a = tmp.path().join(format!("{shard}-a"));
        let b = tmp.path().join(format!("{shard}-b"));
        copy_dir(&root.join(shard), &a);
        copy_dir(&root.join(shard), &b);
        let bytes = std::fs::read(b.join(file)).unwrap();
        std::fs::write(b.join(file), &bytes[..keep]).unwrap();
        let o = run(&["diff", s(&a), s(&b), "--json"]);
        let d = json(&o);
        let findings = d["b"]["findings"].as_array().unwrap();
        let short: Vec<&Value> = findings.iter().filter(|f| f["file"] == file).collect();
        assert_eq!(short.len(), 1, "{d:#}");
        assert_eq!((short[0]["kind"].as_str(), short[0]["position"].as_u64()), (Some("Truncated"), Some(0)), "{d:#}");
        assert_eq!(d["b"]["blocked"], false, "{file}: {d:#}");
        assert_eq!(d["identical"], true, "{file}: {d:#}");
        assert_eq!(o.status.code(), Some(0), "{file}: {}", err(&o));
        let o = run(&["diff", s(&a), s(&b)]);
        let text = out(&o);
        assert!(text.contains(&format!("B damage (noted): {}/{file}: Truncated at byte 0", b.display())), "{text}");
        assert!(text.ends_with("identical\n") && o.status.code() == Some(0), "{text}");
    }
}

/// Sends `SIG<name>` to `pid` (with kill(1): this crate has no unsafe code).
fn signal(name: &str, pid: u32) {
    assert!(Command::new("kill").args([&format!("-{name}"), &pid.to_string()]).status().unwrap().success());
}

/// Runs `inspect --json --jobs 1 PATH` and, once it has the file open (so
/// its size and identity were taken), stops it, runs `change`, and lets it
/// go on: the change falls inside the run, whatever the timing. A run that
/// ends before it is seen holding the file (a loaded machine that did not
/// schedule the look in time) is run again, up to 5 times.
fn inspect_changing(path: &Path, change: impl FnOnce()) -> Output {
    let mut change = Some(change);
    for _ in 0..5 {
        if let Some(o) = inspect_changing_once(path, &mut change) {
            return o;
        }
    }
    panic!("inspect ended 5 times before it was seen reading {}", path.display());
}

fn inspect_changing_once(path: &Path, change: &mut Option<impl FnOnce()>) -> Option<Output> {
    let mut child = Command::new(bin())
        .args(["inspect", "--json", "--jobs", "1", s(path)])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let holds_it = || {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .map(|fds| fds.filter_map(Result::ok).any(|fd| std::fs::read_link(fd.path()).is_ok_and(|t| t == path)))
            .unwrap_or(false)
    };
    loop {
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        if holds_it() {
            signal("STOP", pid);
            if holds_it() {
                break;
            }
            // It let go between the look and the stop: look again.
            signal("CONT", pid);
        }
        std::thread::yield_now();
    }
    (change.take().unwrap())();
    signal("CONT", pid);
    Some(child.wait_with_output().unwrap())
}

/// Defect 6: a file cut from 1 GiB to 90 bytes while `inspect --json` reads
/// it. Every read stops at the size taken when the run began, and the file
/// is looked at again when the run ends: its report says it changed, with
/// both sizes, and gives no hash (no hash describes the bytes the scan saw).
#[test]
fn inspect_says_a_file_changed_while_it_was_read_and_gives_no_hash_then() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("big.bin");
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(1 << 30).unwrap();
    let o = inspect_changing(&path, || file.set_len(90).unwrap());
    assert_eq!(o.status.code(), Some(0), "no findings in an unknown file: {}", err(&o));
    let r = json(&o);
    let f = &r["files"][0];
    assert_eq!(f["changed_while_read"], serde_json::json!({"size_at_start": 1u64 << 30, "size_at_end": 90, "only_grew": false}), "{r:#}");
    assert_eq!((&f["hash"], &f["sha256"]), (&Value::Null, &Value::Null), "{r:#}");
    let note =
        format!("changed while it was read: {} bytes when the inspection began, 90 bytes at its end, and not only by growing", 1u64 << 30);
    assert!(f["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with(&note)), "{r:#}");
}

/// Defect 6, the other way: a file that grows while it is read (a writer
/// appending) is described as its first bytes, the size taken at the start.
/// Review finding 3: an append moves the file's times exactly as a write
/// over the bytes already read does, so the report cannot say it "only
/// grew", and gives no hash (it might be of bytes the scan never saw).
#[test]
fn inspect_describes_a_growing_file_as_its_first_bytes_and_gives_no_hash() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("grows.bin");
    let size = 1u64 << 30;
    std::fs::File::create(&path).unwrap().set_len(size).unwrap();
    let o = inspect_changing(&path, || {
        use std::io::Write;
        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(&[7u8; 4096]).unwrap();
    });
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let r = json(&o);
    let f = &r["files"][0];
    assert_eq!(f["size"], size, "{r:#}");
    assert_eq!(f["changed_while_read"], serde_json::json!({"size_at_start": size, "size_at_end": size + 4096, "only_grew": false}));
    assert_eq!(f["hash"], Value::Null, "{r:#}");
    let note = format!(
        "changed while it was read: {size} bytes when the inspection began, {} bytes at its end, and not only by growing",
        size + 4096
    );
    assert!(f["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with(&note)), "{r:#}");
}

/// Review finding 3: a file overwritten and appended to while it is read —
/// the same inode, larger — is never called "only grew", and gets no hash
/// of its original bytes.
#[test]
fn inspect_gives_no_hash_of_a_file_written_over_and_appended_to_while_read() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("written.bin");
    let size = 1u64 << 30;
    std::fs::File::create(&path).unwrap().set_len(size).unwrap();
    let o = inspect_changing(&path, || {
        use std::io::{Seek, Write};
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.write_all(&[9u8; 4096]).unwrap();
        f.seek(std::io::SeekFrom::End(0)).unwrap();
        f.write_all(&[7u8; 4096]).unwrap();
    });
    let r = json(&o);
    let f = &r["files"][0];
    assert_eq!(f["changed_while_read"]["only_grew"], false, "{r:#}");
    assert_eq!((&f["hash"], &f["sha256"]), (&Value::Null, &Value::Null), "{r:#}");
}

/// Review finding 3: a segment swapped for another file and back while
/// `inspect --json --jobs 1` reads it (`mv G G.x; mv Y G; …; mv back`): the
/// scan job holds Y's handle — or every later job opens Y — so no finding
/// of Y's is paired with G's hash: the report says G changed (its change
/// time moved), and gives no hash.
#[test]
fn inspect_never_pairs_a_hash_with_bytes_of_a_file_swapped_in_and_back() {
    let tmp = tempfile::tempdir().unwrap();
    let root = demo(tmp.path(), "root");
    let dir = tmp.path().join("shard");
    copy_dir(&root.join(ORDERS), &dir);
    let g = dir.join("00000000000000000000.log");
    // G: large and clean; Y: the same name's size, damaged from byte 40.
    let y = tmp.path().join("y.log");
    let mut bytes = std::fs::read(&g).unwrap();
    for b in bytes.iter_mut().skip(40) {
        *b ^= 0xff;
    }
    std::fs::write(&y, &bytes).unwrap();
    let mut big = std::fs::read(&g).unwrap();
    big.resize(256 << 20, 0);
    std::fs::write(&g, &big).unwrap();
    let o = inspect_changing(&g, || {
        std::fs::rename(&g, dir.join("G.x")).unwrap();
        std::fs::rename(&y, &g).unwrap();
    });
    let r = json(&o);
    std::fs::rename(&g, &y).unwrap();
    std::fs::rename(dir.join("G.x"), &g).unwrap();
    let f = r["files"].as_array().unwrap().iter().find(|f| f["path"] == s(&g)).unwrap().clone();
    assert!(!f["changed_while_read"].is_null(), "{r:#}");
    assert_eq!(f["changed_while_read"]["only_grew"], false, "{r:#}");
    assert_eq!(f["hash"], Value::Null, "{r:#}");
    // Swapped back before the run ends: the end stamp alone would match but
    // for the change time; the report still says so.
    let o = inspect_changing(&g, || {
        std::fs::rename(&g, dir.join("G.x")).unwrap();
        std::fs::rename(&y, &g).unwrap();
        std::fs::rename(&g, &y).unwrap();
        std::fs::rename(dir.join("G.x"), &g).unwrap();
    });
    let r = json(&o);
    let f = r["files"].as_array().unwrap().iter().find(|f| f["path"] == s(&g)).unwrap().clone();
    assert_eq!(f["changed_while_read"]["only_grew"], false, "{r:#}");
    assert_eq!(f["hash"], Value::Null, "{r:#}");
}

/// Writes `lines` to shard `shard` (TENANT/NAMESPACE/STREAM/N) under `root`
/// with `produce`, and returns the shard's directory.
fn produce(root: &Path, shard: &str, lines: &str) -> PathBuf {
    use std::io::Write;
    let mut child = Command::new(bin())
        .args(["produce", s(root), "--shard", shard])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(lines.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let dirs: Vec<PathBuf> = std::fs::read_dir(root).unwrap().map(|e| e.unwrap().path()).collect();
    let prefix = shard.rsplit_once('/').unwrap().0.replace('/', "_");
    dirs.into_iter().find(|d| d.file_name().unwrap().to_str().unwrap().starts_with(&prefix)).unwrap()
}

/// Appends to segment 0 of `dir` the first `keep` bytes of a record at
/// `offset` with a `payload_len`-byte payload: a torn tail (a write the
/// process never finished), which recovery cuts, keeping the bytes as evidence.
fn tear(dir: &Path, offset: u64, payload_len: usize, keep: usize) -> u64 {
    use std::io::Write;
    let mut record = Vec::new();
    felix_codec::format::record::encode_record(offset, 1, &vec![b'x'; payload_len], &mut record).unwrap();
    let log = dir.join("00000000000000000000.log");
    let at = std::fs::metadata(&log).unwrap().len();
    std::fs::OpenOptions::new().append(true).open(&log).unwrap().write_all(&record[..keep]).unwrap();
    at
}

/// Runs the binary with files limited to about 1 MiB (`ulimit -f`, SIGXFSZ
/// ignored): a write past it fails with EFBIG, part way through a run.
fn run_file_size_limited(args: &[&str]) -> Output {
    Command::new("sh").arg("-c").arg("trap '' XFSZ; ulimit -f 2048; exec \"$0\" \"$@\"").arg(bin()).args(args).output().unwrap()
}

/// Defect 7: shard a is cut (evidence written, index rebuilt), then shard b
/// fails (its 8 MiB of cut bytes cannot be written as evidence): exit 2, and
/// the JSON still tells the whole account — a's actions, done, and where the
/// run stopped, with what ran there and what did not.
#[test]
fn recover_json_tells_every_action_taken_when_a_later_shard_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let a = produce(&root, "a/default/s/0", "one\ntwo\nthree\n");
    let b = produce(&root, "b/default/s/0", "one\ntwo\nthree\n");
    let cut_a = tear(&a, 3, 100, 60);
    let cut_b = tear(&b, 3, 16 << 20, 8 << 20);
    // The same account as text, on a copy.
    let copy = tmp.path().join("copy");
    assert!(Command::new("cp").args(["-a", s(&root), s(&copy)]).status().unwrap().success());
    let o = run_file_size_limited(&["recover", s(&copy)]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    let (ca, cb) = (copy.join(a.file_name().unwrap()), copy.join(b.file_name().unwrap()));
    let lines: Vec<String> = out(&o).lines().map(String::from).collect();
    assert_eq!(lines.len(), 4, "{lines:#?}");
    assert!(lines[0].starts_with(&format!("{}/00000000000000000000.log: cut at byte {cut_a} ", ca.display())), "{lines:#?}");
    assert!(lines[1].starts_with(&format!("{}/00000000000000000000.index: rebuilt", ca.display())), "{lines:#?}");
    assert!(lines[2].starts_with(&format!("{}/00000000000000000000.log: would cut at byte {cut_b} ", cb.display())), "{lines:#?}");
    assert!(lines[2].ends_with(": not done, the run stopped first"), "{lines:#?}");
    assert!(lines[3].starts_with(&format!("{}/00000000000000000000.index: would rebuild", cb.display())), "{lines:#?}");
    assert!(err(&o).contains("File too large (os error 27); the shard stopped there"), "{}", err(&o));
    let o = run_file_size_limited(&["recover", s(&root), "--json"]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    let plan = json(&o);
    let shards = plan["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 1, "{plan:#}");
    assert_eq!(shards[0]["path"], s(&a));
    let done_a: Vec<&str> = shards[0]["actions"].as_array().unwrap().iter().map(|x| x["action"].as_str().unwrap()).collect();
    assert_eq!(done_a, ["cut", "rebuild-index"], "{plan:#}");
    assert_eq!((shards[0]["actions"][0]["position"].as_u64(), shards[0]["actions"][0]["bytes"].as_u64()), (Some(cut_a), Some(60)));
    let evidence_a = shards[0]["actions"][0]["evidence"].as_str().unwrap();
    assert_eq!(std::fs::read(a.join(evidence_a)).unwrap().len(), 60, "a's cut bytes are kept");
    assert_eq!(std::fs::metadata(a.join("00000000000000000000.log")).unwrap().len(), cut_a, "a is cut");
    let stopped = &plan["stopped"];
    assert_eq!(stopped["path"], s(&b), "{plan:#}");
    assert_eq!(stopped["done"], serde_json::json!([]), "{plan:#}");
    let not_done: Vec<&str> = stopped["not_done"].as_array().unwrap().iter().map(|x| x["action"].as_str().unwrap()).collect();
    assert_eq!(not_done, ["cut", "rebuild-index"], "{plan:#}");
    let error = stopped["error"].as_str().unwrap();
    let tmp_evidence = format!("{}/00000000000000000000.log.cut-{cut_b}.tmp: write failed: File too large (os error 27)", b.display());
    assert!(error.starts_with(&tmp_evidence), "{error}");
    assert!(
        error.ends_with(&format!("; the shard stopped there: deal with the cause, then run `felix-storage recover {}`", b.display())),
        "{error}"
    );
    assert_eq!(err(&o), format!("felix-storage: {error}\n"));
    assert_eq!(std::fs::metadata(b.join("00000000000000000000.log")).unwrap().len(), cut_b + (8 << 20), "b is not cut");
    // Once the cause is gone, the run it names finishes the work.
    let o = run(&["recover", s(&b), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(json(&o).get("stopped").is_none());
    assert_eq!(std::fs::metadata(b.join("00000000000000000000.log")).unwrap().len(), cut_b);
}

/// Defect 9: a refused plan's `remaining_findings` holds every finding
/// `inspect` reports — here all seven of a stale index's, not one per index.
#[test]
fn a_refused_plan_keeps_every_finding_inspect_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let root = demo(tmp.path(), "root");
    let dir = root.join(ORDERS);
    // Every entry of segment 0's index points one byte past its record.
    let index = dir.join("00000000000000000000.index");
    let mut bytes = std::fs::read(&index).unwrap();
    for entry in bytes[24..].chunks_mut(16) {
        let position = u64::from_be_bytes(entry[8..].try_into().unwrap()) + 1;
        entry[8..].copy_from_slice(&position.to_be_bytes());
    }
    std::fs::write(&index, &bytes).unwrap();
    // Rot in a sealed segment: recovery refuses the shard.
    let log = dir.join("00000000000000000001.log");
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[200] ^= 0x40;
    std::fs::write(&log, &bytes).unwrap();
    let inspected = json(&run(&["inspect", "--json", s(&dir)]));
    let mut reported: Vec<(String, String, u64)> = Vec::new();
    for f in inspected["files"].as_array().unwrap() {
        let name = Path::new(f["path"].as_str().unwrap()).file_name().unwrap().to_str().unwrap().to_string();
        for x in f["findings"].as_array().unwrap() {
            reported.push((name.clone(), x["kind"].as_str().unwrap().into(), x["position"].as_u64().unwrap()));
        }
    }
    reported.sort();
    let o = run(&["recover", s(&dir), "--dry-run", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let plan = json(&o);
    let shard = &plan["shards"][0];
    assert!(shard["actions"].as_array().unwrap().iter().any(|a| a["action"] == "refuse"), "{plan:#}");
    let mut remaining: Vec<(String, String, u64)> = shard["remaining_findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["file"].as_str().unwrap().into(), f["kind"].as_str().unwrap().into(), f["position"].as_u64().unwrap()))
        .collect();
    remaining.sort();
    let stale: Vec<&(String, String, u64)> = remaining.iter().filter(|f| f.0 == "00000000000000000000.index").collect();
    assert_eq!(stale.len(), 7, "{remaining:?}");
    assert!(stale.iter().all(|f| f.1 == "IndexEntryMismatch"), "{stale:?}");
    assert_eq!(remaining, reported, "the refused plan leaves what inspect reports");
}

/// Defect 8: a root whose name carries a newline and a right-to-left
/// override. `recover` (dry run and real) and `dump` print its name escaped,
/// as `inspect` and `diff` do: no forged line, no reordered text.
#[test]
fn recover_and_dump_escape_a_hostile_root_name_as_inspect_does() {
    let tmp = tempfile::tempdir().unwrap();
    let hostile = "evil\nFORGED-LINE\u{202e}gol.x";
    let root = demo(tmp.path(), hostile);
    let escaped = format!("{}/evil\\nFORGED-LINE\\u{{202e}}gol.x", tmp.path().display());
    let log = root.join(CLICKS).join("00000000000000000001.log");
    for args in [vec!["recover", s(&root), "--dry-run"], vec!["recover", s(&root)], vec!["dump", s(&log)], vec!["inspect", s(&root)]] {
        let o = run(&args);
        let text = out(&o);
        assert!(!text.is_empty(), "{args:?}: {}", err(&o));
        for line in text.lines() {
            assert!(!line.starts_with("FORGED-LINE"), "{args:?} forged a line: {text}");
            assert!(!line.contains('\u{202e}') && !line.contains('\r'), "{args:?}: {line:?}");
        }
        assert!(text.contains(&escaped), "{args:?}: {text}");
        assert!(!err(&o).contains('\u{202e}'), "{args:?}: {}", err(&o));
    }
    // A record's payload is shown escaped too (bidi included), one record a line.
    let o = run(&["dump", s(&log)]);
    assert!(out(&o).lines().skip(1).all(|l| l.split('\t').count() == 5), "{}", out(&o));
}

/// `produce ROOT --shard SHARD` with `input` as its stdin.
fn produce_input(root: &Path, shard: &str, input: &Path) -> Output {
    Command::new(bin()).args(["produce", s(root), "--shard", shard]).stdin(std::fs::File::open(input).unwrap()).output().unwrap()
}

/// `consume --format json` of the shard: each record's payload.
fn payloads(root: &Path, shard: &str) -> Vec<String> {
    let o = run(&["consume", s(root), "--shard", shard, "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    out(&o).lines().map(|l| serde_json::from_str::<Value>(l).unwrap()["payload"].as_str().unwrap().to_string()).collect()
}

/// Defect 10: a line of exactly 64 MiB ending in CRLF is a record of 64 MiB
/// (the `\r` of a CRLF is not part of the line), as it is with LF; one byte
/// more is refused either way.
#[test]
fn produce_takes_a_64_mib_line_ending_in_crlf_as_it_takes_one_ending_in_lf() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let limit = felix_codec::MAX_PAYLOAD_BYTES as usize;
    for (name, len, end, accepted) in
        [("crlf", limit, &b"\r\n"[..], true), ("lf", limit, &b"\n"[..], true), ("crlf-over", limit + 1, &b"\r\n"[..], false)]
    {
        let input = tmp.path().join(name);
        let mut f = std::io::BufWriter::new(std::fs::File::create(&input).unwrap());
        f.write_all(&vec![b'y'; len]).unwrap();
        f.write_all(end).unwrap();
        f.into_inner().unwrap().sync_all().unwrap();
        let root = tmp.path().join(format!("root-{name}"));
        let o = produce_input(&root, "a/b/c/0", &input);
        if accepted {
            assert_eq!((o.status.code(), out(&o).as_str()), (Some(0), "0\n"), "{name}: {}", err(&o));
            let log = std::fs::read_dir(&root).unwrap().next().unwrap().unwrap().path().join("00000000000000000000.log");
            let dumped = out(&run(&["dump", s(&log)]));
            assert!(dumped.lines().nth(1).unwrap().contains(&format!("\t{limit} bytes\t")), "{name}: {dumped:.200}");
        } else {
            assert_eq!(o.status.code(), Some(2), "{name}");
            assert_eq!(
                err(&o),
                format!("felix-storage: <stdin>: line 1: a line is longer than {limit} bytes, the most one record may hold; nothing from it on was written\n")
            );
        }
    }
}

/// Defect 10: a last line without a newline is kept whole, a final `\r`
/// included; a `\r` before a newline ends the line with it.
#[test]
fn produce_keeps_a_last_lines_final_cr() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    std::fs::write(&input, b"a\r\nb\r").unwrap();
    let root = tmp.path().join("root");
    let o = produce_input(&root, "a/b/c/0", &input);
    assert_eq!((o.status.code(), out(&o).as_str()), (Some(0), "0\n1\n"), "{}", err(&o));
    assert_eq!(payloads(&root, "a/b/c/0"), ["a", "b\r"]);
}

/// Defect 10: a shard number past u32 is out of range, and the message says
/// the maximum; one that is not a number is still "not a whole number".
#[test]
fn a_shard_number_past_the_maximum_is_out_of_range() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(&["consume", s(tmp.path()), "--shard", "a/b/c/4294967296"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        err(&o),
        "felix-storage: --shard \"a/b/c/4294967296\": the shard number 4294967296 is out of range: the maximum is 4294967295\n"
    );
    let o = run(&["consume", s(tmp.path()), "--shard", "a/b/c/x"]);
    assert_eq!(err(&o), "felix-storage: --shard \"a/b/c/x\": the shard number \"x\" is not a whole number\n");
}

/// Defect 10: `dump` stopping at `--max-bytes` (1 MiB by default) says so,
/// and where to go on from; a dump that reaches the end says nothing more.
#[test]
fn dump_says_where_max_bytes_stopped_it() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    let line = "z".repeat(100_000);
    std::fs::write(&input, (0..12).map(|_| line.as_str()).collect::<Vec<_>>().join("\n")).unwrap();
    let root = tmp.path().join("root");
    assert_eq!(produce_input(&root, "a/b/c/0", &input).status.code(), Some(0));
    let log = std::fs::read_dir(&root).unwrap().next().unwrap().unwrap().path().join("00000000000000000000.log");
    let o = run(&["dump", s(&log)]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let text = out(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + 11 + 1, "{text:.300}");
    assert_eq!(
        *lines.last().unwrap(),
        "# stopped after 1100000 payload bytes (--max-bytes 1048576); more records follow from offset 11: add --from-offset 11, or a larger --max-bytes"
    );
    let o = run(&["dump", s(&log), "--from-offset", "11"]);
    assert_eq!(out(&o).lines().count(), 2, "the header and offset 11; nothing said past the end: {}", out(&o));
}

/// Defect 10: `inspect` of a FIFO says what it is, not "Not a directory",
/// and never opens it (which would wait for a writer).
#[test]
fn inspect_of_a_fifo_says_it_is_not_a_file_or_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let o = run(&["inspect", s(&fifo)]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        err(&o),
        format!(
            "felix-storage: {}: not a regular file or a directory (a FIFO, a socket or a device): nothing here to inspect; \
             give segment, index or epochs files, shard directories or roots of them\n",
            fifo.display()
        )
    );
}

/// Defect 10: `produce` on a full disk says what failed and what the
/// operator runs, not the library's "reopen it to recover". A 512 KiB tmpfs
/// in a mount namespace of its own (`unshare`), so nothing outlives the test.
#[test]
fn produce_on_a_full_disk_says_what_the_operator_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let mount = tmp.path().join("small");
    std::fs::create_dir(&mount).unwrap();
    let input = tmp.path().join("in");
    std::fs::write(&input, "a line of text, again and again\n".repeat(40_000)).unwrap();
    let root = mount.join("root");
    let o = Command::new("unshare")
        .args(["--mount", "--map-root-user", "sh", "-c", "mount -t tmpfs -o size=512k tmpfs \"$0\" && exec \"$@\""])
        .arg(&mount)
        .args([bin(), "produce", s(&root), "--shard", "a/b/c/0", "--batch", "100"])
        .stdin(std::fs::File::open(&input).unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    let acknowledged = out(&o).lines().count();
    assert!(acknowledged > 1000 && acknowledged < 40_000, "{acknowledged}");
    let dir = root.join("a_b_c_0-1b8b756fbae3c6c4");
    let e = err(&o);
    assert!(e.starts_with(&format!("felix-storage: {}/", dir.display())), "{e}");
    assert!(
        e.ends_with(&format!(
            "No space left on device (os error 28); the shard stopped there: free space on its disk, then run `felix-storage recover {}`\n",
            dir.display()
        )),
        "{e}"
    );
    assert!(!e.contains("reopen it"), "{e}");
}

/// Defect 11: a folder holding only an `epochs` file (damaged here) is
/// judged as a shard — its damage found, exit 1 — with a note that no
/// segment names it, never "no shard directory found here".
#[test]
fn a_folder_holding_only_an_epochs_file_is_judged() {
    let tmp = tempfile::tempdir().unwrap();
    let root = demo(tmp.path(), "root");
    let dir = tmp.path().join("only-epochs");
    std::fs::create_dir(&dir).unwrap();
    let bytes = std::fs::read(root.join(ORDERS).join("epochs")).unwrap();
    std::fs::write(dir.join("epochs"), &bytes[..20]).unwrap();
    let alone = json(&run(&["inspect", "--json", s(&dir.join("epochs"))]));
    let o = run(&["inspect", "--json", s(&dir)]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let r = json(&o);
    assert_eq!(r["files"].as_array().unwrap().len(), 1, "{r:#}");
    let f = &r["files"][0];
    assert_eq!((f["kind"].as_str(), f["shard"].as_str()), (Some("epochs"), Some("only-epochs")), "{r:#}");
    assert_eq!(f["findings"], alone["files"][0]["findings"], "the same damage as the file inspected alone");
    assert_eq!(f["findings"][0]["kind"], "Truncated", "{r:#}");
    assert!(f["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with("no segment names this shard")), "{r:#}");
    let note = format!(
        "{}: no segment (NNNNNNNNNNNNNNNNNNNN.log) names this shard: the Felix files it holds are judged as a shard's all the same",
        dir.display()
    );
    assert_eq!(r["notes"], serde_json::json!([note]), "{r:#}");
    let o = run(&["inspect", s(&dir)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(out(&o).contains(&format!("{}/epochs: Truncated at byte 0", dir.display())), "{}", out(&o));
    assert!(!err(&o).contains("no shard directory"), "{}", err(&o));
}

/// A damaged epochs file alone (issue 18's second review: the page said
/// "nothing to do" and gave no advice): recovery leaves it, and says what
/// to do about it — copy it from a replica, or let the next generation
/// rewrite it, which keeps the damaged copy.
#[test]
fn recover_says_what_to_do_about_a_damaged_epochs_file_it_leaves() {
    let tmp = tempfile::tempdir().unwrap();
    let root = demo(tmp.path(), "root");
    let dir = root.join(ORDERS);
    let epochs = dir.join("epochs");
    let mut bytes = std::fs::read(&epochs).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x40;
    std::fs::write(&epochs, &bytes).unwrap();
    let o = run(&["recover", "--dry-run", s(&dir)]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let advice = format!(
        "{}: epochs reads as empty and recovery leaves it as it is: copy it from a healthy replica of this shard, after moving \
         this replica's copy out of the shard's folder as evidence, or let the broker's next generation rewrite it (the engine \
         keeps the damaged copy as epochs.damaged)",
        dir.display()
    );
    assert!(out(&o).contains(&advice), "{}", out(&o));
    // Following it: the next generation rewrites the file and keeps the damaged one.
    let (shard, _) =
        felix_engine::Shard::open_dir(std::sync::Arc::new(felix_engine::OsIo::new()), &dir, felix_engine::Config::default()).unwrap();
    let latest = shard.epochs().last().map_or(0, |e| e.generation);
    shard.begin_generation(latest + 1).unwrap();
    drop(shard);
    assert_eq!(std::fs::read(dir.join("epochs.damaged")).unwrap(), bytes, "the damaged copy is kept, byte for byte");
    let o = run(&["recover", "--dry-run", s(&dir)]);
    assert!(!out(&o).contains("epochs reads as empty"), "{}", out(&o));
}

/// The entries of `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    names
}

/// Review finding 1: `recover` takes no lock in, and creates or removes
/// nothing in, a folder that no segment and no index names a shard — a
/// backup of an epochs file, moved evidence beside an engine temporary, a
/// root of linked shards holding a loose `epochs` — and says it left it
/// alone (a line; an entry in the JSON's `skipped`).
#[test]
fn recover_leaves_a_folder_no_segment_or_index_names_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let root = demo(tmp.path(), "root");
    let epochs = root.join(ORDERS).join("epochs");
    // A backup of an epochs file: clean, left alone, exit 0.
    let backup = tmp.path().join("e").join("backup");
    std::fs::create_dir_all(&backup).unwrap();
    std::fs::copy(&epochs, backup.join("epochs")).unwrap();
    let o = run(&["recover", s(&backup)]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        out(&o).starts_with(&format!("{}: left alone: no segment and no index names this folder a shard", backup.display())),
        "{}",
        out(&o)
    );
    assert_eq!(names_in(&backup), ["epochs"], "no writer.lock");
    // Moved evidence and an engine temporary in a folder under a root of shards.
    let moved = root.join("moved");
    std::fs::create_dir(&moved).unwrap();
    std::fs::write(moved.join("00000000000000000000.log.cut-207"), b"cut bytes").unwrap();
    std::fs::write(moved.join("00000000000000000000.log.tmp"), b"half a segment").unwrap();
    let before = names_in(&moved);
    let o = run(&["recover", s(&root), "--json"]);
    assert_eq!(o.status.code(), Some(1), "a temporary recovery would remove remains: {}", err(&o));
    let plan = json(&o);
    assert_eq!(plan["skipped"].as_array().unwrap().len(), 1, "{plan:#}");
    assert_eq!(plan["skipped"][0]["path"], s(&moved), "{plan:#}");
    assert!(plan["skipped"][0]["reason"].as_str().unwrap().starts_with("no segment and no index"), "{plan:#}");
    assert!(plan["shards"].as_array().unwrap().iter().all(|p| p["path"] != s(&moved)), "{plan:#}");
    assert_eq!(names_in(&moved), before, "the temporary is kept, no writer.lock");
    // A root whose shards are links, holding a loose epochs file.
    let linked = tmp.path().join("linked");
    std::fs::create_dir(&linked).unwrap();
    std::os::unix::fs::symlink(root.join(ORDERS), linked.join(ORDERS)).unwrap();
    std::fs::copy(&epochs, linked.join("epochs")).unwrap();
    let o = run(&["recover", s(&linked)]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).contains(&format!("{}: left alone: ", linked.display())), "{}", out(&o));
    assert_eq!(names_in(&linked), [ORDERS, "epochs"], "no writer.lock");
    // The dry run says the same, and a reviewed plan of it runs.
    let o = run(&["recover", s(&backup), "--dry-run", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let reviewed = tmp.path().join("plan.json");
    std::fs::write(&reviewed, &o.stdout).unwrap();
    assert_eq!(json(&o)["skipped"][0]["path"], s(&backup));
    let o = run(&["recover", s(&backup), "--plan", s(&reviewed)]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(names_in(&backup), ["epochs"]);
}

/// Review finding 2: a cut stopped by a full disk after its evidence was
/// copied, before its note was written, leaves no file its account does not
/// tell — no published evidence, no temporary — and the rerun, once there
/// is space, keeps the evidence under the first name, not `-2`. A 1 MiB
/// tmpfs in a mount namespace of its own, filled but for the evidence's pages.
#[test]
fn recover_stopped_by_a_full_disk_leaves_no_file_it_does_not_tell() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    let b = produce(&src, "b/default/s/0", "one\ntwo\nthree\n");
    let cut = tear(&b, 3, 100_000, 50_000);
    let mount = tmp.path().join("small");
    std::fs::create_dir(&mount).unwrap();
    let report = tmp.path().join("report");
    std::fs::create_dir(&report).unwrap();
    let shard = mount.join(b.file_name().unwrap());
    let script = r#"set -e
mount -t tmpfs -o size=1m tmpfs "$1"
cp -a "$2" "$1/"
dd if=/dev/zero of="$1/fill" bs=4096 2>/dev/null || true
truncate -s -53248 "$1/fill"
set +e
"$4" recover "$3" --json > "$5/json1"; echo $? > "$5/rc1"
ls -a "$3" > "$5/ls1"
rm "$1/fill"
"$4" recover "$3" --json > "$5/json2"; echo $? > "$5/rc2"
ls -a "$3" > "$5/ls2"
"#;
    let o = Command::new("unshare")
        .args(["--mount", "--map-root-user", "sh", "-c", script, "sh"])
        .args([s(&mount), s(&b), s(&shard), bin(), s(&report)])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", err(&o));
    let read = |name: &str| std::fs::read_to_string(report.join(name)).unwrap();
    assert_eq!(read("rc1").trim(), "2", "{}", err(&o));
    let plan: Value = serde_json::from_str(&read("json1")).unwrap();
    assert_eq!(plan["stopped"]["done"], serde_json::json!([]), "{plan:#}");
    assert!(plan["stopped"]["error"].as_str().unwrap().contains("No space left on device"), "{plan:#}");
    let leftover = read("ls1");
    assert!(!leftover.contains("cut-") && !leftover.contains(".tmp"), "nothing the account does not tell: {leftover}");
    assert_eq!(read("rc2").trim(), "0");
    let plan: Value = serde_json::from_str(&read("json2")).unwrap();
    assert_eq!(plan["shards"][0]["actions"][0]["evidence"], format!("00000000000000000000.log.cut-{cut}"), "{plan:#}");
    let after = read("ls2");
    assert!(after.contains(&format!("00000000000000000000.log.cut-{cut}\n")) && !after.contains(&format!("cut-{cut}-2")), "{after}");
    assert!(!after.contains(".tmp"), "{after}");
}

/// Review finding 6: `recover --json` of a root goes on past a shard it
/// cannot take now — a live writer holds it, or (under `--plan`) its plan
/// changed since it was reviewed — and gives it an entry in `skipped`, as
/// the run of that shard alone gives it one in `stopped`: exit 1.
#[test]
fn recover_json_of_a_root_lists_every_shard_it_skipped() {
    use std::io::{BufRead, Write};
    let tmp = tempfile::tempdir().unwrap();
    let root = demo(tmp.path(), "root");
    let mut child = Command::new(bin())
        .args(["produce", s(&root), "--shard", "acme/default/orders/0", "--batch", "1"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"held\n").unwrap();
    stdin.flush().unwrap();
    let mut acknowledged = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut acknowledged).unwrap();
    assert!(!acknowledged.is_empty(), "the writer holds the shard");
    let o = run(&["recover", s(&root), "--json"]);
    drop(stdin);
    let _ = child.wait();
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let plan = json(&o);
    let skipped = plan["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{plan:#}");
    assert_eq!(skipped[0]["path"], s(&root.join(ORDERS)), "{plan:#}");
    assert!(skipped[0]["reason"].as_str().unwrap().contains("open for writing by another process"), "{plan:#}");
    assert!(plan["shards"].as_array().unwrap().iter().all(|p| p["path"] != s(&root.join(ORDERS))), "{plan:#}");
    // A plan reviewed, then a shard changed: that shard skipped, named, the rest recovered.
    let reviewed = tmp.path().join("plan.json");
    let o = run(&["recover", s(&root), "--dry-run", "--json"]);
    std::fs::write(&reviewed, &o.stdout).unwrap();
    tear(&root.join(CLICKS), 1_000_000, 100, 60);
    let o = run(&["recover", s(&root), "--json", "--plan", s(&reviewed)]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let plan = json(&o);
    let skipped = plan["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{plan:#}");
    assert_eq!(skipped[0]["path"], s(&root.join(CLICKS)), "{plan:#}");
    assert!(skipped[0]["reason"].as_str().unwrap().contains("the reviewed plan says"), "{plan:#}");
}

/// Review finding 4: an index with 12,000 entries past its segment's end
/// (each a mismatch) in a shard recovery refuses. `inspect` lists 10,000 of
/// them and counts the other 2,000 in `findings_omitted` (the check against
/// the record chain dropped them uncounted before); the refused plan lists
/// the same 10,000 and counts the rest in `remaining_omitted`, and its text
/// says so.
#[test]
fn a_refused_plan_counts_the_findings_it_does_not_list() {
    let tmp = tempfile::tempdir().unwrap();
    let root = demo(tmp.path(), "root");
    let dir = root.join(ORDERS);
    let log_len = std::fs::metadata(dir.join("00000000000000000000.log")).unwrap().len();
    let index = dir.join("00000000000000000000.index");
    let mut bytes = std::fs::read(&index).unwrap();
    let last_offset = u64::from_be_bytes(bytes[bytes.len() - 16..][..8].try_into().unwrap());
    for k in 1..=12_000u64 {
        bytes.extend_from_slice(&(last_offset + k).to_be_bytes());
        bytes.extend_from_slice(&(log_len + 64 * k).to_be_bytes());
    }
    std::fs::write(&index, &bytes).unwrap();
    let log = dir.join("00000000000000000001.log");
    let mut rot = std::fs::read(&log).unwrap();
    rot[200] ^= 0x40;
    std::fs::write(&log, &rot).unwrap();
    let r = json(&run(&["inspect", "--json", s(&dir)]));
    let ix = r["files"].as_array().unwrap().iter().find(|f| f["path"] == s(&index)).unwrap();
    let listed = ix["findings"].as_array().unwrap().len() as u64;
    let omitted = ix["findings_omitted"].as_u64().unwrap();
    assert!(omitted > 0, "listed {listed}, omitted {omitted}");
    assert!(listed + omitted >= 12_000, "listed {listed}, omitted {omitted}");
    let o = run(&["recover", s(&dir), "--dry-run", "--json"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let plan = json(&o);
    let shard = &plan["shards"][0];
    let index_name = "00000000000000000000.index";
    let remaining = shard["remaining_findings"].as_array().unwrap().iter().filter(|f| f["file"] == index_name).count() as u64;
    assert_eq!(remaining, listed);
    assert_eq!(shard["remaining_omitted"].as_u64(), Some(omitted));
    let o = run(&["recover", s(&dir), "--dry-run"]);
    assert!(out(&o).contains(&format!("{}: remains: {omitted} more findings not listed", dir.display())), "{}", out(&o));
}

/// Review finding 5: an empty subdirectory beside a damaged `epochs` file,
/// a folder holding only a FIFO named `epochs` or `…0.log`, and a damaged
/// `epochs` loose in a root of shards: each Felix name is judged (its damage
/// found, exit 1) or refused (exit 1), never "no shard directory found
/// here", never "clean … not inspected".
#[test]
fn every_felix_name_found_is_judged_or_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = demo(tmp.path(), "root");
    let short = std::fs::read(root.join(ORDERS).join("epochs")).unwrap()[..20].to_vec();
    let b = tmp.path().join("b");
    std::fs::create_dir_all(b.join("sub")).unwrap();
    std::fs::write(b.join("epochs"), &short).unwrap();
    let o = run(&["inspect", "--json", s(&b)]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let r = json(&o);
    assert_eq!(r["files"][0]["path"], s(&b.join("epochs")), "{r:#}");
    assert_eq!(r["files"][0]["findings"][0]["kind"], "Truncated", "{r:#}");
    for name in ["epochs", "00000000000000000000.log"] {
        let dir = tmp.path().join(format!("fifo-{name}"));
        std::fs::create_dir(&dir).unwrap();
        assert!(Command::new("mkfifo").arg(dir.join(name)).status().unwrap().success());
        let o = run(&["inspect", s(&dir)]);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", err(&o));
        assert!(!err(&o).contains("no shard directory"), "{}", err(&o));
        assert!(
            out(&o).contains(&format!("{}: note: not a regular file (a FIFO, socket or device)", dir.join(name).display())),
            "{}",
            out(&o)
        );
    }
    // A damaged epochs file loose in a root of shards: judged, exit 1; recover leaves it be.
    std::fs::write(root.join("epochs"), &short).unwrap();
    let o = run(&["inspect", s(&root)]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let text = out(&o);
    assert!(text.contains(&format!("{}: Truncated at byte 0", root.join("epochs").display())), "{text}");
    assert!(!text.contains("not inspected"), "{text}");
    let o = run(&["recover", s(&root), "--dry-run"]);
    assert!(err(&o).contains(&format!("{}: a Felix file loose in a folder", root.join("epochs").display())), "{}", err(&o));
    assert_eq!(std::fs::read(root.join("epochs")).unwrap(), short);
}

/// Review finding 7: the command a stopped `recover` suggests is one to
/// paste only when the shard's path is plain printable text; a path holding
/// a newline (shown escaped, so pasting it would name another path) gets
/// words instead. `--repair-checksum-tail` is kept when the run had it.
#[test]
fn a_stopped_recover_suggests_a_command_to_paste_only_for_a_plain_path() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, plain) in [("plain", true), ("evil\nFORGED", false)] {
        let root = tmp.path().join(name);
        let b = produce(&root, "b/default/s/0", "one\ntwo\nthree\n");
        tear(&b, 3, 16 << 20, 8 << 20);
        let o = run_file_size_limited(&["recover", s(&b), "--repair-checksum-tail"]);
        assert_eq!(o.status.code(), Some(2), "{}", err(&o));
        let e = err(&o);
        assert_eq!(e.lines().count(), 1, "{e}");
        let want = if plain {
            format!(
                "; the shard stopped there: deal with the cause, then run `felix-storage recover {} --repair-checksum-tail`\n",
                b.display()
            )
        } else {
            "; the shard stopped there: deal with the cause, then run `felix-storage recover --repair-checksum-tail` on the shard directory named above\n"
                .to_string()
        };
        assert!(e.ends_with(&want), "{e}");
    }
}

/// Review finding 8: clap's own error quotes the argument it rejects; an
/// escape sequence and a newline in it are shown escaped (no ESC reaches
/// the terminal, no forged line), exit 2 as before.
#[test]
fn a_hostile_argument_is_escaped_in_clap_s_error() {
    let o = run(&["inspect", "--x\u{1b}[31mRED\nFORGED"]);
    assert_eq!(o.status.code(), Some(2));
    let e = err(&o);
    assert!(!e.contains('\u{1b}'), "{e:?}");
    assert!(e.lines().all(|l| !l.starts_with("FORGED")), "{e}");
    assert!(e.starts_with("error: unexpected argument '--x\\u{1b}[31mRED\\nFORGED' found\n"), "{e}");
    let o = run(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
}

/// Review finding 8: the one escaper escapes the line and paragraph
/// separators, the zero-width characters and the backslash itself, so a
/// name holding a literal `\n` is shown apart from one holding a newline.
#[test]
fn a_literal_backslash_n_is_shown_apart_from_a_newline() {
    let tmp = tempfile::tempdir().unwrap();
    let mut shown = Vec::new();
    for name in ["a\\nb.bin", "a\nb.bin", "a\u{2028}b\u{200b}c\u{feff}.bin"] {
        let path = tmp.path().join(name);
        std::fs::write(&path, b"x").unwrap();
        let o = run(&["inspect", s(&path)]);
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        let first = out(&o).lines().next().unwrap().to_string();
        shown.push(first);
    }
    let dir = tmp.path().display().to_string();
    assert!(shown[0].starts_with(&format!("{dir}/a\\\\nb.bin: ")), "{}", shown[0]);
    assert!(shown[1].starts_with(&format!("{dir}/a\\nb.bin: ")), "{}", shown[1]);
    assert!(shown[2].starts_with(&format!("{dir}/a\\u{{2028}}b\\u{{200b}}c\\u{{feff}}.bin: ")), "{}", shown[2]);
}

/// Review, smaller: a negative shard number is out of range (the minimum
/// is 0), not "not a whole number".
#[test]
fn a_negative_shard_number_is_out_of_range() {
    let tmp = tempfile::tempdir().unwrap();
    let o = run(&["consume", s(tmp.path()), "--shard", "a/b/c/-1"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(err(&o), "felix-storage: --shard \"a/b/c/-1\": the shard number -1 is out of range: the minimum is 0\n");
}

/// Review, smaller: `recover --plan` of a FIFO is refused at once (it
/// would wait for a writer forever), exit 2, nothing recovered.
#[test]
fn recover_refuses_a_plan_that_is_not_a_regular_file() {
    let tmp = tempfile::tempdir().unwrap();
    let root = demo(tmp.path(), "root");
    let fifo = tmp.path().join("plan.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let o = Command::new("timeout").args(["10", bin(), "recover", s(&root), "--plan", s(&fifo)]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert_eq!(
        err(&o),
        format!("felix-storage: {}: not a regular file; give the file recover --dry-run --json printed to\n", fifo.display())
    );
}

/// Review, smaller: `recover ROOT | true` — the reader gone before the plan
/// is printed — still exits with the status the run earned (1: damage
/// remains in the demo root), never 0.
#[test]
fn recover_keeps_its_exit_status_when_the_reader_goes_away() {
    let tmp = tempfile::tempdir().unwrap();
    let root = demo(tmp.path(), "root");
    let alone = run(&["recover", s(&root), "--dry-run"]);
    assert_eq!(alone.status.code(), Some(1), "{}", err(&alone));
    for extra in [&[][..], &["--json"][..]] {
        let o = Command::new("bash")
            .args(["-c", "set -o pipefail; \"$0\" \"$@\" | true", bin(), "recover", s(&root), "--dry-run"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {}", err(&o));
    }
}

/// Review, smaller: `consume` of a shard holding only an `epochs` file
/// says that nothing is stored, not that offset 0 was trimmed with "the
/// oldest stored offset" one no segment holds.
#[test]
fn consume_of_a_shard_with_no_segment_says_nothing_is_stored() {
    let tmp = tempfile::tempdir().unwrap();
    let root = demo(tmp.path(), "root");
    let other = tmp.path().join("other");
    std::fs::create_dir_all(other.join(ORDERS)).unwrap();
    std::fs::copy(root.join(ORDERS).join("epochs"), other.join(ORDERS).join("epochs")).unwrap();
    let o = run(&["consume", s(&other), "--shard", "acme/default/orders/0"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let e = err(&o);
    assert!(e.starts_with(&format!("felix-storage: {}: no segment is stored in this shard", other.join(ORDERS).display())), "{e}");
    assert!(!e.contains("trimmed"), "{e}");
}
