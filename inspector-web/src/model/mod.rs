//! What the inspector knows about dropped files, as plain Rust tested
//! natively: which files form a shard, how a scan is driven and what it keeps,
//! the rows and their windows, hashes, the file map, the hex layout, the
//! problem list, checks against a report, replica compare, find and the sample.

pub mod filemap;
pub mod find;
pub mod group;
pub mod hash;
pub mod hex;
pub mod problems;
pub mod replica;
pub mod rows;
pub mod sample;
pub mod scan;
pub mod side_by_side;
pub mod verify;
pub mod window;
