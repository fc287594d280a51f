//! Two ways to read a file's bytes: the strict reader ([`reader`]), which
//! stops at the first problem (what recovery uses), and the scanners
//! ([`scan`]), which never fail and label every byte, resynchronising after
//! damage (what `inspect` and the browser use). Both share the field decoders.
//! [`time`]: the span of timestamps a file holds, and the one rule for the
//! first record at or after a time.

pub mod reader;
pub mod scan;
pub mod time;
