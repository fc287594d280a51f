//! The epochs view: generations as a timeline over offsets.

use std::rc::Rc;

use yew::prelude::*;

use crate::logic::scan::Scanned;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The scanned file.
    pub scanned: Rc<Scanned>,
}

/// The epochs timeline (epochs files only).
#[function_component(EpochsView)]
pub fn epochs_view(props: &Props) -> Html {
    let s = &props.scanned;
    if s.report.kind != felix_codec::file_name::FileKind::Epochs {
        return html! {};
    }
    let epochs = &s.detail.epochs;
    if epochs.is_empty() {
        return html! { <p class="none">{ "The epochs file reads as empty (see its findings)." }</p> };
    }
    let last = epochs.last().map_or(1, |e| e.start_offset.max(1));
    let span = last + last / 4 + 1;
    #[allow(clippy::cast_precision_loss)]
    let pct = |o: u64| o as f64 * 100.0 / span as f64;
    let bars = epochs.iter().enumerate().map(|(i, e)| {
        let end = epochs.get(i + 1).map_or(span, |n| n.start_offset);
        let style = format!("left:{:.2}%;width:{:.2}%", pct(e.start_offset), (pct(end) - pct(e.start_offset)).max(0.5));
        html! { <div class={classes!("epoch", format!("g{}", i % 6))} style={style} title={format!("generation {} from offset {}", e.generation, e.start_offset)}>{ format!("g{} @ {}", e.generation, e.start_offset) }</div> }
    });
    html! {
        <div class="epochs">
            <h3>{ "Generations" }</h3>
            <div id="epochs-timeline" class="timeline">{ for bars }</div>
        </div>
    }
}
