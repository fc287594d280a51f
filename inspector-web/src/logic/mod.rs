//! Everything the inspector decides, as plain Rust tested natively: which
//! files form a shard, how a scan is driven and what it keeps, the file hashes, the worker
//! protocol, how bytes are laid out and coloured, the file map, the problem
//! list, keys, shared reports (checked, and checked against files), the
//! permalink, the Markdown export and the built-in sample. Components only
//! render these.

pub mod diff_share;
pub mod filemap;
pub mod find;
pub mod group;
pub mod hash;
pub mod hex;
pub mod keys;
pub mod latest;
pub mod link;
pub mod markdown;
pub mod message;
pub mod open_error;
pub mod opened;
pub mod permalink;
pub mod plan_share;
pub mod problems;
pub mod protocol;
pub mod replica;
pub mod rows;
pub mod sample;
pub mod scan;
pub mod scroll;
pub mod shared;
pub mod side_by_side;
pub mod verify;
pub mod window;
pub mod wire;
