//! The index view: every entry, and whether it lands on a real record.

use yew::prelude::*;

use crate::app::Shared;
use crate::logic::scan::Scanned;

const SHOWN: usize = 500;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The scanned file.
    pub scanned: Shared<Scanned>,
}

/// The index view (index files only).
#[function_component(IndexView)]
pub fn index_view(props: &Props) -> Html {
    let s = &props.scanned.0;
    if s.report.kind != felix_codec::file_name::FileKind::Index {
        return html! {};
    }
    let bad: Vec<u64> =
        s.report.findings.iter().filter(|f| f.kind == "IndexEntryMismatch" || f.kind == "IndexOutOfOrder").map(|f| f.position).collect();
    let rows = s.detail.index_entries.iter().enumerate().take(SHOWN).map(|(n, e)| {
        let at = 24 + 16 * n as u64;
        let ok = !bad.contains(&at);
        html! {
            <tr class={if ok { "ok" } else { "bad" }}>
                <td class="num">{ n }</td><td class="num">{ e.offset }</td><td class="num">{ e.position }</td>
                <td>{ if ok { "lands on its record" } else { "does not land on its record" } }</td>
            </tr>
        }
    });
    html! {
        <div class="index">
            <h3>{ format!("Index entries ({})", s.detail.index_entries.len()) }</h3>
            <table id="index-entries"><thead><tr><th>{"#"}</th><th>{"offset"}</th><th>{"position"}</th><th>{"check"}</th></tr></thead><tbody>{ for rows }</tbody></table>
        </div>
    }
}
