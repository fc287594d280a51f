//! The few browser calls the app needs, each a thin wrapper: read a slice of
//! a file, make a file from bytes, download text, read the URL fragment,
//! and walk a dropped folder (the directory entry API).

use std::fmt;

use js_sys::{Array, ArrayBuffer, Function, Promise, Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, BlobPropertyBag, File, HtmlAnchorElement, Url};

use crate::model::window::{Checkpoints, Want, Window, WindowScan, WINDOW_READ_BYTES};
use crate::ui::message::quote;

/// A browser call that failed: which one, and the browser's own words about
/// it — text from outside (it may quote a file's name), so it is shown
/// quoted (`ui::message::quote`), never raw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrowserError {
    /// The call.
    pub op: Op,
    /// The browser's text, when it gave one.
    pub js: Option<String>,
}

/// The browser calls that can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `Blob.slice`.
    Slice,
    /// `arrayBuffer()` (reading a slice's bytes).
    Read,
    /// `new File`.
    MakeFile,
    /// `new Blob`.
    MakeBlob,
    /// `URL.createObjectURL` / `revokeObjectURL`.
    ObjectUrl,
    /// The page's document (a download's anchor lives in it).
    Document,
    /// `document.createElement("a")`.
    Anchor,
    /// A dropped item's entry (`webkitGetAsEntry`).
    DropEntry,
    /// A dropped folder's listing (`createReader`, `readEntries`).
    ReadFolder,
    /// A dropped file's `File` (`FileSystemFileEntry.file`).
    EntryFile,
    /// `postMessage` to another worker.
    Post,
}

impl Op {
    /// What failed, in words (shown when the browser gave no text).
    fn words(self) -> &'static str {
        match self {
            Self::Slice => "could not slice the file",
            Self::Read => "could not read the file's bytes",
            Self::MakeFile => "could not make a file",
            Self::MakeBlob => "could not make the download",
            Self::ObjectUrl => "could not make the download's address",
            Self::Document => "no document",
            Self::Anchor => "not an anchor",
            Self::DropEntry => "could not read a dropped item",
            Self::ReadFolder => "readEntries gave no list",
            Self::EntryFile => "not a file",
            Self::Post => "could not hand bytes to the next worker",
        }
    }
}

impl BrowserError {
    /// `op` failed without a word from the browser.
    #[must_use]
    pub fn of(op: Op) -> Self {
        Self { op, js: None }
    }

    /// `op` failed with the browser's error `e` (its text, or its message).
    #[must_use]
    pub fn js(op: Op, e: &JsValue) -> Self {
        let text = e
            .as_string()
            .or_else(|| Reflect::get(e, &"message".into()).ok().and_then(|m| m.as_string()))
            .unwrap_or_else(|| format!("{e:?}"));
        Self { op, js: Some(text) }
    }
}

impl fmt::Display for BrowserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.js {
            Some(text) => f.write_str(&quote(text)),
            None => f.write_str(self.op.words()),
        }
    }
}

impl std::error::Error for BrowserError {}

/// Why rows past the held ones could not be re-read ([`read_window`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WindowError {
    /// The browser refused the read that began at byte `from`.
    Read {
        /// Where the read began.
        from: u64,
        /// The browser's error.
        error: BrowserError,
    },
    /// The file ended at byte `end`, before its `size` (it changed since it was dropped).
    Ended {
        /// Where it ended.
        end: u64,
        /// Its size when dropped.
        size: u64,
    },
}

impl fmt::Display for WindowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Read { from, error } => write!(f, "reading from byte {from}: {error}"),
            Self::Ended { end, size } => write!(f, "the file ended at byte {end} of {size} (it changed since it was dropped)"),
        }
    }
}

/// Bytes `start..end` of a blob (`Blob.slice`, then `arrayBuffer()`): never the whole file.
///
/// # Errors
/// The browser's error.
pub async fn read_slice(blob: &Blob, start: u64, end: u64) -> Result<Vec<u8>, BrowserError> {
    let mut out = Vec::new();
    finish_read(start_read(blob, start, end)?, &mut out).await?;
    Ok(out)
}

