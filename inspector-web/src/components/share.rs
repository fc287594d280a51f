//! Share: the report as JSON (byte for byte what `felix-storage inspect
//! --json` prints), as Markdown (every field escaped), and as a permalink
//! that carries the report — and who shares it, when, with which build —
//! but never the bytes.

use std::rc::Rc;

use felix_codec::doc::report::Report;
use felix_codec::format::time::format_micros;
use web_sys::HtmlInputElement;
use yew::prelude::*;

use crate::share::markdown::{self, Preface};
use crate::share::permalink;
use crate::share::shared::{self, At, Provenance, Source};
use crate::state::{Claim, Row};
use crate::web;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The rows shown.
    pub rows: Rc<Vec<Row>>,
    /// The shared report shown, if any.
    pub claim: Option<Rc<Claim>>,
    /// The permalink made, if any.
    pub permalink: Option<String>,
    /// Whether every row's report is final (the dropped files' hashes are in).
    pub complete: bool,
    /// Something failed.
    pub on_error: Callback<String>,
    /// A permalink was made.
    pub on_permalink: Callback<String>,
    /// The bytes selected (a file's path and a range), which a link can point at.
    #[prop_or_default]
    pub at: Option<At>,
}

fn report_of(rows: &[Row]) -> Report {
    Report::new(rows.iter().map(|r| (*r.report).clone()).collect())
}

/// What the Markdown says about where a shared report came from.
fn preface(claim: Option<&Claim>, rows: &[Row]) -> Preface {
    let Some(c) = claim else { return Preface::default() };
    let source = match &c.source {
        Source::Link => "a link".to_string(),
        Source::JsonFile(name) => format!("the file {name}"),
        Source::Pasted => "pasted text".to_string(),
    };
    let p = &c.provenance;
    let stated = |v: Option<String>| v.unwrap_or_else(|| "not stated".into());
    let mut lines = vec![format!(
        "A shared report, opened from {source}: shared by {}, made {}, build {} (as the sender says).",
        stated(p.shared_by.clone()),
        stated(p.made_at_micros.map(format_micros)),
        stated(p.build.clone())
    )];
    let checked: Vec<String> = rows.iter().filter_map(|r| Some(format!("{}: {}", r.report.path, r.check.as_ref()?.word()))).collect();
    if checked.is_empty() {
        lines.push("Not checked against files.".into());
    } else {
        lines.push(format!("Checked against dropped files — {}.", checked.join("; ")));
    }
    Preface { lines }
}

/// The share bar.
#[function_component(ShareBar)]
pub fn share_bar(props: &Props) -> Html {
    let by = use_node_ref();
    let json = {
        let (rows, err) = (Rc::clone(&props.rows), props.on_error.clone());
        Callback::from(move |_: MouseEvent| {
            if let Err(e) = web::download("felix-report.json", "application/json", &shared::to_json(&report_of(&rows))) {
                err.emit(e.to_string());
            }
        })
    };
    let md = {
        let (rows, claim, err) = (Rc::clone(&props.rows), props.claim.clone(), props.on_error.clone());
        Callback::from(move |_: MouseEvent| {
            let text = markdown::render(&report_of(&rows), &preface(claim.as_deref(), &rows));
            if let Err(e) = web::download("felix-report.md", "text/markdown", &text) {
                err.emit(e.to_string());
            }
        })
    };
    let make_link = |at: Option<At>| {
        let (rows, by, err, made) = (Rc::clone(&props.rows), by.clone(), props.on_error.clone(), props.on_permalink.clone());
        Callback::from(move |_: MouseEvent| {
            let who = by.cast::<HtmlInputElement>().map(|i| i.value().trim().to_string()).filter(|s| !s.is_empty());
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let now = (crate::worker::driver::wall_ms() * 1000.0) as u64;
            let p = Provenance { shared_by: who, made_at_micros: Some(now), build: Some(shared::this_build()), at: at.clone() };
            match permalink::encode(&report_of(&rows), &p) {
                Ok(fragment) => {
                    let url = web::url_with_fragment(&fragment);
                    web::copy_to_clipboard(&url);
                    made.emit(url);
                }
                Err(e) => err.emit(e.to_string()),
            }
        })
    };
    let link = make_link(None);
    // Always there (disabled until bytes are selected), in a box wide enough
    // for its label: selecting bytes never reflows the bar and moves the
    // bytes below it.
    let link_at = match props.at.clone() {
        Some(at) => {
            let label = format!("Copy a link to bytes {}..{}", at.start, at.end);
            html! { <button id="permalink-at" onclick={make_link(Some(at))} disabled={!props.complete}>{ label }</button> }
        }
        None => {
            // A shared report without its files has no bytes to select.
            let why = if props.rows.iter().any(|r| r.file.is_some()) {
                "select bytes, a record or a problem first"
            } else {
                "drop the files to select their bytes: a shared report alone holds none"
            };
            html! { <button id="permalink-at" disabled=true title={why}>{ "Copy a link to the selected bytes" }</button> }
        }
    };
    html! {
        <section class="share" aria-label="share the report">
            // The words before the report is ready and once it is share one box, as large as the
            // larger: the bar never reflows (and moves the bytes below it) when the hashes come in.
            if props.claim.is_none() {
                <span class="hint ready">
                    <span id={(!props.complete).then_some("hashing")} class={classes!(props.complete.then_some("off"))}>{ "The verdicts are in; the report is ready once each file's hash is." }</span>
                    <span class={classes!((!props.complete).then_some("off"))}>{ "Each file is hashed: the report is ready." }</span>
                </span>
            }
            <button id="download-json" onclick={json} disabled={!props.complete}>{ "Download report (JSON)" }</button>
            <button id="download-md" onclick={md} disabled={!props.complete}>{ "Download report (Markdown)" }</button>
            <label>{ "shared by (optional) " }
                <input id="shared-by-input" type="text" ref={by} maxlength={shared::MAX_BY_CHARS.to_string()} placeholder="e.g. broker 7, on-call" />
            </label>
            <button id="permalink" onclick={link} disabled={!props.complete}>{ "Copy permalink" }</button>
            { link_at }
            if let Some(url) = &props.permalink {
                <input id="permalink-url" readonly=true value={url.clone()} aria-label="permalink" />
                <span class="hint">{ format!("The link carries the findings, each file's hash and what you typed above — never the file bytes. At most {} findings and {} characters.", permalink::MAX_LINK_FINDINGS, permalink::MAX_FRAGMENT_CHARS) }</span>
            }
        </section>
    }
}
