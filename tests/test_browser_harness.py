"""The browser harness itself (tests/browser.py), on small hand-made pages: the game tests
trust it to see a script, a fetch, a page too wide and a grid out of line, so each is shown
to be seen here."""

from __future__ import annotations

import pytest

import browser
from browser import assert_grid, page, requires_chromium, screenshot, show  # noqa: F401

pytestmark = requires_chromium


def _table(rows: list[list[tuple[str, int]]], board: str = "test") -> str:
    """A board table of fixed-width cells, as the game templates draw theirs."""
    lines = [f'<table data-board="{board}" style="border-collapse:collapse;table-layout:fixed">']
    for row in rows:
        cells = "".join(f'<td data-cell="{name}" style="width:{width}px;height:30px;padding:0;'
                        f'background:#f4e9d0;color:#222">{name.upper()}</td>' for name, width in row)
        lines.append(f"<tr>{cells}</tr>")
    return "".join(lines) + "</table>"


ALIGNED = _table([[("a1", 40), ("b1", 40), ("c1", 40)], [("a2", 40), ("b2", 40), ("c2", 40)]])


def test_a_plain_board_shows_its_cells_and_nothing_else(page):
    shown = show(page, "<p>Board 101</p>" + ALIGNED)
    assert shown.requests == []
    assert shown.scripts_ran is False and shown.script_signs == []
    assert shown.overflow <= 0
    assert shown.board == "test"
    assert shown.page is page
    assert list(shown.cells) == ["a1", "b1", "c1", "a2", "b2", "c2"]
    a1, b1, a2 = shown.cells["a1"], shown.cells["b1"], shown.cells["a2"]
    assert a1.text == "A1" and a2.text == "A2"
    assert (a1.width, a1.height) == (40, 30)
    assert b1.x == a1.x + 40 and b1.y == a1.y
    assert a2.x == a1.x and a2.y == a1.y + 30


def test_cell_text_is_what_is_shown_stripped(page):
    shown = show(page, '<table><tr><td data-cell="a">\n  4 <br>stones </td><td data-cell="b"> </td></tr></table>')
    assert shown.cells["a"].text == "4\nstones"
    assert shown.cells["b"].text == ""
    assert shown.board is None


def test_a_script_element_is_seen(page):
    shown = show(page, "<p>hello</p><script>document.title = 'ran'</script>")
    assert shown.scripts_ran is True
    assert "a <script> element" in shown.script_signs
    assert any(sign.startswith("a script was compiled") for sign in shown.script_signs)
    assert page.title() == "ran"  # JavaScript is on: the script did run, and was seen running
    assert shown.requests == []


def test_a_script_that_removes_itself_is_seen_running(page):
    shown = show(page, "<p>hello</p><script>document.currentScript.remove()</script>")
    assert page.locator("script").count() == 0
    assert "a <script> element" not in shown.script_signs
    assert shown.scripts_ran is True
    assert any(sign.startswith("a script was compiled") for sign in shown.script_signs)


def test_dialogs_console_and_timers_are_seen(page):
    shown = show(page, "<script>document.currentScript.remove(); console.log('x');"
                       "setTimeout(function () { alert(1); }, 0)</script>")
    assert shown.scripts_ran is True
    assert "console.log called" in shown.script_signs
    assert "called alert" in shown.script_signs
    assert "a dialog (alert)" in shown.script_signs


def test_an_img_onerror_is_seen_and_its_relative_src_is_a_request(page):
    hostile = '"><img src=x onerror="document.body.setAttribute(\'data-hit\', \'1\')">'
    shown = show(page, f"<p>comment: {hostile}</p>")
    assert shown.scripts_ran is True
    assert "img[onerror] handler attribute" in shown.script_signs
    assert page.get_attribute("body", "data-hit") == "1"
    assert shown.requests == [browser.BASE_URL.rsplit("/", 1)[0] + "/x"]


def test_the_same_comment_escaped_is_harmless(page):
    escaped = "&quot;&gt;&lt;img src=x onerror=alert(1)&gt; &lt;script&gt;alert(2)&lt;/script&gt; {{ 7*7 }}"
    shown = show(page, f"<p data-cell='comment'>{escaped}</p>")
    assert shown.scripts_ran is False and shown.requests == []
    assert shown.cells["comment"].text == '"><img src=x onerror=alert(1)> <script>alert(2)</script> {{ 7*7 }}'


def test_a_handler_that_never_fired_and_a_javascript_url_are_seen(page):
    shown = show(page, '<a href=" javascript:alert(1)">x</a><span onclick="alert(2)">y</span>')
    assert shown.scripts_ran is True
    assert "a[href] javascript: URL" in shown.script_signs
    assert any("[onclick] handler attribute" in sign for sign in shown.script_signs)
    assert not any(sign.startswith("a dialog") for sign in shown.script_signs)  # nothing clicked


