//! The progress bar of long scans (`indicatif`): bytes, rate and ETA on
//! stderr, drawn only when stderr is a terminal (indicatif hides it
//! otherwise) and never asked for with `--json`.

use std::path::Path;

use felix_engine::tools::inspect::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Scans shorter than this show no bar.
pub(crate) const MIN_BYTES: u64 = 64 << 20;

/// A bar for `total` bytes.
pub(crate) fn bar(total: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    let style = ProgressStyle::with_template(
        "[{bar:25}] {percent:>3}% {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ETA {eta} {wide_msg}",
    )
    .map_or_else(|_| ProgressStyle::default_bar(), |s| s.progress_chars("#>-"));
    bar.set_style(style);
    bar
}

/// Names the file being read (escaped for the terminal).
pub(crate) fn show_file(bar: &ProgressBar, name: &str) {
    let shown = felix_codec::doc::report::one_line(name);
    if bar.message() != shown {
        bar.set_message(shown.into_owned());
    }
}

/// The progress bar (`indicatif`: rate, ETA) for scans of more than 64
/// MiB, on stderr only when it is a terminal.
pub(crate) struct Bar {
    pub(crate) bar: Option<indicatif::ProgressBar>,
}

impl Progress for Bar {
    fn update(&mut self, path: &Path, done: u64, total: u64) {
        if total < 64 << 20 {
            return;
        }
        let bar = self.bar.get_or_insert_with(|| bar(total));
        bar.set_position(done);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        show_file(bar, &name);
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
