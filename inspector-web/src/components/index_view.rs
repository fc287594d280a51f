//! The index view: every entry, and the codec's verdict on it — the finding
//! that covers the entry where the codec's layout puts it, if any.

use std::rc::Rc;

use felix_codec::file_name::FileKind;
use yew::prelude::*;

use crate::logic::hex::index_entry_finding;
use crate::logic::scan::Scanned;

const SHOWN: usize = 500;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The scanned file.
    pub scanned: Rc<Scanned>,
}

/// The index view (index files only).
#[function_component(IndexView)]
pub fn index_view(props: &Props) -> Html {
    let s = &props.scanned;
    if s.report.kind != FileKind::Index {
        return html! {};
    }
    let rows = s.detail.index_entries.iter().enumerate().take(SHOWN).map(|(n, e)| {
        let finding = index_entry_finding(&s.report.findings, n as u64);
        let verdict = finding.map_or_else(|| "✓ lands on its record".to_string(), |f| format!("✗ {}: {}", f.kind, f.message));
        html! {
            <tr class={if finding.is_none() { "ok" } else { "bad" }} data-kind={finding.map(|f| f.kind.clone())}>
                <td class="num">{ n }</td><td class="num">{ e.offset }</td><td class="num">{ e.position }</td>
                <td>{ verdict }</td>
            </tr>
        }
    });
    let n = s.detail.index_entries.len();
    html! {
        <div class="index">
            <h3>{ format!("Index entries ({n}{})", if n > SHOWN { format!(", first {SHOWN} shown") } else { String::new() }) }</h3>
            <table id="index-entries"><thead><tr><th scope="col">{"#"}</th><th scope="col">{"offset"}</th><th scope="col">{"position"}</th><th scope="col">{"check"}</th></tr></thead><tbody>{ for rows }</tbody></table>
        </div>
    }
}
