//! What operators and attackers found by trying things (issue 16, defects
//! 5–11), each through the path a user takes: the `felix-storage` binary as
//! a process, on real files. Every test names the defect it holds shut.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_felix-storage")
}

fn run(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

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
