//! `felix-storage recover --json` on a `demo` root: the dry run prints the
//! plan, the real run executes exactly that plan and prints what it did in
//! the same shape, and the disk afterwards is what the plan said.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_felix-storage")).args(args).output().unwrap()
}

fn plan(args: &[&str]) -> (Option<i32>, Value) {
    let o = run(args);
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code(), v)
}

fn actions<'a>(shard: &'a Value, kind: &str) -> Vec<&'a Value> {
    shard["actions"].as_array().unwrap().iter().filter(|a| a["action"] == kind).collect()
}

#[test]
fn the_real_run_executes_exactly_the_dry_runs_plan_on_a_demo_root() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sample");
    let r = root.to_str().unwrap();
    assert!(run(&["demo", r]).status.success());
    let (dry_code, dry) = plan(&["recover", r, "--dry-run", "--json"]);
    assert_eq!(dry["plan_version"], 1);
    let shards = dry["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 4, "one plan per demo shard");
    // Every kind of action the demo calls for, each in the documented shape.
    let all: Vec<&Value> = shards.iter().flat_map(|s| s["actions"].as_array().unwrap()).collect();
    for a in &all {
        assert!(a["file"].is_string() && a["reason"].is_string(), "{a}");
        let fields: Vec<&str> = a.as_object().unwrap().keys().map(String::as_str).collect();
        for f in fields {
            assert!(
                ["action", "file", "position", "bytes", "reason", "evidence", "kind", "allowed_by"].contains(&f),
                "unexpected field {f} in {a}"
            );
        }
    }
    let kinds: std::collections::BTreeSet<&str> = all.iter().map(|a| a["action"].as_str().unwrap()).collect();
    assert!(kinds.contains("cut") && kinds.contains("rebuild-index") && kinds.contains("refuse"), "{kinds:?}");
    assert_eq!(dry_code, Some(1), "a refusal or a finding that remains is exit 1");

    // Sizes and bytes before, for every cut.
    let mut cuts = Vec::new();
    for s in shards {
        for c in actions(s, "cut") {
            let path = Path::new(s["path"].as_str().unwrap()).join(c["file"].as_str().unwrap());
            let bytes = std::fs::read(&path).unwrap();
            cuts.push((s["path"].as_str().unwrap().to_owned(), c.clone(), bytes));
        }
    }
    assert!(!cuts.is_empty());

    let (code, real) = plan(&["recover", r, "--json"]);
    assert_eq!(real, dry, "the real run prints exactly the plan it was shown, in the same shape");
    assert_eq!(code, dry_code);

    // What the plan said is what happened.
    for (dir, cut, before) in &cuts {
        let dir = Path::new(dir);
        let position = usize::try_from(cut["position"].as_u64().unwrap()).unwrap();
        let bytes = usize::try_from(cut["bytes"].as_u64().unwrap()).unwrap();
        let after = std::fs::read(dir.join(cut["file"].as_str().unwrap())).unwrap();
        assert_eq!(after, before[..position], "cut at the planned byte");
        let evidence = std::fs::read(dir.join(cut["evidence"].as_str().unwrap())).unwrap();
        assert_eq!(evidence.len(), bytes);
        assert_eq!(evidence, before[position..], "the cut bytes are kept, all of them");
    }
    // Planned again: only the refusals are left, and what remains is what the plan said would.
    let (_, again) = plan(&["recover", r, "--dry-run", "--json"]);
    for (was, now) in dry["shards"].as_array().unwrap().iter().zip(again["shards"].as_array().unwrap()) {
        assert_eq!(now["path"], was["path"]);
        let refusals: Vec<&Value> = actions(was, "refuse");
        if refusals.is_empty() {
            assert_eq!(now["actions"], serde_json::json!([]), "{}: nothing left to do", was["path"]);
            assert_eq!(now["remaining_findings"], was["remaining_findings"]);
        } else {
            assert_eq!(now, was, "a refused shard is not changed at all");
        }
    }
}

