//! What several test files do alike with the `felix-storage` binary.

use std::io::{BufRead as _, BufReader, Lines};
use std::process::{Child, ChildStdout, Command, Output, Stdio};

/// A `produce ROOT --shard SHARD EXTRA…` kept running, with its stdin,
/// stdout and stderr piped; returns the child and its acknowledged offsets,
/// a line each.
#[allow(dead_code)]
pub fn live_producer(root: &str, shard: &str, extra: &[&str]) -> (Child, Lines<BufReader<ChildStdout>>) {
    let mut child = producer(root, shard, extra);
    let lines = BufReader::new(child.stdout.take().expect("stdout is piped")).lines();
    (child, lines)
}

/// A `produce ROOT --shard SHARD EXTRA…` started with its stdin, stdout and
/// stderr piped.
#[allow(dead_code)]
pub fn producer(root: &str, shard: &str, extra: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_felix-storage"))
        .args(["produce", root, "--shard", shard])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("felix-storage starts")
}

/// The `felix-storage` binary under test.
#[allow(dead_code)]
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_felix-storage")
}

/// `felix-storage ARGS…`, run to its end.
#[allow(dead_code)]
pub fn run(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("felix-storage runs")
}

/// What a run printed on stdout, as text.
#[allow(dead_code)]
pub fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What a run printed on stderr, as text.
#[allow(dead_code)]
pub fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
