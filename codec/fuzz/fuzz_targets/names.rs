//! Name parsing never panics; every shard name is parseable and dot-free.
#![no_main]
use felix_codec::format::file_name::parse_file_name;
use felix_codec::format::shard_name::{parse_dir_name, ShardKey};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = parse_file_name(&text);
    let _ = parse_dir_name(&text);
    let mut parts = text.splitn(3, '/');
    let key = ShardKey {
        tenant: parts.next().unwrap_or(""),
        namespace: parts.next().unwrap_or(""),
        stream: parts.next().unwrap_or(""),
        shard: data.len() as u32,
    };
    let name = key.dir_name();
    assert!(!name.contains('.') && !name.contains('/'));
    assert_eq!(parse_dir_name(&name).map(|(_, h)| h), Some(key.hash()));
});
