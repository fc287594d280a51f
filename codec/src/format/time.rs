//! Readable timestamps from `*_micros` fields, and times a person writes
//! read back ([`parse_time`]: RFC 3339 or `@MICROS`), for the CLI and the
//! browser alike. Pure arithmetic: no clock is read.

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

/// The latest time [`parse_time`] reads in RFC 3339 form (a year has four
/// digits): `9999-12-31T23:59:59.999999Z`. `@MICROS` reaches `u64::MAX`.
pub const LATEST_RFC3339_MICROS: u64 = 253_402_300_799_999_999;

/// Why a text is not a time [`parse_time`] reads: what is wrong and at which
/// character (counted from 1, in characters, not bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeError {
    /// The character the problem is at, counted from 1; one past the last
    /// character when the text ends too soon.
    pub at: usize,
    /// The character found there (`None`: the text ended).
    pub found: Option<char>,
    /// What is wrong.
    pub kind: TimeErrorKind,
}

/// What is wrong with a time's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeErrorKind {
    /// Something else was expected here (named in words: `a digit`, `'T'`).
    Expected(&'static str),
    /// A field's value is out of its range (`month`, 1, 12).
    OutOfRange {
        /// The field.
        field: &'static str,
        /// The value written.
        value: u64,
        /// Its least value.
        min: u64,
        /// Its greatest value (the month's days for a day).
        max: u64,
    },
    /// More than six digits after the point: Felix keeps microseconds.
    TooPrecise,
    /// The time is before 1970-01-01T00:00:00Z, which no timestamp can be.
    BeforeEpoch,
    /// `@MICROS` past `u64::MAX` (18446744073709551615).
    TooLate,
}

impl core::fmt::Display for TimeError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.found {
            Some(c) => write!(f, "character {} ({}): ", self.at, CharName(c))?,
            None if self.at <= 1 => f.write_str("the text is empty: ")?,
            None => write!(f, "the text ends after character {}: ", self.at - 1)?,
        }
        match self.kind {
            TimeErrorKind::Expected(what) => write!(f, "expected {what}")?,
            TimeErrorKind::OutOfRange { field, value, min, max } => write!(f, "{field} {value} is out of range {min} to {max}")?,
            TimeErrorKind::TooPrecise => f.write_str("more than 6 digits after the point: timestamps are in microseconds")?,
            TimeErrorKind::BeforeEpoch => f.write_str("the time is before 1970-01-01T00:00:00Z, where timestamps start")?,
            TimeErrorKind::TooLate => write!(f, "the number is past {} microseconds, the latest timestamp", u64::MAX)?,
        }
        f.write_str(" (a time is RFC 3339, such as 2026-12-01T14:03:00Z or 2026-12-01T16:03:00.25+02:00, or @MICROS since 1970)")
    }
}

/// A character named without printing it raw: a visible ASCII character
/// quoted, a space in words, anything else as `U+XXXX` — so an error never
/// carries a control or bidi character from its input.
struct CharName(char);

impl core::fmt::Display for CharName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            ' ' => f.write_str("a space"),
            c if c.is_ascii_graphic() => write!(f, "'{c}'"),
            c => write!(f, "U+{:04X}", u32::from(c)),
        }
    }
}

