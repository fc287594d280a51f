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

/// A root `felix-storage demo` made, in a temporary directory kept alive by the first value.
fn demo_root() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sample");
    assert!(run(&["demo", root.to_str().unwrap()]).status.success());
    (tmp, root)
}

#[test]
fn the_real_run_executes_exactly_the_dry_runs_plan_on_a_demo_root() {
    let (_tmp, root) = demo_root();
    let r = root.to_str().unwrap();
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
fn a_second_cut_at_the_same_byte_is_planned_and_printed_with_the_evidence_name_it_uses() {
    let (_tmp, root) = demo_root();
    let r = root.to_str().unwrap();
    let (_, dry) = plan(&["recover", r, "--dry-run", "--json"]);
    let (shard, cut) =
        dry["shards"].as_array().unwrap().iter().find_map(|s| actions(s, "cut").first().map(|c| (s.clone(), (*c).clone()))).unwrap();
    let dir = Path::new(shard["path"].as_str().unwrap());
    let planned = cut["evidence"].as_str().unwrap();
    // Someone already keeps a file under the planned name: it is never
    // replaced, and the dry run now names the file the real run writes,
    // as the engine's own plan on open does.
    std::fs::write(dir.join(planned), b"older evidence").unwrap();
    let (_, again) = plan(&["recover", r, "--dry-run", "--json"]);
    let replanned = again["shards"].as_array().unwrap().iter().find(|s| s["path"] == shard["path"]).unwrap();
    assert_eq!(actions(replanned, "cut")[0]["evidence"].as_str().unwrap(), format!("{planned}-2"));
    let (engine, recover) = engine_and_recover_plans(dir);
    assert_eq!(engine, recover, "the broker's open plans the same names");
    let text = String::from_utf8(run(&["recover", r, "--dry-run"]).stdout).unwrap();
    assert!(text.contains(&format!("would be kept in {planned}-2\n")), "{text}");
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
    let (tmp, root) = demo_root();
    let r = root.to_str().unwrap();
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
    let (tmp, root) = demo_root();
    let r = root.to_str().unwrap();
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
    let (_tmp, shard) = produced(b"one\ntwo\nthree\nfour\n");
    let s = shard.to_str().unwrap();
    cut_end(&shard.join("00000000000000000000.log"), 2);
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

/// A shard `produce` made, its segment 0 holding records 0..=9 (the `produce`
/// runs' own files removed), and `planted` segments written beside it.
fn shard_with(planted: &[(u64, Vec<u8>)], segment_0: impl FnOnce(Vec<u8>) -> Vec<u8>) -> (tempfile::TempDir, std::path::PathBuf) {
    use felix_codec::format::record::encode_record;
    use felix_codec::format::segment_header::SegmentHeader;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let produced = Command::new(env!("CARGO_BIN_EXE_felix-storage"))
        .args(["produce", "--shard", "acme/default/orders/0", root.to_str().unwrap()])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(produced.status.success(), "{produced:?}");
    let shard = std::fs::read_dir(&root).unwrap().next().unwrap().unwrap().path();
    for f in std::fs::read_dir(&shard).unwrap() {
        let p = f.unwrap().path();
        if p.extension().is_some_and(|e| e == "log" || e == "index") {
            std::fs::remove_file(p).unwrap();
        }
    }
    let mut seg = SegmentHeader::new(0, 1_700_000_000_000_000).encode().to_vec();
    for o in 0..10u64 {
        encode_record(o, 1_700_000_000_000_001, format!("payload-{o}").as_bytes(), &mut seg).unwrap();
    }
    std::fs::write(shard.join("00000000000000000000.log"), segment_0(seg)).unwrap();
    for (id, bytes) in planted {
        std::fs::write(shard.join(format!("{id:020}.log")), bytes).unwrap();
    }
    (tmp, shard)
}

fn files_in(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        // The lock file names the last process that held it.
        .filter(|p| !p.ends_with("writer.lock"))
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    all.sort();
    all
}

/// The engine's own plan for a shard (a reader's open), and `recover`'s,
/// action for action.
fn engine_and_recover_plans(shard: &Path) -> (Vec<felix_codec::shard::recovery::Action>, Vec<felix_codec::shard::recovery::Action>) {
    use std::sync::Arc;
    let io: Arc<dyn felix_engine::Io> = Arc::new(felix_engine::OsIo::default());
    let (_, engine) = felix_engine::Shard::open_read_only(io.clone(), shard, felix_engine::Config::default()).unwrap();
    let recover = felix_engine::tools::recover::plan(io, shard, felix_codec::verdict::repair::RepairOptions::default()).unwrap();
    (engine.plan.actions, recover.plan.actions)
}

/// A segment that is only a prefix of a header, and not the newest one, is
/// damage `recover` refuses ("copy it from a replica") even when the
/// segments after it never took effect — a prefix of a header after a
/// segment whose header verifies, or an unfinished creation after it. The
/// broker's open refuses it too, and changes nothing: it does not remove
/// what `recover` refuses to touch.
#[test]
fn a_header_prefix_before_segments_that_never_took_effect_is_refused_by_recover_and_the_broker_alike() {
    use felix_codec::format::segment_header::SegmentHeader;
    let header = |base: u64| SegmentHeader::new(base, 1_700_000_000_000_000).encode().to_vec();
    let cases = [("a finished roll after it", header(10)), ("an unfinished creation after it", header(10)[..5].to_vec())];
    for (what, newest) in cases {
        let (tmp, shard) = shard_with(&[(1, header(10)[..10].to_vec()), (2, newest)], |s| s);
        let s = shard.to_str().unwrap();
        let (engine, recover) = engine_and_recover_plans(&shard);
        assert_eq!(engine, recover, "{what}: the broker's plan is recover's");
        let (code, dry) = plan(&["recover", s, "--dry-run", "--json"]);
        assert_eq!(code, Some(1), "{what}: {dry}");
        assert_eq!(actions(&dry["shards"][0], "refuse")[0]["file"], "00000000000000000001.log", "{what}");
        let before = files_in(&shard);
        let root = tmp.path().join("root");
        let mut produce = Command::new(env!("CARGO_BIN_EXE_felix-storage"))
            .args(["produce", "--shard", "acme/default/orders/0", root.to_str().unwrap()])
            .stdin(std::process::Stdio::piped())
            .output()
            .unwrap();
        produce.stdout.clear();
        assert!(!produce.status.success(), "{what}: the broker's open refuses what recover refuses");
        assert_eq!(files_in(&shard), before, "{what}: and changes nothing");
    }
}

/// The end of a damaged segment that the next segment is measured against
/// is the one `inspect` names — after its last intact record — for the
/// broker's open too, which reads a sealed segment only up to its first
/// damage: a finished roll after a segment rotted in the middle is kept by
/// both, and a header-only segment at a base below that end is removed by
/// both (each refusing the rot).
#[test]
fn a_roll_after_a_segment_rotted_in_the_middle_is_judged_by_the_broker_as_recover_judges_it() {
    use felix_codec::format::segment_header::SegmentHeader;
    let header = |base: u64| SegmentHeader::new(base, 1_700_000_000_000_000).encode().to_vec();
    // Records are 37 bytes (28 + "payload-N"); rot in record 7's payload, or in its header.
    for (rot, at) in [("a record's payload", 32 + 7 * 37 + 30), ("a record's header", 32 + 7 * 37 + 2)] {
        for (base, kept) in [(10, true), (4, false)] {
            let (_tmp, shard) = shard_with(&[(1, header(base))], |mut s| {
                s[at] ^= 0xff;
                s
            });
            let (engine, recover) = engine_and_recover_plans(&shard);
            assert_eq!(engine, recover, "{rot}, a roll at {base}: the broker's plan is recover's");
            let removes = recover.iter().any(|a| matches!(a, felix_codec::shard::recovery::Action::RemoveUnfinished { .. }));
            assert_eq!(removes, !kept, "{rot}, a roll at {base}: {recover:?}");
            assert!(recover.iter().any(|a| matches!(a, felix_codec::shard::recovery::Action::Refuse { .. })), "{rot}, {base}");
        }
    }
}

/// A segment whose header is rejected tells no end the next segment could
/// be measured against: a header-only newest segment after it is not judged
/// a rollover that never took effect, nor a discontinuity — by `inspect`,
/// `recover` or the broker's open — whatever its base; and no index is
/// rebuilt from it. The broker's plan is `recover`'s, action for action.
#[test]
fn a_header_only_segment_after_a_rejected_header_is_judged_alike_by_inspect_recover_and_the_broker() {
    use felix_codec::format::segment_header::SegmentHeader;
    use felix_codec::shard::recovery::Action;
    let header = |base: u64| SegmentHeader::new(base, 1_700_000_000_000_000).encode().to_vec();
    for base in [10, 4] {
        let (_tmp, shard) = shard_with(&[(1, header(base))], |mut s| {
            s[10] ^= 0xff;
            s
        });
        let (engine, recover) = engine_and_recover_plans(&shard);
        assert_eq!(engine, recover, "a roll at {base}: the broker's plan is recover's, refusal and all");
        let removes = |plan: &[Action]| plan.iter().any(|a| matches!(a, Action::RemoveUnfinished { .. }));
        assert!(!removes(&recover), "a roll at {base}: {recover:?}");
        // One refusal, of the segment whose header is rejected: nothing rebuilt from it, no
        // discontinuity measured against the records behind it.
        let refused: Vec<&str> =
            recover.iter().filter_map(|a| if let Action::Refuse { file, .. } = a { Some(file.as_str()) } else { None }).collect();
        assert_eq!(refused, ["00000000000000000000.log"], "a roll at {base}");
        assert!(
            !recover.iter().any(|a| matches!(a, Action::RebuildIndex { file, .. } if file == "00000000000000000000.index")),
            "a roll at {base}"
        );
        let out = String::from_utf8(run(&["inspect", shard.to_str().unwrap()]).stdout).unwrap();
        assert!(!out.contains("unfinished segment"), "a roll at {base}: {out}");
        assert!(!out.contains("SegmentDiscontinuity"), "a roll at {base}: {out}");
    }
}

/// A segment that never took effect, built for an offset past where the
/// segment before it cleanly ends (hostile review F3): upstream's broker
/// leaves one when a truncation rewinds the log under a segment built ahead,
/// and recovery removes it as upstream's does — but the offsets between are
/// held by no segment (lost records look the same), and the log goes on from
/// the end, reusing them: the verdict and the note name them, never silent.
#[test]
fn the_offsets_below_a_segment_built_ahead_are_named_before_recover_removes_it() {
    let (_tmp, shard) = produced(b"r0\nr1\nr2\nr3\nr4\nr5\nr6\nr7\nr8\nr9\nr10\nr11\n");
    let s = shard.to_str().unwrap();
    // Records 10 and 11 (31 bytes each: a 28-byte header and "r10", "r11") cut off at a record's end.
    cut_end(&shard.join("00000000000000000000.log"), 62);
    std::fs::remove_file(shard.join("00000000000000000000.index")).unwrap();
    let header = felix_codec::format::segment_header::SegmentHeader::new(12, 1_700_000_000_000_000).encode();
    std::fs::write(shard.join("00000000000000000001.log"), header).unwrap();
    let text = |o: &Output| String::from_utf8(o.stdout.clone()).unwrap();
    let before = text(&run(&["inspect", s]));
    let unheld = "offsets 10..=11 are held by no segment, below a segment that never took effect";
    let verdict = before.lines().find(|l| l.contains(": verdict: ")).unwrap();
    assert!(verdict.contains("1 unfinished segment that `recover` would fix") && verdict.contains(unheld), "{verdict}");
    assert!(verdict.ends_with("the log goes on from offset 10"), "{verdict}");
    let note = before.lines().find(|l| l.contains("00000000000000000001.log: note: a rollover")).unwrap();
    assert!(note.contains(unheld), "{note}");
    let (code, _) = plan(&["recover", s, "--json"]);
    assert_eq!(code, Some(0));
    assert_eq!(std::fs::read(shard.join("00000000000000000001.log.cut-0")).unwrap(), header, "its bytes kept");
}

/// A shard `produce` wrote from `lines` (one record a line), under a root in
/// a temporary directory kept alive by the first value.
fn produced(lines: &[u8]) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let mut produce = Command::new(env!("CARGO_BIN_EXE_felix-storage"))
        .args(["produce", "--shard", "acme/default/orders/0", root.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut produce.stdin.take().unwrap(), lines).unwrap();
    assert!(produce.wait().unwrap().success());
    let shard = std::fs::read_dir(&root).unwrap().next().unwrap().unwrap().path();
    (tmp, shard)
}

/// Cuts the last `bytes` bytes off `file`.
fn cut_end(file: &Path, bytes: u64) {
    let len = std::fs::metadata(file).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(file).unwrap().set_len(len - bytes).unwrap();
}

/// Hostile review 30: the broker's open judges the segment after a damaged
/// one, and a damaged segment itself, as `recover` does — action for
/// action, in the same order: an overlap after a segment rotted in the
/// middle (measured against the end `inspect` names, past the rot), a gap
/// before a segment that is itself rotted, a segment rotted twice (each rot
/// refused), and a gap whose records are also out of order (the refusals in
/// byte order). `recover` refuses each; the broker's plan is its plan.
#[test]
fn the_broker_plans_the_damage_after_and_inside_a_rotted_segment_as_recover_does() {
    use felix_codec::format::record::encode_record;
    use felix_codec::format::segment_header::SegmentHeader;
    use felix_codec::shard::recovery::Action;
    let segment = |base: u64, offsets: std::ops::Range<u64>, rot: &[usize]| {
        let mut s = SegmentHeader::new(base, 1_700_000_000_000_000).encode().to_vec();
        for o in offsets {
            encode_record(o, 1_700_000_000_000_001, format!("payload-{o}").as_bytes(), &mut s).unwrap();
        }
        // Records are 37 bytes (28 + "payload-N"): rot in record r's payload.
        for r in rot {
            s[32 + r * 37 + 30] ^= 0xff;
        }
        s
    };
    // What a case plants: segments 1 and 2, which records of segment 0 rot, the refusals planned.
    type Case = (&'static str, Vec<(u64, Vec<u8>)>, &'static [usize], &'static [&'static str]);
    let cases: [Case; 4] = [
        (
            "an overlap after a rotted segment",
            vec![(1, segment(4, 4..14, &[])), (2, segment(14, 14..15, &[]))],
            &[3],
            &["RecordChecksum", "SegmentDiscontinuity"],
        ),
        (
            "a gap before a rotted segment",
            vec![(1, segment(12, 12..20, &[3])), (2, segment(20, 20..21, &[]))],
            &[],
            &["SegmentDiscontinuity", "RecordChecksum"],
        ),
        (
            "a segment rotted twice",
            vec![(1, segment(10, 10..20, &[])), (2, segment(20, 20..21, &[]))],
            &[3, 7],
            &["RecordChecksum", "RecordChecksum"],
        ),
        (
            "a gap and records out of order",
            vec![(1, segment(4, 10..20, &[])), (2, segment(20, 20..21, &[]))],
            &[],
            &["SegmentDiscontinuity", "OffsetOutOfOrder"],
        ),
    ];
    for (what, planted, rot, refused) in cases {
        let (_tmp, shard) = shard_with(&planted, |_| segment(0, 0..10, rot));
        let (engine, recover) = engine_and_recover_plans(&shard);
        let kinds: Vec<&str> =
            recover.iter().filter_map(|a| if let Action::Refuse { kind, .. } = a { Some(kind.as_str()) } else { None }).collect();
        assert_eq!(kinds, refused, "{what}: {recover:?}");
        assert_eq!(engine, recover, "{what}: the broker's plan is recover's");
    }
}

/// A sealed index beside a segment whose header is rejected (hostile review,
/// stop 30): its entries cannot be checked against records nothing can read,
/// so `inspect` does not call it stale, and promises no index fix `recover`
/// would not make — the verdict, the dry run and the broker's plan agree.
#[test]
fn an_index_beside_a_rejected_segment_header_is_not_judged_stale() {
    let (_tmp, shard) = produced(b"one\ntwo\nthree\nfour\n");
    let s = shard.to_str().unwrap();
    let log = shard.join("00000000000000000000.log");
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[0] = 0;
    std::fs::write(&log, bytes).unwrap();
    assert!(shard.join("00000000000000000000.index").exists(), "produce wrote the index");
    let out = run(&["inspect", s]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("IndexEntryMismatch") && !text.contains("stale index"), "{text}");
    assert!(text.contains("SegmentMagic"), "{text}");
    let (code, dry) = plan(&["recover", s, "--dry-run", "--json"]);
    assert_eq!(code, Some(1), "{dry}");
    let shard_plan = &dry["shards"][0];
    assert!(actions(shard_plan, "rebuild-index").is_empty(), "{dry}");
    assert!(!dry.to_string().contains("IndexEntryMismatch"), "nothing remains that no recovery would fix: {dry}");
    let (engine, recover) = engine_and_recover_plans(&shard);
    assert_eq!(engine, recover);
}

/// Every file in `dir` and its bytes, but the writer's lock file (its
/// holder's pid, written by each run that takes the lock).
fn every_file(dir: &Path) -> std::collections::BTreeMap<std::ffi::OsString, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != "writer.lock")
        .map(|e| (e.file_name(), std::fs::read(e.path()).unwrap()))
        .collect()
}

