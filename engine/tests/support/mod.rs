//! What several test files do alike with the `felix-storage` binary.

use std::io::{BufRead as _, BufReader, Lines};
use std::process::{Child, ChildStdout, Command, Stdio};

/// A `produce ROOT --shard SHARD EXTRA…` kept running, with its stdin,
/// stdout and stderr piped; returns the child and its acknowledged offsets,
/// a line each.
pub fn live_producer(root: &str, shard: &str, extra: &[&str]) -> (Child, Lines<BufReader<ChildStdout>>) {
    let mut child = producer(root, shard, extra);
    let lines = BufReader::new(child.stdout.take().expect("stdout is piped")).lines();
    (child, lines)
}

/// A `produce ROOT --shard SHARD EXTRA…` started with its stdin, stdout and
/// stderr piped.
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
