//! `felix-storage dump`: one segment file's records from an offset or a
//! time, found by walking verified headers, up to `--max-bytes` of payload
//! shown; as text, or one JSON object per line (`--json`: the codec's
//! `DumpLine`, no payload bytes). The walk is strict: it stops at the first
//! damage and says it (exit 1); `inspect` shows what lies past it.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use felix_codec::doc::dump::DumpLine;
use felix_codec::format::time::format_micros;
use felix_engine::{OsIo, WalkFrom};

use crate::cli::error::{fail, CliError};
use crate::cli::output::{out_err, say, say_fields};
use crate::cli::Outcome;

/// Where dump's lines go: text through the one escaper (`say!`), or JSON
/// Lines (serde_json escapes every string; nothing raw reaches the terminal).
struct Lines<'a> {
    file: &'a Path,
    /// The file as the JSON names it.
    name: String,
    json: bool,
}

impl Lines<'_> {
    fn json(&self, line: &DumpLine) -> Result<(), CliError> {
        let mut out = std::io::stdout().lock();
        serde_json::to_writer(&mut out, line).map_err(|e| CliError::internal("JSON", e))?;
        out.write_all(b"\n").map_err(|e| out_err(&e))
    }

    fn header(&self, h: &felix_codec::format::segment_header::SegmentHeader) -> Result<(), CliError> {
        if self.json {
            return self.json(&DumpLine::segment(&self.name, h.base_offset, h.created_at_micros));
        }
        say!("# {}: base_offset {}, created {}", self.file.display(), h.base_offset, format_micros(h.created_at_micros));
        Ok(())
    }

    fn record(&self, position: u64, r: &felix_codec::format::record::Record<'_>) -> Result<(), CliError> {
        if self.json {
            return self.json(&DumpLine::record(&self.name, position, &r.header));
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
        Ok(())
    }

    /// The damage the walk stopped at, in `file` (the header's may name another path).
    fn finding(&self, file: &Path, kind: &felix_codec::CorruptionKind, range: (u64, u64), offset: Option<u64>) -> Result<(), CliError> {
        if self.json {
            return self.json(&DumpLine::finding(&file.display().to_string(), kind, range, offset));
        }
        say!("{}: {} at byte {} ({:#x}): {}", file.display(), kind.name(), range.0, range.0, kind);
        Ok(())
    }

    fn stopped(&self, shown_bytes: u64, max_bytes: u64, next: u64) -> Result<(), CliError> {
        if self.json {
            let line = DumpLine::Stopped(felix_codec::doc::dump::DumpStopped {
                file: self.name.clone(),
                payload_bytes: shown_bytes,
                max_bytes,
                next_offset: next,
            });
            return self.json(&line);
        }
        say!(
            "# stopped after {shown_bytes} payload bytes (--max-bytes {max_bytes}); more records follow from offset {next}: \
             add --from-offset {next}, or a larger --max-bytes"
        );
        Ok(())
    }
}

pub(crate) fn dump(file: &Path, from: WalkFrom, max_bytes: u64, json: bool) -> Outcome {
    let lines = Lines { file, name: file.display().to_string(), json };
    let mut shown_bytes = 0u64;
    let mut shown = 0u64;
    // The first record not shown once `max_bytes` were: the output says where it stopped.
    let mut stopped_at = None;
    // The first line that could not be written ends the walk, and the run with it.
    let (mut failed, mut header_failed) = (None, None);
    let on_header = |h: &felix_codec::format::segment_header::SegmentHeader| header_failed = lines.header(h).err();
    let walked = felix_engine::walk_segment_file(Arc::new(OsIo::new()), file, from, on_header, |position, r| {
        if shown_bytes >= max_bytes {
            stopped_at = Some(r.header.offset);
            return false;
        }
        if let Err(e) = lines.record(position, &r) {
            failed = Some(e);
            return false;
        }
        shown = shown.saturating_add(1);
        shown_bytes = shown_bytes.saturating_add(r.payload.len() as u64);
        true
    });
    if let Some(e) = header_failed.or(failed) {
        return Err(e);
    }
    if let Some(next) = stopped_at {
        lines.stopped(shown_bytes, max_bytes, next)?;
    }
    ended(&lines, walked, (from, shown))
}

/// How the walk ended: the damage it stopped at (exit 1), a time no record
/// reaches (said on text output), or the file's end.
fn ended(lines: &Lines<'_>, walked: Result<felix_engine::FileWalk, felix_engine::EngineError>, (from, shown): (WalkFrom, u64)) -> Outcome {
    match walked {
        Ok(w) => match w.defect {
            Some(e) => {
                lines.finding(lines.file, &e.kind, (e.position, e.end), e.offset)?;
                Ok(true)
            }
            None => {
                if let (WalkFrom::Time(t), 0, false) = (from, shown, lines.json) {
                    say!("# no record of {} is at or after {} (--from-time)", lines.file.display(), format_micros(t));
                }
                Ok(false)
            }
        },
        Err(felix_engine::EngineError::Corrupt { path, finding }) => {
            lines.finding(&path, &finding.kind, (finding.position(), finding.end), finding.offset)?;
            Ok(true)
        }
        Err(e) => Err(fail(&e)),
    }
}
