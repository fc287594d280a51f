//! The scan loop, shared by the Web Worker (where it normally runs) and the
//! page (the fallback when a worker cannot start): read each file with
//! `Blob.slice`, 64 KiB first and doubling to 4 MiB, feed the codec, and
//! report as [`ToPage`] messages — progress (at most every 100 ms), findings
//! as they are met, and each group's results.

use web_sys::Blob;

use crate::logic::group::{group, Dropped};
use crate::logic::protocol::ToPage;
use crate::logic::scan::{GroupScan, CHUNK_BYTES, FIRST_CHUNK_BYTES};
use crate::web;

/// Longest wait before finished groups are sent to the page.
pub const GROUP_BATCH_MS: f64 = 200.0;

/// Milliseconds on a clock shared by the page and its workers.
#[must_use]
pub fn wall_ms() -> f64 {
    js_sys::Date::now()
}

/// Scans `files` (each with its bytes) group by group, sending every message to `send`.
///
/// Results of small groups (loose files) are sent together at most every
/// [`GROUP_BATCH_MS`], so ten thousand dropped files are not ten thousand
/// updates of the page.
pub async fn run(files: Vec<(Dropped, Blob)>, send: &impl Fn(ToPage), cancelled: impl Fn() -> bool, started_ms: f64) {
    let dropped: Vec<Dropped> = files.iter().map(|(d, _)| d.clone()).collect();
    let (mut batch, mut batched_at) = (Vec::new(), wall_ms());
    for g in group(&dropped) {
        let mut scans = GroupScan::new(&g, &dropped);
        for i in scans.order() {
            let Some(&d) = g.files.get(i) else { continue };
            let Some((Dropped { id, path, size }, blob)) = files.get(d) else { continue };
            let (id, size) = (*id, *size);
            let mut job = scans.begin(i);
            let (mut chunk, mut painted) = (FIRST_CHUNK_BYTES, wall_ms());
            let mut bytes = Vec::new();
            // One read ahead: the browser fetches the next chunk while this one is scanned.
            let mut next = if size > 0 { Some((0, chunk.min(size), web::start_read(blob, 0, chunk.min(size)))) } else { None };
            while let Some((start, end, read)) = next.take() {
                if cancelled() {
                    return send(ToPage::Error { message: "scan cancelled".into() });
                }
                let got = match read {
                    Ok(read) => web::finish_read(read, &mut bytes).await,
                    Err(e) => Err(e),
                };
                if let Err(e) = got {
                    return send(ToPage::Error { message: format!("{path}: reading bytes {start}..{end}: {e}") });
                }
                chunk = (chunk * 2).min(CHUNK_BYTES);
                if end < size {
                    let next_end = (end + chunk).min(size);
                    next = Some((end, next_end, web::start_read(blob, end, next_end)));
                }
                job.feed(&bytes);
                let findings = job.take_live();
                if !findings.is_empty() {
                    send(ToPage::Live { file: id, findings, ms: wall_ms() - started_ms });
                }
                if wall_ms() - painted > 100.0 || end == size {
                    painted = wall_ms();
                    send(ToPage::Progress { file: id, done: end });
                }
            }
            scans.end(i, job);
        }
        batch.extend(scans.finish());
        if wall_ms() - batched_at >= GROUP_BATCH_MS {
            send(ToPage::Group { items: std::mem::take(&mut batch), ms: wall_ms() - started_ms });
            batched_at = wall_ms();
        }
    }
    if !batch.is_empty() {
        send(ToPage::Group { items: batch, ms: wall_ms() - started_ms });
    }
    send(ToPage::Done { ms: wall_ms() - started_ms });
}
