//! A time a person writes (`parse_time`) never panics; what it reads is
//! written back (`format_micros`) as the same instant.
#![no_main]
use felix_codec::format::time::{format_micros, parse_time, LATEST_RFC3339_MICROS};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(micros) = parse_time(&text) {
        if micros <= LATEST_RFC3339_MICROS {
            assert_eq!(parse_time(&format_micros(micros)), Ok(micros));
        }
    }
});
