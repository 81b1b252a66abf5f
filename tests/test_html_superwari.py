"""Super-Wari's and Wari's HTML board (issue 18, templates/games/superwari.html): the two
rows of pits of the text part, stone for stone, the players beside their rows and the
captures under them; escaped, nothing fetched, no scripts, a grid that fits a phone.

Both rows use the letters a..h, so a pit is <td data-cell="top-h"> or
<td data-cell="bottom-a">: the row as drawn and the letter the text prints beside it.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from browser import assert_grid, page, requires_chromium, screenshot  # noqa: F401
from conftest import Server
from pbmserv.games import get_game
from pbmserv.games.superwari import NORTH
from pbmserv.render import render_board, render_board_html
from test_html_survival import (COMMENT, HOSTILE, Parsed, assert_both_colours, assert_mail, assert_safe, shown_safely,
                                text_part)
from test_superwari import play, position

SUPERWARI = get_game("superwari")
WARI = get_game("wari")
NAMES = ["alice", "bob"]
LONG = ["alice.long_name-0123", "bob.the.long-name_45"]  # 20 characters, the most a userid has


def text_board(text: str) -> tuple[dict[str, int], list[str], list[str], list[str]]:
    """What a text part's drawing shows: the stones by pit ("top-h": 3), the letters above
    and below the rows, the names beside them (top first) and the lines under it."""
    lines = text.split("\n")
    rows = [i for i, line in enumerate(lines) if re.fullmatch(r"\|(?: +\d+ \|)+   \S+", line)]
    top, bottom = rows[:2]
    assert bottom == top + 2, rows
    letters = lines[top - 2].split() + lines[bottom + 2].split()
    pits, names = {}, []
    for side, number, row_letters in (("top", top, letters[:len(letters) // 2]),
                                      ("bottom", bottom, letters[len(letters) // 2:])):
        parts = lines[number].split("|")
        names.append(parts[-1].strip())
        pits |= {f"{side}-{letter}": int(count) for letter, count in zip(row_letters, parts[1:-1], strict=True)}
    after = lines[bottom + 3:lines.index("", bottom + 3)]
    return pits, letters, names, after


def assert_same_position(text: str, html: str) -> Parsed:
    """The HTML shows what the text shows: each pit's stones, the pit letters as column
    headers in the same order, the names beside the rows, the captures and the ending."""
    pits, letters, names, after = text_board(text)
    parsed = Parsed(html)
    assert {cell: int(shown) for cell, shown in parsed.cells.items()} == pits
    assert list(parsed.cells) == list(pits)  # top row then bottom row, left to right
    assert [text for scope, text in parsed.headers if scope == "col"] == letters
    beside = [text for scope, text in parsed.headers if scope == "row"]
    assert [text.removesuffix(" to move") for text in beside] == names
    assert parsed.paragraphs == after
    return parsed


def board_text(game, state, seat, names=NAMES) -> str:
    return render_board(game, game.view(state, seat), names)


def board_html(game, state, seat, names=NAMES) -> str:
    return render_board_html(game, game.view(state, seat), names)


def random_game(game, params: dict, seed: int, moves: int | None = None):
    """A game of random legal moves, to its end or for `moves` moves: (state, moves)."""
    state, chance, played = game.setup(2, params, None), random.Random(seed), []
    while not game.is_over(state) and (moves is None or len(played) < moves):
        move = chance.choice(game.legal_moves(state, state.to_move))
        game.apply(state, state.to_move, move, None)
        played.append(move)
    return state, played


# --- the template on the engine's positions --------------------------------------------------

POSITIONS = {
    "start": (SUPERWARI, SUPERWARI.setup(2, {}, None)),
    "middle": (SUPERWARI, random_game(SUPERWARI, {}, 1, 12)[0]),
    "end": (SUPERWARI, random_game(SUPERWARI, {}, 1)[0]),
    "wari": (WARI, random_game(WARI, {}, 2, 9)[0]),
    "wari end": (WARI, random_game(WARI, {}, 2)[0]),
    "10 pits": (SUPERWARI, random_game(SUPERWARI, {"pits": 10, "stones": 6}, 3, 30)[0]),
    "4 pits": (SUPERWARI, random_game(SUPERWARI, {"pits": 4, "stones": 1}, 4, 3)[0]),
    "starving": (SUPERWARI, play(position([1, 1, 0, 0, 0, 0, 0, 0], [0] * 8, captured=(23, 23)), "a")),
    "majority": (SUPERWARI, play(position([0] * 7 + [1], [2, 0, 0, 0, 0, 0, 0, 5], captured=(22, 18)), "h")),
    "repetition": (SUPERWARI, play(position([1] + [0] * 7, [1] + [0] * 7), *"aabbccddeeffgg", "h", "h")),
    "north sweeps": (SUPERWARI, play(position([0] * 8, [0, 0, 0, 0, 0, 1, 1, 0], to_move=NORTH, captured=(22, 24)),
                                     "f")),
}


@pytest.mark.parametrize("seat", [0, 1, None])
@pytest.mark.parametrize("name", POSITIONS)
def test_each_pit_and_line_is_the_text_boards(name, seat):
    game, state = POSITIONS[name]
    html = board_html(game, state, seat)
    parsed = assert_same_position(board_text(game, state, seat), html)
    assert parsed.boards == ["superwari"]
    assert len(parsed.cells) == 2 * state.pits_per_side
    assert_safe(html)
    assert_both_colours(parsed)


def test_the_endings_are_said_as_in_the_text():
    for name, line in [("starving", "alice had to leave bob with no stones, and took the rest of the board."),
                       ("majority", "alice has captured more than half of the stones."),
                       ("repetition", "The position repeated: each player took the stones on their own side."),
                       ("north sweeps", "bob had to leave alice with no stones, and took the rest of the board.")]:
        game, state = POSITIONS[name]
        assert line in Parsed(board_html(game, state, 0)).paragraphs
        assert line in board_text(game, state, 0)


def test_the_player_to_move_is_marked_beside_their_row():
    game, state = POSITIONS["middle"]  # 12 moves: alice (South) to move
    for seat, beside in [(0, ["bob", "alice to move"]), (1, ["alice to move", "bob"])]:
        assert [text for scope, text in Parsed(board_html(game, state, seat)).headers if scope == "row"] == beside
    game, state = POSITIONS["end"]
    assert [text for scope, text in Parsed(board_html(game, state, 0)).headers if scope == "row"] == ["bob", "alice"]


def test_the_pit_letters_and_names_are_header_cells():
    game, state = POSITIONS["wari"]
    parsed = Parsed(board_html(game, state, 1))
    assert parsed.headers == ([("col", letter) for letter in "fedcba"] + [("row", "alice")] + [("row", "bob to move")]
                              + [("col", letter) for letter in "abcdef"])


def test_players_texts_are_escaped():
    game, state = POSITIONS["end"]
    html = board_html(game, state, 0, names=HOSTILE[:2])
    assert_safe(html, hostile=True)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<img" not in html and "<script" not in html
    assert "{{ 7*7 }}" in board_html(game, state, 0, names=["{{ 7*7 }}", "bob"])


# --- real mails -----------------------------------------------------------------------------------


def play_by_mail(server, game, number: int, players: list[str], seed: int, params: str = "",
                 stop: int | None = None, comment_at: int | None = None) -> dict[int, list]:
    """A game of random legal moves by mail, mirrored on the engine to choose them: the
    replies to the challenge (0) and to each move (1, 2, ...), up to move `stop`."""
    values = dict(word.lstrip("-").split("=") for word in params.split())
    state = game.setup(2, {k: int(v) for k, v in values.items()}, None)
    chance = random.Random(seed)
    first, second = players
    replies = {0: server.send(f"{first}@example.org", f"{game.name} challenge {first} {first}-pw {second} {params}")}
    while not game.is_over(state) and (stop is None or len(replies) <= stop):
        seat = state.to_move
        move = chance.choice(game.legal_moves(state, seat))
        game.apply(state, seat, move, None)
        userid = players[seat]
        subject = f"{game.name} move {number} {userid} {userid}-pw {move}"
        replies[len(replies)] = server.send(f"{userid}@example.org", subject,
                                            COMMENT if len(replies) == comment_at else "")
    return replies


def to(replies, userid: str):
    [reply] = [r for r in replies if r.to == [f"{userid}@example.org"]]
    return reply


@pytest.fixture(scope="module")
def mails(tmp_path_factory) -> dict[str, object]:
    """Board mails of whole games by mail: Super-Wari (alice's at the start, the end and
    with a hostile comment, bob's in the middle), Wari, and 10 pits between long userids."""
    server = Server(tmp_path_factory.mktemp("superwari"))
    server.signup("alice", "bob", *LONG)
    found = {}
    replies = play_by_mail(server, SUPERWARI, 101, NAMES, 19, comment_at=5)  # 45 moves
    last = max(replies)
    found |= {"start": to(replies[0], "alice"), "hostile": to(replies[5], "alice"), "middle": to(replies[12], "bob"),
              "end": to(replies[last], "alice")}
    replies = play_by_mail(server, WARI, 101, NAMES, 2)  # 30 moves
    found |= {"wari start": to(replies[0], "bob"), "wari middle": to(replies[9], "alice"),
              "wari end": to(replies[max(replies)], "bob")}
    replies = play_by_mail(server, SUPERWARI, 102, LONG, 3, "-pits=10 -stones=6", stop=20)
    found["10 pits"] = to(replies[20], LONG[1])
    server.sessions.kw["bind"].dispose()
    return found


KINDS = ["start", "middle", "end", "hostile", "wari start", "wari middle", "wari end", "10 pits"]


@pytest.mark.parametrize("name", KINDS)
def test_the_mails_html_part_shows_the_text_parts_position(mails, name):
    assert_mail(mails[name], "superwari", assert_same_position, hostile=name == "hostile")


@requires_chromium
@pytest.mark.parametrize("name", KINDS)
def test_the_board_in_a_browser(page, mails, name):
    reply = mails[name]
    shown = shown_safely(page, reply, "superwari")
    pits, letters, _names, _after = text_board(text_part(reply))
    n = len(letters) // 2
    assert_grid(shown.cells, [[f"top-{letter}" for letter in letters[:n]],
                              [f"bottom-{letter}" for letter in letters[n:]]])
    first = shown.cells[f"top-{letters[0]}"]
    assert all(abs(c.width - first.width) < 0.5 for c in shown.cells.values())
    if name != "10 pits":  # a long name beside narrow pits takes more lines, and its row more height
        assert all(abs(c.height - first.height) < 0.5 for c in shown.cells.values())
    assert {cell: int(box.text) for cell, box in shown.cells.items()} == pits
    if name == "middle":
        path = screenshot(shown, "superwari")
        assert Path(path).stat().st_size < 150_000
