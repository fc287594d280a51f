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
