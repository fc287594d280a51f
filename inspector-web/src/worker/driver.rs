//! The worker loops, shared by the Web Workers (where they normally run)
//! and the page (the fallback when no worker can start).
//!
//! Three workers of one script, each on a thread of its own:
//!
//! - the reader ([`read`]) reads each file front to back in
//!   `Blob.slice().arrayBuffer()` reads ([`Reads`]: 64 KiB first, doubling
//!   to [`READ_BYTES`], [`READS_AHEAD`] in flight) in the scan's order, and
//!   hands each chunk to the scan worker — transferred, not copied — at most
//!   [`MAX_READ_AHEAD_BYTES`] ahead;
//! - the scan worker ([`run`]) feeds each chunk to the codec (copied into
//!   wasm memory [`CHUNK_BYTES`] at a time), reports as [`ToPage`] messages —
//!   progress (at most every 100 ms), findings as they are met, each group's
//!   results — and, when the hash runs beside the scan, hands the chunk on to
//! - the hash worker ([`hash`]), which hashes it. Should it fall
//!   [`MAX_FEED_BYTES`] behind, the scan stops handing over that file's
//!   chunks and the hash worker reads the rest itself; so the verdict never
//!   waits for the hash, and memory stays bounded either way. When the hash
//!   does not run beside the scan (fewer than three cores and a large drop:
//!   `runner`), the page asks the hash worker to read every file itself
//!   once the verdict is shown; it reads them one at a time.
//!
//! Reading costs the receiving thread about as much as the scan does, so
//! the read and the scan run on two threads. Without a reader the scan
//! worker reads for itself; without any worker the page scans, then hashes.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use js_sys::{Array, ArrayBuffer, Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, MessageEvent, MessagePort};

use crate::model::group::{file_name, group, Dropped};
use crate::model::hash::{FileHasher, Hashed};
use crate::model::replica::{self, Compared, DiffRun, Planned, ReadFailure, ReplicaScan};
use crate::model::scan::{read_order, Budget, FileJob, GroupScan, CHUNK_BYTES, FIRST_CHUNK_BYTES};
use crate::model::side_by_side;
use crate::ui::message::quote;
use crate::web::{BrowserError, Op};
use crate::worker::error::{FeedError, JobError, ReadError};
use crate::worker::protocol::{self, Answer, Feed, Folder, FolderJob, Task, ToPage, CHUNK_KEY, FEED_KEY};
use felix_codec::shard::diff::Side;
use felix_codec::shard::scan::Read;

/// The largest read (`Blob.slice().arrayBuffer()`): the page's benchmark
/// finds the browser reads a file faster in fewer, larger reads.
pub const READ_BYTES: u64 = 16 << 20;
/// Reads in flight at once per file being read.
pub const READS_AHEAD: usize = 2;
use crate::web;

/// Longest wait before finished groups (or hashes) are sent to the page.
pub const GROUP_BATCH_MS: f64 = 200.0;
/// Bytes the reader hands to the scan worker before the scan is done with them, at most.
pub const MAX_READ_AHEAD_BYTES: u64 = 32 << 20;
/// Bytes handed to the hash worker and not yet acknowledged, at most.
pub const MAX_FEED_BYTES: u64 = 64 << 20;

/// Milliseconds on a clock shared by the page and its workers.
#[must_use]
pub fn wall_ms() -> f64 {
    js_sys::Date::now()
}

/// Posts `feed` (with `chunk`, transferred) on `port`.
///
/// # Errors
/// When the browser refuses the message.
pub fn post_feed(port: &MessagePort, feed: &Feed, chunk: Option<&ArrayBuffer>) -> Result<(), BrowserError> {
    let msg = Object::new();
    let _ = Reflect::set(&msg, &FEED_KEY.into(), &Uint8Array::from(protocol::encode_feed(feed).as_slice()));
    let transfer = Array::new();
    if let Some(c) = chunk {
        let _ = Reflect::set(&msg, &CHUNK_KEY.into(), c);
        transfer.push(c);
    }
    port.post_message_with_transferable(&msg, &transfer).map_err(|e| BrowserError::js(Op::Post, &e))
}

