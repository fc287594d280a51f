//! "Compare two replicas": two drop targets (replica A, replica B), the diff
//! the codec computes from both folders read in step (`model::replica`, in a
//! worker of its own: `protocol::FolderJob::Diff`), and
//! its views — both offset ranges side by side, the first divergent offset
//! with both records' headers and bytes (payload masked unless unmasked
//! here), the epochs timelines on one axis, each side's truncation — and
//! sharing (JSON, Markdown, permalink; never payload bytes). A diff opened
//! from a paste or a JSON file (`Props::opened`) shows as a link's does, a claim.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use felix_codec::shard::diff::{Diff, OffsetRange, RecordRef, Side, SideReport};
use web_sys::{Blob, File, HtmlInputElement};
use yew::prelude::*;

use super::message::Message;
use super::text_field::{shown, TextField};

use crate::model::replica::{replica_files, Compared, ReplicaError, Sides};
use crate::model::side_by_side::{self, FirstDivergence, Pair};
use crate::share::diff_share::{self, divergent_time_words, record_time};
use crate::ui::hooks::{on_dropped, on_picked, use_errand, use_folder_picker};
use crate::web;
use crate::worker::protocol::{self, Answer, FolderJob};
use crate::worker::runner::Errand;

/// Both sides' bytes at the first divergence, as read.
#[derive(Clone, PartialEq)]
struct Shown {
    at: FirstDivergence,
    a: Vec<u8>,
    b: Vec<u8>,
}

impl Shown {
    /// What a compare's answer shows: its bytes at the diff's first divergence.
    fn of(compared: Compared) -> (Diff, Option<Self>) {
        let at = side_by_side::first_divergence(&compared.diff);
        let shown = at.zip(compared.bytes).map(|(at, (a, b))| Self { at, a, b });
        (compared.diff, shown)
    }
}

/// One dropped replica folder.
#[derive(Clone)]
struct Folder {
    name: String,
    files: Vec<(String, Blob)>,
}

impl Folder {
    /// The replica in a dropped folder (`model::replica::replica_files`
    /// picks its files, or says why it is not one); `None` when nothing was dropped.
    fn from(files: Vec<(String, File)>) -> Option<Result<Self, ReplicaError>> {
        let first = files.first()?;
        let name = first.0.split_once('/').map_or("(files)", |(dir, _)| dir).to_owned();
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let listed: Vec<(String, u64)> = files.iter().map(|(p, f)| (p.clone(), f.size() as u64)).collect();
        let keep = match replica_files(&listed) {
            Ok(keep) => keep,
            Err(e) => return Some(Err(e)),
        };
        let mut files: Vec<Option<(String, File)>> = files.into_iter().map(Some).collect();
        let files = keep.into_iter().filter_map(|i| files.get_mut(i).and_then(Option::take)).map(|(p, f)| (p, Blob::from(f))).collect();
        Some(Ok(Self { name, files }))
    }

    /// The folder as a job names it: its name and its files' paths and sizes.
    fn job(&self) -> protocol::Folder {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let files = self.files.iter().map(|(p, b)| (p.clone(), b.size() as u64)).collect();
        protocol::Folder { name: self.name.clone(), files }
    }
}

/// What the view shows.
#[derive(Clone, Default, PartialEq)]
struct View {
    names: (Option<String>, Option<String>),
    running: bool,
    diff: Option<Rc<Diff>>,
    /// Both sides' bytes at the first divergence.
    bytes: Option<Rc<Shown>>,
    /// From a link: a claim, not checked against files.
    shared: bool,
    error: Option<String>,
    link: Option<String>,
}

/// What the section keeps between renders: the folders dropped, which run is
/// the latest, whether the view came from a link, and the compare's worker.
#[derive(Default)]
struct Runs {
    folders: RefCell<Sides<Folder>>,
    /// Each drop (or opened link) starts anew; a slower earlier diff must not overwrite it.
    generation: Cell<u64>,
    /// What the view shows came from a link (a diff or its error): another link replaces it.
    from_link: Cell<bool>,
    errand: Rc<RefCell<Errand>>,
}

impl Runs {
    /// A new run: the last one's answer, if any is still to come, is not wanted.
    fn next(&self) -> u64 {
        self.errand.borrow_mut().stop();
        let mine = self.generation.get().wrapping_add(1);
        self.generation.set(mine);
        mine
    }
}

