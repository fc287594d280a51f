//! Which of several answers in flight is still wanted: an answer that
//! arrives after a newer question, or after what it was asked for went
//! away (another file shown, the view closed), is dropped. The hex view's
//! jump to an offset past the held rows reads the file and answers later.

use std::cell::Cell;
use std::rc::Rc;

/// The questions asked so far; shared by whoever asks and whoever answers.
#[derive(Clone, Debug, Default)]
pub struct Latest(Rc<Cell<u64>>);

/// One question: its answer is wanted while no newer one was asked.
#[derive(Clone, Debug)]
pub struct Ticket {
    of: Latest,
    n: u64,
}

impl Latest {
    /// Asks a new question: every earlier ticket is stale from now on.
    #[must_use]
    pub fn ask(&self) -> Ticket {
        self.supersede();
        Ticket { of: self.clone(), n: self.0.get() }
    }

    /// Makes every ticket stale (what they asked about went away).
    pub fn supersede(&self) {
        self.0.set(self.0.get().wrapping_add(1));
    }
}

impl Ticket {
    /// Whether this is still the newest question.
    #[must_use]
    pub fn is_current(&self) -> bool {
        self.of.0.get() == self.n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_newest_question_s_answer_is_wanted() {
        let latest = Latest::default();
        let first = latest.ask();
        assert!(first.is_current());
        let second = latest.ask();
        assert!(!first.is_current(), "a newer jump was asked");
        assert!(second.is_current());
        latest.supersede();
        assert!(!second.is_current(), "another file is shown");
        let third = latest.clone().ask();
        assert!(third.is_current() && !second.is_current());
    }
}
