//! Overview: one row per file, grouped by shard, with a status badge.

use felix_codec::report::{FileReport, Status};
use yew::prelude::*;

use crate::app::{Action, State};

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// Reports, in file order.
    pub reports: Vec<FileReport>,
    /// The selected file.
    pub selected: Option<usize>,
    /// Where selections go.
    pub on_select: UseReducerDispatcher<State>,
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "—".into(), |v| v.to_string())
}

/// The overview table.
#[function_component(Overview)]
pub fn overview(props: &Props) -> Html {
    let rows = props.reports.iter().enumerate().map(|(i, r)| {
        let on_click = {
            let d = props.on_select.clone();
            Callback::from(move |_: MouseEvent| d.dispatch(Action::Select(i, None)))
        };
        let badge = match r.status {
            Status::Clean => html! { <span class="badge clean">{ "clean" }</span> },
            Status::Repairable => html! { <span class="badge repairable">{ "repairable" }</span> },
            Status::Damaged => html! { <span class="badge damaged">{ "damaged" }</span> },
        };
        let sel = if props.selected == Some(i) { "selected" } else { "" };
        let detail = match r.kind {
            felix_codec::file_name::FileKind::Index => format!("{} entries", r.index_entries.unwrap_or(0)),
            felix_codec::file_name::FileKind::Epochs => format!("{} generations", r.entries.as_ref().map_or(0, Vec::len)),
            _ => format!("{} records", r.records),
        };
        html! {
            <tr class={sel} onclick={on_click} tabindex="0">
                <td>{ r.shard.clone().unwrap_or_else(|| "(alone)".into()) }</td>
                <td class="path">{ &r.path }</td>
                <td>{ r.kind.as_str() }</td>
                <td class="num">{ r.size }</td>
                <td class="num">{ opt(r.base_offset) }</td>
                <td class="num">{ opt(r.first_offset) }</td>
                <td class="num">{ opt(r.last_offset) }</td>
                <td class="num">{ detail }</td>
                <td>{ badge }</td>
                <td class="sha" title={r.sha256.clone().unwrap_or_default()}>{ r.sha256.as_deref().map_or("", |s| &s[..s.len().min(12)]) }</td>
            </tr>
        }
    });
    html! {
        <section class="overview">
            <h2>{ "Overview" }</h2>
            <table id="overview">
                <thead><tr><th>{"shard"}</th><th>{"file"}</th><th>{"kind"}</th><th>{"size"}</th><th>{"base"}</th><th>{"first"}</th><th>{"last"}</th><th>{"contents"}</th><th>{"status"}</th><th>{"sha256"}</th></tr></thead>
                <tbody>{ for rows }</tbody>
            </table>
        </section>
    }
}