/// Every name the evidence of a cut could take is taken (hostile review,
/// stop 30) — each evidence file itself, or only each note: the dry run,
/// the real run and the broker's open all refuse the shard with one verdict
/// (the codec's plan: `evidence-names-exhausted` at the cut's byte, naming
/// the evidence's own name, never a temporary), and nothing in the folder
/// changes. The dry run once named a taken file and promised the cut.
#[test]
fn a_cut_with_every_evidence_name_taken_is_refused_alike_by_the_dry_run_and_the_run_and_changes_nothing() {
    for notes in [false, true] {
        let (_tmp, root) = demo_root();
        let (_, dry) = plan(&["recover", root.to_str().unwrap(), "--dry-run", "--json"]);
        let (file, position, _) = payments_cut(&dry);
        let dir = file.parent().unwrap();
        let d = dir.to_str().unwrap();
        let shard = dry["shards"].as_array().unwrap().iter().find(|s| s["path"].as_str().unwrap().contains("payments")).unwrap();
        let planned = actions(shard, "cut")[0]["evidence"].as_str().unwrap().to_owned();
        let note = if notes { ".json" } else { "" };
        std::fs::write(dir.join(format!("{planned}{note}")), b"kept 1").unwrap();
        for k in 2..=10_000 {
            std::fs::write(dir.join(format!("{planned}-{k}{note}")), format!("kept {k}")).unwrap();
        }
        let before = every_file(dir);

        let (dry_code, dry) = plan(&["recover", d, "--dry-run", "--json"]);
        let (run_code, ran) = plan(&["recover", d, "--json"]);
        assert_eq!((dry_code, run_code), (Some(1), Some(1)), "a refusal, not a failure part way: {ran}");
        assert!(ran.get("stopped").is_none(), "{ran}");
        assert_eq!(dry["shards"], ran["shards"], "the dry run and the run agree");
        let refused = actions(&ran["shards"][0], "refuse");
        assert_eq!(refused.len(), 1, "{ran}");
        assert!(actions(&ran["shards"][0], "cut").is_empty(), "{ran}");
        let (kind, at, reason) = (&refused[0]["kind"], &refused[0]["position"], refused[0]["reason"].as_str().unwrap());
        assert_eq!(
            (kind.as_str(), at.as_u64(), refused[0]["file"].as_str()),
            (Some("evidence-names-exhausted"), Some(position), file.file_name().unwrap().to_str())
        );
        assert!(reason.contains(&format!("{planned} and its 9999 numbered variants")), "{reason}");

        // In words: the same refusal, naming the segment and the evidence name; the run says it changed nothing.
        let words = |args: &[&str]| String::from_utf8(run(args).stdout).unwrap();
        let (dry_text, run_text) = (words(&["recover", d, "--dry-run"]), words(&["recover", d]));
        let line = format!("{}: REFUSED at byte {position} ({position:#x}): {reason}", file.display());
        assert!(dry_text.contains(&line) && run_text.contains(&line), "{dry_text}\n{run_text}");
        assert!(run_text.contains("REFUSED: recovery changed nothing in this shard"), "{run_text}");
        assert!(!run_text.contains("replica") && run_text.contains("recover refuses until some evidence"), "{run_text}");

        // The broker's open refuses with the plan's words too, naming the segment.
        let io: std::sync::Arc<dyn felix_engine::Io> = std::sync::Arc::new(felix_engine::OsIo::default());
        let e = felix_engine::Shard::open_dir(io, dir, felix_engine::Config::default()).map(drop).unwrap_err();
        assert_eq!(e.to_string(), format!("{}: recover failed: {reason}", file.display()));
        // A reader is told why: the damage its reads stop at, and the plan's words.
        let io: std::sync::Arc<dyn felix_engine::Io> = std::sync::Arc::new(felix_engine::OsIo::default());
        let (_, recovery) = felix_engine::Shard::open_read_only(io, dir, felix_engine::Config::default()).unwrap();
        let told = recovery.warnings.iter().find(|w| w.starts_with("recovery refuses this shard")).unwrap();
        assert!(told.contains(&format!("{}: {reason}", file.file_name().unwrap().to_str().unwrap())), "{told}");
        assert!(every_file(dir) == before, "nothing cut, kept, or removed");
    }
}