/// The rows `want` asks for, re-read from the file (`model::window`): from
/// the nearest checkpoint, [`WINDOW_READ_BYTES`] at a time, each read
/// scanned in a task of its own. Holds one read and the rows kept.
///
/// # Errors
/// The browser's error, naming where the read began, or the file ending early.
pub async fn read_window(blob: &Blob, size: u64, checkpoints: &Checkpoints, want: Want) -> Result<Window, WindowError> {
    let mut scan = WindowScan::new(checkpoints, want);
    let mut bytes = Vec::new();
    loop {
        let from = scan.read_from();
        if scan.is_done() || from >= size {
            return Ok(scan.finish(from >= size));
        }
        let to = from.saturating_add(WINDOW_READ_BYTES).min(size);
        let read = |error| WindowError::Read { from, error };
        finish_read(start_read(blob, from, to).map_err(read)?, &mut bytes).await.map_err(read)?;
        if bytes.len() as u64 != to - from {
            return Err(WindowError::Ended { end: from + bytes.len() as u64, size });
        }
        scan.feed(&bytes);
    }
}

/// Starts reading bytes `start..end` of a blob; the browser reads while the
/// caller works, and [`finish_read`] collects them.
///
/// # Errors
/// The browser's error.
pub fn start_read(blob: &Blob, start: u64, end: u64) -> Result<JsFuture, BrowserError> {
    #[allow(clippy::cast_precision_loss)]
    let part = blob.slice_with_f64_and_f64(start as f64, end as f64).map_err(|e| BrowserError::js(Op::Slice, &e))?;
    Ok(JsFuture::from(part.array_buffer()))
}

/// Waits for a read from [`start_read`] and copies its bytes into `out`.
///
/// # Errors
/// The browser's error.
pub async fn finish_read(read: JsFuture, out: &mut Vec<u8>) -> Result<(), BrowserError> {
    let buf = read.await.map_err(|e| BrowserError::js(Op::Read, &e))?;
    let view = Uint8Array::new(&buf);
    out.resize(view.length() as usize, 0);
    view.copy_to(out);
    Ok(())
}

/// Logical processors the browser reports (`navigator.hardwareConcurrency`; 1 when it says nothing).
#[must_use]
pub fn cores() -> u32 {
    let navigator = Reflect::get(&js_sys::global(), &"navigator".into()).ok();
    navigator.and_then(|n| Reflect::get(&n, &"hardwareConcurrency".into()).ok()).and_then(|c| c.as_f64()).map_or(1, |c| {
        if c >= 1.0 && c < f64::from(u32::MAX) {
            c as u32
        } else {
            1
        }
    })
}

/// Runs `f` in a later task, so its work does not lengthen this one. (A
/// scroll handler reads the scroll position there: read inside the frame
/// that dispatches the scroll, after a render changed the page, it forces a
/// layout the frame then does again.)
pub fn later(f: impl FnOnce() + 'static) {
    wasm_bindgen_futures::spawn_local(async move {
        next_task().await;
        f();
    });
}

/// Resolves in a later task (a zero-delay timeout), so the work after it
/// does not lengthen the task that awaits it.
pub async fn next_task() {
    let p = Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
        }
    });
    let _ = JsFuture::from(p).await;
}

/// Resolves in a task after the next frame is drawn (an animation frame,
/// then a zero-delay timeout), so the DOM built after it is styled, laid out
/// and painted in a frame of its own rather than with what came before; after
/// `fallback_ms` in any case (a hidden page draws no frames).
pub async fn after_frame(fallback_ms: i32) {
    let p = Promise::new(&mut |resolve, _| {
        let Some(w) = web_sys::window() else { return };
        let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, fallback_ms);
        let resolve = resolve.clone();
        let then = wasm_bindgen::closure::Closure::once_into_js(move || {
            if let Some(w) = web_sys::window() {
                let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0);
            }
        });
        if let Ok(f) = then.dyn_into::<Function>() {
            let _ = w.request_animation_frame(&f);
        }
    });
    let _ = JsFuture::from(p).await;
}

