//! The worker: the messages between page and worker (`protocol`, over the
//! `wire` encoding), the page's side that starts jobs and hears their answers
//! (`runner`), and the loop that reads files and drives the scans (`driver`),
//! which the worker binary `bin/felix-scan-worker.rs` runs; why a job
//! stopped (`error`), on both sides.

pub mod driver;
pub mod error;
pub mod protocol;
pub mod runner;
pub mod wire;
