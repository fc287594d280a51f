//! What `felix-storage` says about itself: a shell completion script
//! (`clap_complete`), its man pages (`clap_mangen`, from the same
//! definitions as `--help`) and the JSON Schemas of what it prints.

use std::io::Write;

use crate::cli::error::CliError;
use crate::cli::output::out_err;
use crate::cli::Outcome;

pub(crate) fn completions(shell: clap_complete::Shell, command: &mut clap::Command) -> Outcome {
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
pub(crate) fn man(command: clap::Command, page: Option<&str>) -> Outcome {
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

pub(crate) fn schema(document: felix_engine::tools::schema::Document) -> Outcome {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(document.schema_text().as_bytes()).and_then(|()| stdout.flush()).map_err(|e| out_err(&e))?;
    Ok(false)
}
