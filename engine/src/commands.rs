//! The shell tools on the engine: produce, consume, recover, dump, demo.
//! Each returns `Ok(damage_found)` or `Err((exit code, one-line message))`.

use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::Arc;

use felix_codec::file_name::{parse_file_name, FileKind};
use felix_codec::index::{seek_position, IndexEntry, IndexHeader, INDEX_HEADER_LEN};
use felix_codec::reader::SegmentReader;
use felix_codec::segment_header::{SegmentHeader, SEGMENT_HEADER_LEN};
use felix_codec::shard_name::ShardKey;
use felix_engine::shard::{Config, Shard};
use felix_engine::OsIo;

use crate::fail;
use felix_codec::time::format_micros;

type Outcome = Result<bool, (u8, String)>;

/// Prints one line to stdout. A reader that went away (`| head`) ends the
/// program quietly, as Unix tools do; any other write failure is exit 2.
fn say_line(line: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(line).and_then(|()| out.write_all(b"\n")) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("felix-storage: <stdout>: {e}");
        std::process::exit(2);
    }
}

macro_rules! say {
    ($($t:tt)*) => { say_line(format_args!($($t)*)) };
}

/// A stdout write failure: a reader that went away ends the program quietly.
fn out_err(e: &std::io::Error) -> (u8, String) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    (2, format!("<stdout>: {e}"))
}

pub fn produce(shard: &Shard, batch: usize) -> Outcome {
    let stdin = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    let mut lines: Vec<Vec<u8>> = Vec::with_capacity(batch);
    let commit = |lines: &mut Vec<Vec<u8>>, out: &mut std::io::StdoutLock<'_>| -> Result<(), (u8, String)> {
        if lines.is_empty() {
            return Ok(());
        }
        let refs: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
        let range = shard.append(&refs).map_err(|e| fail(&e))?;
        for offset in range {
            writeln!(out, "{offset}").map_err(|e| out_err(&e))?;
        }
        out.flush().map_err(|e| out_err(&e))?;
        lines.clear();
        Ok(())
    };
    for line in stdin.split(b'\n') {
        let mut line = line.map_err(|e| (2, format!("<stdin>: {e}")))?;
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        lines.push(line);
        if lines.len() >= batch.max(1) {
            commit(&mut lines, &mut out)?;
        }
    }
    commit(&mut lines, &mut out)?;
    Ok(false)
}

/// Standard base64 with padding (for payloads that are not UTF-8).
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                s.push(char::from(A[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                s.push('=');
            }
        }
    }
    s
}

pub fn consume(shard: &Shard, from: u64, max: Option<u64>, json: bool) -> Outcome {
    let mut out = std::io::stdout().lock();
    let mut at = from;
    let mut left = max.unwrap_or(u64::MAX);
    while left > 0 {
        let batch = shard.read(at, 1 << 20).map_err(|e| fail(&e))?;
        if batch.is_empty() {
            break;
        }
        for r in batch.iter().take(usize::try_from(left).unwrap_or(usize::MAX)) {
            let line = if json {
                let mut v = serde_json::json!({ "offset": r.offset, "timestamp_micros": r.timestamp_micros });
                match std::str::from_utf8(&r.payload) {
                    Ok(text) => v["payload"] = text.into(),
                    Err(_) => v["payload_base64"] = base64(&r.payload).into(),
                }
                v.to_string()
            } else {
                format!("{}\t{}\t{}", r.offset, format_micros(r.timestamp_micros), String::from_utf8_lossy(&r.payload))
            };
            writeln!(out, "{line}").map_err(|e| out_err(&e))?;
            left -= 1;
            at = r.offset + 1;
        }
    }
    out.flush().map_err(|e| out_err(&e))?;
    Ok(false)
}

/// The shard directories under `root`, found the way `inspect` finds them.
fn shard_dirs(root: &Path) -> Result<Vec<std::path::PathBuf>, (u8, String)> {
    let targets = felix_engine::inspect::resolve(&[root.to_path_buf()]).map_err(|e| (2, e.to_string()))?;
    targets
        .into_iter()
        .map(|t| match t {
            felix_engine::inspect::Target::Shard(dir, _) => Ok(dir),
            felix_engine::inspect::Target::File(p) => Err((2, format!("{}: a file, not a shard directory", p.display()))),
        })
        .collect()
}

