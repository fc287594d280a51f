//! `felix-storage diff`: where two replicas of a shard diverge.
//!
//! Each side is inspected exactly as `inspect` inspects a shard (through
//! `tools::inspect::drive_shard`, files in its read order, one page-aligned 1 MiB read
//! buffer), on a thread of its own; its intact records go, summarised
//! (offset, checksum, place — never a payload), in batches over a bounded
//! channel to the codec's [`DiffMachine`], which asks for whichever side it
//! needs next. Memory is bounded whatever the sizes: two read buffers, at most
//! [`BATCHES_IN_FLIGHT`] batches of [`BATCH_RECORDS`] summaries a side, and each
//! inspection's bounded state. Both sides are read at once, so on two cores
//! the time is about one `inspect` of the larger side.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use felix_codec::format::file_name::{parse_file_name, FileKind};
use felix_codec::read::scan::{Item, RecordStatus};
use felix_codec::shard::diff::{Diff, DiffMachine, Need, RecordSummary, Side, SideFacts, MAX_NOTES};
use felix_codec::shard::inspect::InputFile;

use crate::io::{EntryType, Io, Links};
use crate::shard::walk::ReadBuf;
use crate::tools::inspect::{first_refused, is_shard_dir, shard_files, writer_of};
use crate::tools::read::Opened;
use crate::tools::{io_error, name_of, ToolError};

/// Record summaries per batch sent from a side's reader to the diff.
pub const BATCH_RECORDS: usize = 4096;
/// Batches a side's reader may have sent ahead of the diff.
pub const BATCHES_IN_FLIGHT: usize = 4;

enum Msg {
    Records(Vec<RecordSummary>),
    Done(Result<SideEnd, ToolError>),
}

/// What a side's reader ends with: its facts, and the writer it saw holding
/// the shard (`Some(None)`: held, pid unknown), if any.
type SideEnd = (SideFacts, Option<Option<u32>>);

/// Checks that `dir` can be one side of a diff: a shard directory, or an
/// empty one (a replica that holds nothing yet). Returns its files.
///
/// # Errors
/// Not a directory, a root of shards (`--shard` picks one), or a directory
/// holding no segment, index or epochs file.
pub fn replica_files(io: &dyn Io, dir: &Path) -> Result<Vec<PathBuf>, ToolError> {
    let kind = io.stat(dir, Links::Follow).map_err(|e| io_error(dir, &e))?.kind;
    if kind != EntryType::Dir {
        return Err(ToolError {
            path: dir.to_path_buf(),
            what: "not a directory: give two shard directories (or two roots and --shard)".into(),
        });
    }
    refuse_unreadable_names(io, dir)?;
    let files = shard_files(io, dir)?;
    let names: Vec<String> = files.iter().map(|p| name_of(p)).collect();
    let has_subdirs = io.list(dir).map_err(|e| io_error(dir, &e))?.iter().any(|e| e.kind == EntryType::Dir);
    if is_shard_dir(dir, &names, has_subdirs) {
        return Ok(files);
    }
    if has_subdirs {
        return Err(ToolError {
            path: dir.to_path_buf(),
            what: "holds directories, not segment files: a root of shards? give --shard TENANT/NAMESPACE/STREAM/N".into(),
        });
    }
    if names.is_empty() {
        return Ok(files); // an empty replica
    }
    Err(ToolError {
        path: dir.to_path_buf(),
        what: "no segment (NNNNNNNNNNNNNNNNNNNN.log), index or epochs file here: not a shard directory".into(),
    })
}

/// A Felix name (segment, index, epochs…) on what is not a regular file — a
/// FIFO, a socket, a device, a directory, a dangling link or a link to one of
/// those — is not read by `inspect` (which names it) and makes the engine
/// refuse the shard. Skipping it would compare a log the engine cannot open
/// (and could call it identical), so the diff refuses, naming it.
fn refuse_unreadable_names(io: &dyn Io, dir: &Path) -> Result<(), ToolError> {
    match first_refused(io, dir)? {
        None => Ok(()),
        Some((path, what)) => Err(ToolError {
            path,
            what: format!(
                "{what} where a Felix file belongs: not read, and the engine refuses to open this shard until it is moved away; \
                 nothing to compare (inspect names it)"
            ),
        }),
    }
}

/// Total bytes a diff of `a` and `b` reads (for a progress bar).
#[must_use]
pub fn total_bytes(io: &dyn Io, files: &[&[PathBuf]]) -> u64 {
    files.iter().flat_map(|f| f.iter()).filter_map(|p| io.stat(p, Links::Follow).ok()).map(|s| s.len).sum()
}