#[test]
fn a_second_cut_at_the_same_byte_is_printed_with_the_evidence_name_it_used() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sample");
    let r = root.to_str().unwrap();
    assert!(run(&["demo", r]).status.success());
    let (_, dry) = plan(&["recover", r, "--dry-run", "--json"]);
    let (shard, cut) =
        dry["shards"].as_array().unwrap().iter().find_map(|s| actions(s, "cut").first().map(|c| (s.clone(), (*c).clone()))).unwrap();
    let dir = Path::new(shard["path"].as_str().unwrap());
    let planned = cut["evidence"].as_str().unwrap();
    // Someone already keeps a file under the planned name: it is never replaced.
    std::fs::write(dir.join(planned), b"older evidence").unwrap();
    let (_, real) = plan(&["recover", r, "--json"]);
    let done = real["shards"].as_array().unwrap().iter().find(|s| s["path"] == shard["path"]).unwrap();
    let used = actions(done, "cut")[0]["evidence"].as_str().unwrap().to_owned();
    assert_eq!(used, format!("{planned}-2"));
    assert_eq!(std::fs::read(dir.join(planned)).unwrap(), b"older evidence");
    assert_eq!(std::fs::metadata(dir.join(&used)).unwrap().len(), cut["bytes"].as_u64().unwrap());
}

/// The payments shard of a demo root and its cut (file, position, bytes).
fn payments_cut(plan: &Value) -> (std::path::PathBuf, u64, u64) {
    let shard = plan["shards"].as_array().unwrap().iter().find(|s| s["path"].as_str().unwrap().contains("payments")).unwrap();
    let cut = actions(shard, "cut")[0];
    let file = Path::new(shard["path"].as_str().unwrap()).join(cut["file"].as_str().unwrap());
    (file, cut["position"].as_u64().unwrap(), cut["bytes"].as_u64().unwrap())
}

#[test]
fn recover_with_the_reviewed_plan_runs_it_and_refuses_a_shard_that_changed_since() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sample");
    let r = root.to_str().unwrap();
    assert!(run(&["demo", r]).status.success());
    let dry = run(&["recover", r, "--dry-run", "--json"]);
    let reviewed = tmp.path().join("plan.json");
    std::fs::write(&reviewed, &dry.stdout).unwrap();
    let p = reviewed.to_str().unwrap();
    let dry: Value = serde_json::from_slice(&dry.stdout).unwrap();
    let (log, position, bytes) = payments_cut(&dry);
    assert_eq!((position, bytes), (1064, 77));

    // The torn tail changes after the review: the shard now needs a 36-byte cut, not the 77 bytes reviewed.
    std::fs::OpenOptions::new().write(true).open(&log).unwrap().set_len(1100).unwrap();
    let o = run(&["recover", r, "--plan", p]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("the shard changed since the reviewed plan (action 1: the reviewed plan says cut 00000000000000000001.log at byte 1064 (77 bytes, Truncated); the shard now needs cut 00000000000000000001.log at byte 1064 (36 bytes, Truncated)); nothing was changed"),
        "{err}"
    );
    assert_eq!(std::fs::metadata(&log).unwrap().len(), 1100, "the changed shard is left as it is");
    let evidence: Vec<_> = std::fs::read_dir(log.parent().unwrap())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains(".cut-"))
        .collect();
    assert!(evidence.is_empty(), "no evidence, no cut");
    // The other shards ran their reviewed plans: planned again, only refusals are left.
    let (_, after) = plan(&["recover", r, "--dry-run", "--json"]);
    for s in after["shards"].as_array().unwrap() {
        let left: Vec<&str> = s["actions"].as_array().unwrap().iter().map(|a| a["action"].as_str().unwrap()).collect();
        assert!(left.iter().all(|a| *a == "refuse") || s["path"].as_str().unwrap().contains("payments"), "{s}");
    }

    // Reviewed again, the new plan runs.
    let dry = run(&["recover", r, "--dry-run", "--json"]);
    std::fs::write(&reviewed, &dry.stdout).unwrap();
    let o = run(&["recover", r, "--plan", p]);
    assert_eq!(o.status.code(), Some(1), "the refused shard remains: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::metadata(&log).unwrap().len(), 1064);
}

