//! The worker loops, shared by the Web Workers (where they normally run)
//! and the page (the fallback when no worker can start).
//!
//! The scan ([`run`]): read each file with `Blob.slice`, 64 KiB first and
//! doubling to 4 MiB, [`READS_AHEAD`] reads in flight, feed the codec, and
//! report as [`ToPage`] messages — progress (at most every 100 ms),
//! findings as they are met, and each group's results. Each chunk read is
//! then handed, without a copy, to the hash worker ([`hash`]), which hashes
//! it on the other core; so the bytes are read once and the verdict never
//! waits for the hash. Should the hash worker fall [`MAX_FEED_BYTES`]
//! behind, the scan stops handing over that file's chunks and the hash
//! worker reads the rest of it itself — memory stays bounded either way.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use js_sys::{Array, ArrayBuffer, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, MessageEvent, MessagePort};

use crate::logic::group::{group, Dropped};
use crate::logic::hash::{FileHasher, Hashed};
use crate::logic::protocol::{self, Feed, Task, ToPage, CHUNK_KEY, FEED_KEY};
use crate::logic::scan::{GroupScan, CHUNK_BYTES, FIRST_CHUNK_BYTES};
use crate::web;

/// Longest wait before finished groups (or hashes) are sent to the page.
pub const GROUP_BATCH_MS: f64 = 200.0;
/// Reads in flight while scanning: the browser fetches the next chunks while one is scanned.
pub const READS_AHEAD: usize = 2;
/// Bytes handed to the hash worker and not yet acknowledged, at most.
pub const MAX_FEED_BYTES: u64 = 64 << 20;

/// Milliseconds on a clock shared by the page and its workers.
#[must_use]
pub fn wall_ms() -> f64 {
    js_sys::Date::now()
}

fn post_feed(port: &MessagePort, feed: Feed, chunk: Option<&ArrayBuffer>) -> Result<(), String> {
    let msg = Object::new();
    let _ = Reflect::set(&msg, &FEED_KEY.into(), &Uint8Array::from(protocol::encode_feed(feed).as_slice()));
    let transfer = Array::new();
    if let Some(c) = chunk {
        let _ = Reflect::set(&msg, &CHUNK_KEY.into(), c);
        transfer.push(c);
    }
    port.post_message_with_transferable(&msg, &transfer).map_err(|_| "could not hand bytes to the hash worker".to_string())
}

fn feed_of(data: &JsValue) -> Result<(Feed, Option<ArrayBuffer>), String> {
    let bytes = Reflect::get(data, &FEED_KEY.into())
        .ok()
        .filter(|v| v.is_instance_of::<Uint8Array>())
        .map(|v| Uint8Array::new(&v).to_vec())
        .ok_or("a feed message without its bytes")?;
    let chunk = Reflect::get(data, &CHUNK_KEY.into()).ok().and_then(|v| v.dyn_into::<ArrayBuffer>().ok());
    Ok((protocol::decode_feed(&bytes)?, chunk))
}

/// The scan's side of the channel to the hash worker.
struct Feeder {
    port: MessagePort,
    unacked: Rc<Cell<u64>>,
}

impl Feeder {
    fn new(port: MessagePort) -> Self {
        let unacked = Rc::new(Cell::new(0u64));
        let count = Rc::clone(&unacked);
        let on_ack = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            if let Ok((Feed::Ack { bytes }, _)) = feed_of(&e.data()) {
                count.set(count.get().saturating_sub(bytes));
            }
        });
        port.set_onmessage(Some(on_ack.as_ref().unchecked_ref()));
        // Acks may arrive after the scan ends: the handler lives as long as the worker.
        on_ack.forget();
        Self { port, unacked }
    }
}

/// One file's reads: up to [`READS_AHEAD`] in flight, sizes doubling from
/// [`FIRST_CHUNK_BYTES`] to [`CHUNK_BYTES`].
struct Reads<'a> {
    blob: &'a Blob,
    size: u64,
    next_start: u64,
    chunk: u64,
    in_flight: VecDeque<(u64, u64, Result<JsFuture, String>)>,
}

impl<'a> Reads<'a> {
    fn new(blob: &'a Blob, size: u64, from: u64) -> Self {
        let mut r = Self { blob, size, next_start: from, chunk: FIRST_CHUNK_BYTES, in_flight: VecDeque::new() };
        r.fill();
        r
    }

