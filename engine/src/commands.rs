//! The shell tools on the engine: produce, consume, recover, dump, demo.
//! Each returns `Ok(damage_found_or_refused)` or `Err((exit code, one-line message))`.

use std::borrow::Cow;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use felix_codec::doc::report::{escapes, guard_line, one_line};
use felix_codec::format::time::format_micros;
use felix_codec::shard::recovery::{Action, Plan, ShardPlan, Skipped};
use felix_codec::verdict::repair::RepairOptions;
use felix_codec::MAX_PAYLOAD_BYTES;
use felix_engine::broker::FsyncMode;
use felix_engine::shard::{Config, Shard};
use felix_engine::{EngineError, OsIo};

use crate::cli_error::CliError;
use crate::fail;

type Outcome = Result<bool, CliError>;

/// A text of several lines for a terminal (a report the codec rendered, its
/// fields already escaped by [`one_line`], the one escaper): each line
/// guarded once more ([`guard_line`]: what is hostile escaped, the escapes
/// left be), so nothing in it can add a line, move the cursor or reorder
/// what is shown.
pub fn lines_shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        out.push_str(&guard_line(line));
        out.push('\n');
    }
    out
}

/// Prints one line to stdout, through [`one_line`]: a newline, a control
/// or a bidi character from a path or a file is shown escaped. A reader that
/// went away (`| head`) ends the program quietly, as Unix tools do; any other
/// write failure is exit 2.
fn say_line(line: std::fmt::Arguments<'_>) {
    print_line(&one_line(&line.to_string()));
}

/// Prints one line of tab-separated fields, each through [`one_line`] (a tab
/// inside a field is escaped; the tabs between them are kept).
fn say_fields(fields: &[&str]) {
    let escaped: Vec<Cow<'_, str>> = fields.iter().map(|f| one_line(f)).collect();
    print_line(&escaped.join("\t"));
}

/// The worst exit status a run has earned so far (1: damage found or a
/// shard skipped; 2: a failure), kept for a reader that goes away first.
static WORST_EXIT: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Records that the run has earned exit status `code` at least.
fn earned(code: u8) {
    WORST_EXIT.fetch_max(code, std::sync::atomic::Ordering::Relaxed);
}

/// A reader that went away (`| head`, `| true`) ends the program quietly, as
/// Unix tools do — with the worst status the run earned before it, never
/// a success it did not earn.
fn reader_gone() -> ! {
    std::process::exit(i32::from(WORST_EXIT.load(std::sync::atomic::Ordering::Relaxed)));
}

fn print_line(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.write_all(b"\n")) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            reader_gone();
        }
        eprintln!("felix-storage: <stdout>: {e}");
        std::process::exit(2);
    }
}

macro_rules! say {
    ($($t:tt)*) => { say_line(format_args!($($t)*)) };
}

/// A stdout write failure: a reader that went away ends the program quietly.
fn out_err(e: &std::io::Error) -> CliError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        reader_gone();
    }
    CliError::Output { target: "<stdout>", what: e.to_string() }
}

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

