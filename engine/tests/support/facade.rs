//! Reading a broker log back whole, and publishing to it from many tasks,
//! for the facade's tests.

use felix_engine::broker::{AppendOnlyLog, AppendRecord, DiskLog, ReadRange};

/// Every record of `log`, oldest first: `(offset, payload as text)`.
#[allow(dead_code)]
pub async fn read_all(log: &DiskLog) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    let mut at = log.base_offset();
    loop {
        let batch = log.read_range(ReadRange { start: at, max_bytes: 1 << 20 }).await.unwrap();
        let Some(last) = batch.last() else { return out };
        at = last.offset + 1;
        out.extend(batch.into_iter().map(|r| (r.offset, String::from_utf8(r.payload.to_vec()).unwrap())));
    }
}

/// `publishers` tasks appending `each` one-record batches apiece to an
/// `OnCommit` log at once: none may be stranded, and each acknowledgement
/// must come after the flush that covers it.
#[allow(dead_code)]
pub async fn publish(log: &DiskLog, publishers: u64, each: u64) {
    let tasks: Vec<_> = (0..publishers)
        .map(|p| {
            let log = log.clone();
            tokio::spawn(async move {
                for i in 0..each {
                    let record = AppendRecord { payload: format!("{p}-{i}").into(), timestamp_micros: 1 };
                    let r = log.append(&[record]).await.unwrap();
                    assert!(log.durable_offset() > r.last_offset, "publisher {p}'s append {i} acknowledged before its flush");
                }
            })
        })
        .collect();
    for task in tasks {
        tokio::time::timeout(std::time::Duration::from_secs(60), task).await.expect("a publisher was stranded").unwrap();
    }
}
