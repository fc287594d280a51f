//! The page: the reducer's state (`crate::state`), the file bytes (kept by
//! the loader, by id, since they are browser objects), the scan runner, and
//! the layout. Components get plain data and typed callbacks.
//!
//! - `loader`: the page's actions on files and documents (drop, sample,
//!   paste, permalink, cancel);
//! - `hooks`: the dispatcher, the runner and loader made once, the mount
//!   (worker, permalink), the shortcuts, the detail views' stages.

mod hooks;
mod loader;

use std::rc::Rc;

use web_sys::Blob;
use yew::prelude::*;

use self::hooks::{on_shortcut, use_detail_stages, use_dispatch, use_page, use_startup};
use self::loader::Loader;
use crate::components::{
    drop_zone::DropZone, epochs_view::EpochsView, file_map::FileMapView, find::Find, hex_view::HexView, index_view::IndexView,
    open_report::OpenReport, overview::Overview, problems::Problems, progress::Progress, record_table::RecordTable, share::ShareBar,
    shared_banner::SharedBanner,
};
use crate::components::{
    message::Message, plan_claim::PlanClaim, recovery_preview::RecoveryPreview, replica_diff::ReplicaDiff, text_field::TextField,
    verdicts::Verdicts,
};
use crate::model::group::Dropped;
use crate::model::hex;
use crate::state::{Action, FileId, RowId, State};

/// The inspector page.
#[function_component(App)]
pub fn app() -> Html {
    let state = use_reducer(State::default);
    let dispatch = use_dispatch(&state);
    let page = use_page(&dispatch);
    use_startup(&page, &dispatch);
    let loader = &page.loader;
    let detail = state.detail().map(|(row, file, scanned)| (row.id, file.path.clone(), Rc::clone(scanned)));
    let shown = use_detail_stages(detail.as_ref().map(|(row, _, s)| (*row, Rc::as_ptr(s) as usize)));
    let blob = detail
        .as_ref()
        .and_then(|(row, _, _)| state.row(*row)?.file)
        .and_then(|id| loader.blobs.borrow().iter().find(|(f, _)| *f == id).map(|(_, b)| b.clone()));
    let shards = shard_folders(&state, &loader.blobs.borrow());
    html! {
        <div class="app" onkeydown={on_shortcut(&dispatch)}>
            { header(&state, loader) }
            <main>
            <Verdicts verdicts={Rc::clone(&state.verdicts)} />
            if let Some(e) = &state.error { <div class="banner error" id="error" role="alert"><Message text={e.clone()} /></div> }
            if let Some(claim) = &state.claim {
                <SharedBanner claim={Rc::clone(claim)} tally={state.tally()} dropped={!state.files.is_empty()}
                    unpaired={Rc::new(state.unpaired().iter().map(|f| f.path.clone()).collect::<Vec<_>>())} points_at={state.link_points_at()}
                    on_close={loader.to(|l, ()| l.close())} />
            }
            <Progress files={state.files.clone()} live={Rc::clone(&state.live)} />
            { timings(&state) }
            if !state.rows.is_empty() { { file_views(&state, &dispatch) } }
            if let Some(plan) = &*page.opened_plan {
                <PlanClaim plan={Rc::clone(plan)} on_close={loader.on_plan.reform(|()| None)} />
            }
            if let Some(shards) = shards { <RecoveryPreview shards={shards} on_show={on_show(&state, &dispatch)} /> }
            { detail_section(&state, detail, blob, &dispatch, shown) }
            // Below the bytes: its results, as they grow, never move the hex view.
            if !state.files.is_empty() {
                <Find files={find_files(&state, &loader.blobs.borrow())} shown={state.detail().map(|(_, f, _)| f.id.0)}
                    on_select={dispatch.reform(|(file, start, end): (u32, u64, u64)| Action::Select(RowId::File(FileId(file)), Some((start, end))))} />
            }
            <ReplicaDiff opened={(*page.opened_diff).clone()} />
            </main>
        </div>
    }
}

