//! Everything the inspector decides, as plain Rust tested natively: which
//! files form a shard, how a scan is driven and what it keeps, how bytes are
//! laid out and coloured, the problem list, the permalink, the Markdown
//! export and the built-in sample. Components only render these.

pub mod group;
pub mod hex;
pub mod markdown;
pub mod permalink;
pub mod problems;
pub mod sample;
pub mod scan;
pub mod wire;