/// Compares `a` with `b` off the page; the answer shows unless a newer run started.
fn start_diff((a, b): (Folder, Folder), names: (Option<String>, Option<String>), view: &UseStateHandle<View>, runs: &Rc<Runs>) {
    let mine = runs.next();
    let job = FolderJob::Diff { a: a.job(), b: b.job() };
    let blobs = a.files.iter().chain(&b.files).map(|(_, blob)| blob.clone()).collect();
    let (view, latest) = (view.clone(), Rc::clone(runs));
    let on = Callback::from(move |answer: Answer| {
        if latest.generation.get() != mine {
            return; // another drop started a newer diff
        }
        let names = names.clone();
        match answer {
            Answer::Diffed(Ok(compared)) => {
                let (diff, bytes) = Shown::of(*compared);
                view.set(View { names, diff: Some(Rc::new(diff)), bytes: bytes.map(Rc::new), ..View::default() });
            }
            Answer::Diffed(Err(e)) => view.set(View { names, error: Some(e.to_string()), ..View::default() }),
            Answer::Failed(e) => view.set(View { names, error: Some(e), ..View::default() }),
            Answer::Ready | Answer::Planned { .. } | Answer::Done { .. } => {}
        }
    });
    runs.errand.borrow_mut().start(job, blobs, &on);
}

/// A drop on one side: that side's folder is replaced (or emptied, with
/// the reason, when it is no replica); with both there, the compare runs.
fn on_side(side: Side, view: &UseStateHandle<View>, runs: &Rc<Runs>) -> Callback<Vec<(String, File)>> {
    let (view, runs) = (view.clone(), Rc::clone(runs));
    Callback::from(move |files: Vec<(String, File)>| {
        let Some(folder) = Folder::from(files) else { return };
        let mut names = view.names.clone();
        let name = folder.as_ref().ok().map(|f| f.name.clone());
        match side {
            Side::A => names.0 = name,
            Side::B => names.1 = name,
        }
        runs.folders.borrow_mut().set(side, folder.as_ref().ok().cloned());
        if let Err(e) = folder {
            // Not a replica: this side is empty again, and no diff runs.
            runs.next();
            return view.set(View { names, error: Some(e.to_string()), ..View::default() });
        }
        let both = runs.folders.borrow().both();
        let Some(both) = both else { return view.set(View { names, ..View::default() }) };
        view.set(View { names: names.clone(), running: true, ..View::default() });
        start_diff(both, names, &view, &runs);
    })
}

#[derive(Properties, PartialEq)]
struct PickProps {
    side: char,
    name: Option<String>,
    on_files: Callback<Vec<(String, File)>>,
}

/// One replica's drop target and folder picker.
#[function_component(Pick)]
fn pick(props: &PickProps) -> Html {
    let id = format!("replica-{}", props.side.to_ascii_lowercase());
    let input = use_folder_picker();
    let (on_change, on_drop) = (on_picked(&props.on_files), on_dropped(&props.on_files, || ()));
    let label = format!("replica {}", props.side);
    html! {
        <div id={id.clone()} class="dropzone replica" role="region" aria-label={format!("drop {label}'s shard folder here")}
            ondrop={on_drop} ondragover={Callback::from(|e: DragEvent| e.prevent_default())}>
            <strong>{ format!("Replica {}", props.side) }</strong>
            <span class="replica-name">{ props.name.as_ref().map_or_else(|| html! { "drop a shard folder, or" }, |n| html! { <TextField text={n.clone()} /> }) }</span>
            <label class="button">{ "choose a folder…" }
                <input id={format!("{id}-input")} type="file" ref={input} onchange={on_change} aria-label={format!("choose {label}'s folder")} />
            </label>
        </div>
    }
}

fn offset(o: Option<u64>) -> String {
    o.map_or_else(|| "none".into(), |o| o.to_string())
}

/// A side's epochs on a shared axis `0..axis_end`: one bar per generation.
fn timeline(side: &SideReport, axis_end: u64) -> Html {
    let scale = |o: u64| (o.min(axis_end) as f64) * 100.0 / (axis_end.max(1) as f64);
    let bars = side.epochs.iter().enumerate().map(|(i, [g, start])| {
        let end = side.epochs.get(i + 1).map_or(side.next_offset, |e| e[1]);
        let (left, width) = (scale(*start), (scale(end) - scale(*start)).max(0.5));
        html! { <span class="epoch" style={format!("left:{left:.2}%;width:{width:.2}%")} title={format!("generation {g}: {}", OffsetRange { from: *start, to: end }.words())}>{ format!("g{g}") }</span> }
    });
    html! { <div class="timeline" role="img" aria-label={format!("epochs of {}", shown(&side.path))}>{ for bars }</div> }
}

