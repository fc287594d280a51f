//! A message of the page's own (an error banner, a refusal) that may quote
//! names from outside: its words as text, each quoted name in its own
//! `<bdi>` (`ui::message::pieces`), escaped by the one rule.

use yew::prelude::*;

use crate::ui::message::{pieces, Piece};

/// Props.
#[derive(Properties, PartialEq)]
pub struct Props {
    /// The message, names quoted with `ui::message::quote`.
    pub text: AttrValue,
}

/// The message's words and isolated fields.
#[function_component(Message)]
pub fn message(props: &Props) -> Html {
    let parts = pieces(&props.text).into_iter().map(|p| match p {
        Piece::Words(w) => html! { { w.into_owned() } },
        Piece::Field(f) => html! { <bdi class="field">{ f.into_owned() }</bdi> },
    });
    html! { <>{ for parts }</> }
}