/// Reads a time given by a person: RFC 3339 (`2026-12-01T14:03:00Z`, up to
/// six digits after the point, `Z` or an offset such as `+02:00`; `T` and
/// `Z` in either case, as RFC 3339 allows; no space for `T`, no leap second
/// `:60`, which Unix time does not have) or `@MICROS` (microseconds since
/// 1970, in decimal) — to microseconds since the Unix epoch. The inverse of
/// [`format_micros`] for every time up to [`LATEST_RFC3339_MICROS`].
///
/// # Errors
/// [`TimeError`]: the character that is wrong and what was expected there,
/// a field out of range, a time before 1970 or past `u64::MAX` micros.
///
/// ```
/// use felix_codec::format::time::{parse_time, TimeErrorKind};
/// assert_eq!(parse_time("1970-01-01T00:00:01.5Z"), Ok(1_500_000));
/// assert_eq!(parse_time("2026-12-01T16:03:00+02:00"), parse_time("2026-12-01T14:03:00Z"));
/// assert_eq!(parse_time("@42"), Ok(42));
/// let e = parse_time("2026-12-01 14:03:00Z").unwrap_err();
/// assert_eq!((e.at, e.found, e.kind), (11, Some(' '), TimeErrorKind::Expected("'T' between the date and the time")));
/// ```
pub fn parse_time(text: &str) -> Result<u64, TimeError> {
    let mut c = Cursor { chars: text.chars(), at: 0 };
    if c.peek() == Some('@') {
        c.next();
        return micros_number(&mut c);
    }
    let date = rfc3339_date(&mut c)?;
    c.expect(&['T', 't'], "'T' between the date and the time")?;
    let (seconds_of_day, micros) = rfc3339_clock(&mut c)?;
    let offset = rfc3339_offset(&mut c)?;
    c.end()?;
    let seconds = date * 86_400 + seconds_of_day - offset;
    let seconds = u64::try_from(seconds).map_err(|_| TimeError { at: 1, found: text.chars().next(), kind: TimeErrorKind::BeforeEpoch })?;
    Ok(seconds * 1_000_000 + micros)
}

/// The characters of a time's text, counted as they are taken.
struct Cursor<'a> {
    chars: core::str::Chars<'a>,
    /// Characters taken so far.
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.clone().next()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.chars.next();
        self.at += usize::from(c.is_some());
        c
    }

    /// An error at the next character.
    fn error(&self, kind: TimeErrorKind) -> TimeError {
        TimeError { at: self.at + 1, found: self.peek(), kind }
    }

    fn expect(&mut self, one_of: &[char], what: &'static str) -> Result<char, TimeError> {
        match self.peek() {
            Some(c) if one_of.contains(&c) => Ok(self.next().unwrap_or(c)),
            _ => Err(self.error(TimeErrorKind::Expected(what))),
        }
    }

    fn end(&self) -> Result<(), TimeError> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.error(TimeErrorKind::Expected("the end of the time"))),
        }
    }

    /// Exactly `n` digits as a number in `min..=max`, named `field`.
    fn field(&mut self, n: usize, field: &'static str, (min, max): (u64, u64)) -> Result<u64, TimeError> {
        let (at, found) = (self.at + 1, self.peek());
        let mut value = 0u64;
        for _ in 0..n {
            value = value * 10 + u64::from(self.digit("a digit")?);
        }
        if value < min || value > max {
            return Err(TimeError { at, found, kind: TimeErrorKind::OutOfRange { field, value, min, max } });
        }
        Ok(value)
    }

    /// One ASCII digit, or the error naming `what` was expected.
    fn digit(&mut self, what: &'static str) -> Result<u32, TimeError> {
        match self.peek().and_then(|c| c.to_digit(10)) {
            Some(d) => {
                self.next();
                Ok(d)
            }
            None => Err(self.error(TimeErrorKind::Expected(what))),
        }
    }
}

/// `YYYY-MM-DD` as days since 1970-01-01 (negative before it).
fn rfc3339_date(c: &mut Cursor<'_>) -> Result<i64, TimeError> {
    let year = c.field(4, "year", (0, 9999))?;
    c.expect(&['-'], "'-' after the year")?;
    let month = c.field(2, "month", (1, 12))?;
    c.expect(&['-'], "'-' after the month")?;
    let day = c.field(2, "day", (1, days_in_month(year, month)))?;
    Ok(days_from_civil(year, month, day))
}

/// `HH:MM:SS[.ffffff]` as seconds of the day and microseconds.
fn rfc3339_clock(c: &mut Cursor<'_>) -> Result<(i64, u64), TimeError> {
    let hour = c.field(2, "hour", (0, 23))?;
    c.expect(&[':'], "':' after the hour")?;
    let minute = c.field(2, "minute", (0, 59))?;
    c.expect(&[':'], "':' after the minutes")?;
    let second = c.field(2, "second", (0, 59))?;
    let mut micros = 0u64;
    if c.peek() == Some('.') {
        c.next();
        micros = u64::from(c.digit("a digit after the point")?);
        let mut digits = 1;
        while c.peek().is_some_and(|ch| ch.is_ascii_digit()) {
            if digits == 6 {
                return Err(c.error(TimeErrorKind::TooPrecise));
            }
            micros = micros * 10 + u64::from(c.digit("a digit")?);
            digits += 1;
        }
        micros *= 10u64.pow(6 - digits);
    }
    // Each at most 59 or 23: the sum fits.
    let seconds = i64::try_from(hour * 3600 + minute * 60 + second).unwrap_or(0);
    Ok((seconds, micros))
}