fn feed_of(data: &JsValue) -> Result<(Feed, Option<ArrayBuffer>), FeedError> {
    let bytes = Reflect::get(data, &FEED_KEY.into())
        .ok()
        .filter(|v| v.is_instance_of::<Uint8Array>())
        .map(|v| Uint8Array::new(&v).to_vec())
        .ok_or(FeedError::NoBytes)?;
    let chunk = Reflect::get(data, &CHUNK_KEY.into()).ok().and_then(|v| v.dyn_into::<ArrayBuffer>().ok());
    Ok((protocol::decode_feed(&bytes).map_err(FeedError::Wire)?, chunk))
}

/// A promise to wait on until [`Wake::wake`] is called.
#[derive(Default)]
struct Wake(RefCell<Option<Function>>);

impl Wake {
    async fn wait(&self) {
        let promise = Promise::new(&mut |resolve, _| *self.0.borrow_mut() = Some(resolve));
        let _ = JsFuture::from(promise).await;
    }

    fn wake(&self) {
        if let Some(f) = self.0.borrow_mut().take() {
            let _ = f.call0(&JsValue::NULL);
        }
    }
}

/// The sending side of a channel to the next worker: what it has not yet acknowledged.
struct Sender {
    port: MessagePort,
    unacked: Rc<Cell<u64>>,
    acked: Rc<Wake>,
}

impl Sender {
    fn new(port: MessagePort) -> Self {
        let (unacked, acked) = (Rc::new(Cell::new(0u64)), Rc::new(Wake::default()));
        let (count, wake) = (Rc::clone(&unacked), Rc::clone(&acked));
        let on_ack = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            if let Ok((Feed::Ack { bytes }, _)) = feed_of(&e.data()) {
                count.set(count.get().saturating_sub(bytes));
                wake.wake();
            }
        });
        port.set_onmessage(Some(on_ack.as_ref().unchecked_ref()));
        // Acks may arrive after the job ends: the handler lives as long as the worker.
        on_ack.forget();
        Self { port, unacked, acked }
    }

    /// Hands `chunk` on, if fewer than `limit` bytes are unacknowledged (with it).
    fn offer(&self, feed: &Feed, chunk: &ArrayBuffer, limit: u64) -> bool {
        let len = u64::from(chunk.byte_length());
        if self.unacked.get() + len > limit || post_feed(&self.port, feed, Some(chunk)).is_err() {
            return false;
        }
        self.unacked.set(self.unacked.get() + len);
        true
    }
}

/// A message from the reader, with its chunk.
type Received = (Feed, Option<ArrayBuffer>);

/// The receiving side of the reader's channel: chunks queued as they arrive.
struct Inbox {
    port: MessagePort,
    queue: Rc<RefCell<VecDeque<Received>>>,
    arrived: Rc<Wake>,
}

impl Inbox {
    fn new(port: MessagePort) -> Self {
        let (queue, arrived) = (Rc::new(RefCell::new(VecDeque::new())), Rc::new(Wake::default()));
        let (q, wake) = (Rc::clone(&queue), Rc::clone(&arrived));
        let on_feed = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let item = feed_of(&e.data()).unwrap_or_else(|e| (Feed::Failed { file: u32::MAX, message: e.to_string() }, None));
            q.borrow_mut().push_back(item);
            wake.wake();
        });
        port.set_onmessage(Some(on_feed.as_ref().unchecked_ref()));
        on_feed.forget();
        Self { port, queue, arrived }
    }

    async fn next(&self) -> Received {
        loop {
            if let Some(item) = self.queue.borrow_mut().pop_front() {
                return item;
            }
            self.arrived.wait().await;
        }
    }
}