/// Resolves once the page has nothing left to do (`requestIdleCallback`
/// grants a whole idle period of at least `quiet_ms`: no task, frame or
/// timer pending — the renders after a result are done), or after
/// `timeout_ms` at the latest; in a later task where the browser has no
/// idle callbacks.
pub async fn quiet(quiet_ms: f64, timeout_ms: f64) {
    let global = js_sys::global();
    let ric = Reflect::get(&global, &"requestIdleCallback".into()).ok().and_then(|f| f.dyn_into::<Function>().ok());
    let Some(ric) = ric else { return next_task().await };
    let started = js_sys::Date::now();
    loop {
        // At least 1: a timeout of 0 means none.
        let left = (timeout_ms - (js_sys::Date::now() - started)).max(1.0);
        let options = js_sys::Object::new();
        let _ = Reflect::set(&options, &"timeout".into(), &JsValue::from(left));
        let p = Promise::new(&mut |resolve, _| {
            let _ = ric.call2(&global, &resolve, &options);
        });
        let deadline = JsFuture::from(p).await.unwrap_or(JsValue::UNDEFINED);
        let remaining = Reflect::get(&deadline, &"timeRemaining".into())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
            .and_then(|f| f.call0(&deadline).ok())
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0);
        if remaining >= quiet_ms || js_sys::Date::now() - started >= timeout_ms {
            return;
        }
    }
}

/// Hands `buf`'s bytes to `f` in pieces of at most `piece` bytes, each
/// copied into `out` (wasm memory) first: a large read never needs as much
/// wasm memory as its size.
pub fn in_pieces(buf: &ArrayBuffer, piece: u64, out: &mut Vec<u8>, mut f: impl FnMut(&[u8])) {
    let view = Uint8Array::new(buf);
    let (len, piece) = (view.length(), u32::try_from(piece).unwrap_or(u32::MAX).max(1));
    let mut at = 0u32;
    while at < len {
        let end = at.saturating_add(piece).min(len);
        out.resize((end - at) as usize, 0);
        view.subarray(at, end).copy_to(out);
        f(out);
        at = end;
    }
}

/// A `File` holding `bytes` (the built-in sample goes through the same path as dropped files).
///
/// # Errors
/// The browser's error, in words (a `String` until `app.rs`, its one
/// caller, takes the [`BrowserError`]).
pub fn file_from_bytes(name: &str, bytes: &[u8]) -> Result<File, String> {
    let parts = Array::of1(&Uint8Array::from(bytes));
    File::new_with_u8_array_sequence(&parts, name).map_err(|e| BrowserError::js(Op::MakeFile, &e).to_string())
}

/// The files a picker chose, with their relative paths, in the order drops
/// get too ([`crate::model::group::cli_order`]), not the browser's.
#[must_use]
pub fn picked(files: Option<web_sys::FileList>) -> Vec<(String, File)> {
    let Some(files) = files else { return Vec::new() };
    let mut out: Vec<(String, File)> = (0..files.length()).filter_map(|i| files.item(i)).map(|f| (relative_path(&f), f)).collect();
    crate::model::group::sort_in_cli_order(&mut out);
    out
}

/// The path a file was picked or dropped with (`webkitRelativePath`), or its name.
#[must_use]
pub fn relative_path(file: &File) -> String {
    Reflect::get(file, &"webkitRelativePath".into())
        .ok()
        .and_then(|v| v.as_string())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| file.name())
}

/// Offers `text` as a download named `name`.
///
/// # Errors
/// The browser's error.
pub fn download(name: &str, mime: &str, text: &str) -> Result<(), BrowserError> {
    let options = BlobPropertyBag::new();
    options.set_type(mime);
    let blob = Blob::new_with_str_sequence_and_options(&Array::of1(&JsValue::from_str(text)), &options)
        .map_err(|e| BrowserError::js(Op::MakeBlob, &e))?;
    offer(name, &blob)
}

/// Offers `bytes` as a download named `name` (the sample's archive).
///
/// # Errors
/// The browser's error, in words (a `String` until `app.rs`, its one
/// caller, takes the [`BrowserError`]).
pub fn download_bytes(name: &str, mime: &str, bytes: &[u8]) -> Result<(), String> {
    let options = BlobPropertyBag::new();
    options.set_type(mime);
    let blob = Blob::new_with_u8_array_sequence_and_options(&Array::of1(&Uint8Array::from(bytes)), &options)
        .map_err(|e| BrowserError::js(Op::MakeBlob, &e).to_string())?;
    offer(name, &blob).map_err(|e| e.to_string())
}

/// Offers `blob` as a download named `name`, through an anchor never attached.
fn offer(name: &str, blob: &Blob) -> Result<(), BrowserError> {
    let url = Url::create_object_url_with_blob(blob).map_err(|e| BrowserError::js(Op::ObjectUrl, &e))?;
    let document = web_sys::window().and_then(|w| w.document()).ok_or_else(|| BrowserError::of(Op::Document))?;
    let a: HtmlAnchorElement =
        document.create_element("a").map_err(|e| BrowserError::js(Op::Anchor, &e))?.dyn_into().map_err(|_| BrowserError::of(Op::Anchor))?;
    a.set_href(&url);
    a.set_download(name);
    a.click();
    Url::revoke_object_url(&url).map_err(|e| BrowserError::js(Op::ObjectUrl, &e))
}