/// The header: the title, the drop zone and pickers, the sample, Cancel
/// while scanning, the paste box and the keys.
fn header(state: &State, loader: &Loader) -> Html {
    html! {
        <header>
            <h1>{ "Felix storage inspector" }</h1>
            <p class="lede">{ "Drop .log, .index and epochs files, or a whole shard folder — or a JSON report to check. Everything runs in this page: nothing is uploaded." }</p>
            <div class="actions">
                <DropZone on_files={loader.to(|l, files| l.drop_files(files))} />
                <button id="sample" onclick={loader.to(|l, _: MouseEvent| l.open_sample())}>{ "Open the sample shard" }</button>
                <button id="sample-tar" onclick={loader.to(|l, _: MouseEvent| l.download_sample())} title="the same files, to try felix-storage inspect and the share-and-check round trip on">{ "Download its files (.tar)" }</button>
                if state.scanning { <button id="cancel" onclick={loader.to(|l, _: MouseEvent| l.cancel())}>{ "Cancel" }</button> }
            </div>
            <OpenReport on_text={loader.to(|l, text: String| l.open_pasted(&text))} />
            <p class="hint">{ "Keys: n / p next and previous problem, Enter on a problem jumps to its bytes, Tab reaches each table once and the arrows move inside it (the overview, the problems, the records, the bytes, the file map)." }</p>
        </header>
    }
}

/// How long the scan and the hashing took, once they are done.
fn timings(state: &State) -> Html {
    html! {
        <>
            if let (Some(first), Some(all)) = state.timings {
                <p class="timing" id="timing">{ format!("first finding after {first:.0} ms, all verified after {all:.0} ms") }</p>
            } else if let (None, Some(all)) = state.timings {
                <p class="timing" id="timing">{ format!("all verified after {all:.0} ms, nothing damaged") }</p>
            }
            if let Some(ms) = state.hashed_ms {
                <p class="timing" id="hash-timing">{ format!("every file hashed after {ms:.0} ms") }</p>
            } else if !state.files.is_empty() && state.error.is_none() {
                // Its line is held from the drop on: the hashes coming in after the bytes are shown never move them.
                <p class="timing">{ "hashing each file…" }</p>
            }
        </>
    }
}

/// The views of every file: the overview, the problems, sharing.
fn file_views(state: &State, dispatch: &Callback<Action>) -> Html {
    html! {
        <>
            <Overview rows={Rc::clone(&state.rows)} selected={state.selected} shared={state.claim.is_some()}
                on_select={dispatch.reform(|row: RowId| Action::Select(row, None))} />
            <Problems rows={Rc::clone(&state.rows)} problems={Rc::clone(&state.problems)} kinds={Rc::clone(&state.kinds)}
                filter={state.filter.clone()} current={state.problem}
                on_filter={dispatch.reform(Action::Filter)} on_problem={dispatch.reform(Action::Problem)}
                on_step={dispatch.reform(Action::Step)} on_jump={dispatch.reform(|()| Action::Jump)} />
            <ShareBar rows={Rc::clone(&state.rows)} claim={state.claim.clone()} permalink={state.permalink.clone()}
                complete={state.claim.is_some() || state.all_hashed()}
                on_error={dispatch.reform(Action::Error)} on_permalink={dispatch.reform(Action::Permalink)} at={state.pointed()} />
        </>
    }
}

/// A recovery preview's cut shown: the file of that path, with the range selected.
fn on_show(state: &State, dispatch: &Callback<Action>) -> Callback<(String, (u64, u64))> {
    let (rows, dispatch) = (Rc::clone(&state.rows), dispatch.clone());
    Callback::from(move |(path, range): (String, (u64, u64))| {
        if let Some(row) = rows.iter().find(|r| r.report.path == path) {
            dispatch.emit(Action::Select(row.id, Some(range)));
        }
    })
}

/// Every dropped file with its bytes, in the drop's order (what Find searches).
fn find_files(state: &State, blobs: &[(FileId, Blob)]) -> Rc<Vec<(Dropped, Blob)>> {
    let files = state
        .files
        .iter()
        .filter_map(|f| {
            blobs.iter().find(|(id, _)| *id == f.id).map(|(_, b)| (Dropped { id: f.id.0, path: f.path.clone(), size: f.size }, b.clone()))
        })
        .collect();
    Rc::new(files)
}