def test_external_images_and_styles_are_recorded_and_never_fetched(page):
    html = ('<img src="http://example.org/board.png" alt="board">'
            '<div style="background:url(https://example.net/bg.png);color:#222">x</div>'
            '<link rel="stylesheet" href="http://example.com/mail.css">')
    shown = show(page, html)
    assert set(shown.requests) == {"http://example.org/board.png", "https://example.net/bg.png",
                                   "http://example.com/mail.css"}
    assert shown.scripts_ran is False
    loaded = page.evaluate("() => document.querySelector('img').naturalWidth")
    assert loaded == 0  # aborted, not fetched


def test_requests_are_per_show(page):
    assert show(page, '<img src="http://example.org/a.png" alt="">').requests == ["http://example.org/a.png"]
    assert show(page, "<p>plain</p>").requests == []


def test_a_1000_px_table_overflows_a_phone_but_not_a_wide_window(page):
    wide = '<table style="width:1000px;border-collapse:collapse"><tr><td data-cell="a">a</td></tr></table>'
    narrow = show(page, wide)
    assert narrow.overflow >= 1000 - 375
    assert page.viewport_size == {"width": 375, "height": 800}
    assert show(page, wide, width=1100).overflow <= 0
    assert show(page, ALIGNED).overflow <= 0


def test_a_tall_page_does_not_count_as_too_wide(page):
    assert show(page, '<div style="height:3000px;width:359px;background:#eee;color:#000">tall</div>').overflow <= 0


def test_an_aligned_table_passes_assert_grid(page):
    shown = show(page, ALIGNED)
    assert_grid(shown.cells, [["a1", "b1", "c1"], ["a2", "b2", "c2"]])
    assert_grid(shown.cells, [["a1", "b1"], ["a2", "b2"], ["c1"], ["c2"]])  # rows of other lengths apart


def test_columns_of_unequal_width_fail_assert_grid(page):
    shown = show(page, _table([[("a1", 40), ("b1", 40)]], "one") + _table([[("a2", 50), ("b2", 30)]], "two"))
    assert_grid(shown.cells, [["a1", "b1"]])
    with pytest.raises(AssertionError) as failure:
        assert_grid(shown.cells, [["a1", "b1"], ["a2", "b2"]])
    message = str(failure.value)
    assert "column 1: 'a2'" in message and "'a1'" in message and "column 2: 'b2'" in message


def test_a_row_out_of_line_fails_assert_grid(page):
    box = "display:inline-block;width:30px;background:#fff;color:#000;vertical-align:top"
    html = (f'<div><span data-cell="a1" style="{box};height:30px">a</span>'
            f'<span data-cell="b1" style="{box};height:30px;margin-top:5px">b</span>'
            f'<span data-cell="c1" style="{box};height:36px">c</span></div>')
    shown = show(page, html)
    with pytest.raises(AssertionError) as failure:
        assert_grid(shown.cells, [["a1", "b1", "c1"]])
    message = str(failure.value)
    assert "row 1: 'b1' top" in message and "row 1: 'c1'" in message and "height 36.0" in message


def test_assert_grid_names_missing_cells(page):
    shown = show(page, ALIGNED)
    with pytest.raises(AssertionError, match=r"no data-cell for \['z9'\]"):
        assert_grid(shown.cells, [["a1", "z9"]])


def test_a_repeated_cell_name_is_refused(page):
    with pytest.raises(AssertionError, match=r"repeated: \['a1'\]"):
        show(page, _table([[("a1", 40), ("a1", 40)]]))


def test_screenshot_goes_to_the_folder_asked_for(page, tmp_path, monkeypatch):
    shown = show(page, ALIGNED)
    monkeypatch.delenv("PBMSERV_SCREENSHOTS", raising=False)
    path = screenshot(shown, "aligned", directory=tmp_path)
    assert path == tmp_path / "aligned.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    monkeypatch.setenv("PBMSERV_SCREENSHOTS", str(tmp_path / "shots"))
    board = screenshot(shown, "board", directory=tmp_path, board_only=True)
    assert board == tmp_path / "shots" / "board.png"
    assert board.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert board.stat().st_size < path.stat().st_size  # the board alone, not the whole page
    with pytest.raises(ValueError):
        screenshot(shown, "../escape")


def test_the_skip_says_what_is_missing(monkeypatch):
    monkeypatch.setattr(browser, "CHROMIUM", "/nonexistent/chromium")
    assert browser._missing() == "no Chromium at /nonexistent/chromium (Debian: apt-get install chromium)"
