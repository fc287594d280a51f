//! The problems panel: every finding, filterable, virtualised like the hex
//! view (only the visible rows exist in the DOM, so 200,000 findings cost
//! a dozen rows), and a keyboard grid: arrows move, Enter jumps to the bytes.

use std::rc::Rc;

use felix_codec::doc::report::Verdict;
use web_sys::{Element, HtmlSelectElement};
use yew::prelude::*;

use super::text_field::{shown, TextField};
use crate::model::problems::{self, Filter, Severity};
use crate::state::{ProblemId, Row};
use crate::ui::keys::{keep_in_view, move_in_list, row_nav};

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

fn scroll_to(container: &NodeRef, first: usize) {
    if let Some(el) = container.cast::<Element>() {
        #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
        el.set_scroll_top((first * ROW_PX) as i32);
    }
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
    let first = use_state(|| 0usize);
    let body = use_node_ref();
    let at = props.current.and_then(|c| list.iter().position(|p| *p == c));
    {
        // Keep the current problem in view.
        let (first, body, n) = (first.clone(), body.clone(), list.len());
        use_effect_with((at, Rc::clone(list)), move |(at, _)| {
            let want = at.map_or(0, |i| keep_in_view(i as u64, *first as u64, VISIBLE_ROWS as u64, n as u64));
            let want = usize::try_from(want).unwrap_or(0);
            if want != *first || at.is_none() {
                scroll_to(&body, want);
                first.set(want);
            }
            || ()
        });
    }
    let on_severity = {
        let (cb, f) = (props.on_filter.clone(), props.filter.clone());
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            let min_severity = match v.as_str() {
                "warning" => Some(Severity::Warning),
                "error" => Some(Severity::Error),
                _ => None,
            };
            cb.emit(Filter { min_severity, ..f.clone() });
        })
    };
    let on_kind = {
        let (cb, f) = (props.on_filter.clone(), props.filter.clone());
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            cb.emit(Filter { kind: (!v.is_empty()).then_some(v), ..f.clone() });
        })
    };
    let step = |forward: bool| props.on_step.reform(move |_: MouseEvent| forward);
    let on_scroll = {
        let first = first.clone();
        Callback::from(move |e: Event| {
            let el: Element = e.target_unchecked_into();
            let first = first.clone();
            // In a later task: see `web::later`.
            crate::web::later(move || {
                let row = usize::try_from(el.scroll_top()).unwrap_or(0) / ROW_PX;
                if row != *first {
                    first.set(row);
                }
            });
        })
    };
    let on_key = {
        let (list, on_problem, on_jump) = (Rc::clone(list), props.on_problem.clone(), props.on_jump.clone());
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
    };
    let top = (*first).min(list.len().saturating_sub(1));
    let rows = list.iter().enumerate().skip(top).take(VISIBLE_ROWS + 1).filter_map(|(i, p)| {
        let row = props.rows.iter().find(|r| r.id == p.row)?;
        let f = row.report.findings.get(p.finding as usize)?;
        let sev = Severity::of(f);
        let on_click = props.on_problem.reform({
            let p = *p;
            move |_: MouseEvent| p
        });
        let current = props.current == Some(*p);
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
    });
    let detail = props.current.and_then(|c| {
        let row = props.rows.iter().find(|r| r.id == c.row)?;
        let f = row.report.findings.get(c.finding as usize)?;
        let at = format!(": {} at byte {} ({:#x}), repair {}: ", f.kind, f.position, f.position, f.repair);
        Some(html! { <><TextField text={row.report.path.clone()} />{ at }<TextField text={f.message.clone()} /></> })
    });
    let n = list.len();
    let unlisted = problems::unlisted(props.rows.iter().map(|r| r.report.as_ref()));
    let more: u64 = unlisted.iter().map(|(_, k)| k).sum();
    html! {
        <section class="problems">
            <h2 id="problems-heading">{ problems::heading(n, more) }</h2>
            { unlisted_note(&props.rows, &unlisted) }
            <div class="toolbar">
                <label>{ "severity " }
                    <select id="severity-filter" onchange={on_severity}>
                        <option value="" selected={props.filter.min_severity.is_none()}>{ "all" }</option>
                        <option value="warning" selected={props.filter.min_severity == Some(Severity::Warning)}>{ "warnings and errors" }</option>
                        <option value="error" selected={props.filter.min_severity == Some(Severity::Error)}>{ "errors only" }</option>
                    </select>
                </label>
                <label>{ " kind " }
                    <select id="kind-filter" onchange={on_kind}>
                        <option value="" selected={props.filter.kind.is_none()}>{ "all" }</option>
                        { for props.kinds.iter().map(|k| html! { <option value={k.clone()} selected={props.filter.kind.as_ref() == Some(k)}>{ k }</option> }) }
                    </select>
                </label>
                <button id="prev-problem" onclick={step(false)} title="previous problem (p)">{ "◀ prev" }</button>
                <button id="next-problem" onclick={step(true)} title="next problem (n)">{ "next ▶" }</button>
            </div>
            if list.is_empty() && more == 0 {
                <p class="none" id="no-problems">{ no_problems(&props.rows) }</p>
            } else if !list.is_empty() {
                // The grid is its own scroll box, both ways (its header row stays on top):
                // the one Tab stop, and the region the keyboard scrolls.
                <div id="problems" class="grid" role="grid" tabindex="0" aria-labelledby="problems-heading" aria-rowcount={(n + 1).to_string()} aria-colcount="7"
                    aria-activedescendant={at.filter(|i| *i >= top && *i <= top + VISIBLE_ROWS).map(|i| format!("problem-{i}"))} onkeydown={on_key}
                    ref={body} onscroll={on_scroll} style={format!("height:{}px", (n.clamp(1, VISIBLE_ROWS) + 1) * ROW_PX + 2)}>
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
                <p id="problem-detail" class="detail-line" aria-live="polite">{ detail.unwrap_or_default() }</p>
            }
        </section>
    }
}