/// One file's reads, front to back, each a `Blob.slice().arrayBuffer()` of
/// its own, [`READS_AHEAD`] of them in flight while the caller works on the
/// last; sizes double from [`FIRST_CHUNK_BYTES`] (the first finding shows
/// after a small read) to [`READ_BYTES`].
struct Reads {
    blob: Blob,
    /// The next byte to ask for.
    next: u64,
    size: u64,
    chunk: u64,
    /// The largest read.
    max: u64,
    /// Reads asked for: where each starts, how long, and the browser's answer to come.
    pending: VecDeque<(u64, u64, Result<JsFuture, BrowserError>)>,
}

impl Reads {
    fn new(blob: &Blob, size: u64, from: u64) -> Self {
        // On the page itself (no worker could start), each read is scanned in
        // one task of the page: keep them to the smaller size there.
        let max = if web_sys::window().is_some() { CHUNK_BYTES } else { READ_BYTES };
        Self { blob: blob.clone(), next: from, size, chunk: FIRST_CHUNK_BYTES.min(max), max, pending: VecDeque::new() }
    }

    /// Asks for reads until [`READS_AHEAD`] are in flight (or none is left).
    fn ask(&mut self) {
        while self.pending.len() < READS_AHEAD && self.next < self.size {
            let (start, len) = (self.next, self.chunk.min(self.size - self.next));
            self.chunk = (self.chunk * 2).min(self.max);
            self.pending.push_back((start, len, web::start_read(&self.blob, start, start + len)));
            self.next = start + len;
        }
    }

    /// The next chunk: where it starts, and its bytes in a buffer of their own.
    async fn next(&mut self) -> Option<(u64, Result<ArrayBuffer, ReadError>)> {
        self.ask();
        let (start, len, read) = self.pending.pop_front()?;
        let got = match read {
            Ok(read) => read
                .await
                .map_err(|e| ReadError::Browser(BrowserError::js(Op::Read, &e)))
                .and_then(|b| b.dyn_into::<ArrayBuffer>().map_err(|_| ReadError::NotBytes)),
            Err(e) => Err(ReadError::Browser(e)),
        };
        let got = match got {
            Ok(buf) if u64::from(buf.byte_length()) == len => Ok(buf),
            Ok(buf) => Err(ReadError::Ended { end: start + u64::from(buf.byte_length()), size: self.size }),
            Err(e) => Err(e),
        };
        if got.is_err() {
            self.pending.clear();
            self.next = self.size;
        }
        // The next read runs while the caller works on this one.
        self.ask();
        Some((start, got))
    }
}

/// Where the scan gets its chunks: its own reads, or the reader's channel.
enum Source<'a> {
    Own(Reads),
    Reader { inbox: &'a Inbox, file: u32, path: &'a str, pending_ack: u64 },
}

impl Source<'_> {
    /// The next chunk of the file, or `None` at its end.
    async fn next(&mut self) -> Option<(u64, Result<ArrayBuffer, ReadError>)> {
        match self {
            Self::Own(reads) => reads.next().await,
            Self::Reader { inbox, file, path, pending_ack } => {
                if *pending_ack > 0 {
                    let _ = post_feed(&inbox.port, &Feed::Ack { bytes: std::mem::take(pending_ack) }, None);
                }
                match inbox.next().await {
                    (Feed::Chunk { file: f, at }, Some(buf)) if f == *file => {
                        *pending_ack = u64::from(buf.byte_length());
                        Some((at, Ok(buf)))
                    }
                    (Feed::Rest { file: f, .. }, _) if f == *file => None,
                    (Feed::Failed { message, .. }, _) => Some((0, Err(ReadError::Reader(message)))),
                    (other, _) => Some((0, Err(ReadError::OutOfTurn { path: (*path).to_string(), sent: format!("{other:?}") }))),
                }
            }
        }
    }
}

/// Where a scan's chunks come from and go: the reader's channel (or the
/// scan's own reads), and the hash worker's channel when it runs beside the scan.
struct Ways<'a> {
    inbox: Option<&'a Inbox>,
    feeder: Option<&'a Sender>,
    started_ms: f64,
}