pub fn produce(root: &Path, key: &felix_engine::broker::ShardKey, batch: usize, wait: bool, fsync: FsyncMode) -> Outcome {
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

pub fn consume(dir: &Path, from: u64, max: Option<u64>, json: bool) -> Outcome {
    let (shard, recovery) = Shard::open_read_only(Arc::new(OsIo::new()), dir, Config::default()).map_err(|e| fail(&e))?;
    for w in &recovery.warnings {
        eprintln!("felix-storage: note: {}: {}", one_line(&dir.display().to_string()), one_line(w));
    }
    // Each line is written as it is formed (escaped, or base64-encoded, in
    // pieces): memory is the record read and a 64 KiB buffer, never a copy
    // of the record's printed form (up to 6x its size when escaped).
    let mut out = std::io::BufWriter::with_capacity(64 << 10, std::io::stdout().lock());
    let mut at = from;
    let mut left = max.unwrap_or(u64::MAX);
    while left > 0 {
        let batch = shard.read(at, 1 << 20).map_err(|e| match e {
            // No segment at all: nothing was trimmed from what is stored; nothing is stored.
            EngineError::Trimmed { oldest, .. } if shard.segments().is_empty() => CliError::Refused(format!(
                "{}: no segment is stored in this shard, so no record can be read (its epochs file says the next offset written will be {oldest})",
                dir.display()
            )),
            e => fail(&e),
        })?;
        if batch.is_empty() {
            break;
        }
        for r in batch.iter().take(usize::try_from(left).unwrap_or(usize::MAX)) {
            let written = if json { write_json_line(&mut out, r) } else { write_text_line(&mut out, r) };
            written.map_err(|e| out_err(&e))?;
            left -= 1;
            at = r.offset.saturating_add(1);
        }
    }
    out.flush().map_err(|e| out_err(&e))?;
    Ok(false)
}

/// `{"offset":N,"payload":"…","timestamp_micros":T}` (or `payload_base64`
/// for a payload that is not UTF-8), keys in the order they always had.
fn write_json_line(out: &mut impl Write, r: &felix_engine::StoredRecord) -> std::io::Result<()> {
    write!(out, "{{\"offset\":{},", r.offset)?;
    match std::str::from_utf8(&r.payload) {
        Ok(text) => {
            out.write_all(b"\"payload\":")?;
            serde_json::to_writer(&mut *out, text).map_err(std::io::Error::other)?;
        }
        Err(_) => {
            out.write_all(b"\"payload_base64\":\"")?;
            {
                let mut encoder = base64::write::EncoderWriter::new(&mut *out, &base64::engine::general_purpose::STANDARD);
                encoder.write_all(&r.payload)?;
                encoder.finish()?;
            }
            out.write_all(b"\"")?;
        }
    }
    writeln!(out, ",\"timestamp_micros\":{}}}", r.timestamp_micros)
}

/// `offset<TAB>time<TAB>payload`: the payload as UTF-8 (invalid bytes as
/// U+FFFD), every character [`one_line`] escapes escaped the same way (it is
/// written in pieces), so one record is one line and nothing is reordered.
fn write_text_line(out: &mut impl Write, r: &felix_engine::StoredRecord) -> std::io::Result<()> {
    write!(out, "{}\t{}\t", r.offset, format_micros(r.timestamp_micros))?;
    for chunk in r.payload.utf8_chunks() {
        let text = chunk.valid();
        let mut start = 0;
        for (i, c) in text.char_indices() {
            if escapes(c) {
                out.write_all(text.get(start..i).unwrap_or_default().as_bytes())?;
                write!(out, "{}", c.escape_default())?;
                start = i + c.len_utf8();
            }
        }
        out.write_all(text.get(start..).unwrap_or_default().as_bytes())?;
        if !chunk.invalid().is_empty() {
            out.write_all(char::REPLACEMENT_CHARACTER.to_string().as_bytes())?;
        }
    }
    out.write_all(b"\n")
}

/// The shard directories under `root`, found the way `inspect` finds them.
pub fn shard_dirs(root: &Path) -> Result<Vec<PathBuf>, CliError> {
    let resolution = felix_engine::tools::inspect::resolve(&[root.to_path_buf()])?;
    let mut dirs = Vec::new();
    for t in resolution.targets {
        match t {
            felix_engine::tools::inspect::Target::Shard(dir, _) => dirs.push(dir),
            felix_engine::tools::inspect::Target::File(p) if p == root => {
                return Err(CliError::input(p.display(), "a file, not a shard directory"))
            }
            // A Felix file loose in a folder of folders: inspect judges it; recover
            // changes nothing there (the resolution's note says so).
            felix_engine::tools::inspect::Target::File(_) => {}
            // recover refuses the shard when it lists it (the same message as every opener).
            felix_engine::tools::inspect::Target::Refused(..) => {}
            felix_engine::tools::inspect::Target::Stray(p) => {
                eprintln!("felix-storage: note: {}: not part of any shard directory; left alone", one_line(&p.display().to_string()));
            }
        }
    }
    for note in resolution.notes {
        eprintln!("felix-storage: note: {}", one_line(&note));
    }
    Ok(dirs)
}

/// What `recover` was asked to do.
pub struct RecoverOptions {
    pub dry_run: bool,
    pub repair_checksum_tail: bool,
    pub json: bool,
    pub wait: bool,
    /// `--plan`: the plan the operator reviewed, with the file it came from.
    pub reviewed: Option<(PathBuf, Plan)>,
}

/// The largest plan file `recover --plan` reads.
const MAX_PLAN_FILE_BYTES: u64 = 64 << 20;

/// A plan file as `recover --dry-run --json` printed it, read in bounded
/// memory and checked (version 1, one entry per shard path).
pub fn read_plan(path: &Path) -> Result<(PathBuf, Plan), CliError> {
    use std::io::Read;
    // Raw: the message is escaped once, where it is printed.
    let path_text = path.display().to_string();
    // Opened without blocking (a FIFO would wait for a writer forever), then
    // refused unless it is a regular file.
    let file = {
        use std::os::unix::fs::OpenOptionsExt as _;
        std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)
    }
    .map_err(|e| CliError::input(&path_text, e))?;
    if !file.metadata().map_err(|e| CliError::input(&path_text, e))?.is_file() {
        return Err(CliError::input(&path_text, "not a regular file; give the file recover --dry-run --json printed to"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_PLAN_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| CliError::input(&path_text, e))?;
    if bytes.len() as u64 > MAX_PLAN_FILE_BYTES {
        return Err(CliError::input(&path_text, format!("over {MAX_PLAN_FILE_BYTES} bytes; not a plan recover --dry-run --json printed")));
    }
    let plan: Plan = serde_json::from_slice(&bytes)
        .map_err(|e| CliError::input(&path_text, format!("not a plan (line {}, column {}): {e}", e.line(), e.column())))?;
    if plan.plan_version != felix_codec::shard::recovery::PLAN_VERSION {
        return Err(CliError::input(
            &path_text,
            format!("plan_version {} (this build reads {})", plan.plan_version, felix_codec::shard::recovery::PLAN_VERSION),
        ));
    }
    let mut paths: Vec<&str> = plan.shards.iter().map(|s| s.path.as_str()).collect();
    paths.sort_unstable();
    if let Some(w) = paths.windows(2).find(|w| w[0] == w[1]) {
        return Err(CliError::input(&path_text, format!("plans shard {} twice", w[0])));
    }
    Ok((path.to_path_buf(), plan))
}

/// One line for one action, as `recover` prints it.
fn action_line(dir: &Path, action: &Action, would: bool) -> String {
    let verb = |done: &'static str, planned: &'static str| if would { planned } else { done };
    let d = dir.display();
    match action {
        Action::RemoveTemporary { file, reason } => format!("{d}/{file}: {} ({reason})", verb("removed", "would remove")),
        Action::RemoveUnfinished { file, bytes, reason, evidence } => {
            let kept =
                evidence.as_ref().map_or_else(String::new, |e| format!("; its {bytes} bytes {} in {e}", verb("are kept", "would be kept")));
            format!("{d}/{file}: {} ({reason}){kept}", verb("removed", "would remove"))
        }
        Action::Cut { file, position, bytes, reason, evidence, .. } => format!(
            "{d}/{file}: {} at byte {position} ({position:#x}), {bytes} bytes: {reason}; the cut bytes {} in {evidence}",
            verb("cut", "would cut"),
            verb("are kept", "would be kept")
        ),
        Action::RemoveOrphanIndex { file, bytes, reason, evidence } => {
            let kept =
                evidence.as_ref().map_or_else(String::new, |e| format!("; its {bytes} bytes {} in {e}", verb("are kept", "would be kept")));
            format!("{d}/{file}: {} ({reason}){kept}", verb("removed", "would remove"))
        }
        Action::RebuildIndex { file, reason } => format!("{d}/{file}: {} ({reason})", verb("rebuilt", "would rebuild")),
        Action::Refuse { file, position, reason, allowed_by, .. } => {
            let allow = allowed_by.as_ref().map_or_else(String::new, |f| format!("; {f} would allow cutting it"));
            format!("{d}/{file}: REFUSED at byte {position} ({position:#x}): {reason}{allow}")
        }
    }
}

fn print_plan(dir: &Path, plan: &ShardPlan, executed: bool, dry_run: bool) {
    let would = dry_run || !executed;
    if plan.refused() && !dry_run {
        say!("{}: REFUSED: recovery changed nothing in this shard", dir.display());
    }
    for action in &plan.actions {
        say!("{}", action_line(dir, action, would && !matches!(action, Action::Refuse { .. })));
    }
    for f in &plan.remaining_findings {
        say!(
            "{}/{}: remains: {} at byte {} ({:#x}), repair {}: {}",
            dir.display(),
            f.file,
            f.finding.kind,
            f.finding.position,
            f.finding.position,
            f.finding.repair,
            f.finding.message
        );
    }
    if plan.remaining_omitted > 0 {
        say!("{}: remains: {} more findings not listed (past 10,000 in a file)", dir.display(), plan.remaining_omitted);
    }
    if plan.is_clean() {
        say!("{}: clean, nothing to do", dir.display());
    }
}

/// The plan `--plan` reviewed for `dir`: `None` without `--plan`;
/// `Some(None)` when it has none. A directory the reviewed run left alone
/// was reviewed as doing nothing: if it now needs work, its plan changed.
fn reviewed_for(o: &RecoverOptions, dir: &Path) -> Option<Option<ShardPlan>> {
    o.reviewed.as_ref().map(|(_, plan)| {
        let path = dir.display().to_string();
        let left_alone = plan.skipped.iter().any(|s| s.path == path);
        plan.shards
            .iter()
            .find(|s| s.path == path)
            .cloned()
            .or_else(|| left_alone.then(|| ShardPlan { path, actions: Vec::new(), remaining_findings: Vec::new(), remaining_omitted: 0 }))
    })
}

/// With `--plan`, the shards planned and the shards found are the same set
/// (checked before anything is changed).
fn check_reviewed(dirs: &[PathBuf], o: &RecoverOptions) -> Result<(), CliError> {
    let Some((file, plan)) = &o.reviewed else { return Ok(()) };
    let file = file.display().to_string();
    if let Some(dir) = dirs.iter().find(|d| reviewed_for(o, d) == Some(None)) {
        return Err(CliError::Usage(format!(
            "{file} has no plan for {}; make it with recover --dry-run --json on the same path",
            dir.display()
        )));
    }
    if let Some(extra) = plan.shards.iter().find(|s| !dirs.iter().any(|d| d.display().to_string() == s.path)) {
        return Err(CliError::Usage(format!("{file} plans {}, which this run does not recover", extra.path)));
    }
    Ok(())
}

pub fn recover(dirs: &[PathBuf], o: &RecoverOptions) -> Outcome {
    if dirs.is_empty() {
        return Err(CliError::Usage("no shard directories found".into()));
    }
    let options = RepairOptions { repair_checksum_tail: o.repair_checksum_tail };
    check_reviewed(dirs, o)?;
    let mut damage = false;
    let mut account = Plan::new(Vec::new());
    for dir in dirs {
        let ran = if o.dry_run {
            felix_engine::tools::recover::plan(Arc::new(OsIo::new()), dir, options)
        } else {
            let spacing = felix_codec::format::index::DEFAULT_INDEX_SPACING_BYTES;
            felix_engine::tools::recover::recover(
                Arc::new(OsIo::new()),
                dir,
                options,
                o.wait,
                spacing,
                reviewed_for(o, dir).flatten().as_ref(),
            )
        };
        let outcome = match ran {
            Ok(outcome) => outcome,
            // One shard that cannot be recovered now (a live writer holds it, a
            // link where a file belongs, a plan changed since it was reviewed)
            // does not stop the others: said, in the JSON's `skipped` too, and exit 1.
            Err(e) if dirs.len() > 1 && fail(&e).exit_code() == 1 => {
                let reason = e.to_string();
                eprintln!("felix-storage: {}", one_line(&reason));
                account.skipped.push(Skipped { path: dir.display().to_string(), reason });
                damage = true;
                earned(1);
                continue;
            }
            // Anything else stops the run here; what ran before it is still told.
            Err(e) => return stop_recover(account, dir, None, 0, &e, o),
        };
        if let Some(reason) = outcome.left_alone {
            // Not known to be a shard: nothing was done; what inspect finds there remains.
            damage |= !outcome.plan.is_clean();
            earned(u8::from(damage));
            if !o.json {
                say!("{}: left alone: {reason}", dir.display());
            }
            account.skipped.push(Skipped { path: dir.display().to_string(), reason });
            continue;
        }
        if outcome.writer_live {
            eprintln!(
                "felix-storage: note: {}: shard is open for writing; the tail may be in flight",
                one_line(&dir.display().to_string())
            );
        }
        if let Some(e) = &outcome.failure {
            return stop_recover(account, dir, Some(&outcome.plan), outcome.actions_done, e, o);
        }
        damage |= outcome.plan.refused() || !outcome.plan.remaining_findings.is_empty() || outcome.plan.remaining_omitted > 0;
        earned(u8::from(damage));
        if !o.json {
            print_plan(dir, &outcome.plan, outcome.executed, o.dry_run);
        }
        account.shards.push(outcome.plan);
    }
    if o.json {
        print_plan_json(&account)?;
    }
    Ok(damage)
}

fn print_plan_json(plan: &Plan) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    // Serialized first, so a write failure is the write's own (a reader gone is told apart).
    let text = serde_json::to_vec_pretty(plan).map_err(|e| CliError::internal("plan JSON", e))?;
    out.write_all(&text).and_then(|()| writeln!(out)).map_err(|e| out_err(&e))
}

/// A `recover` run stopped by `e` in the shard in `dir`, after the first
/// `done` actions of its plan (`None`: no plan was made) ran: every action
/// taken so far is told — the plans of the shards before it, and what ran
/// and what did not in this one (as text, or in the JSON's `stopped`) —
/// then the failure, with what the operator runs next. Exit 2 (1 for a
/// refusal such as a live writer).
fn stop_recover(mut account: Plan, dir: &Path, plan: Option<&ShardPlan>, done: usize, e: &EngineError, o: &RecoverOptions) -> Outcome {
    let json = o.json;
    let failure = stopped_by(dir, e, o.repair_checksum_tail);
    earned(failure.exit_code());
    let stopped = felix_codec::shard::recovery::Stopped::new(dir.display().to_string(), failure.to_string(), plan, done);
    if json {
        account.stopped = Some(stopped);
        print_plan_json(&account)?;
    } else {
        for action in &stopped.done {
            say!("{}", action_line(dir, action, false));
        }
        for action in &stopped.not_done {
            say!("{}: not done, the run stopped first", action_line(dir, action, true));
        }
    }
    Err(failure)
}

/// An engine error that stopped work on the shard in `dir`, in words an
/// operator acts on: for an IO failure, what failed (the file, the call) and
/// what to run once it is dealt with (`--repair-checksum-tail` kept when
/// this run had it); any other error as [`fail`] says it.
pub(crate) fn stopped_by(dir: &Path, e: &EngineError, repair_checksum_tail: bool) -> CliError {
    let cause = match e {
        EngineError::FailStopped { cause } => cause.clone(),
        EngineError::Io { .. } => e.to_string(),
        _ => return fail(e),
    };
    let full_disk = std::io::Error::from_raw_os_error(libc::ENOSPC).to_string();
    let first = if cause.contains(&full_disk) { "free space on its disk" } else { "deal with the cause" };
    CliError::Stopped(format!("{cause}; the shard stopped there: {first}, then {}", next_recover(dir, repair_checksum_tail)))
}

/// The `recover` an operator runs next on `dir`: a command to paste when
/// the path is one safe shell word (`report::shell_word`, the page's rule
/// too), else words pointing at the directory the message names (escaped) —
/// an escaped path pasted into a shell names another path.
fn next_recover(dir: &Path, repair_checksum_tail: bool) -> String {
    let flag = if repair_checksum_tail { " --repair-checksum-tail" } else { "" };
    match dir.to_str().and_then(felix_codec::doc::report::shell_word) {
        Some(word) => format!("run `felix-storage recover {word}{flag}`"),
        None => format!("run `felix-storage recover{flag}` on the shard directory named above"),
    }
}

pub fn dump(file: &Path, from_offset: Option<u64>, max_bytes: u64) -> Outcome {
    let mut shown_bytes = 0u64;
    // The first record not shown once `max_bytes` were: the output says where it stopped.
    let mut stopped_at = None;
    let on_header = |h: &felix_codec::format::segment_header::SegmentHeader| {
        say!("# {}: base_offset {}, created {}", file.display(), h.base_offset, format_micros(h.created_at_micros));
    };
    let walked = felix_engine::walk_segment_file(Arc::new(OsIo::new()), file, from_offset, on_header, |position, r| {
        if shown_bytes >= max_bytes {
            stopped_at = Some(r.header.offset);
            return false;
        }
        let cut = r.payload.get(..48).unwrap_or(r.payload);
        let more = if r.payload.len() > 48 { "…" } else { "" };
        let preview = format!("{}{more}", String::from_utf8_lossy(cut));
        say_fields(&[
            &r.header.offset.to_string(),
            &format_micros(r.header.timestamp_micros),
            &format!("{} bytes", r.payload.len()),
            &format!("at byte {position}"),
            &preview,
        ]);
        shown_bytes = shown_bytes.saturating_add(r.payload.len() as u64);
        true
    });
    if let Some(next) = stopped_at {
        say!(
            "# stopped after {shown_bytes} payload bytes (--max-bytes {max_bytes}); more records follow from offset {next}: \
             add --from-offset {next}, or a larger --max-bytes"
        );
    }
    match walked {
        Ok(w) => match w.defect {
            Some(e) => {
                say!("{}: {} at byte {} ({:#x}): {}", file.display(), e.kind.name(), e.position, e.position, e.kind);
                Ok(true)
            }
            None => Ok(false),
        },
        Err(felix_engine::EngineError::Corrupt { path, finding }) => {
            say!("{}: {} at byte {}: {}", path.display(), finding.kind.name(), finding.position(), finding.kind);
            Ok(true)
        }
        Err(e) => Err(fail(&e)),
    }
}

pub fn demo(dir: &Path) -> Outcome {
    match felix_engine::Io::list(&OsIo::new(), dir) {
        Ok(entries) => {
            if !entries.is_empty() {
                return Err(CliError::Refused(format!(
                    "{}: not empty; the sample root is written only into a new or empty directory",
                    dir.display()
                )));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(CliError::input(dir.display(), e)),
    }
    let shards = felix_engine::tools::demo::write_demo(dir).map_err(|e| fail(&e))?;
    say!("wrote a sample root at {}:", dir.display());
    for s in shards {
        say!("  {}", s.display());
    }
    say!("try: felix-storage inspect {}", dir.display());
    Ok(false)
}

pub fn diff(a: &Path, b: &Path, json: bool) -> Outcome {
    use std::io::IsTerminal;
    let files_a = felix_engine::tools::diff::replica_files(a)?;
    let files_b = felix_engine::tools::diff::replica_files(b)?;
    let total = felix_engine::tools::diff::total_bytes(&[&files_a, &files_b]);
    let bar = (!json && std::io::stderr().is_terminal() && total >= crate::progress::MIN_BYTES).then(|| crate::progress::bar(total));
    let on_bytes = |n: u64| {
        if let Some(bar) = &bar {
            bar.inc(n);
        }
    };
    let diff = felix_engine::tools::diff::diff((a, &files_a), (b, &files_b), &on_bytes)?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let text = if json {
        let mut text = serde_json::to_string_pretty(&diff).map_err(|e| CliError::internal("diff JSON", e))?;
        text.push('\n');
        text
    } else {
        lines_shown(&diff.to_text())
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(|e| out_err(&e))?;
    Ok(diff.differs())
}

pub fn completions(shell: clap_complete::Shell, command: &mut clap::Command) -> Outcome {
    let mut out = Vec::new();
    clap_complete::generate(shell, command, "felix-storage", &mut out);
    if shell == clap_complete::Shell::Bash {
        // clap_complete's bash script spells the state of a hyphenated
        // binary's subcommands two ways (`felix__storage__subcmd__diff` in
        // the loop, `felix__subcmd__storage__subcmd__diff` in the arms), so
        // no subcommand's options ever complete (clap-rs/clap#6421, fixed
        // upstream by #6428): spell the arms as the loop does.
        let text = String::from_utf8_lossy(&out).replace("felix__subcmd__storage", "felix__storage");
        out = text.into_bytes();
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&out).and_then(|()| stdout.flush()).map_err(|e| out_err(&e))?;
    Ok(false)
}

/// The man page `felix-storage(1)`, or with a subcommand's name
/// `felix-storage-NAME(1)` (the pages the first one's SUBCOMMANDS section
/// names), rendered by `clap_mangen` from the same definitions as `--help`.
pub fn man(command: clap::Command, page: Option<&str>) -> Outcome {
    let command = match page {
        None => command,
        Some(name) => {
            let Some(sub) = command.get_subcommands().find(|s| s.get_name() == name) else {
                let names: Vec<&str> = command.get_subcommands().map(clap::Command::get_name).collect();
                return Err(CliError::Usage(format!("man {name}: no such subcommand; one of {}", names.join(", "))));
            };
            let full = format!("felix-storage-{name}");
            sub.clone().display_name(full.clone()).bin_name(format!("felix-storage {name}")).version(env!("CARGO_PKG_VERSION"))
        }
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(command).render(&mut out).map_err(|e| CliError::Output { target: "man page", what: e.to_string() })?;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&out).and_then(|()| stdout.flush()).map_err(|e| out_err(&e))?;
    Ok(false)
}

pub fn schema(document: felix_engine::tools::schema::Document) -> Outcome {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(document.schema_text().as_bytes()).and_then(|()| stdout.flush()).map_err(|e| out_err(&e))?;
    Ok(false)
}
