//! Share: the report as JSON (the CLI's `inspect --json` model), as
//! Markdown, and as a permalink that carries the report but never the bytes.

use felix_codec::report::{FileReport, Report};
use yew::prelude::*;

use crate::app::{Action, State};
use crate::logic::{markdown, permalink};
use crate::web;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// Reports, in file order.
    pub reports: Vec<FileReport>,
    /// The permalink made, if any.
    pub permalink: Option<String>,
    /// Where actions go.
    pub on_action: UseReducerDispatcher<State>,
}

/// The share bar.
#[function_component(ShareBar)]
pub fn share_bar(props: &Props) -> Html {
    let report = Report::new(props.reports.clone());
    let json = {
        let (r, d) = (report.clone(), props.on_action.clone());
        Callback::from(move |_: MouseEvent| {
            let text = serde_json::to_string_pretty(&r).unwrap_or_default();
            if let Err(e) = web::download("felix-report.json", "application/json", &text) {
                d.dispatch(Action::Error(e));
            }
        })
    };
    let md = {
        let (r, d) = (report.clone(), props.on_action.clone());
        Callback::from(move |_: MouseEvent| {
            if let Err(e) = web::download("felix-report.md", "text/markdown", &markdown::render(&r)) {
                d.dispatch(Action::Error(e));
            }
        })
    };
    let link = {
        let (r, d) = (report, props.on_action.clone());
        Callback::from(move |_: MouseEvent| {
            let url = web::url_with_fragment(&permalink::encode(&r));
            web::copy_to_clipboard(&url);
            d.dispatch(Action::Permalink(url));
        })
    };
    html! {
        <section class="share">
            <button id="download-json" onclick={json}>{ "Download report (JSON)" }</button>
            <button id="download-md" onclick={md}>{ "Download report (Markdown)" }</button>
            <button id="permalink" onclick={link}>{ "Copy permalink" }</button>
            if let Some(url) = &props.permalink {
                <input id="permalink-url" readonly=true value={url.clone()} aria-label="permalink" />
                <span class="hint">{ "The link carries the findings and each file's SHA-256 — never the file bytes." }</span>
            }
        </section>
    }
}