/// Diffs the replicas in `a` and `b` (shard directories, with their files
/// from [`replica_files`]). `on_bytes` hears of every read, from both
/// readers' threads.
///
/// # Errors
/// A file that cannot be read (naming it).
pub fn diff(io: &dyn Io, a: (&Path, &[PathBuf]), b: (&Path, &[PathBuf]), on_bytes: &(dyn Fn(u64) + Sync)) -> Result<Diff, ToolError> {
    std::thread::scope(|scope| {
        let (tx_a, rx_a) = sync_channel(BATCHES_IN_FLIGHT);
        let (tx_b, rx_b) = sync_channel(BATCHES_IN_FLIGHT);
        scope.spawn(move || read_side(io, a, &tx_a, on_bytes));
        scope.spawn(move || read_side(io, b, &tx_b, on_bytes));
        let mut sides = [Feed::new(rx_a), Feed::new(rx_b)];
        let mut machine = DiffMachine::new();
        while let Need::Record(side) = machine.need() {
            let feed = match side {
                Side::A => &mut sides[0],
                Side::B => &mut sides[1],
            };
            let next = feed.next()?;
            machine.push(side, next);
        }
        let [fa, fb] = sides;
        let (facts_a, writer_a) = fa.facts()?;
        let (facts_b, writer_b) = fb.facts()?;
        let mut diff = machine.finish(facts_a, facts_b);
        name_writers(&mut diff, [("A", a.0, writer_a), ("B", b.0, writer_b)]);
        name_same_dir(io, &mut diff, a.0, b.0);
        Ok(diff)
    })
}

/// Says so when A and B are one directory (given twice, or by two paths):
/// a replica compared with itself is always identical, which proves nothing.
fn name_same_dir(io: &dyn Io, diff: &mut Diff, a: &Path, b: &Path) {
    if io.canonical(a).ok().zip(io.canonical(b).ok()).is_some_and(|(a, b)| a == b) {
        diff.notes.truncate(MAX_NOTES.saturating_sub(1));
        diff.notes.insert(
            0,
            "A and B are the same directory: a replica compared with itself is always identical; give two replicas of the shard".into(),
        );
    }
}

/// Names the sides a writer held while the diff read them (as inspect says
/// it: a side being written may still change, and its tail may be a record
/// in flight, not damage): first among the notes, within their cap (the last
/// ones make room).
fn name_writers(diff: &mut Diff, sides: [(&str, &Path, Option<Option<u32>>); 2]) {
    let held: Vec<_> = sides.into_iter().filter_map(|(name, dir, w)| w.map(|pid| (name, dir, pid))).collect();
    diff.notes.truncate(MAX_NOTES.saturating_sub(held.len()));
    let notes = held.into_iter().map(|(name, dir, pid)| {
        let by = pid.map_or_else(String::new, |p| format!(" (pid {p})"));
        format!("{name}: {} is open for writing{by}; the tail may be in flight, and the diff may change as it writes", dir.display())
    });
    diff.notes.splice(0..0, notes);
}

/// One side's stream as the diff pulls it.
struct Feed {
    rx: Receiver<Msg>,
    batch: std::vec::IntoIter<RecordSummary>,
    done: Option<SideEnd>,
}

impl Feed {
    fn new(rx: Receiver<Msg>) -> Self {
        Self { rx, batch: Vec::new().into_iter(), done: None }
    }

    fn next(&mut self) -> Result<Option<RecordSummary>, ToolError> {
        loop {
            if let Some(r) = self.batch.next() {
                return Ok(Some(r));
            }
            if self.done.is_some() {
                return Ok(None);
            }
            match self.rx.recv() {
                Ok(Msg::Records(batch)) => self.batch = batch.into_iter(),
                Ok(Msg::Done(facts)) => self.done = Some(facts?),
                Err(_) => return Err(ToolError { path: PathBuf::new(), what: "a replica's reader stopped".into() }),
            }
        }
    }

    fn facts(mut self) -> Result<SideEnd, ToolError> {
        while self.next()?.is_some() {}
        Ok(self.done.unwrap_or_default())
    }
}

