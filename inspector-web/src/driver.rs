//! The scan loop, shared by the Web Worker (where it normally runs) and the
//! page (the fallback when a worker cannot start): read each file with
//! `Blob.slice`, 64 KiB first and doubling to 4 MiB, feed the codec, report
//! progress (at most every 100 ms), findings as they are met, and each
//! group's results.

use felix_codec::report::FindingReport;
use web_sys::Blob;

use crate::logic::group::{group, Dropped};
use crate::logic::scan::{GroupScan, Scanned, CHUNK_BYTES, FIRST_CHUNK_BYTES};
use crate::web;

/// Where the loop reports to.
pub trait Events {
    /// `done` bytes of file `file` read.
    fn progress(&self, file: usize, done: u64);
    /// Findings met in `file`, `ms` after the drop.
    fn live(&self, file: usize, found: Vec<FindingReport>, ms: f64);
    /// A group's final results.
    fn scanned(&self, results: Vec<Scanned>, ms: f64);
    /// All done.
    fn done(&self, ms: f64);
    /// Something failed; the loop stops.
    fn error(&self, message: String);
}

/// Milliseconds on a clock shared by the page and its workers.
#[must_use]
pub fn wall_ms() -> f64 {
    js_sys::Date::now()
}

/// Scans `files` (path, size, bytes) group by group.
pub async fn run(files: Vec<(String, u64, Blob)>, events: &impl Events, cancelled: impl Fn() -> bool, started_ms: f64) {
    let dropped: Vec<Dropped> = files.iter().map(|(path, size, _)| Dropped { path: path.clone(), size: *size }).collect();
    for g in group(&dropped) {
        let mut scans = GroupScan::new(&g, &dropped);
        for i in scans.order() {
            let Some(&d) = g.files.get(i) else { continue };
            let Some((path, size, blob)) = files.get(d) else { continue };
            let mut job = scans.begin(i);
            let (mut at, mut chunk, mut painted) = (0, FIRST_CHUNK_BYTES, wall_ms());
            let mut bytes = Vec::new();
            // One read ahead: the browser fetches the next chunk while this one is scanned.
            let mut next = if *size > 0 { Some((at, chunk.min(*size), web::start_read(blob, 0, chunk.min(*size)))) } else { None };
            while let Some((start, end, read)) = next.take() {
                if cancelled() {
                    events.error("scan cancelled".into());
                    return;
                }
                let got = match read {
                    Ok(read) => web::finish_read(read, &mut bytes).await,
                    Err(e) => Err(e),
                };
                if let Err(e) = got {
                    events.error(format!("{path}: reading bytes {start}..{end}: {e}"));
                    return;
                }
                chunk = (chunk * 2).min(CHUNK_BYTES);
                if end < *size {
                    let next_end = (end + chunk).min(*size);
                    next = Some((end, next_end, web::start_read(blob, end, next_end)));
                }
                job.feed(&bytes);
                let live = job.take_live();
                if !live.is_empty() {
                    events.live(d, live, wall_ms() - started_ms);
                }
                at = end;
                if wall_ms() - painted > 100.0 || at == *size {
                    painted = wall_ms();
                    events.progress(d, at);
                }
            }
            scans.end(i, job);
        }
        events.scanned(scans.finish(&g), wall_ms() - started_ms);
    }
    events.done(wall_ms() - started_ms);
}