/// One side's 16 bytes of a row: header bytes as they are, payload bytes
/// masked unless `unmask`, each byte that differs from the other side's marked.
fn pair_cells(row: &[Pair], side: Side, unmask: bool) -> Html {
    let cells = row.iter().map(|p| {
        let Some(b) = (if side == Side::A { p.a } else { p.b }) else {
            return html! { <span class="hb none">{ "   " }</span> };
        };
        let (class, text) = match (p.is_payload(), unmask) {
            (false, _) => ("hb header", format!("{b:02X} ")),
            (true, true) => ("hb payload", format!("{b:02X} ")),
            (true, false) => ("hb masked", "•• ".to_owned()),
        };
        if p.differs() {
            html! { <mark class={format!("{class} differs")} title="differs from the other replica">{ text }</mark> }
        } else {
            html! { <span class={class}>{ text }</span> }
        }
    });
    html! { <>{ for cells }</> }
}

fn place(span: &side_by_side::Span) -> Html {
    html! { <><TextField text={span.file.clone()} />{ " " }<span class="place">{ span.place() }</span></> }
}

/// Both replicas' bytes side by side at the first divergence.
fn side_by_side_view(shown: &Shown, unmask: bool) -> Html {
    let at = &shown.at;
    let why = if at.why == "lost" { "one replica lost it, the other holds it" } else { "the records differ" };
    let differ = side_by_side::differing(&shown.a, &shown.b);
    let rows = side_by_side::rows(&shown.a, &shown.b);
    html! {
        // A scroll box of its own at narrow widths: focusable, and named.
        <div class="side-by-side-wrap" role="region" tabindex="0" aria-label={format!("both replicas' bytes at offset {}", at.offset)}>
            <table class="record-hex side-by-side" id="side-by-side" data-offset={at.offset.to_string()}>
                <caption>{ format!("Offset {} ({why}): both replicas' bytes, {differ} of {} differ (marked)", at.offset, shown.a.len().max(shown.b.len())) }</caption>
                <thead><tr>
                    <th scope="col">{ "+byte" }</th>
                    <th scope="col">{ "Replica A: " }{ place(&at.a) }</th>
                    <th scope="col">{ "Replica B: " }{ place(&at.b) }</th>
                </tr></thead>
                <tbody>
                    { for rows.iter().enumerate().map(|(i, row)| html! {
                        <tr>
                            <th scope="row" class="addr">{ format!("+{:03X}", i * side_by_side::ROW_BYTES) }</th>
                            <td class="hex-a">{ pair_cells(row, Side::A, unmask) }</td>
                            <td class="hex-b">{ pair_cells(row, Side::B, unmask) }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
        </div>
    }
}

fn record_card(name: &str, r: &RecordRef) -> Html {
    html! {
        <div class="record-card">
            <h4>{ format!("Replica {name}") }</h4>
            <dl>
                <dt>{ "file" }</dt><dd><TextField text={r.file.clone()} /></dd>
                <dt>{ "byte" }</dt><dd>{ format!("{} ({:#x})", r.position, r.position) }</dd>
                <dt>{ "payload bytes" }</dt><dd>{ r.payload_len }</dd>
                <dt>{ "time" }</dt><dd class={format!("time-{}", name.to_ascii_lowercase())}>{ record_time(r.timestamp_micros) }</dd>
                <dt>{ "checksum" }</dt><dd class={format!("checksum-{}", name.to_ascii_lowercase())}>{ &r.checksum }</dd>
            </dl>
        </div>
    }
}

fn side_column(d: &Diff, side: Side, axis_end: u64) -> Html {
    let (name, other, s) = match side {
        Side::A => ("A", "B", &d.a),
        Side::B => ("B", "A", &d.b),
    };
    let range = match s.first_offset {
        Some(f) => format!("{} ({} intact records)", OffsetRange { from: f, to: s.next_offset }.words(), s.records),
        None => "no record".into(),
    };
    let truncation = d.follower_line(side).unwrap_or_else(|| format!("as a follower of {other}: the epochs give no truncation point"));
    let id = format!("side-{}", name.to_ascii_lowercase());
    html! {
        <div class="side" id={id}>
            <h3>{ format!("Replica {name}") }</h3>
            <p class="path"><TextField text={s.path.clone()} /></p>
            <p class="range">{ range }</p>
            { timeline(s, axis_end) }
            <p class="truncation">{ truncation }</p>
            if s.blocked { <p class="blocked">{ "damage blocks the comparison" }</p> }
            <ul class="findings">
                { for s.findings.iter().map(|f| html! { <li data-kind={f.finding.kind.clone()}><TextField text={f.file.clone()} />{ format!(": {} at byte {}: ", f.finding.kind, f.finding.position) }<TextField text={f.finding.message.clone()} /></li> }) }
            </ul>
        </div>
    }
}

fn render_diff(d: &Diff, bytes: Option<&Shown>, unmask: bool, on_unmask: Callback<Event>) -> Html {
    let axis_end = d.a.next_offset.max(d.b.next_offset);
    let verdict = if d.identical { "identical" } else { "different" };
    let common = d.common_range.map_or_else(
        || "no offset in common".into(),
        |r| format!("common range {}: {} records compared, {} differ", r.words(), d.compared_records, d.divergent_records),
    );
    html! {
        <div class="diff-result">
            <p id="diff-verdict" class={format!("verdict {verdict}")}>{ format!("The replicas are {verdict}.") }</p>
            if let Some(ds) = &d.different_shards {
                <div class="banner warning" id="diff-shards" role="alert">{ ds.warning() }</div>
            }
            <p id="first-divergent">{ format!("First divergent offset: {}", offset(d.first_divergent_offset)) }</p>
            { for d.lost_sentences().into_iter().map(|line| html! { <p class="lost">{ line }</p> }) }
            <p id="common-range">{ common }</p>
            <div class="sides">
                { side_column(d, Side::A, axis_end) }
                { side_column(d, Side::B, axis_end) }
            </div>
            { for d.only_a.iter().map(|r| html! { <p class="only">{ format!("only A holds {}", r.words()) }</p> }) }
            { for d.only_b.iter().map(|r| html! { <p class="only">{ format!("only B holds {}", r.words()) }</p> }) }
            if let Some(t) = &d.divergent_time {
                <p id="divergent-time">{ divergent_time_words(t) }</p>
            }
            if let Some(v) = &d.divergence {
                <h3>{ format!("The records at offset {}", v.offset) }</h3>
                <div class="records">
                    { record_card("A", &v.a) }
                    { record_card("B", &v.b) }
                </div>
            }
            if let Some(shown) = bytes.filter(|b| !b.a.is_empty() || !b.b.is_empty()) {
                // Read from the dropped files: a diff opened from JSON or a link has none.
                <div class="bytes-at-divergence">
                    <h3>{ format!("Both replicas' bytes at offset {}", shown.at.offset) }</h3>
                    <label class="unmask"><input id="unmask" type="checkbox" checked={unmask} onchange={on_unmask} />
                        { " show payload bytes (on this page only; never in an export or a link)" }</label>
                    { side_by_side_view(shown, unmask) }
                </div>
            }
            { for d.notes.iter().map(|n| html! { <p class="note">{ "note: " }<TextField text={n.clone()} /></p> }) }
        </div>
    }
}

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// A diff opened from a paste or a JSON file (a count, so the same diff opened again shows again).
    #[prop_or_default]
    pub opened: Option<(u32, Rc<Diff>)>,
}

/// A diff link in the page's address (`#d=`) shows as a claim, now and on
/// each change of the address; another link (a report's) takes it away.
#[hook]
fn use_diff_link(view: &UseStateHandle<View>, runs: &Rc<Runs>) {
    let (view, runs) = (view.clone(), Rc::clone(runs));
    use_effect_with((), move |()| {
        let open = move || {
            let hash = web::hash();
            if diff_share::is_link(&hash) {
                runs.next();
                runs.from_link.set(true);
                match diff_share::decode(&hash) {
                    Ok(d) => view.set(View { diff: Some(Rc::new(d)), shared: true, ..View::default() }),
                    Err(e) => view.set(View { error: Some(e.to_string()), ..View::default() }),
                }
            } else if runs.from_link.replace(false) {
                // Another link (a report's) replaced the diff link: its diff or error goes with it.
                runs.next();
                view.set(View::default());
            }
        };
        open();
        web::on_hash_change(open);
        || ()
    });
}

/// A diff opened from a paste or a JSON file: shown as a claim, like a link's.
#[hook]
fn use_opened_diff(opened: Option<(u32, Rc<Diff>)>, view: &UseStateHandle<View>, runs: &Rc<Runs>) {
    let (view, runs) = (view.clone(), Rc::clone(runs));
    use_effect_with(opened, move |opened| {
        if let Some((_, d)) = opened {
            runs.next();
            runs.from_link.set(false);
            view.set(View { diff: Some(Rc::clone(d)), shared: true, ..View::default() });
            web::scroll_into_view("replica-diff");
        }
        || ()
    });
}

/// The diff's exports: JSON, Markdown, and a permalink (copied, and shown).
fn share_buttons(d: &Rc<Diff>, view: &UseStateHandle<View>) -> Html {
    let json = {
        let (d, view) = (Rc::clone(d), view.clone());
        Callback::from(move |_: MouseEvent| {
            let result = web::download("felix-diff.json", "application/json", &diff_share::to_json(&d));
            if let Err(e) = result {
                view.set(View { error: Some(e.to_string()), ..(*view).clone() });
            }
        })
    };
    let md = {
        let d = Rc::clone(d);
        Callback::from(move |_: MouseEvent| {
            let _ = web::download("felix-diff.md", "text/markdown", &diff_share::markdown(&d));
        })
    };
    let link = {
        let (d, view) = (Rc::clone(d), view.clone());
        Callback::from(move |_: MouseEvent| match diff_share::encode(&d) {
            Ok(fragment) => {
                let url = web::url_with_fragment(&fragment);
                web::copy_to_clipboard(&url);
                view.set(View { link: Some(url), ..(*view).clone() });
            }
            Err(e) => view.set(View { error: Some(e.to_string()), ..(*view).clone() }),
        })
    };
    html! {
        <div class="share">
            <button id="diff-json" onclick={json}>{ "Download the diff (JSON)" }</button>
            <button id="diff-md" onclick={md}>{ "Download Markdown" }</button>
            <button id="diff-link" onclick={link}>{ "Copy a permalink" }</button>
            if let Some(url) = &view.link { <input id="diff-permalink" readonly=true value={url.clone()} aria-label="the diff's permalink" /> }
        </div>
    }
}

/// The "compare two replicas" section.
#[function_component(ReplicaDiff)]
pub fn replica_diff(props: &Props) -> Html {
    let view = use_state(View::default);
    let unmask = use_state(|| false);
    let errand = use_errand();
    let runs = (*use_memo((), |()| Rc::new(Runs { errand, ..Runs::default() }))).clone();
    use_diff_link(&view, &runs);
    use_opened_diff(props.opened.clone(), &view, &runs);
    let on_unmask = {
        let unmask = unmask.clone();
        Callback::from(move |e: Event| {
            let el: HtmlInputElement = e.target_unchecked_into();
            unmask.set(el.checked());
        })
    };
    html! {
        <section class="replica-diff" id="replica-diff" aria-labelledby="replica-diff-title">
            <h2 id="replica-diff-title">{ "Compare two replicas" }</h2>
            <p class="lede">{ "Drop the same shard's folder from two brokers: where do they diverge, and where would each truncate as the other's follower? Records are compared by their verified checksums; nothing is uploaded." }</p>
            <div class="picks">
                <Pick side='A' name={view.names.0.clone()} on_files={on_side(Side::A, &view, &runs)} />
                <Pick side='B' name={view.names.1.clone()} on_files={on_side(Side::B, &view, &runs)} />
            </div>
            if view.running { <p id="diff-running" role="status">{ "reading both replicas…" }</p> }
            if let Some(e) = &view.error { <div class="banner error" id="diff-error" role="alert"><Message text={e.clone()} /></div> }
            if view.shared { <div class="banner claim" id="diff-claim">{ "A shared diff: a claim, not checked against files. Drop both folders to compute it here." }</div> }
            if let Some(d) = &view.diff {
                { render_diff(d, view.bytes.as_deref(), *unmask && !view.shared, on_unmask) }
                { share_buttons(d, &view) }
            }
        </section>
    }
}
