//! The JSON Schemas of the documents `felix-storage` prints, generated from
//! the codec's types (`schemars`) and checked in under `docs/schema/`
//! (`engine/tests/cli_ecosystem.rs` keeps the files equal to what the types
//! generate and validates real outputs against them).

use felix_codec::doc::dump::DumpLine;
use felix_codec::doc::report::Report;
use felix_codec::shard::diff::Diff;
use felix_codec::shard::recovery::Plan;

/// A document `felix-storage` prints as JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Document {
    /// `inspect --json`.
    Report,
    /// `diff --json`.
    Diff,
    /// `recover --json` (with or without `--dry-run`).
    Plan,
    /// One line of `dump --json` (JSON Lines: each line is one of these).
    DumpLine,
}

impl Document {
    /// Every document.
    pub const ALL: [Self; 4] = [Self::Report, Self::Diff, Self::Plan, Self::DumpLine];

    /// Its schema's file name under `docs/schema/`.
    #[must_use]
    pub fn file_name(self) -> &'static str {
        match self {
            Self::Report => "report.schema.json",
            Self::Diff => "diff.schema.json",
            Self::Plan => "plan.schema.json",
            Self::DumpLine => "dump-line.schema.json",
        }
    }

    /// Its JSON Schema.
    #[must_use]
    pub fn schema(self) -> serde_json::Value {
        let schema = match self {
            Self::Report => schemars::schema_for!(Report),
            Self::Diff => schemars::schema_for!(Diff),
            Self::Plan => schemars::schema_for!(Plan),
            Self::DumpLine => schemars::schema_for!(DumpLine),
        };
        schema.to_value()
    }

    /// Its JSON Schema as the checked-in text (pretty, with a final newline).
    #[must_use]
    pub fn schema_text(self) -> String {
        let mut text = serde_json::to_string_pretty(&self.schema()).unwrap_or_default();
        text.push('\n');
        text
    }
}
