//! `felix-storage consume`: records from an offset or a time, up to a time,
//! as text (escaped as it is written) or one JSON object per line. Reads only.
//!
//! Times are offsets by Kafka's rule (`Shard::offset_for_time`, the codec's
//! `TimeSeek`): `--from-time T` starts at the first offset whose record's
//! timestamp is ≥ T, `--until-time U` stops before the first offset whose
//! record's timestamp is ≥ U — the offsets between the two answers, in
//! offset order, whatever the timestamps of the records between.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use clap::ValueEnum;
use felix_codec::doc::report::escapes;
use felix_codec::format::time::format_micros;
use felix_engine::shard::{Config, Shard};
use felix_engine::{EngineError, OsIo};

use crate::cli::error::{fail, CliError};
use crate::cli::output::{out_err, tell};
use crate::cli::Outcome;

/// Output format of `consume`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Tab-separated offset, time, payload.
    Text,
    /// One JSON object per line.
    Json,
}

/// Where `consume` starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Start {
    /// At this offset (`--from`).
    Offset(u64),
    /// At the first offset whose record's timestamp is at or after this (`--from-time`).
    Time(u64),
}

/// Which records `consume` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Range {
    pub(crate) start: Start,
    /// `--until-time`: stop before the first offset whose record's timestamp is at or after it.
    pub(crate) until_micros: Option<u64>,
    /// `--max`: most records.
    pub(crate) max: Option<u64>,
}

pub(crate) fn consume(dir: &Path, range: &Range, json: bool) -> Outcome {
    let (shard, recovery) = Shard::open_read_only(Arc::new(OsIo::new()), dir, Config::default()).map_err(|e| fail(&e))?;
    for w in &recovery.warnings {
        tell!("note: {}: {w}", dir.display());
    }
    // The shard is read as it was opened (a live writer's later appends are
    // not read): a time no record reaches starts at the end, where a read
    // still meets damage that cut the readable records short, and says it.
    let (from, past_all) = match range.start {
        Start::Offset(o) => (o, None),
        Start::Time(t) => match shard.offset_for_time(t).map_err(|e| fail(&e))? {
            Some(o) => (o, None),
            None => (shard.next_offset(), Some(t)),
        },
    };
    // Stop before U's answer; none (or damage before it): no readable record
    // reaches U, so every one is printed, and a read meets the damage and says it.
    let until = match range.until_micros {
        Some(micros) => match shard.offset_for_time(micros) {
            Ok(offset) => offset,
            Err(EngineError::Corrupt { .. }) => None,
            Err(e) => return Err(fail(&e)),
        },
        None => None,
    };
    let printed = print_records(&shard, dir, (from, until), range.max, json)?;
    if let (Some(t), 0) = (past_all, printed) {
        tell!("{}: no record is at or after {} (--from-time): nothing to print", dir.display(), format_micros(t));
    }
    Ok(false)
}

/// Prints the records from offset `from` up to (not including) offset
/// `until`, at most `max`; returns how many.
fn print_records(shard: &Shard, dir: &Path, (from, until): (u64, Option<u64>), max: Option<u64>, json: bool) -> Result<u64, CliError> {
    // Each line is written as it is formed (escaped, or base64-encoded, in
    // pieces): memory is the record read and a 64 KiB buffer, never a copy
    // of the record's printed form (up to 6x its size when escaped).
    let mut out = std::io::BufWriter::with_capacity(64 << 10, std::io::stdout().lock());
    let mut at = from;
    let mut left = max.unwrap_or(u64::MAX);
    let mut printed = 0u64;
    while left > 0 {
        let batch = shard.read(at, 1 << 20).map_err(|e| match e {
            // No segment at all: nothing was trimmed from what is stored; nothing is stored.
            EngineError::Trimmed { oldest, .. } if shard.segments().is_empty() => CliError::Refused(format!(
                "{}: no segment is stored in this shard, so no record can be read (its epochs file says the next offset written will be {oldest})",
                dir.display()
            )),
            e => fail(&e),
        })?;
        if batch.is_empty() {
            break;
        }
        for r in batch.iter().take(usize::try_from(left).unwrap_or(usize::MAX)) {
            if until.is_some_and(|u| r.offset >= u) {
                left = 0;
                break;
            }
            at = r.offset.saturating_add(1);
            let written = if json { write_json_line(&mut out, r) } else { write_text_line(&mut out, r) };
            written.map_err(|e| out_err(&e))?;
            left -= 1;
            printed += 1;
        }
    }
    out.flush().map_err(|e| out_err(&e))?;
    Ok(printed)
}

/// `{"offset":N,"payload":"…","timestamp_micros":T}` (or `payload_base64`
/// for a payload that is not UTF-8), keys in the order they always had.
fn write_json_line(out: &mut impl Write, r: &felix_engine::StoredRecord) -> std::io::Result<()> {
    write!(out, "{{\"offset\":{},", r.offset)?;
    match std::str::from_utf8(&r.payload) {
        Ok(text) => {
            out.write_all(b"\"payload\":")?;
            serde_json::to_writer(&mut *out, text).map_err(std::io::Error::other)?;
        }
        Err(_) => {
            out.write_all(b"\"payload_base64\":\"")?;
            {
                let mut encoder = base64::write::EncoderWriter::new(&mut *out, &base64::engine::general_purpose::STANDARD);
                encoder.write_all(&r.payload)?;
                encoder.finish()?;
            }
            out.write_all(b"\"")?;
        }
    }
    writeln!(out, ",\"timestamp_micros\":{}}}", r.timestamp_micros)
}

/// `offset<TAB>time<TAB>payload`: the payload as UTF-8 (invalid bytes as
/// U+FFFD), every character [`felix_codec::doc::report::one_line`] escapes escaped the same way (it is
/// written in pieces), so one record is one line and nothing is reordered.
fn write_text_line(out: &mut impl Write, r: &felix_engine::StoredRecord) -> std::io::Result<()> {
    write!(out, "{}\t{}\t", r.offset, format_micros(r.timestamp_micros))?;
    for chunk in r.payload.utf8_chunks() {
        let text = chunk.valid();
        let mut start = 0;
        for (i, c) in text.char_indices() {
            if escapes(c) {
                out.write_all(text.get(start..i).unwrap_or_default().as_bytes())?;
                write!(out, "{}", c.escape_default())?;
                start = i + c.len_utf8();
            }
        }
        out.write_all(text.get(start..).unwrap_or_default().as_bytes())?;
        if !chunk.invalid().is_empty() {
            out.write_all(char::REPLACEMENT_CHARACTER.to_string().as_bytes())?;
        }
    }
    out.write_all(b"\n")
}
