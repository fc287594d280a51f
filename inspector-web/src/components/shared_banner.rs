//! The banner over a shared report: it is a claim — whose, when, which
//! build, as the sender says — until files dropped on the page check it.

use std::rc::Rc;

use felix_codec::format::time::format_micros;
use yew::prelude::*;

use super::text_field::TextField;
use crate::share::shared::Source;
use crate::state::{Claim, LinkPoint, PointStatus, Tally};

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The shared report.
    pub claim: Rc<Claim>,
    /// How the checks stand.
    pub tally: Tally,
    /// Whether files were dropped to check it.
    pub dropped: bool,
    /// Dropped files the report does not list.
    pub unpaired: Rc<Vec<String>>,
    /// The bytes the link points at, if it points at any.
    pub points_at: Option<LinkPoint>,
    /// Close the shared report.
    pub on_close: Callback<()>,
}

/// "; whether it is the report's file is still being checked", until it is.
fn checking(same: Option<bool>) -> &'static str {
    if same.is_some() {
        ""
    } else {
        "; whether it is the report's file is still being checked"
    }
}

/// "bytes 1692..1775 of FILE — …": where the link points, and whether the
/// dropped files hold those bytes.
fn points_at(point: &LinkPoint) -> Html {
    let at = &point.at;
    let status = match point.status {
        PointStatus::NotDropped => "not dropped: drop that file (or its folder) to see them".to_string(),
        PointStatus::Reading => "reading the dropped file…".to_string(),
        PointStatus::Held { same: Some(false), .. } => {
            "the dropped file of that name differs from the report's (its row says how): the bytes selected there may not be the ones the link meant".to_string()
        }
        PointStatus::Held { cut_at: None, same } => format!("the dropped file holds them (selected when it was read){}", checking(same)),
        PointStatus::Held { cut_at: Some(size), same } => {
            format!("the dropped file is {size} bytes long: the bytes up to its end were selected when it was read{}", checking(same))
        }
        PointStatus::PastEnd { size } => format!("the dropped file is only {size} bytes long: it holds none of them"),
    };
    html! {
        <>
            <dt>{ "points at" }</dt>
            <dd id="shared-at">{ format!("bytes {}..{} of ", at.start, at.end) }<TextField text={at.file.clone()} />{ " — " }<span class="point-status">{ status }</span></dd>
        </>
    }
}

fn stated(v: Option<String>) -> Html {
    v.map_or_else(|| html! { "not stated" }, |v| html! { <TextField text={v} /> })
}

/// The banner.
#[function_component(SharedBanner)]
pub fn shared_banner(props: &Props) -> Html {
    let c = &props.claim;
    let source = match &c.source {
        Source::Link => html! { "a link" },
        Source::JsonFile(name) => html! { <>{ "the file " }<TextField text={name.clone()} /></> },
        Source::Pasted => html! { "pasted text" },
    };
    let t = props.tally;
    let (state, status) = if !props.dropped {
        ("unchecked", "Not checked against files: drop the same files (or their folder) here to check every row.".to_string())
    } else if t.waiting > 0 {
        (
            "checking",
            format!(
                "Checking against the dropped files… {} of {} rows done.",
                t.matches + t.differs + t.no_file,
                t.matches + t.differs + t.no_file + t.waiting
            ),
        )
    } else {
        (
            "checked",
            format!("Checked against the dropped files: {} match, {} differ, {} have no dropped file.", t.matches, t.differs, t.no_file),
        )
    };
    let on_close = props.on_close.reform(|_: MouseEvent| ());
    html! {
        <section id="shared-banner" class="banner shared" aria-label="shared report">
            <p><strong>{ "Shared report" }</strong>{ " — a claim about someone's files, opened from " }{ source }{ ". What follows is what the sender says; nothing here is verified until files are dropped." }</p>
            <dl class="provenance">
                <dt>{ "shared by" }</dt><dd id="shared-by">{ stated(c.provenance.shared_by.clone()) }</dd>
                <dt>{ "made" }</dt><dd id="shared-made">{ stated(c.provenance.made_at_micros.map(format_micros)) }</dd>
                <dt>{ "build" }</dt><dd id="shared-build">{ stated(c.provenance.build.clone()) }</dd>
                { props.points_at.as_ref().map(points_at).unwrap_or_default() }
            </dl>
            <p id="check-status" data-state={state} aria-live="polite">{ status }</p>
            if !props.unpaired.is_empty() {
                <p id="unpaired">{ "Dropped but not in the report (a claim pairs only with a file of its shard and name): " }
                    { for props.unpaired.iter().enumerate().map(|(i, p)| html! { <>{ if i > 0 { ", " } else { "" } }<TextField text={p.clone()} /></> }) }
                </p>
            }
            <button id="close-shared" onclick={on_close}>{ "Close the shared report" }</button>
        </section>
    }
}