/// Scrolls the element with `id` into view, when there is one.
pub fn scroll_into_view(id: &str) {
    if let Some(el) = web_sys::window().and_then(|w| w.document()).and_then(|d| d.get_element_by_id(id)) {
        el.scroll_into_view();
    }
}

/// The URL fragment, `#…` included.
#[must_use]
pub fn hash() -> String {
    web_sys::window().and_then(|w| w.location().hash().ok()).unwrap_or_default()
}

/// Calls `f` whenever the URL fragment changes (for the page's lifetime).
pub fn on_hash_change(f: impl Fn() + 'static) {
    let Some(window) = web_sys::window() else { return };
    let closure = wasm_bindgen::closure::Closure::<dyn Fn()>::new(f);
    let _ = window.add_event_listener_with_callback("hashchange", closure.as_ref().unchecked_ref());
    closure.forget();
}

/// A key press anywhere in the window, for as long as the value lives.
pub struct KeyListener(Option<wasm_bindgen::closure::Closure<dyn Fn(web_sys::KeyboardEvent)>>);

impl KeyListener {
    /// Calls `f` with each `keydown` the window sees, first (the capture phase).
    pub fn new(f: impl Fn(&web_sys::KeyboardEvent) + 'static) -> Self {
        let Some(window) = web_sys::window() else { return Self(None) };
        let closure = wasm_bindgen::closure::Closure::<dyn Fn(web_sys::KeyboardEvent)>::new(move |e: web_sys::KeyboardEvent| f(&e));
        let _ = window.add_event_listener_with_callback_and_bool("keydown", closure.as_ref().unchecked_ref(), true);
        Self(Some(closure))
    }
}

impl Drop for KeyListener {
    fn drop(&mut self) {
        if let (Some(window), Some(c)) = (web_sys::window(), self.0.take()) {
            let _ = window.remove_event_listener_with_callback_and_bool("keydown", c.as_ref().unchecked_ref(), true);
        }
    }
}

/// Calls `f` after layout each time one of the watched elements changes
/// size, for as long as the value lives.
pub struct SizeWatch {
    observer: web_sys::ResizeObserver,
    _f: wasm_bindgen::closure::Closure<dyn Fn()>,
}

impl SizeWatch {
    /// Watches `elements`; `None` where the browser has no `ResizeObserver`.
    pub fn new(elements: &[web_sys::Element], f: impl Fn() + 'static) -> Option<Self> {
        let f = wasm_bindgen::closure::Closure::<dyn Fn()>::new(f);
        let observer = web_sys::ResizeObserver::new(f.as_ref().unchecked_ref()).ok()?;
        for e in elements {
            observer.observe(e);
        }
        Some(Self { observer, _f: f })
    }
}

impl Drop for SizeWatch {
    fn drop(&mut self) {
        self.observer.disconnect();
    }
}

/// The page URL with `fragment` in place of the current one.
#[must_use]
pub fn url_with_fragment(fragment: &str) -> String {
    let Some(loc) = web_sys::window().map(|w| w.location()) else { return fragment.to_string() };
    let base = format!("{}{}", loc.origin().unwrap_or_default(), loc.pathname().unwrap_or_default());
    format!("{base}{fragment}")
}

/// Copies `text` to the clipboard when the browser allows it.
pub fn copy_to_clipboard(text: &str) {
    let Some(window) = web_sys::window() else { return };
    let clipboard = Reflect::get(&window.navigator(), &"clipboard".into()).ok();
    if let Some(cb) = clipboard.filter(|c| !c.is_undefined()) {
        if let Ok(f) = Reflect::get(&cb, &"writeText".into()).and_then(JsCast::dyn_into::<Function>) {
            let _ = f.call1(&cb, &JsValue::from_str(text));
        }
    }
}

/// Bytes of linear memory the module holds (for the memory benchmark:
/// `window.wasmBindings.wasm_memory_bytes()`).
#[wasm_bindgen::prelude::wasm_bindgen]
#[must_use]
pub fn wasm_memory_bytes() -> f64 {
    Reflect::get(&wasm_bindgen::memory(), &"buffer".into())
        .and_then(|b| Reflect::get(&b, &"byteLength".into()))
        .ok()
        .and_then(|n| n.as_f64())
        .unwrap_or(0.0)
}

