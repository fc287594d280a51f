//! What keys mean: page-wide shortcuts and navigation inside a list or grid,
//! and keeping a virtualised list's cursor in view.

/// A navigation key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Nav {
    /// ↑
    Up,
    /// ↓
    Down,
    /// ←
    Left,
    /// →
    Right,
    /// Page Up
    PageUp,
    /// Page Down
    PageDown,
    /// Home
    Home,
    /// End
    End,
}

/// The navigation a key name (`KeyboardEvent.key`) stands for.
#[must_use]
pub fn nav(key: &str) -> Option<Nav> {
    Some(match key {
        "ArrowUp" => Nav::Up,
        "ArrowDown" => Nav::Down,
        "ArrowLeft" => Nav::Left,
        "ArrowRight" => Nav::Right,
        "PageUp" => Nav::PageUp,
        "PageDown" => Nav::PageDown,
        "Home" => Nav::Home,
        "End" => Nav::End,
        _ => return None,
    })
}

/// The navigation a key is inside a grid of rows (the overview, the
/// problems, the records): up and down, by page, to either end. ← and → are
/// left to the browser, which scrolls a grid wider than its box sideways.
#[must_use]
pub fn row_nav(key: &str) -> Option<Nav> {
    nav(key).filter(|n| !matches!(n, Nav::Left | Nav::Right))
}

/// The row of a list of `len` rows that holds the list's one Tab stop (a
/// roving tabindex): the row the keyboard last moved to, else the selected
/// row, else the first; `None` for an empty list.
#[must_use]
pub fn tab_stop(cursor: Option<usize>, selected: Option<usize>, len: usize) -> Option<usize> {
    let last = len.checked_sub(1)?;
    Some(cursor.or(selected).unwrap_or(0).min(last))
}

/// A page-wide shortcut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shortcut {
    /// The next problem (`n`, `j`, F8).
    Next,
    /// The previous problem (`p`, `k`, Shift+F8).
    Previous,
}

/// The shortcut a key press is, unless it was typed into a text field
/// (`target` is the focused element's tag name) or with a modifier.
#[must_use]
pub fn shortcut(key: &str, target: &str, modifier: bool) -> Option<Shortcut> {
    if modifier || matches!(target.to_ascii_uppercase().as_str(), "INPUT" | "TEXTAREA" | "SELECT") {
        return None;
    }
    match key {
        "n" | "j" | "F8" => Some(Shortcut::Next),
        "p" | "k" => Some(Shortcut::Previous),
        _ => None,
    }
}

/// The first row to show so that row `cursor` is in a window of `visible`
/// rows over `total`, moving the window as little as possible from `first`.
#[must_use]
pub fn keep_in_view(cursor: u64, first: u64, visible: u64, total: u64) -> u64 {
    let visible = visible.max(1);
    let first = if cursor < first {
        cursor
    } else if cursor >= first + visible {
        cursor + 1 - visible
    } else {
        first
    };
    first.min(total.saturating_sub(visible))
}

/// The index a list cursor moves to (lists of `len`, pages of `page`).
#[must_use]
pub fn move_in_list(at: Option<usize>, nav: Nav, len: usize, page: usize) -> Option<usize> {
    if len == 0 {
        return None;
    }
    let last = len - 1;
    let at = at.unwrap_or(0).min(last);
    Some(match nav {
        Nav::Up | Nav::Left => at.saturating_sub(1),
        Nav::Down | Nav::Right => (at + 1).min(last),
        Nav::PageUp => at.saturating_sub(page.max(1)),
        Nav::PageDown => (at + page.max(1)).min(last),
        Nav::Home => 0,
        Nav::End => last,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shortcuts_do_not_fire_while_typing() {
        assert_eq!(shortcut("n", "DIV", false), Some(Shortcut::Next));
        assert_eq!(shortcut("p", "tr", false), Some(Shortcut::Previous));
        assert_eq!(shortcut("n", "INPUT", false), None);
        assert_eq!(shortcut("n", "textarea", false), None);
        assert_eq!(shortcut("n", "DIV", true), None, "ctrl+n is the browser's");
        assert_eq!(shortcut("x", "DIV", false), None);
        assert_eq!(nav("ArrowDown"), Some(Nav::Down));
        assert_eq!(nav("Enter"), None);
    }

    #[test]
    fn the_window_follows_the_cursor() {
        assert_eq!(keep_in_view(5, 0, 10, 100), 0);
        assert_eq!(keep_in_view(10, 0, 10, 100), 1);
        assert_eq!(keep_in_view(3, 8, 10, 100), 3);
        assert_eq!(keep_in_view(99, 0, 10, 100), 90);
        assert_eq!(keep_in_view(0, 50, 10, 5), 0);
        assert_eq!(move_in_list(None, Nav::Down, 3, 10), Some(1));
        assert_eq!(move_in_list(Some(2), Nav::Down, 3, 10), Some(2));
        assert_eq!(move_in_list(Some(2), Nav::PageUp, 3, 10), Some(0));
        assert_eq!(move_in_list(Some(0), Nav::End, 3, 10), Some(2));
        assert_eq!(move_in_list(None, Nav::Down, 0, 10), None);
    }

    #[test]
    fn a_grid_of_rows_moves_up_and_down_and_leaves_sideways_to_the_browser() {
        for (key, want) in [
            ("ArrowUp", Some(Nav::Up)),
            ("ArrowDown", Some(Nav::Down)),
            ("PageUp", Some(Nav::PageUp)),
            ("PageDown", Some(Nav::PageDown)),
            ("Home", Some(Nav::Home)),
            ("End", Some(Nav::End)),
            ("ArrowLeft", None),
            ("ArrowRight", None),
            ("Enter", None),
            ("Tab", None),
        ] {
            assert_eq!(row_nav(key), want, "{key}");
        }
    }

    #[test]
    fn one_row_holds_the_tab_stop() {
        assert_eq!(tab_stop(None, None, 0), None, "an empty list has no stop");
        assert_eq!(tab_stop(Some(3), Some(1), 0), None);
        assert_eq!(tab_stop(None, None, 300), Some(0), "the first row, at first");
        assert_eq!(tab_stop(None, Some(7), 300), Some(7), "the selected row");
        assert_eq!(tab_stop(Some(42), Some(7), 300), Some(42), "where the keyboard last was");
        assert_eq!(tab_stop(Some(299), None, 5), Some(4), "a shorter list keeps its last row");
        // 300 files: from the stop, PageDown, End and Home reach every part in a few keys.
        let stop = tab_stop(None, None, 300);
        assert_eq!(move_in_list(stop, Nav::PageDown, 300, 10), Some(10));
        assert_eq!(move_in_list(stop, Nav::End, 300, 10), Some(299));
        assert_eq!(move_in_list(Some(299), Nav::Home, 300, 10), Some(0));
    }
}
