//! The one way a page link carries a document: a prefix (`#s=`, `#d=`) and
//! base64url(raw deflate(JSON)) in the URL fragment, which browsers never
//! send to a server. Report permalinks and diff links both go through here,
//! so the caps are checked alike both ways: when a link is made (the sender
//! is told to share the JSON instead) and when one is opened (before any
//! byte is inflated past the cap).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use miniz_oxide::inflate::TINFLStatus;

use std::fmt;

use super::open_error::{OpenError, Origin};
use super::shared::Refused;

/// Why a link could not be made (the sender is told how to share instead).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkError {
    /// The document's JSON is larger than a link carries.
    TooLarge {
        /// What is shared ("this report").
        document: &'static str,
        /// Its JSON, in bytes.
        bytes: usize,
        /// The cap.
        max: usize,
        /// How to share it instead.
        instead: &'static str,
    },
    /// The link would be longer than a link may be.
    TooLong {
        /// Its length, in characters.
        chars: usize,
        /// The cap.
        max: usize,
        /// How to share it instead.
        instead: &'static str,
    },
    /// A report with more files or findings than a link carries.
    TooMany {
        /// Its files.
        files: usize,
        /// Its findings.
        findings: usize,
        /// Most files a link carries.
        max_files: usize,
        /// Most findings a link carries.
        max_findings: usize,
    },
    /// What the link would say of itself (the sender, the bytes pointed at) is refused.
    CannotSay(Refused),
    /// The document did not become JSON (serde's words).
    Json(String),
}

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge { document, bytes, max, instead } => {
                write!(f, "{document} is {bytes} bytes of JSON; a link carries at most {max} — {instead}")
            }
            Self::TooLong { chars, max, instead } => write!(f, "the link would be {chars} characters; a link is at most {max} — {instead}"),
            Self::TooMany { files, findings, max_files, max_findings } => write!(
                f,
                "this report has {files} files and {findings} findings; a link carries at most {max_files} files and {max_findings} findings — share the JSON report instead"
            ),
            Self::CannotSay(r) => write!(f, "the link cannot say that: {} {}", r.field, r.problem),
            Self::Json(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for LinkError {}

/// What a kind of link may carry.
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    /// Longest fragment, prefix included, in characters.
    pub fragment_chars: usize,
    /// Largest JSON it may inflate to, in bytes.
    pub inflated_bytes: usize,
}

/// The fragment `prefix` + base64url(deflate(`json`)).
///
/// # Errors
/// When `json` or the fragment is over `caps`; `document` names what is
/// shared ("this report"), `instead` how to share it instead.
pub fn pack(prefix: &str, json: &[u8], caps: Caps, document: &'static str, instead: &'static str) -> Result<String, LinkError> {
    if json.len() > caps.inflated_bytes {
        return Err(LinkError::TooLarge { document, bytes: json.len(), max: caps.inflated_bytes, instead });
    }
    let link = format!("{prefix}{}", URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(json, 9)));
    if link.len() > caps.fragment_chars {
        return Err(LinkError::TooLong { chars: link.len(), max: caps.fragment_chars, instead });
    }
    Ok(link)
}

