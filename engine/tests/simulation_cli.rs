//! The simulator's second, smaller loop: what needs real processes — locks,
//! `kill -9` — driven through the `felix-storage` binary on a seeded
//! schedule, checking after every step that every acknowledged record is
//! read back by `consume`, that no offset is acknowledged twice, and that an
//! operator's foreign file is never touched.
//!
//! `FELIX_SIM_CLI_SEED=S` replays one seed; `FELIX_SIM_CLI_SEEDS=N` runs
//! seeds `0..N` (default 12: each step starts processes). The PRNG is the
//! main simulator's SplitMix64 (see `simulation.rs`).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod support;

use std::collections::BTreeMap;
use std::io::{BufReader, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

const SHARD: &str = "acme/default/orders/0";

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_felix-storage")
}

fn shard_dir(root: &Path) -> PathBuf {
    root.join("acme_default_orders_0-0d3aed4b998d2798")
}

/// SplitMix64, as in `simulation.rs`.
#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

#[derive(Debug, Clone)]
enum Step {
    /// `produce` fed `lines` lines, stdin closed: it exits 0 having acknowledged each.
    Produce { lines: u8 },
    /// `produce` under a fsync policy, killed with SIGKILL after `kill_after` acknowledgements.
    ProduceKilled { kill_after: u8, fsync: u8 },
    /// Producer A runs; `rm writer.lock`; producer B must be refused.
    RemoveLockThenSecondProducer,
    /// Two producers at once: the second is refused while the first lives.
    SecondProducer,
    /// `recover` (the real run): exit 0, and `inspect` then finds nothing.
    Recover,
    /// An operator's file in the shard directory.
    StrayFile,
}

fn schedule(seed: u64) -> Vec<Step> {
    let mut rng = Rng(seed);
    let n = 8 + rng.below(16);
    let mut steps = Vec::new();
    while steps.len() < usize::try_from(n).unwrap() {
        let s = match rng.below(10) {
            0..=2 => Step::Produce { lines: u8::try_from(1 + rng.below(30)).unwrap() },
            3..=5 => {
                Step::ProduceKilled { kill_after: u8::try_from(1 + rng.below(30)).unwrap(), fsync: u8::try_from(rng.below(3)).unwrap() }
            }
            6 => Step::RemoveLockThenSecondProducer,
            7 => Step::SecondProducer,
            8 => Step::Recover,
            _ => Step::StrayFile,
        };
        steps.push(s);
    }
    steps
}

struct World {
    root: tempfile::TempDir,
    acked: BTreeMap<u64, String>,
    foreign: Option<(PathBuf, Vec<u8>)>,
    step: usize,
}

fn violation(what: &str, detail: impl std::fmt::Display) -> ! {
    panic!("invariant `{what}` violated: {detail}")
}

