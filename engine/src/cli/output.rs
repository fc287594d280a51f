//! Every line the CLI prints from a path, a file or a message goes through
//! here, and so through the codec's one terminal escaper
//! ([`felix_codec::doc::report::one_line`], and [`guard_line`] for a line of
//! fields it already escaped): nothing printed can add a line, move the
//! cursor or reorder what is shown. A reader that goes away (`| head`) ends
//! the run quietly, with the worst exit status it earned so far.

use std::borrow::Cow;
use std::io::Write;

use felix_codec::doc::report::{guard_line, one_line};

use crate::cli::error::CliError;

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
pub(crate) fn say_line(line: std::fmt::Arguments<'_>) {
    print_line(&one_line(&line.to_string()));
}

/// Prints one line of tab-separated fields, each through [`one_line`] (a tab
/// inside a field is escaped; the tabs between them are kept).
pub(crate) fn say_fields(fields: &[&str]) {
    let escaped: Vec<Cow<'_, str>> = fields.iter().map(|f| one_line(f)).collect();
    print_line(&escaped.join("\t"));
}

/// The worst exit status a run has earned so far (1: damage found or a
/// shard skipped; 2: a failure), kept for a reader that goes away first.
static WORST_EXIT: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Records that the run has earned exit status `code` at least.
pub(crate) fn earned(code: u8) {
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

/// Prints one line through [`say_line`], formatted as `format!` does.
macro_rules! say {
    ($($t:tt)*) => { $crate::cli::output::say_line(format_args!($($t)*)) };
}
pub(crate) use say;

/// Prints one line to stderr, `felix-storage: ` and the line through
/// [`one_line`] (escaping is character by character, so a line escaped
/// whole reads as its parts escaped one by one).
pub(crate) fn tell_line(line: std::fmt::Arguments<'_>) {
    eprintln!("felix-storage: {}", one_line(&line.to_string()));
}

/// Prints one line to stderr through [`tell_line`], formatted as `format!` does.
macro_rules! tell {
    ($($t:tt)*) => { $crate::cli::output::tell_line(format_args!($($t)*)) };
}
pub(crate) use tell;

/// A stdout write failure: a reader that went away ends the program quietly.
pub(crate) fn out_err(e: &std::io::Error) -> CliError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        reader_gone();
    }
    CliError::Output { target: "<stdout>", what: e.to_string() }
}
