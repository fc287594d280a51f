//! A shard as a whole: its files inspected together ([`inspect`]), the
//! recovery plan drawn from their facts ([`recovery`]), and two replicas of
//! it compared record by record ([`diff`]).

pub mod diff;
pub mod inspect;
pub mod recovery;
