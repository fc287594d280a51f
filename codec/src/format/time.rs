//! Readable timestamps from `*_micros` fields, for the CLI and the browser
//! alike. Pure arithmetic: no clock is read.

use alloc::format;
use alloc::string::String;

/// `2026-11-29T14:21:27.123456Z` from microseconds since the Unix epoch
/// (proleptic Gregorian calendar, Howard Hinnant's civil-from-days).
#[must_use]
pub fn format_micros(micros: u64) -> String {
    let secs = micros / 1_000_000;
    let (days, rem) = (i64::try_from(secs / 86_400).unwrap_or(i64::MAX / 2), secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:06}Z", rem / 3600, rem % 3600 / 60, rem % 60, micros % 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::format_micros;

    #[test]
    fn dates_read_as_dates() {
        assert_eq!(format_micros(0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(format_micros(1_793_523_600_250_000), "2026-11-01T09:00:00.250000Z");
        assert_eq!(format_micros(951_782_400_000_000), "2000-02-29T00:00:00.000000Z");
        assert!(format_micros(u64::MAX).ends_with('Z'), "never panics");
    }
}
