//! One small function component per file; each only renders what
//! [`crate::logic`] computed.

pub mod drop_zone;
pub mod epochs_view;
pub mod hex_view;
pub mod index_view;
pub mod overview;
pub mod problems;
pub mod record_table;
pub mod share;
