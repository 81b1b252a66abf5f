"""Survival's HTML board (issue 18, templates/games/survival.html): the same position as
the text part, cell for cell, in a table a mail client draws: escaped, nothing fetched,
no scripts, an aligned hex grid that fits a phone.

Each board cell is <td data-cell="C3">: an empty cell shows its name; a taken one the
owner's mark, an arrow glyph for the direction and the name, e.g. "O ↗ C3".
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from browser import assert_grid, page, requires_chromium, screenshot, show  # noqa: F401
from conftest import Server
from pbmserv.games import get_game
from pbmserv.games.survival import CELLS, COLUMNS
from pbmserv.render import render_board, render_board_html
from test_survival import FULL_GAME, play

SURVIVAL = get_game("survival")
NAMES = ["alice", "bob"]
GLYPHS = {"↑": "N", "↗": "NE", "↘": "SE", "↓": "S", "↙": "SW", "↖": "NW"}
HOSTILE = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "{{ 7*7 }}"]
COMMENT = "\n".join(HOSTILE)
# the levels of the figure, top to bottom: a row of the grid each, half a cell apart
LEVELS = [["C1"], ["B1", "D1"], ["A1", "C2", "E1"], ["B2", "D2"], ["A2", "C3", "E2"], ["B3", "D3"],
          ["A3", "C4", "E3"], ["B4", "D4"], ["C5"]]
FORBIDDEN = ("<style", "<script", "<svg", "src=", "url(")
UNSAFE_TAGS = {"script", "style", "svg", "img", "iframe", "object", "embed", "link", "meta", "base", "form", "input"}


class Parsed(HTMLParser):
    """What the tests read of an HTML part: each data-cell's text, the header cells, the
    paragraphs, and every tag with its attributes."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.cells: dict[str, str] = {}
        self.headers: list[tuple[str | None, str]] = []  # (scope, text) of each <th> of the board
        self.paragraphs: list[str] = []  # inside the data-board element
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.boards: list[str] = []  # data-board values
        self._open: list | None = None  # [kind, key, tag, parts] of the element being read
        self._divs: list[bool] = []  # the open <div>s: whether each is the board's
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if "data-board" in attributes:
            self.boards.append(attributes["data-board"])
        if tag == "div":
            self._divs.append("data-board" in attributes)
        if tag == "br" and self._open:
            self._open[3].append(" ")
        elif self._open is None and (tag == "th" or tag == "p" or "data-cell" in attributes):
            key = attributes.get("data-cell") if tag == "td" else attributes.get("scope")
            self._open = ["cell" if "data-cell" in attributes else tag, key, tag, []]

    def handle_endtag(self, tag):
        if tag == "div":
            self._divs.pop()
        if self._open and tag == self._open[2]:
            kind, key, _tag, parts = self._open
            text = " ".join("".join(parts).split())
            if kind == "cell":
                assert key not in self.cells, f"data-cell {key} twice"
                self.cells[key] = text
            elif not any(self._divs):
                pass  # the mail's other tables and paragraphs
            elif kind == "th":
                self.headers.append((key, text))
            else:
                self.paragraphs.append(text)
            self._open = None

    def handle_data(self, data):
        if self._open:
            self._open[3].append(data)


def assert_safe(html: str, hostile: bool = False) -> Parsed:
    """No element or attribute that runs, fetches or styles from afar; the raw strings are
    checked too where no player wrote `src=` in a comment. Under 40 kB."""
    parsed = Parsed(html)
    assert not [tag for tag, _ in parsed.tags if tag in UNSAFE_TAGS - {"meta"}]
    for tag, attributes in parsed.tags:
        assert not [name for name in attributes if name.startswith("on") or name in ("src", "href", "background")], tag
        assert "url(" not in (attributes.get("style") or "").lower(), tag
    lowered = html.lower()
    for needle in ("<script", "<img", "<style", "<svg") if hostile else FORBIDDEN:
        assert needle not in lowered, needle
    assert len(html.encode()) < 40_000
    return parsed


def assert_both_colours(parsed: Parsed) -> None:
    """Each element that sets a text or a background colour sets both: the mail reads the
    same in a client's dark mode, which changes only what is left unset."""
    for tag, attributes in parsed.tags:
        style = attributes.get("style") or ""
        assert ("background" in style) == bool(re.search(r"(^|;)color:", style)), (tag, style)


def assert_escaped(html: str) -> None:
    """Every hostile string is there as text, escaped, and never as markup or evaluated."""
    for text in HOSTILE:
        assert text not in html or text == "{{ 7*7 }}", text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "{{ 7*7 }}" in html  # as written, not evaluated


