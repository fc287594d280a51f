//! `parse_time`'s promises over arbitrary input: every instant `format_micros`
//! writes (up to the year 9999) and every `@MICROS` reads back as itself;
//! no text, however hostile, makes it panic, and an error always points
//! inside the text (or one past its end).
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use felix_codec::format::time::{format_micros, parse_time, LATEST_RFC3339_MICROS};
use proptest::prelude::*;

/// Checks what any answer must be: an error points at a character of the
/// text (or one past its end) and names the one found there.
fn well_formed(text: &str) {
    if let Err(e) = parse_time(text) {
        let n = text.chars().count();
        assert!(e.at >= 1 && e.at <= n + 1, "{text:?}: {e:?}");
        assert_eq!(e.found, text.chars().nth(e.at - 1), "{text:?}: {e:?}");
        let shown = e.to_string();
        assert!(!shown.chars().any(char::is_control), "{shown:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

    #[test]
    fn every_written_instant_reads_back(micros in 0..=LATEST_RFC3339_MICROS) {
        prop_assert_eq!(parse_time(&format_micros(micros)), Ok(micros));
    }

    #[test]
    fn every_micros_number_reads_back(micros: u64) {
        prop_assert_eq!(parse_time(&format!("@{micros}")), Ok(micros));
    }

    #[test]
    fn an_offset_names_the_same_instant(micros in 86_400_000_000..=LATEST_RFC3339_MICROS - 86_400_000_000, east in -1439i64..=1439) {
        // The local time `east` minutes east of UTC, written with its offset.
        let local = micros.checked_add_signed(east * 60_000_000).unwrap();
        let utc = format_micros(local);
        let (sign, m) = if east < 0 { ('-', -east) } else { ('+', east) };
        let text = format!("{}{sign}{:02}:{:02}", utc.trim_end_matches('Z'), m / 60, m % 60);
        prop_assert_eq!(parse_time(&text), Ok(micros), "{}", text);
    }

    #[test]
    fn any_text_never_panics(text in any::<String>()) {
        well_formed(&text);
    }

    #[test]
    fn near_misses_never_panic(micros in 0..=LATEST_RFC3339_MICROS, at in 0usize..40, with in "[0-9:.TZtz+\\-@ \\x00-\\x1f\\u{202e}é]", cut in 0usize..40) {
        // A written time with one character replaced, and cut short.
        let mut chars: Vec<char> = format_micros(micros).chars().collect();
        if at < chars.len() {
            chars[at] = with.chars().next().unwrap();
        }
        chars.truncate(cut.max(1));
        well_formed(&chars.into_iter().collect::<String>());
    }
}