/// `Z` or `±HH:MM`, as seconds east of UTC.
fn rfc3339_offset(c: &mut Cursor<'_>) -> Result<i64, TimeError> {
    let sign = c.expect(&['Z', 'z', '+', '-'], "'Z' or an offset such as +02:00 after the time")?;
    if matches!(sign, 'Z' | 'z') {
        return Ok(0);
    }
    let hours = c.field(2, "offset hour", (0, 23))?;
    c.expect(&[':'], "':' inside the offset")?;
    let minutes = c.field(2, "offset minute", (0, 59))?;
    let seconds = i64::try_from(hours * 3600 + minutes * 60).unwrap_or(0);
    Ok(if sign == '-' { -seconds } else { seconds })
}

/// `MICROS` after the `@`: decimal digits, up to `u64::MAX`.
fn micros_number(c: &mut Cursor<'_>) -> Result<u64, TimeError> {
    let (at, found) = (c.at + 1, c.peek());
    let mut value = u64::from(c.digit("a digit after '@'")?);
    while c.peek().is_some() {
        let d = c.digit("a digit or the end of the time")?;
        value =
            value.checked_mul(10).and_then(|v| v.checked_add(u64::from(d))).ok_or(TimeError { at, found, kind: TimeErrorKind::TooLate })?;
    }
    Ok(value)
}

fn is_leap(year: u64) -> bool {
    year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400))
}