/// How one file's scan stopped early.
enum Stopped {
    Cancelled,
    Failed(String),
}

/// Scans one file of a group: its chunks, from `ways`, fed to `job`;
/// progress and live findings sent as they come.
async fn scan_file(
    (d, blob): (&Dropped, &Blob),
    job: &mut FileJob,
    ways: &Ways<'_>,
    bytes: &mut Vec<u8>,
    send: &impl Fn(ToPage),
    cancelled: &impl Fn() -> bool,
) -> Result<(), Stopped> {
    let (id, size) = (d.id, d.size);
    let mut painted = wall_ms();
    let mut feeding = ways.feeder;
    let mut source = match ways.inbox {
        Some(inbox) => Source::Reader { inbox, file: id, path: &d.path, pending_ack: 0 },
        None => Source::Own(Reads::new(blob, size, 0)),
    };
    while let Some((start, got)) = source.next().await {
        if cancelled() {
            return Err(Stopped::Cancelled);
        }
        let buf = got.map_err(|e| Stopped::Failed(format!("{}: reading from byte {start}: {e}", quote(&d.path))))?;
        let end = start + u64::from(buf.byte_length());
        // Scanned before it is handed on: handing it on transfers (detaches) it.
        web::in_pieces(&buf, CHUNK_BYTES, bytes, |piece| job.feed(piece));
        if let Some(f) = feeding {
            if !f.offer(&Feed::Chunk { file: id, at: start }, &buf, MAX_FEED_BYTES) {
                // The hash worker is behind: it reads the rest itself.
                let _ = post_feed(&f.port, &Feed::Rest { file: id, at: start }, None);
                feeding = None;
            }
        }
        let findings = job.take_live();
        if !findings.is_empty() {
            send(ToPage::Live { file: id, findings, ms: wall_ms() - ways.started_ms });
        }
        if wall_ms() - painted > 100.0 || end == size {
            painted = wall_ms();
            send(ToPage::Progress { file: id, done: end });
        }
    }
    if let Some(f) = feeding {
        let _ = post_feed(&f.port, &Feed::Rest { file: id, at: size }, None);
    }
    Ok(())
}

