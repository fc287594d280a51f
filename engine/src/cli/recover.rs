//! `felix-storage recover`: the shard directories under a root, the plan an
//! operator reviewed (`--plan`), each shard's plan run (or shown, with
//! `--dry-run`) through [`felix_engine::tools::recover`], and a run stopped
//! part way told with what it did and what to run next.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use felix_codec::shard::recovery::{Action, Plan, ShardPlan, Skipped};
use felix_codec::verdict::repair::RepairOptions;
use felix_engine::{EngineError, OsIo};

use crate::cli::error::{fail, stopped_by, CliError};
use crate::cli::output::{earned, out_err, say, tell};
use crate::cli::Outcome;

/// The shard directories under `root`, found the way `inspect` finds them.
pub(crate) fn shard_dirs(root: &Path) -> Result<Vec<PathBuf>, CliError> {
    let resolution = felix_engine::tools::inspect::resolve(&OsIo::new(), &[root.to_path_buf()])?;
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
                tell!("note: {}: not part of any shard directory; left alone", p.display());
            }
        }
    }
    for note in resolution.notes {
        tell!("note: {note}");
    }
    Ok(dirs)
}

/// What `recover` was asked to do.
pub(crate) struct RecoverOptions {
    pub(crate) dry_run: bool,
    pub(crate) repair_checksum_tail: bool,
    pub(crate) json: bool,
    pub(crate) wait: bool,
    /// `--plan`: the plan the operator reviewed, with the file it came from.
    pub(crate) reviewed: Option<(PathBuf, Plan)>,
}

/// The largest plan file `recover --plan` reads.
const MAX_PLAN_FILE_BYTES: u64 = 64 << 20;

/// A plan file as `recover --dry-run --json` printed it, read in bounded
/// memory and checked (version 1, one entry per shard path).
pub(crate) fn read_plan(path: &Path) -> Result<(PathBuf, Plan), CliError> {
    use felix_engine::tools::read::{read_whole, Whole};
    // Raw: the message is escaped once, where it is printed.
    let path_text = path.display().to_string();
    // Opened without blocking (a FIFO would wait for a writer forever), then
    // refused unless it is a regular file.
    let bytes = match read_whole(&OsIo::new(), path, MAX_PLAN_FILE_BYTES).map_err(|e| CliError::input(&path_text, e.what))? {
        Whole::Bytes(bytes) => bytes,
        Whole::NotRegular(_) => {
            return Err(CliError::input(&path_text, "not a regular file; give the file recover --dry-run --json printed to"))
        }
        Whole::TooLarge => {
            return Err(CliError::input(
                &path_text,
                format!("over {MAX_PLAN_FILE_BYTES} bytes; not a plan recover --dry-run --json printed"),
            ))
        }
    };
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
    if let Some(words) = plan.to_succeed() {
        say!("{}: {words}", dir.display());
    }
    if let Some(words) = plan.epochs_advice() {
        say!("{}: {words}", dir.display());
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

pub(crate) fn recover(dirs: &[PathBuf], o: &RecoverOptions) -> Outcome {
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
                tell!("{reason}");
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
            tell!("note: {}: shard is open for writing; the tail may be in flight", dir.display());
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
