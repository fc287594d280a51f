//! The `felix-storage` command line, one file per subcommand over the
//! library's tools, with the output helpers every line goes through
//! (`output`), the errors and their exit codes (`error`) and the progress
//! bar (`progress`).

use clap::CommandFactory;

use crate::cli::args::{parse_shard, shard_dir, time_arg, Cli, Command};
use crate::cli::error::CliError;

pub(crate) mod about;
pub(crate) mod args;
pub(crate) mod bench;
pub(crate) mod consume;
pub(crate) mod demo;
pub(crate) mod diff;
pub(crate) mod dump;
pub(crate) mod error;
pub(crate) mod inspect;
pub(crate) mod output;
pub(crate) mod produce;
pub(crate) mod progress;
pub(crate) mod recover;

/// What a subcommand ends with: `Ok(damage found or refused)` (exit 0 or
/// 1), or why it failed (its exit code in [`CliError::exit_code`]).
pub(crate) type Outcome = Result<bool, CliError>;

/// Runs one parsed subcommand.
pub(crate) fn run(command: Command) -> Outcome {
    match command {
        Command::Inspect { json, sha256, jobs, paths } => inspect::run(json, sha256, jobs, &paths),
        Command::Produce { root, shard, batch, wait, fsync } => parse_shard(&shard).and_then(|(tenant, namespace, stream, n)| {
            let key = felix_engine::broker::ShardKey { tenant, namespace, stream, shard: n };
            produce::produce(&root, &key, usize::try_from(batch).unwrap_or(1), wait, fsync)
        }),
        Command::Consume { root, shard, from, from_time, until_time, max, format } => {
            let from_time = time_arg("--from-time", from_time.as_deref())?;
            let until_micros = time_arg("--until-time", until_time.as_deref())?;
            shard_dir(&root, &shard).and_then(|dir| {
                let start = from_time.map_or(consume::Start::Offset(from), consume::Start::Time);
                consume::consume(&dir, &consume::Range { start, until_micros, max }, format == consume::Format::Json)
            })
        }
        Command::Recover { root, shard, dry_run, repair_checksum_tail, json, wait, plan } => {
            let dirs = match shard {
                Some(s) => shard_dir(&root, &s).map(|d| vec![d]),
                None => recover::shard_dirs(&root),
            };
            let reviewed = plan.map(|p| recover::read_plan(&p)).transpose();
            dirs.and_then(|dirs| {
                let options = recover::RecoverOptions { dry_run, repair_checksum_tail, json, wait, reviewed: reviewed? };
                recover::recover(&dirs, &options)
            })
        }
        Command::Dump { file, from_offset, from_time, max_bytes, json } => {
            let from = match (from_offset, time_arg("--from-time", from_time.as_deref())?) {
                (_, Some(t)) => felix_engine::WalkFrom::Time(t),
                (Some(o), None) => felix_engine::WalkFrom::Offset(o),
                (None, None) => felix_engine::WalkFrom::Start,
            };
            dump::dump(&file, from, max_bytes, json)
        }
        Command::Demo { dir } => demo::demo(&dir),
        Command::Diff { a, b, shard, json } => {
            let dirs = match &shard {
                Some(s) => shard_dir(&a, s).and_then(|da| Ok((da, shard_dir(&b, s)?))),
                None => Ok((a, b)),
            };
            dirs.and_then(|(a, b)| diff::diff(&a, &b, json))
        }
        Command::Bench(flags) => flags.into_args().and_then(|args| bench::run(&args)),
        Command::Completions { shell } => about::completions(shell, &mut Cli::command()),
        Command::Man { subcommand } => about::man(Cli::command(), subcommand.as_deref()),
        Command::Schema { document } => about::schema(document),
    }
}
