//! The report in words: what `felix-storage inspect` prints. Apart from the
//! model (`report`) so the model needs nothing above it, while the text ends
//! each shard with its verdict (`verdict`), which reads the model.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write as _;

use crate::doc::report::{one_line, plural, FileReport, Report};
use crate::format::file_name::FileKind;
use crate::format::time::format_micros;
use crate::read::time::TimeSpan;

impl Report {
    /// The person-readable rendering: one line per finding, then a summary
    /// line per file. `felix-storage inspect` prints this.
    #[must_use]
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for file in &self.files {
            let path = one_line(&file.path);
            for f in &file.findings {
                let _ = write!(out, "{path}: {} at byte {} ({:#x})", f.kind, f.position, f.position);
                if let Some(offset) = f.offset {
                    let _ = write!(out, ", offset {offset}");
                }
                let _ = writeln!(out, ", repair {}: {}", f.repair, one_line(&f.message));
            }
            if file.findings_omitted > 0 {
                let _ = writeln!(out, "{path}: {} more findings not listed", file.findings_omitted);
            }
        }
        let files: Vec<&FileReport> = self.files.iter().collect();
        let verdicts = crate::doc::sentence::by_shard(&files);
        for (i, file) in self.files.iter().enumerate() {
            let path = one_line(&file.path);
            let _ = write!(out, "{path}: {} {}, {} bytes", file.status_word(), file.kind.as_str(), file.size);
            match file.kind {
                FileKind::Segment => {
                    let _ = write!(out, ", {} intact records", file.records);
                    if let (Some(a), Some(b)) = (file.first_offset, file.last_offset) {
                        let _ = write!(out, " (offsets {a}..={b})");
                    }
                    if let Some(span) = file.time {
                        let _ = write!(out, ", {}", span_words(span));
                    }
                }
                FileKind::Index => {
                    let n = file.index_entries.unwrap_or(0);
                    let _ = write!(out, ", {n} entr{}", if n == 1 { "y" } else { "ies" });
                }
                FileKind::Epochs => {
                    let n = file.entries.as_ref().map_or(0, Vec::len) as u64;
                    let _ = write!(out, ", {n} generation{}", plural(n));
                }
                FileKind::Unknown => {}
            }
            let _ = writeln!(out);
            for note in &file.notes {
                let _ = writeln!(out, "{path}: note: {}", one_line(note));
            }
            // Each shard's (or lone file's) text ends with its verdict in one sentence.
            for v in verdicts.iter().filter(|v| v.files.end == i + 1) {
                let label = one_line(v.label(&files));
                if let Some(words) = shard_time_words(files.get(v.files.clone()).unwrap_or(&[])) {
                    let _ = writeln!(out, "{label}: time: {words}");
                }
                let _ = writeln!(out, "{label}: verdict: {}", v.sentence);
            }
        }
        for note in &self.notes {
            let _ = writeln!(out, "note: {}", one_line(note));
        }
        let files = self.files.len();
        let _ = writeln!(out, "{} file{}, {} finding{}", files, plural(files as u64), self.finding_count(), plural(self.finding_count()));
        out
    }
}

/// A span of timestamps in words, in UTC with the micros: `written A to B`,
/// and the least and greatest when the clock went back in between (the
/// shard's line in `inspect`, the divergent records' in `diff`).
#[must_use]
pub fn span_words(span: TimeSpan) -> String {
    let mut out = alloc::format!("written {} to {}", format_micros(span.first), format_micros(span.last));
    if span.out_of_order() {
        let _ = write!(out, " (timestamps go back: earliest {}, latest {})", format_micros(span.min), format_micros(span.max));
    }
    out
}

/// A shard's span in words (`the shard's records were written A to B …`),
/// what `inspect` prints before each shard's verdict and the page beside
/// it; `None` for a lone file or a shard without an intact record.
#[must_use]
pub fn shard_time_words(files: &[&FileReport]) -> Option<String> {
    shard_span(files).map(|span| alloc::format!("the shard's records were {}", span_words(span)))
}

/// The span a shard's segments cover, joined in offset order; `None` for a
/// lone file or a shard without an intact record.
#[must_use]
pub fn shard_span(files: &[&FileReport]) -> Option<TimeSpan> {
    if files.first().is_none_or(|f| f.shard.is_none()) {
        return None;
    }
    let mut segments: Vec<(u64, TimeSpan)> =
        files.iter().filter(|f| f.kind == FileKind::Segment).filter_map(|f| Some((f.first_offset?, f.time?))).collect();
    segments.sort_by_key(|(first, _)| *first);
    TimeSpan::join(segments.into_iter().map(|(_, span)| span))
}
