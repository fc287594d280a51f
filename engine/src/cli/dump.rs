//! `felix-storage dump`: one segment file's records from an offset, found
//! by walking verified headers, up to `--max-bytes` of payload shown.

use std::path::Path;
use std::sync::Arc;

use felix_codec::format::time::format_micros;
use felix_engine::OsIo;

use crate::cli::error::fail;
use crate::cli::output::{say, say_fields};
use crate::cli::Outcome;

pub(crate) fn dump(file: &Path, from_offset: Option<u64>, max_bytes: u64) -> Outcome {
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