fn run(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

impl World {
    fn root(&self) -> &str {
        self.root.path().to_str().unwrap()
    }

    fn producer(&self, extra: &[&str]) -> (Child, std::io::Lines<BufReader<std::process::ChildStdout>>) {
        support::live_producer(self.root(), SHARD, extra)
    }

    fn ack(&mut self, offset: &str, payload: String) {
        let offset: u64 = offset.trim().parse().unwrap_or_else(|_| violation("acknowledgement", format!("{offset:?} is no offset")));
        if let Some(before) = self.acked.insert(offset, payload.clone()) {
            violation("acknowledged-once", format!("offset {offset} acknowledged for {before:?} and again for {payload:?}"));
        }
    }

    fn run(&mut self, step: &Step) {
        self.step += 1;
        match step {
            Step::Produce { lines } => {
                let (mut child, mut acks) = self.producer(&[]);
                let payloads: Vec<String> = (0..*lines).map(|n| format!("{}-{n}", self.step)).collect();
                let mut stdin = child.stdin.take().unwrap();
                stdin.write_all(payloads.join("\n").as_bytes()).unwrap();
                drop(stdin);
                for p in payloads {
                    let Some(Ok(line)) = acks.next() else {
                        violation("produce", format!("step {}: no acknowledgement for {p}", self.step))
                    };
                    self.ack(&line, p);
                }
                let o = child.wait_with_output().unwrap();
                if o.status.code() != Some(0) {
                    violation("produce", format!("exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr)));
                }
            }
            Step::ProduceKilled { kill_after, fsync } => {
                let policy = ["on-commit", "periodic:5", "none"][usize::from(*fsync) % 3];
                let (mut child, mut acks) = self.producer(&["--fsync", policy]);
                let mut stdin = child.stdin.take().unwrap();
                let step = self.step;
                let feeder = std::thread::spawn(move || {
                    for n in 0..10_000 {
                        if writeln!(stdin, "{step}-{n}").is_err() {
                            break;
                        }
                    }
                });
                for n in 0..*kill_after {
                    let Some(Ok(line)) = acks.next() else { break };
                    self.ack(&line, format!("{step}-{n}"));
                }
                child.kill().unwrap(); // SIGKILL
                child.wait().unwrap();
                feeder.join().unwrap();
            }
            Step::RemoveLockThenSecondProducer | Step::SecondProducer => {
                self.second_producer(matches!(step, Step::RemoveLockThenSecondProducer))
            }
            Step::Recover => {
                let o = run(&["recover", self.root(), "--shard", SHARD]);
                if o.status.code() != Some(0) && shard_dir(self.root.path()).exists() {
                    violation("recover", format!("exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr)));
                }
                if shard_dir(self.root.path()).exists() {
                    let o = run(&["inspect", shard_dir(self.root.path()).to_str().unwrap()]);
                    if o.status.code() != Some(0) {
                        violation("inspect-after-recover", String::from_utf8_lossy(&o.stdout));
                    }
                }
            }
            Step::StrayFile => {
                let dir = shard_dir(self.root.path());
                if self.foreign.is_none() && dir.exists() {
                    let path = dir.join("notes.txt");
                    let bytes = format!("an operator's notes, step {}", self.step).into_bytes();
                    std::fs::write(&path, &bytes).unwrap();
                    self.foreign = Some((path, bytes));
                }
            }
        }
        self.check();
    }

    fn second_producer(&mut self, remove_lock: bool) {
        let (mut first, mut acks) = self.producer(&[]);
        let mut stdin = first.stdin.take().unwrap();
        let payload = format!("{}-first", self.step);
        writeln!(stdin, "{payload}").unwrap();
        let Some(Ok(line)) = acks.next() else { violation("produce", "the first producer acknowledged nothing") };
        self.ack(&line, payload);
        if remove_lock {
            let _ = std::fs::remove_file(shard_dir(self.root.path()).join("writer.lock"));
        }
        let mut second = Command::new(bin())
            .args(["produce", self.root(), "--shard", SHARD])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The second producer may be refused (and gone) before it reads a
        // line: a broken pipe here is that refusal, checked just below.
        if let Err(e) = second.stdin.take().unwrap().write_all(format!("{}-second\n", self.step).as_bytes()) {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
        }
        let refused = second.wait_with_output().unwrap();
        let printed = String::from_utf8_lossy(&refused.stdout).into_owned();
        if refused.status.code() != Some(1) || !printed.is_empty() {
            violation(
                "one-writer",
                format!(
                    "a second producer (writer.lock removed first: {remove_lock}) exited {:?} acknowledging {printed:?}",
                    refused.status.code()
                ),
            );
        }
        let payload = format!("{}-first-again", self.step);
        writeln!(stdin, "{payload}").unwrap();
        let Some(Ok(line)) = acks.next() else { violation("produce", "the first producer stopped") };
        self.ack(&line, payload);
        drop(stdin);
        if first.wait().unwrap().code() != Some(0) {
            violation("produce", "the first producer failed");
        }
    }

    fn check(&self) {
        if let Some((path, bytes)) = &self.foreign {
            if std::fs::read(path).ok().as_ref() != Some(bytes) {
                violation("foreign-untouched", format!("{} was changed or removed", path.display()));
            }
        }
        if !shard_dir(self.root.path()).exists() {
            return;
        }
        let o = run(&["consume", self.root(), "--shard", SHARD, "--format", "json"]);
        if o.status.code() != Some(0) {
            violation("consume", format!("exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr)));
        }
        let mut stored = BTreeMap::new();
        for line in String::from_utf8(o.stdout).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            stored.insert(v["offset"].as_u64().unwrap(), v["payload"].as_str().unwrap_or("").to_string());
        }
        let offsets: Vec<u64> = stored.keys().copied().collect();
        if offsets != (0..offsets.len() as u64).collect::<Vec<_>>() {
            violation("no-gaps", format!("offsets {offsets:?}"));
        }
        for (offset, payload) in &self.acked {
            if stored.get(offset) != Some(payload) {
                violation("acknowledged-survive", format!("offset {offset}: acknowledged {payload:?}, read {:?}", stored.get(offset)));
            }
        }
    }
}

thread_local! {
    /// Panics are expected while replaying: their message is printed by us.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn replay(steps: &[Step]) -> Result<(), String> {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(std::cell::Cell::get) {
                default(info);
            }
        }));
    });
    QUIET.with(|q| q.set(true));
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut world = World { root: tempfile::tempdir().unwrap(), acked: BTreeMap::new(), foreign: None, step: 0 };
        for s in steps {
            world.run(s);
        }
    }));
    QUIET.with(|q| q.set(false));
    result
        .map_err(|e| e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_string())).unwrap_or_default())
}

#[test]
fn real_processes_killed_and_locks_deleted_lose_no_acknowledged_record() {
    let seeds: Vec<u64> = match (std::env::var("FELIX_SIM_CLI_SEED"), std::env::var("FELIX_SIM_CLI_SEEDS")) {
        (Ok(s), _) => vec![s.parse().unwrap()],
        (_, Ok(n)) => (0..n.parse().unwrap()).collect(),
        _ => (0..12).collect(),
    };
    let started = std::time::Instant::now();
    let mut steps_run = 0;
    for &seed in &seeds {
        let steps = schedule(seed);
        if let Err(message) = replay(&steps) {
            // Shrink: drop single steps while the same invariant fails.
            let want = message.split('`').nth(1).unwrap_or("").to_string();
            let mut small = steps.clone();
            let mut i = 0;
            while i < small.len() {
                let mut candidate = small.clone();
                candidate.remove(i);
                match replay(&candidate) {
                    Err(m) if m.split('`').nth(1) == Some(want.as_str()) => small = candidate,
                    _ => i += 1,
                }
            }
            eprintln!("simulation_cli: found after {} s", started.elapsed().as_secs_f64());
            panic!(
                "simulation_cli: seed {seed} failed: {message}\nschedule: {steps:?}\nshrunk: {small:?}\nreplay: FELIX_SIM_CLI_SEED={seed}"
            );
        }
        steps_run += steps.len();
    }
    println!("simulation_cli: {} seeds, {steps_run} steps in {:.1} s", seeds.len(), started.elapsed().as_secs_f64());
}