# --- the text part, read back -------------------------------------------------------------

FIGURE_TOP = " " * 17 + "_______"


def _places() -> dict[str, tuple[int, int]]:
    """Where each cell's 4-character label stands in the text figure: (line, column),
    counted from the figure's top line, found on the empty board."""
    lines = board_text(play()).split("\n")
    return {cell: (number, line.index(f" {cell} ")) for cell in CELLS
            for number, line in enumerate(lines) if f" {cell} " in line}


def text_labels(text: str) -> dict[str, str]:
    """Each cell's label as a text part draws it ("C3", "O NE"), read from its figure."""
    lines = text.split("\n")
    top = lines.index(FIGURE_TOP)
    return {cell: lines[top + line][column:column + 4].strip() for cell, (line, column) in PLACES.items()}


def text_lines(text: str) -> list[str]:
    """The lines under the text figure (to move, pieces left, where to place, the winner)."""
    lines = text.split("\n")
    bottom = lines.index(" " * 16 + "\\_______/")
    end = lines.index("", bottom + 2)
    return lines[bottom + 2:end]


def cell_label(name: str, text: str) -> str:
    """A cell's text in the HTML ("O ↗ C3", "C3") as the text part labels it ("O NE", "C3")."""
    words = text.replace("\ufe0e", "").split()
    if words == [name]:
        return name
    mark, glyph, shown = words
    assert shown == name and mark in ("O", "X"), (name, text)
    return f"{mark} {GLYPHS[glyph]}"


def html_lines(parsed: Parsed) -> list[str]:
    """The paragraphs under the HTML board, without the arrow glyph after a direction."""
    return [" ".join(re.sub("[\ufe0e" + "".join(GLYPHS) + "]", "", p).split()) for p in parsed.paragraphs]


def board_text(state, names=NAMES) -> str:
    return render_board(SURVIVAL, SURVIVAL.view(state, 0), names)


def board_html(state, names=NAMES) -> str:
    return render_board_html(SURVIVAL, SURVIVAL.view(state, 0), names)


PLACES = _places()


def assert_same_position(text: str, html: str) -> Parsed:
    """The HTML shows what the text shows: every cell's label and the lines under the board."""
    parsed = Parsed(html)
    labels = text_labels(text)
    assert {name: cell_label(name, shown) for name, shown in parsed.cells.items()} == labels
    assert html_lines(parsed) == text_lines(text)
    return parsed


# --- the template on the engine's positions --------------------------------------------------

POSITIONS = {
    "start": play(),
    "first": play("C3/NE"),
    "middle": play(*FULL_GAME[:8]),
    "full": play(*FULL_GAME),
    "off the board": play("A1/NW", "B2/S"),  # alice's A1 points off the board
    "blocked": play("A1/S", "A2/S", "A3/N"),  # bob's A2 points S at the taken A3
}


@pytest.mark.parametrize("name", POSITIONS)
def test_each_cell_and_line_is_the_text_boards(name):
    state = POSITIONS[name]
    html = board_html(state)
    parsed = assert_same_position(board_text(state), html)
    assert parsed.boards == ["survival"]
    assert_safe(html)
    assert_both_colours(parsed)


def test_the_endings_are_said_as_in_the_text():
    resigned = play("C3/NE")
    resigned.resigned = [1]
    for state, line in [(POSITIONS["off the board"], "alice (O) cannot move: A1 points NW, off the board"),
                        (POSITIONS["blocked"], "bob (X) cannot move: the ray of A2 pointing S has no vacant cell"),
                        (POSITIONS["full"], "bob (X) cannot move: the board is full"),
                        (resigned, "bob (X) resigned")]:
        assert line in html_lines(Parsed(board_html(state)))
        assert line in board_text(state)


def test_the_coordinates_are_header_cells():
    parsed = Parsed(board_html(POSITIONS["middle"]))
    assert parsed.headers == [("col", letter) for letter in COLUMNS] * 2
    assert set(parsed.cells) == set(CELLS)


def test_the_cells_on_the_ray_are_tinted_and_only_then():
    html = board_html(POSITIONS["middle"])  # alice may place on C5 only
    tinted = re.findall(r'data-cell="(\w+)"[^>]*#dcefcf', html)
    assert tinted == ["C5"]
    assert "#dcefcf" not in board_html(POSITIONS["first"]).split("<p")[0]  # bob's first piece: anywhere