pub fn recover(root: &Path, key: Option<ShardKey<'_>>, dry_run: bool, repair_checksum_tail: bool) -> Outcome {
    let dirs = match key {
        Some(k) => vec![Shard::dir_of(root, &k)],
        None => shard_dirs(root)?,
    };
    if dirs.is_empty() {
        return Err((2, format!("{}: no shard directories found", root.display())));
    }
    let config = Config { repair_checksum_tail, ..Config::default() };
    let mut refused = false;
    let verb = |done: &'static str, would: &'static str| if dry_run { would } else { done };
    for dir in dirs {
        if !dir.is_dir() {
            return Err((2, format!("{}: no such shard directory", dir.display())));
        }
        match Shard::open_dir(Arc::new(OsIo::new()), &dir, config.clone(), dry_run) {
            Ok((_, report)) => {
                let mut any = false;
                for (path, f, sidecar) in &report.truncated {
                    any = true;
                    say!(
                        "{}: {} at byte {} ({:#x}): {}; the cut bytes {} in {}",
                        path.display(),
                        verb("cut", "would cut"),
                        f.position(),
                        f.position(),
                        f.kind,
                        verb("are kept", "would be kept"),
                        sidecar.display()
                    );
                }
                for (path, why) in &report.rebuilt_indexes {
                    any = true;
                    say!("{}: {} ({why})", path.display(), verb("rebuilt", "would rebuild"));
                }
                for path in &report.removed_temporaries {
                    any = true;
                    say!("{}: {} (an unfinished temporary file)", path.display(), verb("removed", "would remove"));
                }
                for w in &report.warnings {
                    say!("{}: warning: {w}", dir.display());
                }
                if !any {
                    say!("{}: clean, nothing to do", dir.display());
                }
            }
            Err(e @ felix_engine::EngineError::Corrupt { .. }) => {
                refused = true;
                say!("{}: REFUSED: {e}", dir.display());
            }
            Err(e) => return Err(fail(&e)),
        }
    }
    Ok(refused)
}

pub fn dump(file: &Path, from_offset: Option<u64>, max_bytes: u64) -> Outcome {
    let bytes_err = |e: std::io::Error| (2, format!("{}: {e}", file.display()));
    use std::io::Read;
    let mut f = std::fs::File::open(file).map_err(bytes_err)?;
    let len = f.metadata().map_err(bytes_err)?.len();
    let mut head = [0u8; SEGMENT_HEADER_LEN];
    let n = f.read(&mut head).map_err(bytes_err)?;
    let header = match SegmentHeader::decode(&head[..n]) {
        Ok((h, _)) => h,
        Err(d) => {
            say!("{}: {} at byte 0: {}", file.display(), d.kind.name(), d.kind);
            return Ok(true);
        }
    };
    say!("# {}: base_offset {}, created {}", file.display(), header.base_offset, format_micros(header.created_at_micros));
    // Start from the index entry at or below --from-offset, when the index is usable.
    let mut start = IndexEntry { offset: header.base_offset, position: SEGMENT_HEADER_LEN as u64 };
    if let (Some(from), Some((id, FileKind::Segment))) = (from_offset, file.file_name().and_then(|n| parse_file_name(&n.to_string_lossy())))
    {
        let index_path = file.with_file_name(felix_codec::file_name::index_file_name(id));
        if let Ok(ix) = std::fs::read(&index_path) {
            if IndexHeader::decode(&ix).is_ok_and(|(h, _)| h.base_offset == header.base_offset) {
                let entries: Vec<IndexEntry> =
                    ix.get(INDEX_HEADER_LEN..).unwrap_or(&[]).chunks_exact(16).filter_map(IndexEntry::decode).collect();
                if let Some(e) = seek_position(&entries, from).filter(|e| e.position < len) {
                    start = e;
                }
            }
        }
    }
    let from = from_offset.unwrap_or(0);
    let first = IndexEntry { offset: header.base_offset, position: SEGMENT_HEADER_LEN as u64 };
    match dump_records(&mut f, file, len, start, from, max_bytes)? {
        Some(damaged) => Ok(damaged),
        None => {
            say!("# the index entry for offset {} does not land on it; reading from the segment's start", start.offset);
            dump_records(&mut f, file, len, first, from, max_bytes).map(|d| d.unwrap_or(true))
        }
    }
}

