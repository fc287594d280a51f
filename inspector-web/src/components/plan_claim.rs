//! A recovery plan opened from a paste or a JSON file (`recover --dry-run
//! --json`, or the page's "Download the plan"): each shard's preview in the
//! same words as for dropped folders, without their bytes — a claim, not
//! checked against files.

use std::rc::Rc;

use felix_codec::shard::recovery::Plan;
use yew::prelude::*;

use super::recovery_preview::plan_section;
use super::text_field::TextField;
use crate::model::group::file_name;

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The plan, checked (`share::plan_share`).
    pub plan: Rc<Plan>,
    /// Closes it.
    pub on_close: Callback<()>,
}

/// The shared plan's previews.
#[function_component(PlanClaim)]
pub fn plan_claim(props: &Props) -> Html {
    let close = props.on_close.reform(|_: MouseEvent| ());
    let plan = &props.plan;
    html! {
        <section class="recovery-previews plan-claim" id="plan-claim" aria-labelledby="plan-claim-title">
            <h2 id="plan-claim-title">{ "A shared recovery plan" }</h2>
            <div class="banner claim">
                { "A claim, not checked against files: drop the shard folders to see the plan recovery would run on their bytes. " }
                <button id="plan-claim-close" onclick={close}>{ "Close" }</button>
            </div>
            { for plan.shards.iter().map(|s| plan_section(file_name(&s.path), file_name(&s.path), s, &[], &[], None)) }
            if let Some(stopped) = &plan.stopped {
                <p class="stopped">{ "The run stopped in " }<TextField text={stopped.path.clone()} />{ ": " }<TextField text={stopped.error.clone()} />
                    { format!(" ({} of its actions had run)", stopped.done.len()) }</p>
            }
            { for plan.skipped.iter().map(|s| html! { <p class="skipped">{ "Left as it was: " }<TextField text={s.path.clone()} />{ ": " }<TextField text={s.reason.clone()} /></p> }) }
        </section>
    }
}
