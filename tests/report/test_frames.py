"""Code frames of long lines: cut around the caret, marked with an ellipsis, column kept right."""

from __future__ import annotations

from dpcheck.model import Span
from dpcheck.report.frames import ELLIPSIS, MAX_LINE_CHARS, code_frame, cut, window


def _caret_target(rows: list[tuple[int | None, str]]) -> tuple[str, str]:
    """The anchor row's text from the first caret on, and the caret run."""
    (_, anchor), (_, carets) = rows[-2], rows[-1]
    start = carets.index("^")
    return anchor[start:], carets[start:]


def test_a_short_line_is_shown_whole() -> None:
    rows = code_frame("a = 1\nb = noisy / len(xb)\n", Span("m.py", 2, 5, 2, 20))
    assert rows == [(1, "a = 1"), (2, "b = noisy / len(xb)"), (None, "    " + "^" * 15)]


def test_a_span_far_into_a_long_line_is_shown_with_the_caret_under_it() -> None:
    padding = "x" * 50_000
    line = f"pad = '{padding}'; update = noisy / len(xb)"
    column = line.index("noisy") + 1
    rows = code_frame(f"context = 0\n{line}\n", Span("m.py", 2, column, 2, column + 15))
    (_, context), (_, anchor), (_, carets) = rows
    assert anchor.startswith(ELLIPSIS) and len(anchor) <= MAX_LINE_CHARS + 2
    assert context == ELLIPSIS  # the context line is cut to the same window: nothing there
    shown, marks = _caret_target(rows)
    assert shown.startswith("noisy / len(xb)") and marks == "^" * 15
    assert len(carets) <= MAX_LINE_CHARS + 2


def test_a_long_line_cut_at_its_end_keeps_its_start() -> None:
    line = "update = noisy / len(xb)  # " + "y" * 10_000
    rows = code_frame(line, Span("m.py", 1, 10, 1, 25))
    (_, anchor), (_, carets) = rows
    assert anchor.startswith("update = noisy") and anchor.endswith(ELLIPSIS)
    assert len(anchor) == MAX_LINE_CHARS + 1
    assert _caret_target(rows) == (anchor[9:], "^" * 15)


def test_a_span_longer_than_the_window_is_cut_with_its_start_in_view() -> None:
    line = "z" * 300 + "(" + "a + " * 5_000 + "b)" + "q" * 300
    column = 301
    rows = code_frame(line, Span("m.py", 1, column, 1, len(line) - 300 + 1))
    shown, marks = _caret_target(rows)
    assert shown.startswith("(a + a") and marks.count("^") == len(shown) - 1  # up to the "…"
    assert rows[0][1].endswith(ELLIPSIS) and rows[0][1].startswith(ELLIPSIS)


def test_tabs_before_the_column_are_kept_so_the_caret_aligns() -> None:
    line = "\t" + "w" * 500 + "\tnoisy / len(xb)"
    column = line.index("noisy") + 1
    rows = code_frame(line, Span("m.py", 1, column, 1, column + 5))
    (_, anchor), (_, carets) = rows
    assert carets.expandtabs().index("^") == anchor.expandtabs().index("noisy")


def test_window_and_cut_are_exact_on_their_edges() -> None:
    assert window(120, 1, 1) == (0, 120)
    assert window(121, 121, 1) == (1, 121)
    assert window(1000, 500, 1) == (459, 579)
    assert cut("abcdef", 0, 6) == "abcdef"
    assert cut("abcdef", 1, 3) == f"{ELLIPSIS}bc{ELLIPSIS}"


def test_a_bug_in_one_frame_costs_that_frame_only(monkeypatch) -> None:
    import dpcheck.report.frames as frames
    from dpcheck.model import Finding, ScanResult, Severity
    from dpcheck.report.text import render_text

    real = frames.window

    def failing(length: int, column: int, width: int, limit: int = MAX_LINE_CHARS):
        if column == 7:
            raise KeyError("injected")
        return real(length, column, width, limit)

    monkeypatch.setattr(frames, "window", failing)
    source = "a = 1\nb = 2 / len(x)\nc = noisy / n\n"
    findings = [
        Finding("DP101", Severity.ERROR, Span("m.py", 2, 7, 2, 8), "first"),
        Finding("DP101", Severity.ERROR, Span("m.py", 3, 5, 3, 10), "second"),
    ]
    out = render_text(ScanResult(findings=findings), sources={"m.py": source})
    assert "(no code frame: internal error while rendering it: KeyError: 'injected')" in out
    assert "  3 | c = noisy / n" in out and "m.py:3:5: DP101 [error] second" in out