/// Prints records from `start`; `Ok(None)` when `start` (an index entry) misled.
fn dump_records(
    f: &mut std::fs::File,
    file: &Path,
    len: u64,
    start: IndexEntry,
    from: u64,
    max_bytes: u64,
) -> Result<Option<bool>, (u8, String)> {
    use std::io::{Read, Seek, SeekFrom};
    let bytes_err = |e: std::io::Error| (2, format!("{}: {e}", file.display()));
    let mut pos = start.position;
    let mut shown = 0u64;
    let mut first = true;
    let mut buf = Vec::new();
    while pos < len && shown < max_bytes {
        let want = usize::try_from((len - pos).min(1 << 20)).unwrap_or(1 << 20);
        buf.resize(want, 0);
        f.seek(SeekFrom::Start(pos)).map_err(bytes_err)?;
        f.read_exact(&mut buf).map_err(bytes_err)?;
        let mut consumed = 0;
        let mut grow = false;
        for item in SegmentReader::at_position(&buf, pos, None) {
            match item {
                Ok((p, r)) => {
                    if first && r.header.offset != start.offset {
                        return Ok(None);
                    }
                    first = false;
                    consumed = p + r.header.record_len() - pos;
                    if r.header.offset < from {
                        continue;
                    }
                    let cut = r.payload.get(..48).unwrap_or(r.payload);
                    let preview: String = String::from_utf8_lossy(cut).chars().map(|c| if c.is_control() { '.' } else { c }).collect();
                    let more = if r.payload.len() > 48 { "…" } else { "" };
                    say!(
                        "{}\t{}\t{} bytes\tat byte {}\t{preview}{more}",
                        r.header.offset,
                        format_micros(r.header.timestamp_micros),
                        r.payload.len(),
                        p
                    );
                    shown += r.payload.len() as u64;
                    if shown >= max_bytes {
                        break;
                    }
                }
                Err(e) if matches!(e.kind, felix_codec::CorruptionKind::Truncated { needed, .. } if e.position + needed <= len) => {
                    grow = consumed == 0;
                    break;
                }
                Err(e) => {
                    if first && start.position != SEGMENT_HEADER_LEN as u64 {
                        return Ok(None);
                    }
                    say!("{}: {} at byte {} ({:#x}): {}", file.display(), e.kind.name(), e.position, e.position, e.kind);
                    return Ok(Some(true));
                }
            }
        }
        if grow {
            // One record larger than the read: read it whole (bounded by MAX_PAYLOAD_BYTES).
            buf.clear();
            let mut h = [0u8; 4];
            f.seek(SeekFrom::Start(pos)).map_err(bytes_err)?;
            f.read_exact(&mut h).map_err(bytes_err)?;
            let need = 28 + u64::from(u32::from_be_bytes(h).min(felix_codec::MAX_PAYLOAD_BYTES));
            let mut big = vec![0u8; usize::try_from(need).unwrap_or(0)];
            f.seek(SeekFrom::Start(pos)).map_err(bytes_err)?;
            f.read_exact(&mut big).map_err(bytes_err)?;
            if let Some(Ok((p, r))) = SegmentReader::at_position(&big, pos, None).next() {
                say!("{}\t{}\t{} bytes\tat byte {p}", r.header.offset, format_micros(r.header.timestamp_micros), r.payload.len());
                shown += r.payload.len() as u64;
                pos += r.header.record_len();
                first = false;
                continue;
            }
            break;
        }
        if consumed == 0 {
            break;
        }
        pos += consumed;
    }
    Ok(Some(false))
}

pub fn demo(dir: &Path) -> Outcome {
    let shards = felix_engine::demo::write_demo(dir).map_err(|e| fail(&e))?;
    say!("wrote a sample root at {}:", dir.display());
    for s in shards {
        say!("  {}", s.display());
    }
    say!("try: felix-storage inspect {}", dir.display());
    Ok(false)
}
