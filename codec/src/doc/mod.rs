//! What the codec's verdicts say to a person: the report model and its text
//! ([`report`], [`text`]), the one-sentence verdict per shard ([`sentence`]),
//! the lines of `dump --json` ([`dump`]), and the one escaper for text that lands in a terminal or in Markdown
//! ([`report::one_line`]).

pub mod dump;
pub mod report;
pub mod sentence;
pub mod text;