fn call_with_callback(target: &JsValue, method: &str) -> Promise {
    let target = target.clone();
    let method = method.to_string();
    Promise::new(&mut move |resolve, reject| {
        let f = Reflect::get(&target, &method.as_str().into()).and_then(JsCast::dyn_into::<Function>);
        match f {
            Ok(f) => {
                if let Err(e) = f.call2(&target, &resolve, &reject) {
                    let _ = reject.call1(&JsValue::NULL, &e);
                }
            }
            Err(e) => {
                let _ = reject.call1(&JsValue::NULL, &e);
            }
        }
    })
}

/// Walks dropped items (files and folders) with the directory entry API and
/// returns every file with its relative path (`folder/sub/name`), in the
/// order the pickers give too ([`picked`]).
///
/// # Errors
/// The browser's error, naming the call.
pub async fn files_from_drop(items: &JsValue) -> Result<Vec<(String, File)>, BrowserError> {
    let mut stack: Vec<JsValue> = Vec::new();
    let len = Reflect::get(items, &"length".into()).ok().and_then(|l| l.as_f64()).unwrap_or(0.0) as u32;
    for i in 0..len {
        let item = Reflect::get(items, &i.into()).map_err(|e| BrowserError::js(Op::DropEntry, &e))?;
        let get = Reflect::get(&item, &"webkitGetAsEntry".into()).and_then(JsCast::dyn_into::<Function>);
        if let Ok(get) = get {
            let entry = get.call0(&item).map_err(|e| BrowserError::js(Op::DropEntry, &e))?;
            if !entry.is_null() {
                stack.push(entry);
            }
        }
    }
    let mut out = Vec::new();
    while let Some(entry) = stack.pop() {
        let is_dir = Reflect::get(&entry, &"isDirectory".into()).ok().and_then(|v| v.as_bool()).unwrap_or(false);
        let full = Reflect::get(&entry, &"fullPath".into()).ok().and_then(|v| v.as_string()).unwrap_or_default();
        if is_dir {
            let reader = Reflect::get(&entry, &"createReader".into())
                .and_then(JsCast::dyn_into::<Function>)
                .and_then(|f| f.call0(&entry))
                .map_err(|e| BrowserError::js(Op::ReadFolder, &e))?;
            loop {
                let batch =
                    JsFuture::from(call_with_callback(&reader, "readEntries")).await.map_err(|e| BrowserError::js(Op::ReadFolder, &e))?;
                let batch: Array = batch.dyn_into().map_err(|_| BrowserError::of(Op::ReadFolder))?;
                if batch.length() == 0 {
                    break;
                }
                stack.extend(batch.iter());
            }
        } else {
            let file: File = JsFuture::from(call_with_callback(&entry, "file"))
                .await
                .map_err(|e| BrowserError::js(Op::EntryFile, &e))?
                .dyn_into()
                .map_err(|_| BrowserError::of(Op::EntryFile))?;
            out.push((full.trim_start_matches('/').to_string(), file));
        }
    }
    crate::model::group::sort_in_cli_order(&mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A browser's text is a field of the message, quoted like a name; a call
    /// that failed without a word says which call it was.
    #[test]
    fn a_browser_error_quotes_the_browser_and_names_the_call() {
        let e = BrowserError { op: Op::Read, js: Some("NotReadableError: x\u{202e}.log".into()) };
        assert_eq!(e.to_string(), "\u{2068}NotReadableError: x\\u{202e}.log\u{2069}");
        assert_eq!(crate::ui::message::shown(&e.to_string()), "NotReadableError: x\\u{202e}.log");
        assert_eq!(BrowserError::of(Op::Document).to_string(), "no document");
        assert_eq!(BrowserError::of(Op::Post).to_string(), "could not hand bytes to the next worker");
        let w = WindowError::Read { from: 4096, error: e };
        assert_eq!(crate::ui::message::shown(&w.to_string()), "reading from byte 4096: NotReadableError: x\\u{202e}.log");
        assert_eq!(
            WindowError::Ended { end: 10, size: 20 }.to_string(),
            "the file ended at byte 10 of 20 (it changed since it was dropped)"
        );
    }
}
