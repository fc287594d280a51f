//! Virtual scrolling that survives huge lists: a browser will not make an
//! element taller than a few tens of millions of pixels, yet a 1 GiB file is
//! 67 million hex rows. Past [`MAX_SPACER_PX`] the scroll bar is scaled: its
//! pixels map onto rows proportionally instead of one row per `row_px`.

/// Tallest spacer the views make, in CSS pixels (well under every browser's limit).
pub const MAX_SPACER_PX: u64 = 8_000_000;

/// A virtual list: `rows` rows of `row_px` pixels, `visible` of them in view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Virtual {
    /// Rows in the list.
    pub rows: u64,
    /// Height of a row.
    pub row_px: u64,
    /// Rows in view.
    pub visible: u64,
}

impl Virtual {
    fn natural_px(self) -> u64 {
        self.rows.saturating_mul(self.row_px)
    }

    fn scaled(self) -> bool {
        self.natural_px() > MAX_SPACER_PX
    }

    /// Height of the spacer that gives the scroll bar its range.
    #[must_use]
    pub fn spacer_px(self) -> u64 {
        self.natural_px().min(MAX_SPACER_PX)
    }

    /// The last row that can be shown first (the last page's first row).
    #[must_use]
    pub fn max_first(self) -> u64 {
        self.rows.saturating_sub(self.visible)
    }

    fn max_scroll(self) -> u64 {
        self.spacer_px().saturating_sub(self.visible * self.row_px).max(1)
    }

    /// The scroll position that shows `first` at the top.
    #[must_use]
    pub fn px_of(self, first: u64) -> u64 {
        let first = first.min(self.max_first());
        if !self.scaled() {
            return first * self.row_px;
        }
        let px = u128::from(first) * u128::from(self.max_scroll()) / u128::from(self.max_first().max(1));
        u64::try_from(px).unwrap_or(u64::MAX)
    }

    /// The first row shown at scroll position `px`.
    #[must_use]
    pub fn first_at(self, px: u64) -> u64 {
        if !self.scaled() {
            return (px / self.row_px.max(1)).min(self.max_first());
        }
        // The browser may stop a few pixels short of the spacer's end (a
        // border, a rounding): the last row's pixel is the end.
        if px.saturating_add(self.row_px) >= self.max_scroll() {
            return self.max_first();
        }
        // Rounded to the nearest row, so a row's own position maps back to it.
        let (num, den) = (u128::from(px) * u128::from(self.max_first()), u128::from(self.max_scroll()));
        u64::try_from((num + den / 2) / den).unwrap_or(u64::MAX).min(self.max_first())
    }
}

/// Rows a long table renders in its first frame, and adds in each frame
/// after: a 300-file overview drawn at once is one task of about 100 ms
/// (the style, layout and paint of some 5,000 elements); drawn this many
/// rows a frame, none is long.
pub const ROWS_PER_FRAME: usize = 60;

/// How many of a table's `n` rows to render, having grown to `shown`: at
/// least a frame's worth, and always through row `must` (the selected row,
/// or the one the keyboard moved to), never more than `n`.
#[must_use]
pub fn rows_to_render(shown: usize, n: usize, must: Option<usize>) -> usize {
    let want = shown.max(ROWS_PER_FRAME);
    must.map_or(want, |m| want.max(m.saturating_add(1))).min(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_lists_scroll_one_row_per_row_height() {
        let v = Virtual { rows: 100, row_px: 20, visible: 24 };
        assert_eq!((v.spacer_px(), v.px_of(10), v.first_at(200), v.first_at(10_000)), (2000, 200, 10, 76));
    }

    #[test]
    fn a_gibibyte_of_hex_rows_reaches_both_ends_and_stays_monotonic() {
        let v = Virtual { rows: (1u64 << 30) / 16, row_px: 20, visible: 24 };
        assert_eq!(v.spacer_px(), MAX_SPACER_PX);
        assert_eq!(v.first_at(0), 0);
        assert_eq!(v.first_at(u64::MAX), v.rows - 24, "the last rows are reachable");
        let end = v.px_of(v.rows);
        assert_eq!(v.first_at(end - 2), v.rows - 24, "also where the browser stops two pixels short of the end");
        // Three million records: every row's own position maps back to it exactly.
        let records = Virtual { rows: 3_000_000, row_px: 22, visible: 14 };
        for row in (0..2_999_970).step_by(7_919).chain([2_999_970]) {
            assert_eq!(records.first_at(records.px_of(row)), row);
        }
        // The last rows' pixels (within a row's height of the end) all show the end, those rows among them.
        assert_eq!(records.first_at(records.px_of(2_999_980)), 2_999_986);
        let mut last = 0;
        for px in (0..MAX_SPACER_PX).step_by(99_991) {
            let row = v.first_at(px);
            assert!(row >= last);
            last = row;
            // A row's own position maps back to it (within the rounding of one pixel).
            let back = v.first_at(v.px_of(row));
            assert!(row - back <= v.rows / MAX_SPACER_PX + 1, "{row} {back}");
        }
    }

    #[test]
    fn a_long_table_grows_a_frame_at_a_time_and_always_holds_the_row_it_must() {
        assert_eq!(rows_to_render(0, 300, None), ROWS_PER_FRAME);
        assert_eq!(rows_to_render(ROWS_PER_FRAME, 300, None), ROWS_PER_FRAME);
        assert_eq!(rows_to_render(120, 300, None), 120);
        assert_eq!(rows_to_render(0, 7, None), 7, "a short table at once");
        assert_eq!(rows_to_render(60, 300, Some(299)), 300, "End: through the last row");
        assert_eq!(rows_to_render(60, 300, Some(10)), 60);
        assert_eq!(rows_to_render(600, 300, Some(usize::MAX)), 300);
    }
}
