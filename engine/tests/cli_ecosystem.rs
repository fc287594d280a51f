//! The command line as a citizen of its ecosystem: JSON Schemas checked in
//! and met by real outputs, shell completions that complete (and never run
//! what a file name says), man pages groff renders without a warning, and a
//! progress bar only a terminal sees.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use felix_engine::tools::schema::Document;
use serde_json::Value;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_felix-storage")
}

fn run(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

fn schema_path(doc: Document) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/schema").join(doc.file_name())
}

#[test]
fn the_checked_in_schemas_are_what_the_types_generate() {
    for doc in Document::ALL {
        let path = schema_path(doc);
        let want = doc.schema_text();
        if std::env::var_os("FELIX_BLESS_SCHEMAS").is_some() {
            std::fs::write(&path, &want).unwrap();
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "{} is stale: the types changed. Regenerate with `felix-storage schema {} > docs/schema/{}` \
             (or FELIX_BLESS_SCHEMAS=1 cargo test -p felix-engine --test cli_ecosystem), and say so in docs/report-format.md",
            path.display(),
            doc.file_name().trim_end_matches(".schema.json"),
            doc.file_name()
        );
        let name = doc.file_name().trim_end_matches(".schema.json");
        let printed = run(&["schema", name]);
        assert_eq!(String::from_utf8(printed.stdout).unwrap(), want, "`felix-storage schema` prints the same");
    }
}

fn validator(doc: Document) -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(schema_path(doc)).unwrap()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

fn assert_valid(doc: Document, v: &Value) {
    let errors: Vec<String> = validator(doc).iter_errors(v).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{doc:?}: {errors:?}");
}

fn json_of(args: &[&str]) -> Value {
    let o = run(args);
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&o.stderr)))
}

#[test]
fn real_outputs_meet_their_schemas_and_broken_ones_do_not() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sample");
    let r = root.to_str().unwrap();
    assert!(run(&["demo", r]).status.success());
    let report = json_of(&["inspect", "--json", r]);
    assert_valid(Document::Report, &report);
    let plan = json_of(&["recover", r, "--dry-run", "--json"]);
    assert_valid(Document::Plan, &plan);
    let mut shards: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    shards.sort();
    for pair in shards.windows(2) {
        let diff = json_of(&["diff", pair[0].to_str().unwrap(), pair[1].to_str().unwrap(), "--json"]);
        assert_valid(Document::Diff, &diff);
    }
    let same = json_of(&["diff", shards[0].to_str().unwrap(), shards[0].to_str().unwrap(), "--json"]);
    assert_valid(Document::Diff, &same);
    let kinds = dump_lines_meet_their_schema(&shards);
    assert_eq!(kinds, ["finding", "record", "segment", "stopped"], "the demo's segments show every kind of line");
    let done = json_of(&["recover", r, "--json"]);
    assert_valid(Document::Plan, &done);
    // The schemas are not vacuous: a wrong type, a missing field, an unknown action fail.
    let mut bad = same.clone();
    bad["first_divergent_offset"] = "50".into();
    assert!(!validator(Document::Diff).is_valid(&bad));
    let mut bad = same;
    bad.as_object_mut().unwrap().remove("identical");
    assert!(!validator(Document::Diff).is_valid(&bad));
    let mut bad = plan.clone();
    bad["shards"][0]["actions"] = serde_json::json!([{"action": "format-disk", "file": "x", "reason": "y"}]);
    assert!(!validator(Document::Plan).is_valid(&bad));
    let mut bad = report;
    bad["files"][0]["status"] = "fine".into();
    assert!(!validator(Document::Report).is_valid(&bad));
}

/// Every line `dump --json` prints for each segment of `shards` (and with a
/// small `--max-bytes`) meets the line schema; a line of no known type, or
/// one missing a field, does not. Returns the types met, sorted.
fn dump_lines_meet_their_schema(shards: &[PathBuf]) -> Vec<String> {
    let mut types = std::collections::BTreeSet::new();
    for shard in shards {
        for e in std::fs::read_dir(shard).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "log") {
                continue;
            }
            let p = path.to_str().unwrap();
            for args in [vec!["dump", p, "--json"], vec!["dump", p, "--json", "--max-bytes", "1"]] {
                let o = run(&args);
                for line in String::from_utf8(o.stdout).unwrap().lines() {
                    let v: Value = serde_json::from_str(line).unwrap();
                    assert_valid(Document::DumpLine, &v);
                    types.insert(v["type"].as_str().unwrap().to_owned());
                    let mut bad = v.clone();
                    bad["type"] = "segmnt".into();
                    assert!(!validator(Document::DumpLine).is_valid(&bad), "{bad}");
                    let mut bad = v;
                    bad.as_object_mut().unwrap().remove("file");
                    assert!(!validator(Document::DumpLine).is_valid(&bad), "{bad}");
                }
            }
        }
    }
    types.into_iter().collect()
}

fn completion(shell: &str) -> String {
    let o = run(&["completions", shell]);
    assert!(o.status.success(), "{shell}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// Sources the bash completion and asks it to complete `words` (the last
/// one being completed) in `dir`; returns COMPREPLY, one per line.
fn complete_in_bash(script: &Path, dir: &Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{}'", w.replace('\'', "'\\''"))).collect();
    let line = words.join(" ");
    let program = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{}'; COMP_POINT=${{#COMP_LINE}}; f=$(complete -p felix-storage | sed -E 's/.*-F ([^ ]+).*/\\1/'); \"$f\" felix-storage \"${{COMP_WORDS[-1]}}\" \"${{COMP_WORDS[-2]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" "),
        words.len() - 1,
        line.replace('\'', "'\\''"),
    );
    let o = Command::new("bash").arg("--norc").arg("-c").arg(program).current_dir(dir).stdin(Stdio::null()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().lines().filter(|l| !l.is_empty()).map(str::to_owned).collect()
}

