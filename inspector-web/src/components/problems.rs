//! The problems panel: every finding, filterable, virtualised like the hex
//! view (only the visible rows exist in the DOM, so 200,000 findings cost
//! a dozen rows), and a keyboard grid: arrows move, Enter jumps to the bytes.

use std::rc::Rc;

use felix_codec::doc::report::Verdict;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::text_field::{shown, TextField};
use crate::model::problems::{self, Filter, Severity};
use crate::state::{ProblemId, Row};
use crate::ui::hooks::{use_virtual_scroll, VirtualScroll};
use crate::ui::keys::{keep_in_view, move_in_list, row_nav};
use crate::ui::scroll::Virtual;

/// Rows in view.
pub const VISIBLE_ROWS: usize = 12;
/// Height of a row in CSS pixels (must match `www/style.css`).
pub const ROW_PX: usize = 26;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The rows (files) the problems belong to.
    pub rows: Rc<Vec<Row>>,
    /// The problems passing the filter.
    pub problems: Rc<Vec<ProblemId>>,
    /// Kinds present, for the filter.
    pub kinds: Rc<Vec<String>>,
    /// The filter in force.
    pub filter: Filter,
    /// The current problem.
    pub current: Option<ProblemId>,
    /// A new filter.
    pub on_filter: Callback<Filter>,
    /// A problem chosen.
    pub on_problem: Callback<ProblemId>,
    /// Next (`true`) or previous.
    pub on_step: Callback<bool>,
    /// Jump to the current problem's bytes.
    pub on_jump: Callback<()>,
}

/// Which files list only some of their findings, and how many more each has:
/// the hex view and the file map still mark those bytes.
fn unlisted_note(rows: &[Row], unlisted: &[(usize, u64)]) -> Html {
    if unlisted.is_empty() {
        return html! {};
    }
    let limit = felix_codec::read::scan::MAX_FINDINGS_PER_FILE;
    html! {
        <div id="problems-unlisted" class="hint">
            <p>{ format!("A file's report lists at most {limit} findings; these files have more (counted, not listed — their bytes are still marked damaged in the hex view and the file map):") }</p>
            <ul>
                { for unlisted.iter().filter_map(|(i, k)| rows.get(*i).map(|r| (r, *k))).map(|(r, k)| html! {
                    <li data-unlisted={k.to_string()}><TextField text={r.report.path.clone()} />{ format!(": {k} more findings not listed") }</li>
                }) }
            </ul>
        </div>
    }
}

/// What an empty list means: every structure judged verified — and, for
/// files that are not Felix files, that nothing in them was judged.
fn no_problems(rows: &[Row]) -> String {
    let not_judged = rows.iter().filter(|r| r.report.verdict() == Verdict::NotJudged).count();
    match not_judged {
        0 => "No problems: every checksum verified.".into(),
        n => format!(
            "No findings in the Felix files; {n} file{} not judged (not Felix files): see the notes beside them.",
            if n == 1 { "" } else { "s" }
        ),
    }
}

/// The problems panel.
#[function_component(Problems)]
pub fn problems_panel(props: &Props) -> Html {
    let list = &props.problems;
    let n = list.len();
    let scroll = use_virtual_scroll(Virtual { rows: n as u64, row_px: ROW_PX as u64, visible: VISIBLE_ROWS as u64 });
    let at = props.current.and_then(|c| list.iter().position(|p| *p == c));
    use_current_in_view(&scroll, at, list);
    let unlisted = problems::unlisted(props.rows.iter().map(|r| r.report.as_ref()));
    let more: u64 = unlisted.iter().map(|(_, k)| k).sum();
    html! {
        <section class="problems">
            <h2 id="problems-heading">{ problems::heading(n, more) }</h2>
            { unlisted_note(&props.rows, &unlisted) }
            { toolbar(props) }
            if list.is_empty() && more == 0 {
                <p class="none" id="no-problems">{ no_problems(&props.rows) }</p>
            } else if !list.is_empty() {
                { grid(props, &scroll, at) }
                <p id="problem-detail" class="detail-line" aria-live="polite">{ detail_line(props).unwrap_or_default() }</p>
            }
        </section>
    }
}

/// Keeps the current problem (`at`, its place in `list`) in view; none: the top.
#[hook]
fn use_current_in_view(scroll: &VirtualScroll, at: Option<usize>, list: &Rc<Vec<ProblemId>>) {
    let (scroll, n) = (scroll.clone(), list.len());
    use_effect_with((at, Rc::clone(list)), move |(at, _)| {
        let first = *scroll.first;
        let want = at.map_or(0, |i| keep_in_view(i as u64, first, VISIBLE_ROWS as u64, n as u64));
        if want != first || at.is_none() {
            scroll.show(want);
        }
        || ()
    });
}

