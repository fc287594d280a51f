//! Scan progress, and findings as the scan meets them (verdicts provisional).

use std::rc::Rc;

use felix_codec::doc::report::FindingReport;
use yew::prelude::*;

use super::text_field::{shown, TextField};

use crate::state::{FileId, Loaded};

/// Progress bars shown at most (ten thousand dropped files are not ten thousand bars).
pub const BARS_SHOWN: usize = 20;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The files.
    pub files: Vec<Loaded>,
    /// Findings met so far.
    pub live: Rc<Vec<(FileId, FindingReport)>>,
}

/// One bar per file still scanning, and the first live findings.
#[function_component(Progress)]
pub fn progress(props: &Props) -> Html {
    let busy: Vec<&Loaded> = props.files.iter().filter(|f| f.scanned.is_none()).collect();
    if busy.is_empty() {
        return html! {};
    }
    let path = |id: FileId| props.files.iter().find(|f| f.id == id).map(|f| f.path.clone());
    html! {
        <div class="progress" aria-live="polite">
            { for busy.iter().take(BARS_SHOWN).map(|f| html! {
                <div class="bar"><span><TextField text={f.path.clone()} /></span><progress max={f.size.max(1).to_string()} value={f.done.to_string()} aria-label={format!("scanning {}", shown(&f.path))} /></div>
            }) }
            if busy.len() > BARS_SHOWN { <p class="hint">{ format!("and {} more files", busy.len() - BARS_SHOWN) }</p> }
            if !props.live.is_empty() {
                <ul id="live-findings" class="live">
                    { for props.live.iter().take(20).filter_map(|(id, f)| path(*id).map(|p| html! {
                        <li data-kind={f.kind.clone()} data-position={f.position.to_string()}><TextField text={p} />{ format!(": {} at byte {} — still scanning, verdict provisional", f.kind, f.position) }</li>
                    })) }
                </ul>
            }
        </div>
    }
}
