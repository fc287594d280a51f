//! Shard directory names: a readable rendering of the shard key plus an
//! FNV-1a 64 hash of the exact key.
//!
//! ```text
//! acme_default_orders_0-0d3aed4b998d2798
//! └─ readable part ───┘ └─ 16 hex digits ┘
//! ```
//!
//! The readable part is `tenant_namespace_stream_shard` with every character
//! outside `[A-Za-z0-9-]` replaced by `_`, each component cut to
//! [`MAX_COMPONENT_CHARS`] characters, and an empty component written `_`.
//! It is lossy; the hash guarantees uniqueness. These rules are the broker's
//! (upstream `disk_log/layout.rs`) exactly: both must find the same directory. The
//! hash input is each string component as a big-endian `u64` length followed
//! by its bytes, then the shard number as a big-endian `u32`. No dot can ever
//! appear, so `..` is unrepresentable rather than escaped.
//!
//! # Example
//!
//! ```
//! use felix_codec::format::shard_name::{parse_dir_name, ShardKey};
//! let key = ShardKey { tenant: "acme", namespace: "default", stream: "orders", shard: 0 };
//! let dir = key.dir_name();
//! let (readable, hash) = parse_dir_name(&dir).unwrap();
//! assert_eq!((readable, hash), ("acme_default_orders_0", key.hash()));
//! ```

use alloc::string::String;
use core::fmt::Write as _;

/// Longest readable rendering of one component, in characters (upstream's value).
pub const MAX_COMPONENT_CHARS: usize = 32;
/// Length of the hash suffix in hex digits.
pub const HASH_HEX_DIGITS: usize = 16;

const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The key of one shard of a stream.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ShardKey<'a> {
    /// Tenant.
    pub tenant: &'a str,
    /// Namespace.
    pub namespace: &'a str,
    /// Stream.
    pub stream: &'a str,
    /// Shard number.
    pub shard: u32,
}

fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(hash, |h, b| (h ^ u64::from(*b)).wrapping_mul(FNV_PRIME))
}

impl ShardKey<'_> {
    /// FNV-1a 64 over the key's exact bytes.
    #[must_use]
    pub fn hash(&self) -> u64 {
        let mut h = FNV_OFFSET_BASIS;
        for part in [self.tenant, self.namespace, self.stream] {
            h = fnv1a(h, &(part.len() as u64).to_be_bytes());
            h = fnv1a(h, part.as_bytes());
        }
        fnv1a(h, &self.shard.to_be_bytes())
    }

    /// The directory name, e.g. `acme_default_orders_0-0d3aed4b998d2798`.
    #[must_use]
    pub fn dir_name(&self) -> String {
        let mut out = String::new();
        for part in [self.tenant, self.namespace, self.stream] {
            if part.is_empty() {
                out.push('_');
            }
            for c in part.chars().take(MAX_COMPONENT_CHARS) {
                out.push(if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' });
            }
            out.push('_');
        }
        let _ = write!(out, "{}-{:016x}", self.shard, self.hash());
        out
    }
}

/// Splits a directory name into its readable part and hash; `None` when it
/// is not of the shard-name form.
#[must_use]
pub fn parse_dir_name(name: &str) -> Option<(&str, u64)> {
    let (readable, hex) = name.rsplit_once('-')?;
    if hex.len() != HASH_HEX_DIGITS || readable.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    if !readable.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        return None;
    }
    u64::from_str_radix(hex, 16).ok().map(|h| (readable, h))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    #[test]
    fn spec_example_is_reproduced() {
        let key = ShardKey { tenant: "acme", namespace: "default", stream: "orders", shard: 0 };
        assert_eq!(key.dir_name(), "acme_default_orders_0-0d3aed4b998d2798");
        assert_eq!(parse_dir_name(&key.dir_name()), Some(("acme_default_orders_0", 0x0d3a_ed4b_998d_2798)));
    }

    #[test]
    fn dots_and_separators_are_unrepresentable() {
        let key = ShardKey { tenant: "..", namespace: "a/b", stream: "é.x", shard: 7 };
        let name = key.dir_name();
        assert!(!name.contains('.') && !name.contains('/'), "{name}");
        assert!(name.starts_with("___a_b___x_7-"), "{name}");
    }

    #[test]
    fn lossy_names_stay_unique_through_the_hash() {
        let a = ShardKey { tenant: "a.b", namespace: "c", stream: "d", shard: 0 };
        let b = ShardKey { tenant: "a_b", namespace: "c", stream: "d", shard: 0 };
        assert_ne!(a.dir_name(), b.dir_name());
        let c = ShardKey { tenant: "ab", namespace: "", stream: "cd", shard: 0 };
        let d = ShardKey { tenant: "a", namespace: "b", stream: "cd", shard: 0 };
        assert_ne!(c.hash(), d.hash(), "length prefixes keep component boundaries");
    }

    #[test]
    fn the_brokers_layout_is_reproduced_exactly() {
        // Pinned by the broker's own tests (upstream disk_log/layout.rs): changing
        // any of these orphans every segment already on disk.
        let k = |t, n, s, i| ShardKey { tenant: t, namespace: n, stream: s, shard: i };
        assert_eq!(k("acme", "default", "orders", 3).dir_name(), "acme_default_orders_3-0d3af04b998d2cb1");
        assert!(k("", "", "", 0).dir_name().starts_with("______0-"), "an empty component is written `_`");
        let long = "x".repeat(200);
        assert!(k(&long, "n", "s", 0).dir_name().starts_with(&format!("{}_n_s_0-", "x".repeat(32))));
        assert!(k("ééé", "n", "s", 0).dir_name().starts_with("____n_s_0-"), "characters, not bytes");
    }

    #[test]
    fn long_components_are_truncated() {
        let long = "x".repeat(500);
        let key = ShardKey { tenant: &long, namespace: "n", stream: "s", shard: 1 };
        assert_eq!(key.dir_name().len(), MAX_COMPONENT_CHARS + "_n_s_1-".len() + 16);
    }
}
