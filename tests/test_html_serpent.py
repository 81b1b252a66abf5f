"""Serpent's HTML board (issue 18): the hex board in offset rows, eggs and snakes told
apart by shape and colour, drawn from the same view as the text board.

Real games by mail on the largest board (size 6) give the start, a middle, an end and
a mail with a hostile comment; each mail's HTML part is checked as text (escaping,
header cells, nothing a mail client drops or fetches, size) and in headless Chromium
(an aligned grid of offset rows, the text part's position in the cells, no script, no
fetch, no scrolling at 375 px)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from conftest import Server
from markupsafe import escape

from browser import assert_grid, page, requires_chromium, screenshot, show  # noqa: F401
from pbmserv.games import get_game
from pbmserv.games.serpent import EMPTY, GEOMETRIES
from pbmserv.render import render_board, render_board_html

SERPENT = get_game("serpent")
GEO = GEOMETRIES[6]
NAMES = ["alice", "bob"]
HOSTILE = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "{{ 7*7 }}"]
# Eggs, two snakes a side with their heads and tails, a tail moved: move 12 carries the
# hostile comment, and the mail after move 13 is the middle position.
MIDDLE = "f3 d3 f9 d9 f5 d5 f4 d4 i4 b6 f3-g5 d3-d6 h6".split()
# Black joins its three eggs into its only group, which has no survival path: removed, bob wins.
WIPEOUT = "f5 d5 f7 d7 f6".split()
# The glyph of a stone: Black's filled, White's hollow; the shape from view["shapes"].
GLYPHS = {"●": ("x", "egg"), "■": ("x", "snake"), "▲": ("x", "head"), "▼": ("x", "tail"),
          "○": ("o", "egg"), "□": ("o", "snake"), "△": ("o", "head"), "▽": ("o", "tail")}
LIMIT = 40_000


def play(server: Server, moves: list[str], comments: dict[int, str] | None = None) -> list:
    """Board 101 (size 6) by mail: the mails alice got, the challenge's first, then one a move."""
    server.signup(*NAMES)
    mails = [by_alice(server.send("alice@example.org", "serpent challenge alice alice-pw bob -size=6"))]
    for number, move in enumerate(moves, 1):
        user = NAMES[(number - 1) % 2]
        replies = server.send(f"{user}@example.org", f"serpent move 101 {user} {user}-pw {move}",
                              (comments or {}).get(number, ""))
        mails.append(by_alice(replies))
    return mails


def by_alice(replies):
    [reply] = [r for r in replies if r.to == ["alice@example.org"]]
    assert "Board 101" in reply.subject, reply.body
    return reply


@pytest.fixture(scope="module")
def mails(tmp_path_factory):
    """The start, middle, end and hostile mails, each as alice gets it."""
    servers = [Server(tmp_path_factory.mktemp(name)) for name in ("middle", "wipeout")]
    middle = play(servers[0], MIDDLE, {12: "\n".join(HOSTILE)})
    end = play(servers[1], WIPEOUT)
    for server in servers:
        server.sessions.kw["bind"].dispose()
    return {"start": middle[0], "middle": middle[13], "end": end[-1], "hostile": middle[12]}


def html_part(reply) -> str:
    part = reply.message.get_body(("html",))
    assert part is not None, f"no HTML part in {reply.subject!r}"
    return part.get_content()


def text_board(text: str) -> dict[str, str]:
    """The position the text part draws: cell name -> x, o or '.'."""
    cells = {}
    for line in text.split("\n"):
        match = re.fullmatch(r"([a-k]) +((?:[.xo]\d+ *)+)", line)
        if match:
            for token in match[2].split():
                cells[match[1] + token[1:]] = token[0]
    return cells


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text of the header cells."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.headers: list[tuple[str | None, str]] = []
        self._th: list[str] | None = None
        self._scope: str | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "th":
            self._th, self._scope = [], dict(attrs).get("scope")

    def handle_data(self, data):
        if self._th is not None:
            self._th.append(data)

    def handle_endtag(self, tag):
        if tag == "th" and self._th is not None:
            self.headers.append((self._scope, "".join(self._th).strip()))
            self._th = None


def assert_mail_safe(html: str) -> Tags:
    """Nothing a mail client drops or fetches, and nothing that runs."""
    tags = Tags(html)
    names = {tag for tag, _ in tags.tags}
    assert not names & {"script", "style", "svg", "img", "link", "iframe", "object", "embed", "base", "form"}, names
    for tag, attrs in tags.tags:
        assert not {"src", "srcset", "background"} & set(attrs), (tag, attrs)
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert "url(" not in (attrs.get("style") or ""), (tag, attrs)
    return tags


def shown_safely(page, html: str, board: str):
    """The mail in the browser at 375 px, having run nothing, fetched nothing and not scrolled."""
    shown = show(page, html)
    assert shown.requests == [] and not shown.scripts_ran, (shown.requests, shown.script_signs)
    assert shown.overflow <= 0, shown.overflow
    assert shown.board == board
    return shown


def state_of(moves: list[str], size: int = 6):
    state = SERPENT.setup(2, {"size": size}, None)
    for move in moves:
        verdict = SERPENT.check(state, state.to_move, move)
        assert verdict.ok, (move, verdict.error)
        SERPENT.apply(state, state.to_move, verdict.move, None)
    return state


# --- the template on the engine's positions ------------------------------------------------------