/// Scans `files` (each with its bytes) group by group, sending every message to `send`.
///
/// The chunks come from the reader on `reader` when given, else from the
/// scan's own reads. `task` says who hashes: [`Task::Scan`] hands every
/// chunk to the hash worker on `hasher`; [`Task::ScanThenHash`] hashes
/// here, after the last verdict, reading each file again. Results of small
/// groups (loose files) are sent together at most every [`GROUP_BATCH_MS`],
/// so ten thousand dropped files are not ten thousand updates of the page.
pub async fn run(
    files: Vec<(Dropped, Blob)>,
    send: &impl Fn(ToPage),
    cancelled: impl Fn() -> bool,
    started_ms: f64,
    task: Task,
    ports: (Option<MessagePort>, Option<MessagePort>),
) {
    let (reader, hasher) = ports;
    let (inbox, feeder) = (reader.map(Inbox::new), hasher.filter(|_| task == Task::Scan).map(Sender::new));
    let ways = Ways { inbox: inbox.as_ref(), feeder: feeder.as_ref(), started_ms };
    let dropped: Vec<Dropped> = files.iter().map(|(d, _)| d.clone()).collect();
    let (mut batch, mut batched_at) = (Vec::new(), wall_ms());
    let mut bytes = Vec::new();
    // The rows the page keeps, across every file of the drop.
    let mut budget = Budget::default();
    for g in group(&dropped) {
        let mut scans = GroupScan::new(&g, &dropped);
        for i in scans.order() {
            let Some((d, blob)) = g.files.get(i).and_then(|&d| files.get(d)) else { continue };
            let mut job = scans.begin(i, &budget);
            match scan_file((d, blob), &mut job, &ways, &mut bytes, send, &cancelled).await {
                Ok(()) => scans.end(i, job, &mut budget),
                Err(Stopped::Cancelled) => return send(ToPage::Error { message: "scan cancelled".into() }),
                Err(Stopped::Failed(message)) => return send(ToPage::Error { message }),
            }
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
        hash_after(&files, sha256, &mut bytes, started_ms, send, &cancelled).await;
    }
}

/// Hashes every file after the scan, reading each again (no hash worker runs).
async fn hash_after(
    files: &[(Dropped, Blob)],
    sha256: bool,
    bytes: &mut Vec<u8>,
    started_ms: f64,
    send: &impl Fn(ToPage),
    cancelled: &impl Fn() -> bool,
) {
    let mut out = Batcher::new(started_ms);
    for (d, blob) in files {
        if cancelled() {
            return;
        }
        match read_and_hash(blob, d, FileHasher::new(sha256), bytes, cancelled).await {
            Ok(h) => out.push(d.id, h, send),
            // Cancelled between two reads: quietly, as between two files.
            Err(_) if cancelled() => return,
            Err(e) => return send(e.to_page()),
        }
    }
    out.flush(send);
}

/// The reader: reads `files` in the scan's order and hands each chunk to
/// the scan worker on `port`, at most [`MAX_READ_AHEAD_BYTES`] ahead of it.
pub async fn read(files: Vec<(Dropped, Blob)>, port: MessagePort) {
    let to_scan = Sender::new(port);
    let dropped: Vec<Dropped> = files.iter().map(|(d, _)| d.clone()).collect();
    for i in read_order(&dropped) {
        let Some((d, blob)) = files.get(i) else { continue };
        let mut reads = Reads::new(blob, d.size, 0);
        while let Some((at, got)) = reads.next().await {
            let buf = match got {
                Ok(buf) => buf,
                Err(e) => {
                    let _ = post_feed(&to_scan.port, &Feed::Failed { file: d.id, message: e.to_string() }, None);
                    return;
                }
            };
            let chunk = Feed::Chunk { file: d.id, at };
            while !to_scan.offer(&chunk, &buf, MAX_READ_AHEAD_BYTES.max(u64::from(buf.byte_length()))) {
                to_scan.acked.wait().await;
            }
        }
        let _ = post_feed(&to_scan.port, &Feed::Rest { file: d.id, at: d.size }, None);
    }
}

/// Reads `d`'s file from `hasher.bytes_done()` to its end into `hasher`,
/// stopping between two reads once `cancelled`.
async fn read_and_hash(
    blob: &Blob,
    d: &Dropped,
    mut hasher: FileHasher,
    bytes: &mut Vec<u8>,
    cancelled: &dyn Fn() -> bool,
) -> Result<Hashed, JobError> {
    let mut reads = Reads::new(blob, d.size, hasher.bytes_done());
    while let Some((start, got)) = reads.next().await {
        if cancelled() {
            return Err(JobError::Cancelled);
        }
        let buf = got.map_err(|error| JobError::Read { path: d.path.clone(), at: start, error, hashing: true })?;
        web::in_pieces(&buf, CHUNK_BYTES, bytes, |piece| hasher.update(piece));
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
    /// Files this worker reads itself, in turn, and whether it is reading one.
    to_read: VecDeque<(u32, FileHasher, Dropped, Blob)>,
    reading: bool,
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
        to_read: VecDeque::new(),
        reading: false,
    }));
    let reply = port.clone();
    let on_feed = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
        let send = Rc::clone(&send);
        match feed_of(&e.data()) {
            Ok((Feed::Chunk { file, at }, Some(chunk))) => {
                let mut s = state.borrow_mut();
                let s = &mut *s;
                let h = s.open.entry(file).or_insert_with(|| FileHasher::new(s.sha256));
                if h.bytes_done() != at {
                    return send(JobError::HashOutOfStep { at, expected: h.bytes_done() }.to_page());
                }
                web::in_pieces(&chunk, CHUNK_BYTES, &mut s.bytes, |piece| h.update(piece));
                let _ = post_feed(&reply, &Feed::Ack { bytes: u64::from(chunk.byte_length()) }, None);
            }
            Ok((Feed::Rest { file, at }, _)) => {
                let mut s = state.borrow_mut();
                let hasher = s.open.remove(&file).unwrap_or_else(|| FileHasher::new(s.sha256));
                let Some((d, blob)) = s.files.remove(&file) else { return };
                if hasher.bytes_done() != at {
                    return send(JobError::HashStopped { path: d.path.clone(), done: hasher.bytes_done(), at }.to_page());
                }
                if at >= d.size {
                    return s.finished(file, hasher.finish(), &*send);
                }
                // One file read at a time, in the order asked: memory stays that of one read.
                s.to_read.push_back((file, hasher, d, blob));
                if std::mem::replace(&mut s.reading, true) {
                    return;
                }
                drop(s);
                let state = Rc::clone(&state);
                wasm_bindgen_futures::spawn_local(async move {
                    let mut bytes = Vec::new();
                    loop {
                        let next = state.borrow_mut().to_read.pop_front();
                        let Some((file, hasher, d, blob)) = next else { break };
                        match read_and_hash(&blob, &d, hasher, &mut bytes, &|| false).await {
                            Ok(h) => state.borrow_mut().finished(file, h, &*send),
                            Err(e) => return send(e.to_page()),
                        }
                    }
                    state.borrow_mut().reading = false;
                });
            }
            Ok((Feed::Chunk { .. }, None)) => send(JobError::ChunkWithoutBytes.to_page()),
            Ok((Feed::Ack { .. } | Feed::Failed { .. }, _)) => {}
            Err(e) => send(JobError::UnreadableFeed(e).to_page()),
        }
    });
    port.set_onmessage(Some(on_feed.as_ref().unchecked_ref()));
    on_feed.forget();
}