def test_players_texts_are_escaped():
    html = board_html(POSITIONS["middle"], names=HOSTILE[:2])
    assert_safe(html, hostile=True)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; (" in html
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<img" not in html and "<script" not in html
    html = board_html(POSITIONS["middle"], names=["{{ 7*7 }}", "bob"])
    assert "{{ 7*7 }} (" in html


def test_each_piece_is_told_by_mark_and_by_colour():
    parsed = Parsed(board_html(POSITIONS["full"]))
    styles = {attributes["data-cell"]: attributes["style"] for _tag, attributes in parsed.tags
              if "data-cell" in attributes}
    for cell, text in parsed.cells.items():
        colours = re.findall(r"background:(#\w+);color:(#\w+)", styles[cell])
        assert len(colours) == 1, styles[cell]  # a text and a background colour, both explicit
        assert colours[0] == {"O": ("#dbe8fb", "#0b3a82"), "X": ("#fbdcd2", "#8c1d08")}[text[0]]


# --- real mails -----------------------------------------------------------------------------------


def html_part(reply) -> str:
    return reply.message.get_body(("html",)).get_content()


def text_part(reply) -> str:
    return reply.message.get_body(("plain",)).get_content()


@pytest.fixture(scope="module")
def mails(tmp_path_factory) -> dict[str, object]:
    """alice's board mails of a whole Survival game by mail: at the start, after 8 moves,
    at the end (a full board), and one whose move carries a hostile comment."""
    server = Server(tmp_path_factory.mktemp("survival"))
    server.signup("alice", "bob")
    found = {"start": server.send("alice@example.org", "survival challenge alice alice-pw bob")[0]}
    for number, move in enumerate(FULL_GAME, start=1):
        userid = NAMES[(number - 1) % 2]
        comment = COMMENT if number == 5 else ""
        replies = server.send(f"{userid}@example.org", f"survival move 101 {userid} {userid}-pw {move}", comment)
        [reply] = [r for r in replies if r.to == ["alice@example.org"]]
        name = {5: "hostile", 8: "middle", len(FULL_GAME): "end"}.get(number)
        if name:
            found[name] = reply
    server.sessions.kw["bind"].dispose()
    return found


def assert_mail(reply, game: str, same_position, hostile: bool) -> Parsed:
    """A board mail has both parts; its HTML part shows the text part's position
    (`same_position(text, html)` checks it), safely, with every hostile string escaped."""
    assert reply.message.get_content_type() == "multipart/alternative"
    html = html_part(reply)
    parsed = same_position(text_part(reply), html)
    assert parsed.boards == [game]
    assert_safe(html, hostile=hostile)
    if hostile:
        assert_escaped(html)
    return parsed


def shown_safely(tab, reply, game: str):
    """The mail's HTML part in Chromium at a phone's width: nothing fetched, no script
    run, no sideways scrolling."""
    shown = show(tab, html_part(reply), width=375)
    assert shown.board == game
    assert not shown.requests, shown.requests
    assert not shown.scripts_ran, shown.script_signs
    assert shown.overflow <= 0, f"the mail scrolls sideways by {shown.overflow}px at 375px"
    return shown


@pytest.mark.parametrize("name", ["start", "middle", "end", "hostile"])
def test_the_mails_html_part_shows_the_text_parts_position(mails, name):
    parsed = assert_mail(mails[name], "survival", assert_same_position, hostile=name == "hostile")
    if name == "end":
        assert "Game won by alice." in parsed.paragraphs


@requires_chromium
@pytest.mark.parametrize("name", ["start", "middle", "end", "hostile"])
def test_the_board_in_a_browser(page, mails, name):
    reply = mails[name]
    shown = shown_safely(page, reply, "survival")
    assert_grid(shown.cells, LEVELS)
    size = shown.cells["C1"]
    assert all(abs(c.width - size.width) < 0.5 and abs(c.height - size.height) < 0.5 for c in shown.cells.values())
    for number, level in enumerate(LEVELS):  # half a cell down a level, columns a cell apart
        for cell in level:
            box = shown.cells[cell]
            assert abs(box.y - (size.y + number * size.height / 2)) < 1, cell
            assert abs(box.x - (size.x + (COLUMNS.index(cell[0]) - 2) * size.width)) < 1, cell
    labels = {cell: cell_label(cell, box.text) for cell, box in shown.cells.items()}
    assert labels == text_labels(text_part(reply))
    if name == "middle":
        path = screenshot(shown, "survival")
        assert Path(path).stat().st_size < 150_000
