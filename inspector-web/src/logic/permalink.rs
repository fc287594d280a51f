//! Permalinks: the report (never the file bytes), as JSON, deflated and
//! base64url-encoded into the URL fragment, which browsers never send to a
//! server. Opening one shows the same findings without the files.

use felix_codec::report::Report;

/// The fragment prefix.
pub const PREFIX: &str = "#r=";
/// Largest report a permalink may inflate to.
pub const MAX_INFLATED_BYTES: usize = 16 << 20;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn b64_encode(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = c.iter().enumerate().fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=c.len() {
            let six = (n >> (18 - 6 * i)) & 63;
            s.push(char::from(ALPHABET.get(six as usize).copied().unwrap_or(b'A')));
        }
    }
    s
}

fn b64_decode(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for (i, ch) in text.bytes().enumerate() {
        let v = ALPHABET.iter().position(|a| *a == ch).ok_or_else(|| format!("character {i} ({:?}) is not base64url", char::from(ch)))?;
        acc = (acc << 6) | u32::try_from(v).unwrap_or(0);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((acc >> bits) & 0xFF).unwrap_or(0));
        }
    }
    Ok(out)
}

/// The fragment (`#r=…`) carrying `report`.
#[must_use]
pub fn encode(report: &Report) -> String {
    let json = serde_json::to_vec(report).unwrap_or_default();
    format!("{PREFIX}{}", b64_encode(&miniz_oxide::deflate::compress_to_vec(&json, 9)))
}

/// The report in a fragment.
///
/// # Errors
/// A message naming what is wrong with the link.
pub fn decode(fragment: &str) -> Result<Report, String> {
    let body = fragment.strip_prefix(PREFIX).ok_or("the link carries no report (#r=…)")?;
    let packed = b64_decode(body)?;
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, MAX_INFLATED_BYTES)
        .map_err(|e| format!("the report in the link is damaged or too large ({:?})", e.status))?;
    serde_json::from_slice(&json).map_err(|e| format!("the report in the link is not a version-1 report: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::{sample, scan::scan_all};

    #[test]
    fn a_report_survives_the_link_and_carries_no_payload_bytes() {
        let files = sample::files();
        let report = Report::new(scan_all(&files).into_iter().map(|s| s.report).collect());
        let link = encode(&report);
        assert!(link.starts_with("#r=") && link.len() < 4000, "{}", link.len());
        assert_eq!(decode(&link).unwrap(), report);
        let json = serde_json::to_string(&report).unwrap();
        assert!(!json.contains("order_id"), "payload text must never be in a report");
    }

    #[test]
    fn base64url_round_trips_every_length() {
        for n in 0..70u8 {
            let bytes: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37)).collect();
            assert_eq!(b64_decode(&b64_encode(&bytes)).unwrap(), bytes);
        }
    }

    #[test]
    fn broken_links_say_why() {
        assert_eq!(decode("#x").unwrap_err(), "the link carries no report (#r=…)");
        assert!(decode("#r=%%").unwrap_err().contains("not base64url"));
        assert!(decode("#r=AAAA").unwrap_err().contains("damaged"));
    }
}
