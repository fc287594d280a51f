//! A shard as a whole: its files inspected together ([`inspect`]), driven
//! by the one shard-scan state machine ([`scan`]) every reader uses, the
//! recovery plan drawn from their facts ([`recovery`]), which newest
//! segments never took effect ([`tail`]), and two replicas of it compared
//! record by record ([`diff`]).

pub mod diff;
pub mod inspect;
pub mod recovery;
pub mod scan;
pub mod tail;