    fn fill(&mut self) {
        while self.in_flight.len() < READS_AHEAD && self.next_start < self.size {
            let end = (self.next_start + self.chunk).min(self.size);
            self.in_flight.push_back((self.next_start, end, web::start_read(self.blob, self.next_start, end)));
            self.next_start = end;
            self.chunk = (self.chunk * 2).min(CHUNK_BYTES);
        }
    }

    /// The next chunk's range and bytes (copied into `out`), with the browser's buffer.
    async fn next(&mut self, out: &mut Vec<u8>) -> Option<(u64, u64, Result<ArrayBuffer, String>)> {
        let (start, end, read) = self.in_flight.pop_front()?;
        let got = match read {
            Ok(read) => web::finish_read_keep(read, out).await,
            Err(e) => Err(e),
        };
        self.fill();
        Some((start, end, got))
    }
}

/// Scans `files` (each with its bytes) group by group, sending every message to `send`.
///
/// `task` says who hashes: [`Task::Scan`] hands every chunk to the hash
/// worker on `port`; [`Task::ScanThenHash`] hashes here, after the last
/// verdict, reading each file again. Results of small groups (loose files)
/// are sent together at most every [`GROUP_BATCH_MS`], so ten thousand
/// dropped files are not ten thousand updates of the page.
pub async fn run(
    files: Vec<(Dropped, Blob)>,
    send: &impl Fn(ToPage),
    cancelled: impl Fn() -> bool,
    started_ms: f64,
    task: Task,
    port: Option<MessagePort>,
) {
    let feeder = port.filter(|_| task == Task::Scan).map(Feeder::new);
    let dropped: Vec<Dropped> = files.iter().map(|(d, _)| d.clone()).collect();
    let (mut batch, mut batched_at) = (Vec::new(), wall_ms());
    let mut bytes = Vec::new();
    for g in group(&dropped) {
        let mut scans = GroupScan::new(&g, &dropped);
        for i in scans.order() {
            let Some(&d) = g.files.get(i) else { continue };
            let Some((Dropped { id, path, size }, blob)) = files.get(d) else { continue };
            let (id, size) = (*id, *size);
            let mut job = scans.begin(i);
            let mut painted = wall_ms();
            let mut feeding = feeder.as_ref();
            let mut reads = Reads::new(blob, size, 0);
            while let Some((start, end, got)) = reads.next(&mut bytes).await {
                if cancelled() {
                    return send(ToPage::Error { message: "scan cancelled".into() });
                }
                let buf = match got {
                    Ok(buf) => buf,
                    Err(e) => return send(ToPage::Error { message: format!("{path}: reading bytes {start}..{end}: {e}") }),
                };
                if let Some(f) = feeding {
                    let len = end - start;
                    if f.unacked.get() + len <= MAX_FEED_BYTES && post_feed(&f.port, Feed::Chunk { file: id, at: start }, Some(&buf)).is_ok() {
                        f.unacked.set(f.unacked.get() + len);
                    } else {
                        // The hash worker is behind: it reads the rest itself.
                        let _ = post_feed(&f.port, Feed::Rest { file: id, at: start }, None);
                        feeding = None;
                    }
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
            if let Some(f) = feeding {
                let _ = post_feed(&f.port, Feed::Rest { file: id, at: size }, None);
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
    if let Task::ScanThenHash { sha256 } = task {
        let mut out = Batcher::new(started_ms);
        for (d, blob) in &files {
            if cancelled() {
                return;
            }
            match read_and_hash(blob, d, FileHasher::new(sha256), &mut bytes).await {
                Ok(h) => out.push(d.id, h, send),
                Err(message) => return send(ToPage::Error { message }),
            }
        }
        out.flush(send);
    }
}

/// Reads `d`'s file from `hasher.bytes_done()` to its end into `hasher`.
async fn read_and_hash(blob: &Blob, d: &Dropped, mut hasher: FileHasher, bytes: &mut Vec<u8>) -> Result<Hashed, String> {
    let mut reads = Reads::new(blob, d.size, hasher.bytes_done());
    while let Some((start, end, got)) = reads.next(bytes).await {
        got.map_err(|e| format!("{}: reading bytes {start}..{end} to hash them: {e}", d.path))?;
        hasher.update(bytes);
    }
    Ok(hasher.finish())
}

/// Hashes sent to the page at most every [`GROUP_BATCH_MS`].
struct Batcher {
    items: Vec<(u32, Hashed)>,
    at: f64,
    started_ms: f64,
}

impl Batcher {
    fn new(started_ms: f64) -> Self {
        Self { items: Vec::new(), at: wall_ms(), started_ms }
    }

    fn push(&mut self, file: u32, h: Hashed, send: &dyn Fn(ToPage)) {
        self.items.push((file, h));
        if wall_ms() - self.at >= GROUP_BATCH_MS {
            self.flush(send);
        }
    }

    fn flush(&mut self, send: &dyn Fn(ToPage)) {
        if !self.items.is_empty() {
            send(ToPage::Hashes { items: std::mem::take(&mut self.items), ms: wall_ms() - self.started_ms });
        }
        self.at = wall_ms();
    }
}

/// The hash worker's state for one job.
struct Hashing {
    files: HashMap<u32, (Dropped, Blob)>,
    open: HashMap<u32, FileHasher>,
    left: usize,
    sha256: bool,
    out: Batcher,
    bytes: Vec<u8>,
}

impl Hashing {
    fn finished(&mut self, file: u32, h: Hashed, send: &dyn Fn(ToPage)) {
        self.left = self.left.saturating_sub(1);
        self.out.push(file, h, send);
        if self.left == 0 {
            self.out.flush(send);
        }
    }
}

/// The hash worker: hashes the chunks the scan worker hands over on `port`
/// (acknowledging each), and reads itself whatever the scan did not hand
/// over; sends each file's [`Hashed`] to the page in [`ToPage::Hashes`].
pub fn hash(files: Vec<(Dropped, Blob)>, port: &MessagePort, sha256: bool, started_ms: f64, send: Rc<dyn Fn(ToPage)>) {
    let left = files.len();
    let state = Rc::new(RefCell::new(Hashing {
        files: files.into_iter().map(|(d, b)| (d.id, (d, b))).collect(),
        open: HashMap::new(),
        left,
        sha256,
        out: Batcher::new(started_ms),
        bytes: Vec::new(),
    }));
    let reply = port.clone();
    let on_feed = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let send = Rc::clone(&send);
        match feed_of(&e.data()) {
            Ok((Feed::Chunk { file, at }, Some(chunk))) => {
                let len = chunk.byte_length();
                let mut s = state.borrow_mut();
                let s = &mut *s;
                let h = s.open.entry(file).or_insert_with(|| FileHasher::new(s.sha256));
                if h.bytes_done() != at {
                    return send(ToPage::Error { message: format!("the hash worker was handed bytes from {at}, expecting {}", h.bytes_done()) });
                }
                let view = Uint8Array::new(&chunk);
                s.bytes.resize(len as usize, 0);
                view.copy_to(&mut s.bytes);
                h.update(&s.bytes);
                let _ = post_feed(&reply, Feed::Ack { bytes: u64::from(len) }, None);
            }
            Ok((Feed::Rest { file, at }, _)) => {
                let mut s = state.borrow_mut();
                let hasher = s.open.remove(&file).unwrap_or_else(|| FileHasher::new(s.sha256));
                let Some((d, blob)) = s.files.remove(&file) else { return };
                if hasher.bytes_done() != at {
                    return send(ToPage::Error { message: format!("{}: the hash stopped at byte {}, not {at}", d.path, hasher.bytes_done()) });
                }
                if at >= d.size {
                    return s.finished(file, hasher.finish(), &*send);
                }
                drop(s);
                let state = Rc::clone(&state);
                wasm_bindgen_futures::spawn_local(async move {
                    let mut bytes = Vec::new();
                    match read_and_hash(&blob, &d, hasher, &mut bytes).await {
                        Ok(h) => state.borrow_mut().finished(file, h, &*send),
                        Err(message) => send(ToPage::Error { message }),
                    }
                });
            }
            Ok((Feed::Chunk { .. }, None)) => send(ToPage::Error { message: "the hash worker was handed a chunk without bytes".into() }),
            Ok((Feed::Ack { .. }, _)) => {}
            Err(e) => send(ToPage::Error { message: format!("the hash worker got an unreadable message: {e}") }),
        }
    });
    port.set_onmessage(Some(on_feed.as_ref().unchecked_ref()));
    on_feed.forget();
}
