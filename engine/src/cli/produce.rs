//! `felix-storage produce`: each stdin line (bounded by the record limit)
//! appended through the broker facade, in batches, each offset printed once
//! its fsync has returned.

use std::io::{BufRead, Write};
use std::path::Path;

use felix_codec::MAX_PAYLOAD_BYTES;
use felix_engine::broker::FsyncMode;
use felix_engine::shard::Shard;

use crate::cli::error::{fail, stopped_by, CliError};
use crate::cli::output::out_err;
use crate::cli::Outcome;

/// Most lines per durable commit `produce` accepts.
pub const MAX_BATCH: usize = 65_536;

/// Reads one line (without its `\n`, and a `\r` right before that `\n`)
/// into `line`, refusing — while reading, before holding it — a line longer
/// than a record may be (`limit` bytes, not counting that `\r`). A last line
/// without a `\n` is kept whole, a final `\r` included. `Ok(false)` at the
/// end of input.
fn read_line_bounded(input: &mut impl BufRead, line: &mut Vec<u8>, limit: usize) -> std::io::Result<bool> {
    let too_long = || {
        std::io::Error::new(std::io::ErrorKind::InvalidData, format!("a line is longer than {limit} bytes, the most one record may hold"))
    };
    line.clear();
    let mut any = false;
    let mut ended = false;
    loop {
        let buf = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            break;
        }
        any = true;
        let (take, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (i, true),
            None => (buf.len(), false),
        };
        // One byte more than a record may hold: the `\r` of a CRLF.
        if line.len() + take > limit.saturating_add(1) {
            return Err(too_long());
        }
        line.extend_from_slice(buf.get(..take).unwrap_or_default());
        input.consume(take + usize::from(done));
        if done {
            ended = true;
            break;
        }
    }
    if ended && line.last() == Some(&b'\r') {
        line.pop();
    }
    if line.len() > limit {
        return Err(too_long());
    }
    Ok(any)
}

/// Batches of `produce` whose fsync may be in flight at once: while one
/// batch's flush runs, the next is read and written, and the engine's group
/// commit lets one flush cover several. A batch in flight holds no payload
/// (its bytes are written), so this bounds only the waiting.
const PRODUCE_IN_FLIGHT: usize = 4;
/// A batch is committed at `--batch` lines or once it holds this many
/// payload bytes, whichever comes first: with the batch being read, the one
/// handed over and the one being written, `produce` holds at most three
/// batches, each under this plus one line (≤ 64 MiB).
const PRODUCE_BATCH_BYTES: usize = 16 << 20;

/// Reads stdin on its own thread into batches of at most `batch` lines (and
/// [`PRODUCE_BATCH_BYTES`]), handing each over as soon as it is full or the
/// input ends; a line over the record limit ends the input with an error.
fn read_batches(batch: usize, tx: tokio::sync::mpsc::Sender<Result<Vec<felix_engine::broker::AppendRecord>, CliError>>) {
    let mut stdin = std::io::stdin().lock();
    let mut records = Vec::with_capacity(batch.min(1024));
    let mut bytes = 0usize;
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        number += 1;
        let (eof, error) = match read_line_bounded(&mut stdin, &mut line, MAX_PAYLOAD_BYTES as usize) {
            Ok(true) => {
                bytes += line.len();
                let payload = bytes::Bytes::from(std::mem::take(&mut line));
                records.push(felix_engine::broker::AppendRecord { payload, timestamp_micros: felix_engine::shard::now_micros() });
                (false, None)
            }
            Ok(false) => (true, None),
            Err(e) => (true, Some(CliError::input("<stdin>", format!("line {number}: {e}; nothing from it on was written")))),
        };
        if !records.is_empty() && (records.len() >= batch || bytes >= PRODUCE_BATCH_BYTES || eof) {
            if tx.blocking_send(Ok(std::mem::take(&mut records))).is_err() {
                return;
            }
            bytes = 0;
        }
        if let Some(e) = error {
            let _ = tx.blocking_send(Err(e));
        }
        if eof {
            return;
        }
    }
}

pub(crate) fn produce(root: &Path, key: &felix_engine::broker::ShardKey, batch: usize, wait: bool, fsync: FsyncMode) -> Outcome {
    use felix_engine::broker::{DiskLogProvider, LogConfig, PendingAppend};
    type Commit = tokio::task::JoinHandle<Result<PendingAppend, felix_engine::EngineError>>;
    let config = LogConfig { wait_for_lock: wait, fsync_mode: fsync, ..LogConfig::default() };
    let shard_key =
        felix_codec::format::shard_name::ShardKey { tenant: &key.tenant, namespace: &key.namespace, stream: &key.stream, shard: key.shard };
    let dir = Shard::dir_of(root, &shard_key);
    // An IO failure (a full disk) stops the shard: say what the operator runs.
    let stopped = |e: felix_engine::EngineError| stopped_by(&dir, &e, false);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().map_err(|e| CliError::internal("runtime", e))?;
    runtime.block_on(async {
        let provider = DiskLogProvider::new(root, config).map_err(|e| fail(&e))?;
        let log = provider.open_shard(key).map_err(stopped)?;
        let (tx, mut rx) = tokio::sync::mpsc::channel(1);
        let batch = batch.max(1);
        std::thread::Builder::new()
            .name("felix-stdin".into())
            .spawn(move || read_batches(batch, tx))
            .map_err(|e| CliError::input("<stdin>", e))?;
        let mut out = std::io::stdout().lock();
        let mut text = String::new();
        let mut in_flight: std::collections::VecDeque<Commit> = std::collections::VecDeque::new();
        let mut input_done = false;
        let mut ended: Option<CliError> = None;
        loop {
            tokio::select! {
                biased;
                // Acknowledge in order, the moment each batch is durable.
                done = async {
                    match in_flight.front_mut() {
                        Some(commit) => commit.await,
                        None => std::future::pending().await,
                    }
                }, if !in_flight.is_empty() => {
                    in_flight.pop_front();
                    let done = done.map_err(|e| CliError::internal("commit task", e))?.map_err(stopped)?;
                    text.clear();
                    for offset in done.first_offset()..=done.last_offset() {
                        text.push_str(itoa::Buffer::new().format(offset));
                        text.push('\n');
                    }
                    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(|e| out_err(&e))?;
                }
                next = rx.recv(), if !input_done && ended.is_none() && in_flight.len() < PRODUCE_IN_FLIGHT => match next {
                    Some(Ok(records)) => match log.append_pending(&records).await {
                        Ok(pending) => {
                            let log = log.clone();
                            in_flight.push_back(tokio::spawn(async move { log.commit(&pending).await.map(|()| pending) }));
                        }
                        // What was written before stays acknowledged once durable.
                        Err(e) => ended = Some(stopped(e)),
                    },
                    Some(Err(e)) => ended = Some(e),
                    None => input_done = true,
                },
                else => break,
            }
        }
        provider.shutdown().await.map_err(stopped)?;
        match ended {
            Some(e) => Err(e),
            None => Ok(false),
        }
    })
}