@pytest.mark.parametrize("size", [4, 5, 6])
def test_the_fragment_uses_nothing_a_mail_client_drops(size):
    state = state_of(MIDDLE if size == 6 else ["a1", "b3"], size)
    html = render_board_html(SERPENT, SERPENT.view(state, 0), NAMES)
    for word in ("<style", "<script", "<svg", "src=", "url(", "<img", "class="):
        assert word not in html, word
    tags = assert_mail_safe(html)
    geo = GEOMETRIES[size]
    assert [text for scope, text in tags.headers] == [name[0] for name in geo.names if name[1:] == "1"]
    assert {scope for scope, _ in tags.headers} == {"row"}
    assert [attrs["data-cell"] for tag, attrs in tags.tags if "data-cell" in attrs] == geo.names
    assert all(tag == "td" for tag, attrs in tags.tags if "data-cell" in attrs)
    assert [attrs["data-board"] for _, attrs in tags.tags if "data-board" in attrs] == ["serpent"]
    # every coloured element says both its text colour and its background (light and dark mode)
    for tag, attrs in tags.tags:
        style = attrs.get("style") or ""
        if re.search(r"(^|;)color:", style) or "background:" in style:
            assert re.search(r"(^|;)color:", style) and "background:" in style, (tag, style)


def test_player_names_are_escaped():
    """Userids cannot hold these, but the template must not trust that."""
    html = render_board_html(SERPENT, SERPENT.view(state_of(MIDDLE), 0), HOSTILE[:2])
    for text in HOSTILE[:2]:
        assert text not in html and str(escape(text)) in html
    assert_mail_safe(html)


def test_a_full_board_of_size_6_stays_small():
    """The most a size-6 board can draw: every cell a stone, the last move and removals shown."""
    state = state_of(MIDDLE)
    state.board = "".join("xo"[(k // 3) % 2] for k in range(GEO.cells))
    state.removed = [GEO.names[:40], GEO.names[40:80]]
    html = render_board_html(SERPENT, SERPENT.view(state, 0), ["a_userid_of_twenty_c", "b_userid_of_twenty_c"])
    assert len(html.encode()) < 16_000, len(html.encode())


def test_the_view_names_each_stone_egg_snake_head_or_tail_without_touching_the_text():
    state = state_of(MIDDLE)
    view = SERPENT.view(state, None)
    shapes = {name: shape for row, kinds in zip(view["rows"], view["shapes"])
              for name, shape in zip((row["letter"] + cell[1:] for cell in row["cells"]), kinds)}
    assert {name: shape for name, shape in shapes.items() if shape} == {
        "b6": "egg", "d4": "tail", "d5": "snake", "d6": "head", "d9": "egg",
        "f4": "tail", "f5": "snake", "g5": "head", "f9": "egg", "h6": "egg", "i4": "egg"}
    assert "shapes" not in render_board(SERPENT, view, NAMES)
    # on a tie (Black's d2-d3 is as far from g1 by either end) neither end is the head
    tie = SERPENT.view(state_of(["d2", "a1", "d3", "b2", "g1", "c4"], 4), None)
    assert tie["shapes"][3][1:3] == ["snake", "snake"] and tie["shapes"][1][1] == "head"


# --- the real mails ---------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["start", "middle", "end", "hostile"])
def test_the_mail_html_is_safe_small_and_headed(mails, which):
    html = html_part(mails[which])
    assert len(html.encode()) < LIMIT, len(html.encode())
    tags = assert_mail_safe(html)
    rows = {text for scope, text in tags.headers if scope == "row"}
    assert rows == set("abcdefghijk")
    cells = [attrs["data-cell"] for tag, attrs in tags.tags if tag == "td" and "data-cell" in attrs]
    assert cells == GEO.names


def test_a_hostile_comment_is_shown_as_text_never_as_markup(mails):
    html = html_part(mails["hostile"])
    for text in HOSTILE[:2]:
        assert text not in html, text
        assert str(escape(text)) in html, text
    assert "{{ 7*7 }}" in html  # as it was written: no template ever saw it as one


@requires_chromium
@pytest.mark.parametrize("which", ["start", "middle", "end", "hostile"])
def test_the_board_in_a_browser(page, mails, which):
    reply = mails[which]
    shown = shown_safely(page, html_part(reply), "serpent")
    # offset rows: every row's cells share top and height, rows of equal length line up
    assert_grid(shown.cells, [[GEO.names[c] for c in row] for row in GEO.rows])
    cells = [shown.cells[name] for name in GEO.names]
    assert max(c.width for c in cells) - min(c.width for c in cells) <= 0.5
    middle = [shown.cells[GEO.names[c]] for c in GEO.rows[5]]
    step = (middle[1].x - middle[0].x) / 2  # half a cell: what each row is shifted by
    pitch = middle[0].y - shown.cells["e1"].y
    assert step > 0 and middle[1].x - middle[0].x >= middle[0].width and pitch >= middle[0].height
    for i, row in enumerate(GEO.rows):
        for j, c in enumerate(row):
            cell = shown.cells[GEO.names[c]]
            assert abs(cell.x - (middle[0].x + (abs(i - 5) + 2 * j) * step)) <= 0.5, GEO.names[c]
            assert abs(cell.y - (middle[0].y + (i - 5) * pitch)) <= 0.5, GEO.names[c]
    # each cell shows its name and the stone the text part shows there
    position = text_board(reply.body)
    assert set(position) == set(GEO.names)
    board = [EMPTY] * GEO.cells
    for name, stone in position.items():
        board[GEO.index[name]] = stone
    for name, stone in position.items():
        lines = shown.cells[name].text.split("\n")
        assert lines[-1] == name
        if stone == EMPTY:
            assert lines == [name]
            continue
        owner, shape = GLYPHS[lines[0]]
        assert owner == stone, name
        alone = not any(board[k] == stone for k in GEO.nbrs[GEO.index[name]])
        assert (shape == "egg") == alone, name
    if which == "hostile":
        body = page.inner_text("body")
        assert all(text in body for text in HOSTILE)
    if which == "middle":
        screenshot(shown, "serpent")