#[test]
fn bash_completion_completes_subcommands_and_never_runs_a_file_name() {
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("felix-storage.bash");
    std::fs::write(&script, completion("bash")).unwrap();
    let syntax = Command::new("bash").arg("-n").arg(&script).output().unwrap();
    assert!(syntax.status.success(), "{}", String::from_utf8_lossy(&syntax.stderr));
    let words = complete_in_bash(&script, tmp.path(), &["felix-storage", "di"]);
    assert_eq!(words, ["diff"]);
    let flags = complete_in_bash(&script, tmp.path(), &["felix-storage", "diff", "--"]);
    for f in ["--shard", "--json", "--help"] {
        assert!(flags.iter().any(|w| w == f), "{flags:?}");
    }
    // Hostile names in the directory being completed: offered as names, never run.
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let marker = tmp.path().join("PWNED");
    let hostile = [
        format!("$(touch {})", marker.display()),
        format!("`touch {}`", marker.display()),
        format!("x;touch {}", marker.display()),
        "a b\tc".to_owned(),
        "-rf".to_owned(),
        "'quoted\"".to_owned(),
    ];
    for name in &hostile {
        std::fs::write(work.join(name.replace('/', "_")), b"").unwrap();
    }
    // An option's value is completed from the file names (`compgen -f`).
    let offered = complete_in_bash(&script, &work, &["felix-storage", "diff", "--shard", ""]);
    assert!(!marker.exists(), "completion ran a command from a file name");
    assert!(offered.iter().any(|w| w == "-rf") && offered.iter().any(|w| w.starts_with("$(touch")), "the files are offered: {offered:?}");
    let _ = complete_in_bash(&script, &work, &["felix-storage", "diff", "--shard", "$(touch"]);
    let _ = complete_in_bash(&script, &work, &["felix-storage", "$(touch"]);
    assert!(!marker.exists(), "completion ran a command from the word being completed");
}

#[test]
fn every_shell_gets_a_script_naming_every_subcommand() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = completion(shell);
        for sub in ["inspect", "recover", "diff", "completions", "man", "schema"] {
            assert!(script.contains(sub), "{shell} lacks {sub}");
        }
    }
    let o = run(&["completions", "tcsh;rm"]);
    assert_eq!(o.status.code(), Some(2));
}

fn groff_warnings(page: &[u8]) -> String {
    let mut child = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), page).unwrap();
    String::from_utf8(child.wait_with_output().unwrap().stderr).unwrap()
}

#[test]
fn man_pages_render_without_warnings_and_document_every_subcommand() {
    let top = run(&["man"]);
    assert!(top.status.success());
    let text = String::from_utf8(top.stdout.clone()).unwrap();
    assert!(text.starts_with(".ie") && text.contains(".TH felix-storage 1"), "{text}");
    assert_eq!(groff_warnings(&top.stdout), "");
    for sub in ["inspect", "produce", "consume", "recover", "dump", "demo", "diff", "completions", "man", "schema"] {
        assert!(text.contains(&format!("felix\\-storage\\-{sub}(1)")), "{sub} missing from felix-storage(1)");
        let page = run(&["man", sub]);
        assert!(page.status.success());
        let roff = String::from_utf8(page.stdout.clone()).unwrap();
        assert!(roff.contains(&format!(".TH felix-storage-{sub} 1")), "{roff}");
        assert_eq!(groff_warnings(&page.stdout), "", "{sub}");
    }
    let diff = String::from_utf8(run(&["man", "diff"]).stdout).unwrap();
    for flag in ["\\-\\-shard", "\\-\\-json"] {
        assert!(diff.contains(flag), "{diff}");
    }
    let o = run(&["man", "no\x1b[2Jsuch"]);
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(!err.contains('\x1b') && err.contains("no such subcommand"), "{err:?}");
}

/// A lone segment of `mib` MiB (records of 64 KiB).
fn big_segment(dir: &Path, mib: usize) -> PathBuf {
    let mut out = felix_codec::format::segment_header::SegmentHeader::new(0, 1).encode().to_vec();
    let payload = vec![7u8; 64 << 10];
    for o in 0..(mib * 16) as u64 {
        felix_codec::format::record::encode_record(o, 1, &payload, &mut out).unwrap();
    }
    let path = dir.join("00000000000000000000.log");
    std::fs::write(&path, out).unwrap();
    path
}

#[test]
fn the_progress_bar_is_drawn_on_a_terminal_only() {
    let tmp = tempfile::tempdir().unwrap();
    let log = big_segment(tmp.path(), 80);
    let o = run(&["inspect", log.to_str().unwrap()]);
    assert!(o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stderr), "", "stderr is not a terminal: no bar");
    // On a terminal (script(1) gives the command one), the bar shows bytes and an ETA.
    let command = format!("'{}' inspect '{}'", bin(), log.display());
    let o = Command::new("script").args(["-qec", &command, "/dev/null"]).stdin(Stdio::null()).output().unwrap();
    let shown = String::from_utf8_lossy(&o.stdout);
    assert!(shown.contains("MiB") && shown.contains("ETA"), "{shown:?}");
    let o = Command::new("script")
        .args(["-qec", &format!("'{}' inspect --json '{}' >/dev/null", bin(), log.display()), "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&o.stdout).contains("ETA"), "no bar with --json");
}
