//! The epochs view: generations as a timeline over offsets, from the
//! report's own `entries` (so a shared report shows it too).

use std::rc::Rc;

use felix_codec::doc::report::FileReport;
use felix_codec::format::file_name::FileKind;
use yew::prelude::*;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The file's report.
    pub report: Rc<FileReport>,
}

/// The epochs timeline (epochs files only).
#[function_component(EpochsView)]
pub fn epochs_view(props: &Props) -> Html {
    let r = &props.report;
    if r.kind != FileKind::Epochs {
        return html! {};
    }
    let epochs = r.entries.as_deref().unwrap_or_default();
    if epochs.is_empty() {
        return html! { <p class="none">{ "The epochs file reads as empty (see its findings)." }</p> };
    }
    #[allow(clippy::cast_precision_loss)]
    let last = epochs.last().map_or(1.0, |e| e[1].max(1) as f64);
    let span = last * 1.25 + 1.0;
    #[allow(clippy::cast_precision_loss)]
    let pct = |o: u64| (o as f64 * 100.0 / span).clamp(0.0, 100.0);
    let bars = epochs.iter().enumerate().map(|(i, [generation, start])| {
        let end = epochs.get(i + 1).map_or(100.0, |n| pct(n[1]));
        let style = format!("left:{:.2}%;width:{:.2}%", pct(*start), (end - pct(*start)).max(0.5));
        html! { <div class={classes!("epoch", format!("g{}", i % 6))} style={style} title={format!("generation {generation} from offset {start}")}>{ format!("g{generation} @ {start}") }</div> }
    });
    html! {
        <div class="epochs">
            <h3>{ "Generations" }</h3>
            <div id="epochs-timeline" class="timeline">{ for bars }</div>
        </div>
    }
}