fn days_in_month(year: u64, month: u64) -> u64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// days-from-civil, the inverse of the arithmetic in [`format_micros`]).
fn days_from_civil(year: u64, month: u64, day: u64) -> i64 {
    // year ≤ 9999, month 1..=12, day 1..=31: every value below fits an i64.
    let (year, month, day) = (year as i64, month as i64, day as i64);
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::{format_micros, parse_time, TimeError, TimeErrorKind, LATEST_RFC3339_MICROS};
    use alloc::string::ToString;

    fn fails(text: &str) -> (usize, Option<char>, TimeErrorKind) {
        let e = parse_time(text).unwrap_err();
        (e.at, e.found, e.kind)
    }

    #[test]
    fn rfc3339_and_micros_read_as_the_same_instant() {
        let at = 1_796_133_780_000_000; // 2026-12-01T14:03:00Z
        for text in [
            "2026-12-01T14:03:00Z",
            "2026-12-01t14:03:00z",
            "2026-12-01T16:03:00+02:00",
            "2026-12-01T09:33:00-04:30",
            "2026-12-01T14:03:00.000000Z",
            "2026-12-01T14:03:00-00:00",
            "@1796133780000000",
        ] {
            assert_eq!(parse_time(text), Ok(at), "{text}");
        }
        assert_eq!(parse_time("2026-12-01T14:03:00.25Z"), Ok(at + 250_000));
        assert_eq!(parse_time("2026-12-01T14:03:00.000001Z"), Ok(at + 1));
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(parse_time("2000-02-29T00:00:00Z"), Ok(951_782_400_000_000));
        assert_eq!(parse_time("9999-12-31T23:59:59.999999Z"), Ok(LATEST_RFC3339_MICROS));
        assert_eq!(parse_time("@18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_time("@0"), Ok(0));
    }

    #[test]
    fn a_wrong_time_names_its_character_and_what_was_expected() {
        let expected = TimeErrorKind::Expected;
        assert_eq!(fails(""), (1, None, expected("a digit")));
        assert_eq!(fails("2026-12-01 14:03:00Z"), (11, Some(' '), expected("'T' between the date and the time")));
        assert_eq!(fails("2026/12/01T14:03:00Z"), (5, Some('/'), expected("'-' after the year")));
        assert_eq!(fails("2026-12-01T14:03:00"), (20, None, expected("'Z' or an offset such as +02:00 after the time")));
        assert_eq!(fails("2026-12-01T14:03:00Z "), (21, Some(' '), expected("the end of the time")));
        assert_eq!(fails("2026-12-01T14:03:00.Z"), (21, Some('Z'), expected("a digit after the point")));
        assert_eq!(fails("2026-12-01T14:03:00.1234567Z"), (27, Some('7'), TimeErrorKind::TooPrecise));
        assert_eq!(fails("2026-13-01T14:03:00Z"), (6, Some('1'), TimeErrorKind::OutOfRange { field: "month", value: 13, min: 1, max: 12 }));
        assert_eq!(fails("2026-02-29T00:00:00Z"), (9, Some('2'), TimeErrorKind::OutOfRange { field: "day", value: 29, min: 1, max: 28 }));
        assert_eq!(
            fails("2026-12-01T23:59:60Z"),
            (18, Some('6'), TimeErrorKind::OutOfRange { field: "second", value: 60, min: 0, max: 59 })
        );
        assert_eq!(
            fails("2026-12-01T14:03:00+24:00"),
            (21, Some('2'), TimeErrorKind::OutOfRange { field: "offset hour", value: 24, min: 0, max: 23 })
        );
        assert_eq!(fails("1969-12-31T23:59:59Z"), (1, Some('1'), TimeErrorKind::BeforeEpoch));
        assert_eq!(fails("1970-01-01T00:30:00+01:00"), (1, Some('1'), TimeErrorKind::BeforeEpoch));
        assert_eq!(parse_time("1969-12-31T23:30:00-01:00"), Ok(1_800_000_000));
        assert_eq!(fails("@"), (2, None, expected("a digit after '@'")));
        assert_eq!(fails("@12x"), (4, Some('x'), expected("a digit or the end of the time")));
        assert_eq!(fails("@-1"), (2, Some('-'), expected("a digit after '@'")));
        assert_eq!(fails("@18446744073709551616"), (2, Some('1'), TimeErrorKind::TooLate));
        // Characters, not bytes: the é is one.
        assert_eq!(fails("2é26-12-01T14:03:00Z"), (2, Some('é'), expected("a digit")));
        assert_eq!(fails("２026-12-01T14:03:00Z"), (1, Some('２'), expected("a digit")), "only ASCII digits");
    }

    #[test]
    fn an_error_says_where_in_words_and_never_prints_a_control_character() {
        let shown = parse_time("2026-12-01\u{1b}[2J").unwrap_err().to_string();
        assert!(shown.starts_with("character 11 (U+001B): "), "{shown}");
        let shown = parse_time("2026-12-01\u{202e}14:03:00Z").unwrap_err().to_string();
        assert!(shown.starts_with("character 11 (U+202E): expected 'T' between the date and the time"), "{shown}");
        assert!(!shown.contains('\u{202e}'));
        let shown = parse_time("2026-12-01T14").unwrap_err().to_string();
        assert!(shown.starts_with("the text ends after character 13: expected ':' after the hour"), "{shown}");
        assert!(parse_time("").unwrap_err().to_string().starts_with("the text is empty"));
        let e = TimeError { at: 6, found: Some('1'), kind: TimeErrorKind::OutOfRange { field: "month", value: 13, min: 1, max: 12 } };
        assert!(e.to_string().starts_with("character 6 ('1'): month 13 is out of range 1 to 12"));
    }

    #[test]
    fn every_day_and_second_reads_back_as_written() {
        // Every day from 1970 to 2100 at a varying time of day, and the last instants of the range.
        let mut micros = 0u64;
        while micros < 4_102_444_800_000_000 {
            assert_eq!(parse_time(&format_micros(micros)), Ok(micros));
            micros += 86_400_000_000 + 3_723_000_017;
        }
        for m in [LATEST_RFC3339_MICROS, LATEST_RFC3339_MICROS - 1, 0, 1, 999_999] {
            assert_eq!(parse_time(&format_micros(m)), Ok(m));
        }
        assert!(parse_time(&format_micros(LATEST_RFC3339_MICROS + 1)).is_err(), "a five-digit year is not RFC 3339");
    }

    #[test]
    fn dates_read_as_dates() {
        assert_eq!(format_micros(0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(format_micros(1_793_523_600_250_000), "2026-11-01T09:00:00.250000Z");
        assert_eq!(format_micros(951_782_400_000_000), "2000-02-29T00:00:00.000000Z");
        assert!(format_micros(u64::MAX).ends_with('Z'), "never panics");
    }
}