/// The filters and the previous / next buttons.
fn toolbar(props: &Props) -> Html {
    let on_severity = {
        let (cb, f) = (props.on_filter.clone(), props.filter.clone());
        Callback::from(move |e: Event| cb.emit(f.with_severity(&e.target_unchecked_into::<HtmlSelectElement>().value())))
    };
    let on_kind = {
        let (cb, f) = (props.on_filter.clone(), props.filter.clone());
        Callback::from(move |e: Event| cb.emit(f.with_kind(&e.target_unchecked_into::<HtmlSelectElement>().value())))
    };
    let step = |forward: bool| props.on_step.reform(move |_: MouseEvent| forward);
    let f = &props.filter;
    html! {
        <div class="toolbar">
            <label>{ "severity " }
                <select id="severity-filter" onchange={on_severity}>
                    <option value="" selected={f.min_severity.is_none()}>{ "all" }</option>
                    <option value="warning" selected={f.min_severity == Some(Severity::Warning)}>{ "warnings and errors" }</option>
                    <option value="error" selected={f.min_severity == Some(Severity::Error)}>{ "errors only" }</option>
                </select>
            </label>
            <label>{ " kind " }
                <select id="kind-filter" onchange={on_kind}>
                    <option value="" selected={f.kind.is_none()}>{ "all" }</option>
                    { for props.kinds.iter().map(|k| html! { <option value={k.clone()} selected={f.kind.as_ref() == Some(k)}>{ k }</option> }) }
                </select>
            </label>
            <button id="prev-problem" onclick={step(false)} title="previous problem (p)">{ "◀ prev" }</button>
            <button id="next-problem" onclick={step(true)} title="next problem (n)">{ "next ▶" }</button>
        </div>
    }
}

/// Enter jumps to the current problem's bytes; the arrows, Page Up/Down,
/// Home and End choose another.
fn on_key(props: &Props, at: Option<usize>) -> Callback<KeyboardEvent> {
    let (list, on_problem, on_jump) = (Rc::clone(&props.problems), props.on_problem.clone(), props.on_jump.clone());
    Callback::from(move |e: KeyboardEvent| {
        if e.key() == "Enter" {
            e.prevent_default();
            on_jump.emit(());
        } else if let Some(n) = row_nav(&e.key()) {
            e.prevent_default();
            if let Some(p) = move_in_list(at, n, list.len(), VISIBLE_ROWS).and_then(|i| list.get(i)) {
                on_problem.emit(*p);
            }
        }
    })
}

/// The grid: its own scroll box, both ways (its header row stays on top),
/// the one Tab stop, and the region the keyboard scrolls; only the visible
/// rows exist.
fn grid(props: &Props, scroll: &VirtualScroll, at: Option<usize>) -> Html {
    let n = props.problems.len();
    let top = usize::try_from(*scroll.first).unwrap_or(usize::MAX).min(n.saturating_sub(1));
    let rows = props.problems.iter().enumerate().skip(top).take(VISIBLE_ROWS + 1).filter_map(|(i, p)| problem_row(props, i, *p, top));
    html! {
        <div id="problems" class="grid" role="grid" tabindex="0" aria-labelledby="problems-heading" aria-rowcount={(n + 1).to_string()} aria-colcount="7"
            aria-activedescendant={at.filter(|i| *i >= top && *i <= top + VISIBLE_ROWS).map(|i| format!("problem-{i}"))} onkeydown={on_key(props, at)}
            ref={scroll.node.clone()} onscroll={scroll.on_scroll.clone()} style={format!("height:{}px", (n.clamp(1, VISIBLE_ROWS) + 1) * ROW_PX + 2)}>
            <div role="row" class="problem head" aria-rowindex="1">
                <div role="columnheader">{"severity"}</div><div role="columnheader">{"kind"}</div><div role="columnheader">{"file"}</div>
                <div role="columnheader">{"byte"}</div><div role="columnheader">{"offset"}</div><div role="columnheader">{"repair"}</div>
                <div role="columnheader">{"meaning"}</div>
            </div>
            <div class="gridbody" role="rowgroup">
                <div class="spacer" style={format!("height:{}px", n * ROW_PX)}>
                    <div class="rows" style={format!("top:{}px", top * ROW_PX)}>{ for rows }</div>
                </div>
            </div>
        </div>
    }
}

/// Problem `p`, the list's `i`th, drawn below the first drawn (`top`).
fn problem_row(props: &Props, i: usize, p: ProblemId, top: usize) -> Option<Html> {
    let row = props.rows.iter().find(|r| r.id == p.row)?;
    let f = row.report.findings.get(p.finding as usize)?;
    let sev = Severity::of(f);
    let on_click = props.on_problem.reform(move |_: MouseEvent| p);
    let current = props.current == Some(p);
    Some(html! {
        <div role="row" id={format!("problem-{i}")} aria-rowindex={(i + 2).to_string()} aria-selected={current.to_string()}
            class={classes!("problem", sev.as_str(), current.then_some("current"))} style={format!("top:{}px", (i - top) * ROW_PX)}
            onclick={on_click} data-kind={f.kind.clone()} data-position={f.position.to_string()}>
            <div role="gridcell"><span class={classes!("sev", sev.as_str())}>{ sev.as_str() }</span></div>
            <div role="gridcell" class="kind">{ &f.kind }</div>
            <div role="gridcell" class="path" title={shown(&row.report.path)}><TextField text={row.report.path.clone()} /></div>
            <div role="gridcell" class="num pos">{ format!("{} ({:#x})", f.position, f.position) }</div>
            <div role="gridcell" class="num">{ f.offset.map_or_else(String::new, |o| o.to_string()) }</div>
            <div role="gridcell">{ f.repair.as_str() }</div>
            <div role="gridcell" class="msg" title={shown(&f.message)}><TextField text={f.message.clone()} /></div>
        </div>
    })
}

/// The current problem in words, under the grid.
fn detail_line(props: &Props) -> Option<Html> {
    let c = props.current?;
    let row = props.rows.iter().find(|r| r.id == c.row)?;
    let f = row.report.findings.get(c.finding as usize)?;
    let at = format!(": {} at byte {} ({:#x}), repair {}: ", f.kind, f.position, f.position, f.repair);
    Some(html! { <><TextField text={row.report.path.clone()} />{ at }<TextField text={f.message.clone()} /></> })
}