/// Find: searches `files` in turn for `needle` (`model::find`), reading each
/// front to back in bounded reads (as the scan reads), and sends
/// [`ToPage::Progress`] (at most every 100 ms), one [`ToPage::Found`] a
/// file and [`ToPage::Done`]. Memory is two reads in flight, one piece in
/// wasm memory and at most `find::MAX_LISTED` matches, whatever the sizes.
pub async fn find(files: Vec<(Dropped, Blob)>, needle: Vec<u8>, started_ms: f64, send: &dyn Fn(ToPage), cancelled: &dyn Fn() -> bool) {
    use crate::model::find::{FileFind, MAX_LISTED};
    let mut room = MAX_LISTED;
    let mut bytes = Vec::new();
    for (d, blob) in &files {
        let mut search = FileFind::new(&needle, &d.path, room);
        let mut reads = Reads::new(blob, d.size, 0);
        let mut painted = wall_ms();
        while let Some((start, got)) = reads.next().await {
            if cancelled() {
                return;
            }
            let buf = match got {
                Ok(buf) => buf,
                Err(error) => return send(JobError::Read { path: d.path.clone(), at: start, error, hashing: false }.to_page()),
            };
            web::in_pieces(&buf, CHUNK_BYTES, &mut bytes, |piece| search.feed(piece));
            if wall_ms() - painted > 100.0 {
                painted = wall_ms();
                send(ToPage::Progress { file: d.id, done: start + u64::from(buf.byte_length()) });
            }
        }
        let (matches, total) = search.finish();
        room = room.saturating_sub(matches.len());
        send(ToPage::Found { file: d.id, total, matches });
    }
    send(ToPage::Done { ms: wall_ms() - started_ms });
}

/// The bytes `read` asks for, of `files` (a folder's paths and `File`s).
async fn read_asked(files: &[(String, Blob)], read: Read) -> Result<Vec<u8>, ReadFailure> {
    let (path, blob) = files.get(read.file).ok_or(ReadFailure::Missing)?;
    web::read_slice(blob, read.start, read.end).await.map_err(|e| ReadFailure::Read { path: path.clone(), message: e.to_string() })
}