/// A whole file whose evidence has no free name (hostile review 36): an
/// orphaned index, or an unfinished newest segment. The dry run, the run and
/// the broker's open refuse alike and change nothing, and a reader — whose
/// reads meet no damage here — is still told, in the plan's words, why a
/// writer's open fails.
#[test]
fn a_whole_file_with_every_evidence_name_taken_is_refused_alike_and_a_reader_is_told() {
    use felix_codec::format::file_name::{evidence_name, index_evidence_name};
    let orphan: (&str, fn(u32) -> String) = ("00000000000000000007.index", |k| index_evidence_name(7, k));
    let unfinished: (&str, fn(u32) -> String) = ("00000000000000000001.log", |k| evidence_name(1, 0, k));
    for (file, name_for) in [orphan, unfinished] {
        let (_tmp, shard) = shard_with(&[], |s| s);
        // An index that is no Felix index; a segment holding 10 of its header's 32 bytes.
        let header = felix_codec::format::segment_header::SegmentHeader::new(10, 1_700_000_000_000_002).encode();
        let bytes = if file.ends_with(".log") { header[..10].to_vec() } else { b"not an index".to_vec() };
        std::fs::write(shard.join(file), bytes).unwrap();
        for k in 1..=10_000 {
            std::fs::write(shard.join(name_for(k)), format!("kept {k}")).unwrap();
        }
        let before = every_file(&shard);
        let s = shard.to_str().unwrap();
        let (dry_code, dry) = plan(&["recover", s, "--dry-run", "--json"]);
        let (run_code, ran) = plan(&["recover", s, "--json"]);
        assert_eq!((dry_code, run_code), (Some(1), Some(1)), "{file}: {ran}");
        assert_eq!(dry["shards"], ran["shards"], "{file}: the dry run and the run agree");
        let refused = actions(&ran["shards"][0], "refuse");
        assert_eq!(refused.len(), 1, "{file}: {ran}");
        let (kind, at, reason) = (&refused[0]["kind"], &refused[0]["position"], refused[0]["reason"].as_str().unwrap());
        assert_eq!((kind.as_str(), at.as_u64(), refused[0]["file"].as_str()), (Some("evidence-names-exhausted"), Some(0), Some(file)));
        assert!(reason.contains(&format!("{} and its 9999 numbered variants", name_for(1))), "{reason}");

        let io: std::sync::Arc<dyn felix_engine::Io> = std::sync::Arc::new(felix_engine::OsIo::default());
        let e = felix_engine::Shard::open_dir(io.clone(), &shard, felix_engine::Config::default()).map(drop).unwrap_err();
        assert_eq!(e.to_string(), format!("{}: recover failed: {reason}", shard.join(file).display()));
        let (_, recovery) = felix_engine::Shard::open_read_only(io, &shard, felix_engine::Config::default()).unwrap();
        let told = recovery.warnings.iter().find(|w| w.starts_with("recovery refuses this shard"));
        assert!(told.is_some_and(|w| w.contains(&format!("{file}: {reason}"))), "{file}: {:?}", recovery.warnings);
        assert!(every_file(&shard) == before, "{file}: nothing removed, kept or replaced");
    }
}

