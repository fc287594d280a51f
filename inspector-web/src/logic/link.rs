//! The one way a page link carries a document: a prefix (`#s=`, `#d=`) and
//! base64url(raw deflate(JSON)) in the URL fragment, which browsers never
//! send to a server. Report permalinks and diff links both go through here,
//! so the caps are checked alike both ways: when a link is made (the sender
//! is told to share the JSON instead) and when one is opened (before any
//! byte is inflated past the cap).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use super::message::quote;

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
pub fn pack(prefix: &str, json: &[u8], caps: Caps, document: &str, instead: &str) -> Result<String, String> {
    if json.len() > caps.inflated_bytes {
        return Err(format!("{document} is {} bytes of JSON; a link carries at most {} — {instead}", json.len(), caps.inflated_bytes));
    }
    let link = format!("{prefix}{}", URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(json, 9)));
    if link.len() > caps.fragment_chars {
        return Err(format!("the link would be {} characters; a link is at most {} — {instead}", link.len(), caps.fragment_chars));
    }
    Ok(link)
}

/// The JSON inside `fragment`, whose prefix (`prefix_len` bytes, ASCII) the
/// caller recognised.
///
/// # Errors
/// A sentence naming what is wrong — the length, the character that is not
/// base64url (counted from the fragment's start), the compressed data — with
/// `what` naming the link ("the diff link").
pub fn unpack(fragment: &str, prefix_len: usize, caps: Caps, what: &str) -> Result<Vec<u8>, String> {
    if fragment.len() > caps.fragment_chars {
        return Err(format!("{what} is {} characters long; a link may carry at most {}", fragment.len(), caps.fragment_chars));
    }
    let body = fragment.get(prefix_len..).ok_or_else(|| format!("{what} has no body"))?;
    if let Some((i, c)) = body.char_indices().find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_')) {
        return Err(format!("character {} of {what} ({}) is not base64url", i + prefix_len, quote(&c.to_string())));
    }
    let packed = URL_SAFE_NO_PAD.decode(body).map_err(|e| format!("{what} is not base64url: {e}"))?;
    miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, caps.inflated_bytes).map_err(|e| match e.status {
        miniz_oxide::inflate::TINFLStatus::HasMoreOutput => {
            format!("{what} inflates past {} bytes, more than a link may carry", caps.inflated_bytes)
        }
        status => format!("{what} is damaged (deflate: {status:?})"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPS: Caps = Caps { fragment_chars: 64, inflated_bytes: 100 };

    #[test]
    fn what_is_packed_unpacks_and_every_cap_holds_both_ways() {
        let link = pack("#x=", b"{\"a\":1}", CAPS, "this thing", "share the file").unwrap();
        assert_eq!(unpack(&link, 3, CAPS, "the link").unwrap(), b"{\"a\":1}");
        assert_eq!(
            pack("#x=", &[b' '; 101], CAPS, "this thing", "share the file").unwrap_err(),
            "this thing is 101 bytes of JSON; a link carries at most 100 — share the file"
        );
        let incompressible: Vec<u8> = (0..100u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8).collect();
        assert!(pack("#x=", &incompressible, CAPS, "this thing", "share the file").unwrap_err().starts_with("the link would be"));
        let bomb = format!("#x={}", URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(&[b' '; 101], 9)));
        assert_eq!(unpack(&bomb, 3, CAPS, "the link").unwrap_err(), "the link inflates past 100 bytes, more than a link may carry");
        assert_eq!(
            unpack(&format!("#x={}", "A".repeat(62)), 3, CAPS, "the link").unwrap_err(),
            "the link is 65 characters long; a link may carry at most 64"
        );
        assert_eq!(unpack("#x=ab%cd", 3, CAPS, "the link").unwrap_err(), "character 5 of the link (\u{2068}%\u{2069}) is not base64url");
        assert_eq!(unpack("#x=abcé", 3, CAPS, "the link").unwrap_err(), "character 6 of the link (\u{2068}é\u{2069}) is not base64url");
    }
}