/// Inspects one replica, sending its intact records in batches and then
/// its facts. Stops early (quietly) when the diff went away.
fn read_side(io: &dyn Io, side: (&Path, &[PathBuf]), tx: &SyncSender<Msg>, on_bytes: &(dyn Fn(u64) + Sync)) {
    let result = inspect_side(io, side, tx, on_bytes);
    let _ = tx.send(Msg::Done(result));
}

fn inspect_side(
    io: &dyn Io,
    (dir, paths): (&Path, &[PathBuf]),
    tx: &SyncSender<Msg>,
    on_bytes: &(dyn Fn(u64) + Sync),
) -> Result<SideEnd, ToolError> {
    let mut inputs = Vec::with_capacity(paths.len());
    for p in paths {
        let size = io.stat(p, Links::Follow).map_err(|e| io_error(p, &e))?.len;
        inputs.push(InputFile { path: p.display().to_string(), name: name_of(p), size });
    }
    let shard_name = crate::tools::inspect::shard_name(io, dir);
    let mut writer = None;
    let mut buf = ReadBuf::new();
    let mut batch: Vec<RecordSummary> = Vec::with_capacity(BATCH_RECORDS);
    let gone = std::cell::Cell::new(false);
    let segment_id = std::cell::Cell::new(None);
    let mut sink = |item: Item<'_>| {
        if let (Item::Record(r), Some(id)) = (item, segment_id.get()) {
            if r.status == RecordStatus::Intact && !gone.get() {
                batch.push(RecordSummary::of(id, &r));
                if batch.len() >= BATCH_RECORDS {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH_RECORDS));
                    gone.set(tx.send(Msg::Records(full)).is_err());
                }
            }
        }
    };
    // The writer's pid is kept for the diff's note (inspect only asks whether one lives).
    let mut probe = || {
        writer = writer_of(io, dir);
        writer.is_some()
    };
    let shard = crate::tools::inspect::drive_shard(shard_name.clone(), inputs, Some(&mut probe), &mut sink, |i, scan, sink| {
        let Some(path) = paths.get(i) else { return Ok(()) };
        segment_id.set(match parse_file_name(&name_of(path)) {
            Some((id, FileKind::Segment)) => Some(id),
            _ => None,
        });
        let Some(file) = Opened::open(io, path, None)? else { return Ok(()) };
        // To the file's end, whatever its size was when listed.
        file.read_chunks(0, u64::MAX, &mut buf, |chunk| {
            scan.feed(chunk, sink);
            on_bytes(chunk.len() as u64);
            if gone.get() {
                return Err(ToolError { path: path.clone(), what: "the diff stopped".into() });
            }
            Ok(true)
        })?;
        Ok(())
    })
    .map_err(|(_, e)| e)?;
    if !batch.is_empty() && tx.send(Msg::Records(batch)).is_err() {
        return Err(ToolError { path: dir.to_path_buf(), what: "the diff stopped".into() });
    }
    let reports = shard.finish();
    // Whether the two sides are one shard is judged by the directory's own
    // name, resolved (a path given as `.` or `x/..` names it too).
    let facts = SideFacts { shard_dir: Some(shard_name), ..SideFacts::from_reports(&dir.display().to_string(), &reports) };
    Ok((facts, writer))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The writers' notes come first, and the notes stay within their cap.
    #[test]
    fn writers_are_named_first_within_the_notes_cap() {
        let mut d = DiffMachine::new().finish(SideFacts::new("a"), SideFacts::new("b"));
        d.notes = (0..MAX_NOTES).map(|i| format!("note {i}")).collect();
        name_writers(&mut d, [("A", Path::new("/x/a"), Some(Some(7))), ("B", Path::new("/x/b\nforged"), Some(None))]);
        assert_eq!(d.notes.len(), MAX_NOTES);
        assert_eq!(d.notes[0], "A: /x/a is open for writing (pid 7); the tail may be in flight, and the diff may change as it writes");
        // The note holds the name as data; the text prints it on one line.
        assert_eq!(d.notes[1], "B: /x/b\nforged is open for writing; the tail may be in flight, and the diff may change as it writes");
        assert!(d.to_text().contains("note: B: /x/b\\nforged is open for writing"), "{}", d.to_text());
        assert_eq!(d.notes[2..], (0..MAX_NOTES - 2).map(|i| format!("note {i}")).collect::<Vec<_>>()[..]);
        let before = d.notes.clone();
        name_writers(&mut d, [("A", Path::new("/x/a"), None), ("B", Path::new("/x/b"), None)]);
        assert_eq!(d.notes, before, "no writer, nothing said or dropped");
    }
}
