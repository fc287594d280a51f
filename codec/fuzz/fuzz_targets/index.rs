//! The index scanner never panics and keeps no more entries than its limit.
#![no_main]
use felix_codec::read::scan::{IndexCheck, IndexScanner, ScanContext};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let split = data.first().map_or(1, |b| usize::from(*b).max(1));
    let mut s = IndexScanner::new(ScanContext::default());
    for chunk in data.chunks(split) {
        s.feed(chunk, &mut ());
    }
    let summary = s.finish(&mut ());
    assert!(summary.kept.len() <= felix_codec::read::scan::index::MAX_CHECKED_ENTRIES);
    let _ = IndexCheck::new(ScanContext::default(), summary.kept).finish();
});
