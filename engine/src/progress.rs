//! The progress bar of long scans (`indicatif`): bytes, rate and ETA on
//! stderr, drawn only when stderr is a terminal (indicatif hides it
//! otherwise) and never asked for with `--json`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Scans shorter than this show no bar.
pub const MIN_BYTES: u64 = 64 << 20;

/// A bar for `total` bytes.
pub fn bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "[{bar:25}] {percent:>3}% {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ETA {eta} {wide_msg}",
    )
    .map_or_else(|_| ProgressStyle::default_bar(), |s| s.progress_chars("#>-"));
    bar.set_style(style);
    bar
}

/// Names the file being read (escaped for the terminal).
pub fn show_file(bar: &ProgressBar, name: &str) {
    let shown = felix_codec::doc::report::one_line(name);
    if bar.message() != shown {
        bar.set_message(shown.into_owned());
    }
}