/// The JSON inside `fragment`, whose prefix (`prefix_len` bytes, ASCII) the
/// caller recognised.
///
/// # Errors
/// What is wrong, in words ([`OpenError`]) — the length, nothing after the
/// prefix, the character that is not base64url (counted from the fragment's
/// start), compressed data cut short or damaged, or inflating past the cap —
/// with `from` naming the link.
pub fn unpack(fragment: &str, prefix_len: usize, caps: Caps, from: &Origin) -> Result<Vec<u8>, OpenError> {
    if fragment.len() > caps.fragment_chars {
        return Err(OpenError::TooLong { from: from.clone(), chars: fragment.chars().count(), max: caps.fragment_chars });
    }
    let body = fragment.get(prefix_len..).unwrap_or_default();
    if body.is_empty() {
        return Err(OpenError::Empty { from: from.clone() });
    }
    if let Some((i, c)) = body.char_indices().find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_')) {
        return Err(OpenError::NotBase64 { from: from.clone(), at: i + prefix_len, character: c });
    }
    // Every character is base64url: what fails now is a length no encoder
    // makes or stray bits in the last character — a link that lost its end.
    let packed = URL_SAFE_NO_PAD.decode(body).map_err(|_| OpenError::CutShort { from: from.clone() })?;
    miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, caps.inflated_bytes).map_err(|e| match e.status {
        TINFLStatus::HasMoreOutput => OpenError::InflatesPast { from: from.clone(), max: caps.inflated_bytes },
        // The data ended before the last block did.
        TINFLStatus::FailedCannotMakeProgress | TINFLStatus::NeedsMoreInput => OpenError::CutShort { from: from.clone() },
        _ => OpenError::Damaged { from: from.clone() },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPS: Caps = Caps { fragment_chars: 64, inflated_bytes: 100 };

    #[test]
    fn what_is_packed_unpacks_and_every_cap_holds_both_ways() {
        let link = pack("#x=", b"{\"a\":1}", CAPS, "this thing", "share the file").unwrap();
        let from = Origin::Link;
        assert_eq!(unpack(&link, 3, CAPS, &from).unwrap(), b"{\"a\":1}");
        assert_eq!(
            pack("#x=", &[b' '; 101], CAPS, "this thing", "share the file").unwrap_err(),
            LinkError::TooLarge { document: "this thing", bytes: 101, max: 100, instead: "share the file" }
        );
        assert_eq!(
            pack("#x=", &[b' '; 101], CAPS, "this thing", "share the file").unwrap_err().to_string(),
            "this thing is 101 bytes of JSON; a link carries at most 100 — share the file"
        );
        let incompressible: Vec<u8> = (0..100u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8).collect();
        let long = pack("#x=", &incompressible, CAPS, "this thing", "share the file").unwrap_err();
        assert!(matches!(long, LinkError::TooLong { max: 64, .. }), "{long:?}");
        assert!(long.to_string().starts_with("the link would be") && long.to_string().ends_with("; a link is at most 64 — share the file"));
        let bomb = format!("#x={}", URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(&[b' '; 101], 9)));
        assert_eq!(
            unpack(&bomb, 3, CAPS, &from).unwrap_err().to_string(),
            "this link's report inflates past 100 bytes, more than a link may carry"
        );
        assert_eq!(
            unpack(&format!("#x={}", "A".repeat(62)), 3, CAPS, &from).unwrap_err(),
            OpenError::TooLong { from: Origin::Link, chars: 65, max: 64 }
        );
        assert_eq!(
            unpack("#x=ab%cd", 3, CAPS, &from).unwrap_err().to_string(),
            "character 5 of this link's report (\u{2068}%\u{2069}) is not base64url"
        );
        assert_eq!(unpack("#x=abcé", 3, CAPS, &from).unwrap_err(), OpenError::NotBase64 { from: Origin::Link, at: 6, character: 'é' });
    }

    #[test]
    fn a_link_cut_short_or_changed_says_so_in_words() {
        let from = Origin::Link;
        assert_eq!(unpack("#x=", 3, CAPS, &from).unwrap_err(), OpenError::Empty { from: Origin::Link });
        assert_eq!(
            unpack("#x=", 3, CAPS, &from).unwrap_err().to_string(),
            "this link's report is empty: nothing follows the link's prefix (was the whole link copied?)"
        );
        // The deflate stream of a real link, cut at every length: never the decompressor's words.
        let link = pack("#x=", b"{\"a\":[1,2,3,4,5,6,7,8,9,10,11,12]}", CAPS, "this thing", "share the file").unwrap();
        for end in 4..link.len() {
            let e = unpack(&link[..end], 3, CAPS, &from).unwrap_err();
            assert!(matches!(e, OpenError::CutShort { .. } | OpenError::Damaged { .. }), "{end}: {e:?}");
            assert!(!e.to_string().contains("Failed") && !e.to_string().contains("deflate"), "{e}");
        }
        assert_eq!(
            unpack("#x=AAAA", 3, CAPS, &from).unwrap_err().to_string(),
            "this link's report is cut short: its compressed data ends too early (was the whole link copied?)"
        );
        assert_eq!(
            unpack("#x=_____w", 3, CAPS, &from).unwrap_err().to_string(),
            "this link's report is damaged: its compressed data is not valid (was the link changed?)"
        );
    }
}
