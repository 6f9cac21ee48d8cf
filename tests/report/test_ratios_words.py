"""A ratio read in words: an interval that holds 1 is no significant difference, one that
does not is "N times as long", and one with no interval says why it is no verdict."""

from __future__ import annotations

from vcsbench.report.ratios import BY_BLOCK, NO_INTERVAL, Ratio


def test_a_ratio_in_words_says_what_its_interval_allows() -> None:
    slower = Ratio(7.71, (7.47, 7.88), BY_BLOCK, True)
    assert "7.71 times as long (between 7.47 and 7.88; 2013: 0.99x)" == slower.in_words(
        aside="2013: 0.99x"
    )
    assert "7.71x [7.47–7.88]" == slower.cell()
    straddles = Ratio(0.86, (0.63, 1.80), BY_BLOCK, False)
    assert "no significant difference (0.86x, between 0.63 and 1.80)" == straddles.in_words()
    assert "0.86x [0.63–1.80] ns" == straddles.cell()
    blind = Ratio(0.294, None, NO_INTERVAL, False)
    assert "0.29x †, no verdict (†)" == blind.in_words()
    busy = Ratio(1.2, (1.1, 1.3), BY_BLOCK, True, busy="other processes used 1.05 CPUs")
    assert busy.in_words().endswith("no verdict (busy machine: other processes used 1.05 CPUs)")
    assert "ns" not in busy.cell()
