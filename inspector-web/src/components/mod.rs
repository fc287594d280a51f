//! One small function component per file; each renders what [`crate::model`]
//! computed from plain data (`Rc`) and reports what happened through typed
//! callbacks. None holds the dispatcher.

pub mod drop_zone;
pub mod epochs_view;
pub mod file_map;
pub mod find;
pub mod hex_view;
pub mod index_view;
pub mod message;
pub mod open_report;
pub mod overview;
pub mod plan_claim;
pub mod problems;
pub mod progress;
pub mod record_table;
pub mod recovery_preview;
pub mod replica_diff;
pub mod share;
pub mod shared_banner;
pub mod text_field;
pub mod verdicts;