/// A shard folder's recovery preview: the folder read through
/// `model::replica` (as the scan reads a shard), planned by the codec, and
/// each cut's first bytes.
async fn plan_folder(shard: &Folder, files: &[(String, Blob)]) -> Result<Planned, ReadFailure> {
    let mut scan = ReplicaScan::new(&shard.name, &shard.files);
    while let Some(read) = scan.next_read() {
        scan.feed(&read_asked(files, read).await?);
    }
    let plan = replica::plan(scan);
    let mut cut_bytes = Vec::new();
    for (file, i, start, end) in replica::cut_reads(&plan, &shard.files) {
        let shown = match files.get(i) {
            Some((_, blob)) => web::read_slice(blob, start, end).await.unwrap_or_default(),
            None => Vec::new(),
        };
        cut_bytes.push((file, shown));
    }
    Ok(Planned { plan, cut_bytes })
}

/// Two replicas compared: both read in step as the codec's diff asks
/// (`model::replica::DiffRun`), then both sides' bytes at the first
/// divergence (bounded: `side_by_side::SHOWN_BYTES` each).
async fn diff_folders((a, fa): (&Folder, &[(String, Blob)]), (b, fb): (&Folder, &[(String, Blob)])) -> Result<Compared, ReadFailure> {
    let mut run = DiffRun::new(ReplicaScan::new(&a.name, &a.files), ReplicaScan::new(&b.name, &b.files));
    while let Some((side, read)) = run.next_read() {
        let files = if side == Side::A { fa } else { fb };
        run.feed(side, &read_asked(files, read).await?);
    }
    let diff = run.finish();
    let Some(at) = side_by_side::first_divergence(&diff) else { return Ok(Compared { diff, bytes: None }) };
    let mut read = Vec::with_capacity(2);
    for (files, span) in [(fa, &at.a), (fb, &at.b)] {
        read.push(match files.iter().find(|(p, _)| file_name(p) == span.file) {
            Some((_, blob)) => web::read_slice(blob, span.start, span.end).await.unwrap_or_default(),
            None => Vec::new(),
        });
    }
    let (b_bytes, a_bytes) = (read.pop().unwrap_or_default(), read.pop().unwrap_or_default());
    Ok(Compared { diff, bytes: Some((a_bytes, b_bytes)) })
}

/// A folder job (`protocol::FolderJob`): the recovery preview's plans (one
/// [`Answer::Planned`] a shard) or the replica compare ([`Answer::Diffed`]),
/// then [`Answer::Done`]. `blobs` are the folders' `File`s, folder after
/// folder. Runs in a worker of its own, or on the page (awaited reads) when
/// none starts; stops quietly once `cancelled`.
pub async fn folders(job: FolderJob, blobs: Vec<Blob>, send: &dyn Fn(Answer), cancelled: &dyn Fn() -> bool) {
    let started_ms = wall_ms();
    let mut blobs = blobs.into_iter();
    let folders: Vec<Vec<(String, Blob)>> =
        job.folders().iter().map(|f| f.files.iter().map(|(p, _)| p.clone()).zip(blobs.by_ref()).collect()).collect();
    match &job {
        FolderJob::Plan { shards } => {
            for (n, (shard, files)) in shards.iter().zip(&folders).enumerate() {
                let plan = plan_folder(shard, files).await.map(Box::new);
                if cancelled() {
                    return;
                }
                send(Answer::Planned { shard: u32::try_from(n).unwrap_or(u32::MAX), plan });
            }
        }
        FolderJob::Diff { a, b } => {
            let empty = Vec::new();
            let (fa, fb) = (folders.first().unwrap_or(&empty), folders.get(1).unwrap_or(&empty));
            let compared = diff_folders((a, fa), (b, fb)).await.map(Box::new);
            if cancelled() {
                return;
            }
            send(Answer::Diffed(compared));
        }
    }
    send(Answer::Done { ms: wall_ms() - started_ms });
}
