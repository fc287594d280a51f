//! The problems panel: every finding, filterable, keyboard-navigable (n / p).

use felix_codec::report::FileReport;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use crate::app::{Action, State};
use crate::logic::problems::{self, Filter, ProblemRef, Severity};

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// Reports, in file order.
    pub reports: Vec<FileReport>,
    /// The filter in force.
    pub filter: Filter,
    /// The current problem.
    pub current: Option<ProblemRef>,
    /// Where actions go.
    pub on_action: UseReducerDispatcher<State>,
}

/// The problems panel.
#[function_component(Problems)]
pub fn problems_panel(props: &Props) -> Html {
    let list = problems::list(&props.reports, &props.filter);
    let kinds = problems::kinds(&props.reports);
    let on_severity = {
        let (d, f) = (props.on_action.clone(), props.filter.clone());
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            let min_severity = match v.as_str() {
                "warning" => Some(Severity::Warning),
                "error" => Some(Severity::Error),
                _ => None,
            };
            d.dispatch(Action::Filter(Filter { min_severity, ..f.clone() }));
        })
    };
    let on_kind = {
        let (d, f) = (props.on_action.clone(), props.filter.clone());
        Callback::from(move |e: Event| {
            let v = e.target_unchecked_into::<HtmlSelectElement>().value();
            d.dispatch(Action::Filter(Filter { kind: (!v.is_empty()).then_some(v), ..f.clone() }));
        })
    };
    let step = |forward: bool| {
        let d = props.on_action.clone();
        Callback::from(move |_: MouseEvent| d.dispatch(Action::Step(forward)))
    };
    let rows = list.iter().filter_map(|p| {
        let file = props.reports.get(p.file)?;
        let f = file.findings.get(p.finding)?;
        let sev = Severity::of(f);
        let on_click = {
            let (d, p) = (props.on_action.clone(), *p);
            Callback::from(move |_: MouseEvent| d.dispatch(Action::Problem(p)))
        };
        let class = classes!("problem", sev.as_str(), (props.current == Some(*p)).then_some("current"));
        Some(html! {
            <tr class={class} onclick={on_click} tabindex="0" data-kind={f.kind.clone()} data-position={f.position.to_string()}>
                <td><span class={classes!("sev", sev.as_str())}>{ sev.as_str() }</span></td>
                <td class="kind">{ &f.kind }</td>
                <td class="path">{ &file.path }</td>
                <td class="num pos">{ format!("{} ({:#x})", f.position, f.position) }</td>
                <td class="num">{ f.offset.map_or_else(String::new, |o| o.to_string()) }</td>
                <td>{ f.repair.as_str() }</td>
                <td class="msg">{ &f.message }</td>
            </tr>
        })
    });
    html! {
        <section class="problems">
            <h2>{ format!("Problems ({})", list.len()) }</h2>
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
                        { for kinds.iter().map(|k| html! { <option value={k.clone()} selected={props.filter.kind.as_ref() == Some(k)}>{ k }</option> }) }
                    </select>
                </label>
                <button onclick={step(false)} title="previous problem (p)">{ "◀ prev" }</button>
                <button onclick={step(true)} title="next problem (n)">{ "next ▶" }</button>
            </div>
            if list.is_empty() {
                <p class="none" id="no-problems">{ "No problems: every checksum verified." }</p>
            } else {
                <table id="problems">
                    <thead><tr><th>{"severity"}</th><th>{"kind"}</th><th>{"file"}</th><th>{"byte"}</th><th>{"offset"}</th><th>{"repair"}</th><th>{"meaning"}</th></tr></thead>
                    <tbody>{ for rows }</tbody>
                </table>
            }
        </section>
    }
}