/// The dropped shard folders and their bytes, once every file was scanned
/// (for the recovery previews).
fn shard_folders(state: &State, blobs: &[(FileId, Blob)]) -> Option<Rc<crate::components::recovery_preview::Shards>> {
    use crate::components::recovery_preview::{ShardFolder, Shards};
    if state.scanning || state.files.is_empty() || state.files.iter().any(|f| f.scanned.is_none()) {
        return None;
    }
    let dropped: Vec<Dropped> = state.files.iter().map(|f| Dropped { id: f.id.0, path: f.path.clone(), size: f.size }).collect();
    let mut shards = Vec::new();
    for g in crate::model::group::group(&dropped) {
        let Some(name) = g.shard else { continue };
        let files = g
            .files
            .iter()
            .filter_map(|i| dropped.get(*i))
            .filter_map(|d| blobs.iter().find(|(id, _)| id.0 == d.id).map(|(_, b)| (d.path.clone(), d.size, b.clone())))
            .collect();
        // Its folder as dropped ("root/shard"): two roots may hold a shard of one name.
        let folder = g
            .files
            .first()
            .and_then(|i| dropped.get(*i))
            .and_then(|d| d.path.rsplit_once('/'))
            .map_or_else(|| name.clone(), |(dir, _)| dir.to_string());
        shards.push(ShardFolder { name, folder, files });
    }
    (!shards.is_empty()).then(|| Rc::new(Shards { key: dropped.iter().map(|d| d.id).collect(), shards }))
}

/// When a segment's intact records were written, in the codec's words
/// (what `inspect` says of it); nothing for a file without one.
fn file_time(report: &felix_codec::doc::report::FileReport) -> Html {
    match report.time {
        Some(span) => html! { <p class="file-time" id="file-time">{ "time: " }{ felix_codec::doc::text::span_words(span) }</p> },
        None => html! {},
    }
}

fn detail_section(
    state: &State,
    detail: Option<(RowId, String, Rc<crate::model::scan::Scanned>)>,
    blob: Option<Blob>,
    dispatch: &Callback<Action>,
    shown: u8,
) -> Html {
    let Some(selected) = state.selected.and_then(|id| state.row(id)) else { return html! {} };
    let Some((row, path, scanned)) = detail else {
        let report = Rc::clone(&selected.report);
        return html! {
            <section class="detail">
                <h2><TextField text={report.path.clone()} />{ format!(" — {}", report.kind.as_str()) }</h2>
                { file_time(&report) }
                <p class="none" id="needs-files">{ "This report came without bytes: drop the same files (or their folder) to see the bytes, the file map and the records — and to check the report against them." }</p>
                <IndexView report={Rc::clone(&report)} />
                <EpochsView report={report} />
            </section>
        };
    };
    let Some(blob) = blob else { return html! {} };
    // With the file on the page, the views show what its bytes say (not what a shared report claims).
    let Some(own) = state.detail().and_then(|(_, f, _)| f.report.clone()) else { return html! {} };
    let on_range = dispatch.reform(move |range: (u64, u64)| Action::Select(row, Some(range)));
    let on_pick = {
        let (s, on_range) = (Rc::clone(&scanned), on_range.clone());
        Callback::from(move |pos: u64| on_range.emit(hex::click_selection(s.report.kind, &s.detail.records, s.report.size, pos)))
    };
    let index = crate::model::scan::companion_index(&scanned, state.files.iter().filter_map(|f| f.scanned.as_ref())).cloned();
    html! {
        <section class="detail">
            <h2><TextField text={path} />{ format!(" — {}", scanned.report.kind.as_str()) }</h2>
            { file_time(&scanned.report) }
            <div class="bytes">
                if shown >= 1 { <FileMapView scanned={Rc::clone(&scanned)} index={index} range={state.range} on_pick={on_pick} /> }
                if shown >= 4 { <HexView blob={blob.clone()} scanned={Rc::clone(&scanned)} range={state.range} focus={state.focus_hex} on_range={on_range.clone()} /> }
            </div>
            if shown >= 2 { <RecordTable blob={blob.clone()} scanned={Rc::clone(&scanned)} range={state.range} on_range={on_range} /> }
            if shown >= 3 {
                <IndexView report={Rc::clone(&own)} scanned={Some(Rc::clone(&scanned))} />
                <EpochsView report={own} />
            }
        </section>
    }
}