#[test]
fn a_plan_file_that_is_not_the_runs_is_refused_before_anything_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sample");
    let r = root.to_str().unwrap();
    assert!(run(&["demo", r]).status.success());
    let dry: Value = serde_json::from_slice(&run(&["recover", r, "--dry-run", "--json"]).stdout).unwrap();
    let (log, _, _) = payments_cut(&dry);
    let size = std::fs::metadata(&log).unwrap().len();
    let write = |name: &str, text: &str| {
        let path = tmp.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let mut one_shard = dry.clone();
    one_shard["shards"].as_array_mut().unwrap().truncate(1);
    let mut twice = dry.clone();
    let first = twice["shards"][0].clone();
    twice["shards"].as_array_mut().unwrap().push(first);
    let mut v2 = dry.clone();
    v2["plan_version"] = 2.into();
    let cases = [
        (write("garbage.json", "{\"plan_version\": 1, \"shards\": [}"), "not a plan (line 1, column 32)"),
        (write("one.json", &one_shard.to_string()), "has no plan for"),
        (write("twice.json", &twice.to_string()), "twice"),
        (write("v2.json", &v2.to_string()), "plan_version 2 (this build reads 1)"),
        (tmp.path().join("missing.json").to_str().unwrap().to_owned(), "missing.json: No such file"),
    ];
    for (file, says) in &cases {
        let o = run(&["recover", r, "--plan", file]);
        assert_eq!(o.status.code(), Some(2), "{file}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{file}: {err}");
        assert_eq!(std::fs::metadata(&log).unwrap().len(), size, "{file}: nothing changed");
    }
    // A plan for a root, given one shard of it: the other shards are not this run's.
    let shard = log.parent().unwrap().to_str().unwrap();
    let whole = write("whole.json", &dry.to_string());
    let o = run(&["recover", shard, "--plan", &whole]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("which this run does not recover"));
    // --plan with --dry-run is a usage error.
    assert_eq!(run(&["recover", r, "--dry-run", "--plan", &whole]).status.code(), Some(2));
    assert_eq!(std::fs::metadata(&log).unwrap().len(), size);
}

/// A rollover a crash left unfinished as upstream's broker leaves one — the
/// next segment built (a header, no record, a base past the retired
/// segment's whole records) and the retired segment's last record torn —
/// reads as what it is: `inspect`'s verdict names the torn tail and the
/// unfinished segment, with a note on that file; `recover` removes the one
/// (bytes kept as evidence) and cuts the other, and `inspect` then finds
/// the shard clean.
#[test]
fn an_unfinished_rollover_with_a_torn_retired_segment_is_recovered_as_inspect_says() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let r = root.to_str().unwrap();
    let mut produce = Command::new(env!("CARGO_BIN_EXE_felix-storage"))
        .args(["produce", "--shard", "acme/default/orders/0", r])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut produce.stdin.take().unwrap(), b"one\ntwo\nthree\nfour\n").unwrap();
    assert!(produce.wait().unwrap().success());
    let shard = std::fs::read_dir(&root).unwrap().next().unwrap().unwrap().path();
    let s = shard.to_str().unwrap();
    let retired = shard.join("00000000000000000000.log");
    let len = std::fs::metadata(&retired).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&retired).unwrap().set_len(len - 2).unwrap();
    let header = felix_codec::format::segment_header::SegmentHeader::new(4, 1_700_000_000_000_000).encode();
    std::fs::write(shard.join("00000000000000000001.log"), header).unwrap();
    let text = |o: &Output| String::from_utf8(o.stdout.clone()).unwrap();
    let before = text(&run(&["inspect", s]));
    assert!(before.contains(": verdict: a torn tail and 1 unfinished segment that `recover` would fix\n"), "{before}");
    assert!(
        before.contains("00000000000000000001.log: note: a rollover that never took effect: this segment holds a header and no record, and its base offset 4 is not where the segment before it ends (offset 3 would follow)"),
        "{before}"
    );
    assert!(!before.contains("00000000000000000001.log: note: no index file"), "recovery removes it, rebuilds nothing: {before}");
    let (code, done) = plan(&["recover", s, "--json"]);
    assert_eq!(code, Some(0), "{done}");
    let shard_plan = &done["shards"][0];
    assert_eq!(actions(shard_plan, "remove-unfinished")[0]["evidence"], "00000000000000000001.log.cut-0");
    assert_eq!(actions(shard_plan, "cut")[0]["file"], "00000000000000000000.log");
    assert_eq!(std::fs::read(shard.join("00000000000000000001.log.cut-0")).unwrap(), header);
    let after = run(&["inspect", s]);
    assert_eq!(after.status.code(), Some(0), "{}", text(&after));
    assert!(text(&after).contains(": verdict: clean: nothing to do\n"), "{}", text(&after));
}
