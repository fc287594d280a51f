//! The whole inspection (every scanner, the cross checks, the report) never
//! panics, and chunking never changes the verdict.
#![no_main]
use felix_codec::shard::scan::inspect_in_memory;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let split = data.first().map_or(1, |b| usize::from(*b % 61).max(1));
    let (a, b) = data.split_at(data.len() / 2);
    let files = [("00000000000000000000.index".to_string(), a), ("00000000000000000000.log".to_string(), b), ("epochs".to_string(), data)];
    let whole = inspect_in_memory(Some("s-0000000000000000".into()), &files, usize::MAX);
    let chunked = inspect_in_memory(Some("s-0000000000000000".into()), &files, split);
    assert_eq!(whole, chunked);
});
