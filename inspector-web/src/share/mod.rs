//! What leaves the page and comes back: links and the permalink, the shared
//! report, diff and plan, the Markdown export, and opening any of them (with
//! the errors that say why one was refused).

pub mod diff_share;
pub mod link;
pub mod markdown;
pub mod open_error;
pub mod opened;
pub mod permalink;
pub mod plan_share;
pub mod shared;
