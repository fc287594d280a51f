//! A real process killed with SIGKILL at random moments under load never
//! loses an acknowledged record.
//!
//! Each iteration starts `felix-storage produce` on the same root (so every
//! start recovers from the previous kill), feeds it lines, reads K
//! acknowledged offsets (K pseudo-random), then kills it with SIGKILL. After
//! all iterations, `felix-storage consume --format json` must return every
//! acknowledged offset with its payload, and offsets with no gaps.
//!
//! Iterations rotate through the fsync policies (`on-commit`, `periodic:5`,
//! `none`): a process killed loses nothing it wrote to the kernel, so under
//! each one every printed offset must survive. CI runs 200 iterations. Long mode: `FELIX_KILL_ITERATIONS=10000 cargo test
//! -p felix-engine --release --test kill9`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_felix-storage")
}

#[test]
fn kill_9_under_load_never_loses_an_acknowledged_record() {
    let iterations: u64 = std::env::var("FELIX_KILL_ITERATIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_str().unwrap().to_string();
    let mut acked: BTreeMap<u64, String> = BTreeMap::new();
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    for j in 0..iterations {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let kill_after = 1 + seed % 40;
        let batch = 1 + (seed >> 20) % 4;
        let fsync = ["on-commit", "periodic:5", "none"][(j % 3) as usize];
        let mut child = Command::new(bin())
            .args(["produce", &root, "--shard", "acme/default/orders/0", "--batch", &batch.to_string(), "--fsync", fsync])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let feeder = std::thread::spawn(move || {
            for n in 0.. {
                if writeln!(stdin, "{j}-{n}").is_err() {
                    break;
                }
            }
        });
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        for n in 0..kill_after {
            let Some(Ok(line)) = lines.next() else { break };
            acked.insert(line.trim().parse().unwrap(), format!("{j}-{n}"));
        }
        child.kill().unwrap(); // SIGKILL on unix
        child.wait().unwrap();
        feeder.join().unwrap();
    }
    let out = Command::new(bin()).args(["consume", &root, "--shard", "acme/default/orders/0", "--format", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let mut stored = BTreeMap::new();
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        stored.insert(v["offset"].as_u64().unwrap(), v["payload"].as_str().unwrap().to_string());
    }
    let offsets: Vec<u64> = stored.keys().copied().collect();
    assert_eq!(offsets, (0..offsets.len() as u64).collect::<Vec<_>>(), "offsets have no gaps");
    for (offset, payload) in &acked {
        assert_eq!(stored.get(offset), Some(payload), "acknowledged offset {offset} lost or changed");
    }
    assert!(acked.len() as u64 >= iterations, "every iteration acknowledged something");
}