/// The dry run refused for want of evidence names; the operator then moves
/// one piece of evidence out and runs the reviewed plan: the run is bound to
/// what was reviewed, so it refuses as a changed plan (nothing changed);
/// without `--plan` it cuts under the freed name, and the shard is clean.
#[test]
fn a_run_bound_to_a_refusal_for_want_of_names_refuses_once_a_name_is_freed_and_a_plain_run_then_cuts() {
    let (tmp, root) = demo_root();
    let (_, dry) = plan(&["recover", root.to_str().unwrap(), "--dry-run", "--json"]);
    let (file, position, _) = payments_cut(&dry);
    let dir = file.parent().unwrap();
    let d = dir.to_str().unwrap();
    let first = format!("{}.cut-{position}", file.file_name().unwrap().to_str().unwrap());
    std::fs::write(dir.join(&first), b"kept 1").unwrap();
    for k in 2..=10_000 {
        std::fs::write(dir.join(format!("{first}-{k}")), format!("kept {k}")).unwrap();
    }
    let reviewed = run(&["recover", d, "--dry-run", "--json"]);
    assert_eq!(reviewed.status.code(), Some(1));
    let p = tmp.path().join("plan.json");
    std::fs::write(&p, &reviewed.stdout).unwrap();
    std::fs::rename(dir.join(format!("{first}-10000")), tmp.path().join("moved-out")).unwrap();
    let before = every_file(dir);

    let o = run(&["recover", d, "--plan", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    // The refusal is listed last: the first action that differs is the cut now in its place.
    let what = format!("the shard now needs cut {} at byte {position}", file.file_name().unwrap().to_str().unwrap());
    assert!(
        err.contains("the shard changed since the reviewed plan") && err.contains(&what) && err.contains("nothing was changed"),
        "{err}"
    );
    assert!(every_file(dir) == before, "bound to the reviewed refusal, the run changed nothing");

    let (code, ran) = plan(&["recover", d, "--json"]);
    assert_eq!(code, Some(0), "{ran}");
    assert_eq!(actions(&ran["shards"][0], "cut")[0]["evidence"].as_str(), Some(format!("{first}-10000").as_str()));
    let (code, after) = plan(&["recover", d, "--dry-run", "--json"]);
    assert_eq!((code, after["shards"][0]["actions"].as_array().map(Vec::len)), (Some(0), Some(0)), "{after}");
}
