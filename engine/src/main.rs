//! `felix-storage`: the command line over the Felix storage format — parse
//! the arguments, run the subcommand (`cli`), end with its exit status.
//!
//! Exit status: 0 success, 1 damage found or refused, 2 usage or IO error.

use std::process::ExitCode;

use clap::Parser;

use crate::cli::args::{clap_error_shown, Cli};
use crate::cli::output::tell;

mod cli;

fn main() -> ExitCode {
    let parsed = match Cli::try_parse() {
        Ok(parsed) => parsed,
        Err(e) if e.use_stderr() => {
            eprint!("{}", clap_error_shown(&e));
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help, --version: clap's own text on stdout.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    match cli::run(parsed.command) {
        Ok(false) => ExitCode::SUCCESS,
        Ok(true) => ExitCode::from(1),
        Err(e) => {
            tell!("{e}");
            ExitCode::from(e.exit_code())
        }
    }
}
