//! The verdict, first: one sentence per shard (or lone file) — what is wrong
//! and the next step — as the codec words it (`felix_codec::verdict`), the
//! sentence `felix-storage inspect` ends each shard's text with.

use std::rc::Rc;

use yew::prelude::*;

use super::overview::unbroken;
use super::text_field::{shown, TextField};
use crate::state::{code_spans, Verdict};

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The verdicts, one per shard or lone file.
    pub verdicts: Rc<Vec<Verdict>>,
}

/// The verdicts.
#[function_component(Verdicts)]
pub fn verdicts(props: &Props) -> Html {
    if props.verdicts.is_empty() {
        return html! {};
    }
    html! {
        <section id="verdicts" class="verdicts" aria-labelledby="verdicts-heading">
            <h2 id="verdicts-heading">{ "Verdict" }</h2>
            <ul>
                { for props.verdicts.iter().map(|v| html! {
                    <li class="verdict" data-label={v.label.clone()}><TextField text={v.label.clone()} />{ ": " }<span class="sentence">{ for v.spans().into_iter().map(sentence_part) }</span>
                        if let Some(t) = &v.time { <div class="shard-time">{ "time: " }{ unbroken(t) }</div> }</li>
                }) }
            </ul>
        </section>
    }
}

/// Words the codec wrote (a verdict, what would make recovery succeed), as
/// the page shows them: escaped by the one rule (they may quote a name from
/// a shared plan), what they quote in backticks drawn as code.
pub fn codec_words(text: &str) -> Html {
    let escaped = shown(text);
    html! { <span class="codec-words">{ for code_spans(&escaped).into_iter().map(sentence_part) }</span> }
}

/// A run of the sentence: code keeps its backticks in the text (the line's
/// text is the CLI's, character for character), hidden from sight and from
/// screen readers.
fn sentence_part((code, text): (bool, &str)) -> Html {
    if code {
        html! { <code><span class="tick">{ "`" }</span>{ text }<span class="tick">{ "`" }</span></code> }
    } else {
        html! { { text } }
    }
}
