"""Super-Wari and Wari: every rule of shared/rules/superwari.md on hand-computed positions.

Board indices: South's a..h are 0..7, North's a..h are 8..15 (8-pit board); sowing
runs up the indices and wraps round. Positions below are written as South's row a..h
and North's row a..h.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games import Outcome, get_game
from pbmserv.games.superwari import NORTH, SOUTH, SuperWariState
from pbmserv.render import render_board

SUPERWARI = get_game("superwari")
WARI = get_game("wari")
NAMES = ["alice", "bob"]


def position(south, north, to_move=SOUTH, captured=(0, 0)) -> SuperWariState:
    """A game standing at this position, as if it had just been reached."""
    pits = [*south, *north]
    return SuperWariState(
        pits_per_side=len(south),
        pits=pits,
        captured=list(captured),
        to_move=to_move,
        history=[[*pits, to_move]],
    )


def play(state: SuperWariState, *moves: str, game=SUPERWARI) -> SuperWariState:
    """Play `moves` in turn, each checked as the seat to move would send it."""
    for move in moves:
        seat = state.to_move
        verdict = game.check(state, seat, move)
        assert verdict.ok, (move, verdict.error)
        game.apply(state, seat, verdict.move, None)
    return state


def rows(state: SuperWariState) -> tuple[list[int], list[int]]:
    n = state.pits_per_side
    return state.pits[:n], state.pits[n:]


def error(state: SuperWariState, text: str, seat: int | None = None, game=SUPERWARI) -> str | None:
    return game.check(state, state.to_move if seat is None else seat, text).error


# --- board and set-up -----------------------------------------------------------------


def test_start_position_is_8_pits_of_3_south_to_move():
    state = SUPERWARI.setup(2, {}, None)
    assert rows(state) == ([3] * 8, [3] * 8)
    assert SUPERWARI.to_act(state) == frozenset({SOUTH})
    assert SUPERWARI.legal_moves(state, SOUTH) == list("abcdefgh")
    assert SUPERWARI.legal_moves(state, NORTH) == []
    assert SUPERWARI.result(state) is None


def test_parameters_set_pits_and_stones():
    assert [(p.name, p.default, p.low, p.high) for p in SUPERWARI.params] == [
        ("pits", 8, 4, 10),
        ("stones", 3, 1, 6),
    ]
    state = SUPERWARI.setup(2, {"pits": 4, "stones": 6}, None)
    assert rows(state) == ([6] * 4, [6] * 4)
    assert SUPERWARI.legal_moves(state, SOUTH) == list("abcd")
    assert rows(SUPERWARI.setup(2, {"pits": 10}, None)) == ([3] * 10, [3] * 10)
    assert rows(SUPERWARI.setup(2, {"stones": 1}, None)) == ([1] * 8, [1] * 8)


def test_wari_is_6_pits_of_4_without_parameters():
    assert (WARI.name, WARI.title, WARI.params, WARI.template) == ("wari", "Wari", (), "superwari.txt")
    assert (SUPERWARI.name, SUPERWARI.title) == ("superwari", "Super-Wari")
    state = WARI.setup(2, {}, None)
    assert rows(state) == ([4] * 6, [4] * 6)
    assert WARI.legal_moves(state, SOUTH) == list("abcdef")
    assert error(state, "g", game=WARI) == "there is no pit g (your pits are a–f)"
    assert error(state, "", game=WARI) == "send the letter of one of your pits, a–f"
    # f's 4 stones go to North's a..d, each now 5: nothing captured.
    play(state, "f", game=WARI)
    assert rows(state) == ([4, 4, 4, 4, 4, 0], [5, 5, 5, 5, 4, 4])


# --- sowing ---------------------------------------------------------------------------


def test_sowing_runs_along_own_row_then_the_opponents():
    state = play(SUPERWARI.setup(2, {}, None), "c")
    assert rows(state) == ([3, 3, 0, 4, 4, 4, 3, 3], [3] * 8)
    assert state.to_move == NORTH
    play(state, "g")  # North's g: their h, then South's a and b
    assert rows(state) == ([4, 4, 0, 4, 4, 4, 3, 3], [3, 3, 3, 3, 3, 3, 0, 4])


def test_sowing_from_h_crosses_to_the_opponent_without_capturing_4s():
    state = play(SUPERWARI.setup(2, {}, None), "h")
    assert rows(state) == ([3, 3, 3, 3, 3, 3, 3, 0], [4, 4, 4, 3, 3, 3, 3, 3])
    assert state.captured == [0, 0]


def test_a_lap_of_16_skips_the_origin_and_ends_on_own_side():
    # 15 stones go round b..h and North a..h; the 16th skips a and lands in b.
    # North's pits all become 2, but the last stone is on South's side: no capture.
    state = play(position([16, 0, 0, 0, 0, 0, 0, 0], [1] * 8), "a")
    assert rows(state) == ([0, 2, 1, 1, 1, 1, 1, 1], [2] * 8)
    assert state.captured == [0, 0]


def test_a_lap_of_17_from_the_middle_skips_the_origin():
    state = play(position([0, 0, 0, 17, 0, 0, 0, 0], [1] * 8), "d")
    assert rows(state) == ([1, 1, 1, 0, 2, 2, 1, 1], [2] * 8)
    assert state.captured == [0, 0]


def test_a_lap_skipping_the_origin_can_end_in_a_capture_that_stops_at_the_row_end():
    # g's 17 stones: h, North a..h, South a..f (15), skip g, h and North a again.
    # North's a holds 1 + 2 = 3 and is captured; the chain stops at the end of North's
    # row though the pit before it, South's own h, now holds 2.
    state = play(position([0, 0, 0, 0, 0, 0, 17, 0], [1, 0, 0, 0, 0, 0, 0, 0]), "g")
    assert rows(state) == ([1, 1, 1, 1, 1, 1, 0, 2], [0, 1, 1, 1, 1, 1, 1, 1])
    assert state.captured == [3, 0]


# --- capture --------------------------------------------------------------------------


@pytest.mark.parametrize("before, taken", [(1, 2), (2, 3)])
def test_last_stone_making_2_or_3_captures(before, taken):
    state = play(position([0] * 7 + [1], [before, 0, 0, 0, 0, 0, 0, 4]), "h")
    assert rows(state) == ([0] * 8, [0, 0, 0, 0, 0, 0, 0, 4])
    assert state.captured == [taken, 0]


@pytest.mark.parametrize("before", [0, 3, 5])
def test_last_stone_making_1_or_4_or_more_captures_nothing(before):
    state = play(position([0] * 7 + [1], [before, 0, 0, 0, 0, 0, 0, 4]), "h")
    assert rows(state) == ([0] * 8, [before + 1, 0, 0, 0, 0, 0, 0, 4])
    assert state.captured == [0, 0]


def test_capture_chain_runs_back_to_the_end_of_the_opponents_row():
    # h's 2 stones: North a -> 2, North b -> 3; take b, then a, then the row ends.
    state = play(position([1, 0, 0, 0, 0, 0, 0, 2], [1, 2, 0, 0, 0, 0, 0, 1]), "h")
    assert rows(state) == ([1, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 1])
    assert state.captured == [5, 0]


def test_capture_chain_stops_at_the_first_pit_not_holding_2_or_3():
    # h's 4 stones make North a..d 2, 5, 2, 3: take d and c, stop at b (5); a's 2 stays.
    state = play(position([0] * 7 + [4], [1, 4, 1, 2, 0, 0, 0, 0]), "h")
    assert rows(state) == ([0] * 8, [2, 5, 0, 0, 0, 0, 0, 0])
    assert state.captured == [5, 0]


def test_capture_chain_stops_at_a_pit_of_1():
    # g's 3 stones: h (own), North a -> 1, North b -> 3: take b only.
    state = play(position([0] * 6 + [3, 0], [0, 2, 0, 0, 0, 0, 0, 1]), "g")
    assert rows(state) == ([0] * 7 + [1], [1, 0, 0, 0, 0, 0, 0, 1])
    assert state.captured == [3, 0]


def test_north_captures_in_souths_row_and_the_chain_never_crosses_to_north():
    # North's g sows North h -> 2, then South a, b, c -> 2, 3, 2: all three taken; the
    # chain ends at South's a though the pit before it, North's own h, holds 2.
    state = play(position([1, 2, 1, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0, 4, 1], to_move=NORTH), "g")
    assert rows(state) == ([0, 0, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0, 0, 2])
    assert state.captured == [0, 7]


def test_nothing_is_captured_when_the_last_stone_is_on_own_side():
    # a's 2 stones land in South's b and c, making 2 and 3 there: no capture.
    state = play(position([2, 1, 2, 0, 0, 0, 0, 0], [2, 0, 0, 0, 0, 0, 0, 0]), "a")
    assert rows(state) == ([0, 2, 3, 0, 0, 0, 0, 0], [2, 0, 0, 0, 0, 0, 0, 0])
    assert state.captured == [0, 0]


# --- starving -------------------------------------------------------------------------


def test_capturing_all_the_opponents_stones_is_forbidden_when_avoidable():
    state = position([1, 0, 0, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 0, 0, 0])
    assert SUPERWARI.legal_moves(state, SOUTH) == ["a"]
    assert error(state, "h") == "that move would leave {seat1} with no stones; you must play a"
    play(state, "a")
    assert rows(state) == ([0, 1, 0, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 0, 0, 0])


def test_an_opponent_with_no_stones_must_be_fed_when_possible():
    # North has nothing: a reaches only South's b; f, g and h reach North.
    state = position([1, 0, 0, 0, 0, 3, 2, 1], [0] * 8)
    assert SUPERWARI.legal_moves(state, SOUTH) == ["f", "g", "h"]
    assert error(state, "a") == "that move would leave {seat1} with no stones; you must play f, g or h"
    play(state, "g")
    assert rows(state) == ([1, 0, 0, 0, 0, 3, 0, 2], [1, 0, 0, 0, 0, 0, 0, 0])
    assert state.over is None and state.captured == [0, 0]


def test_the_forced_pit_is_named_alone_when_only_one_feeds():
    state = position([1, 0, 0, 0, 0, 0, 0, 2], [0] * 8)
    assert error(state, "A") == "that move would leave {seat1} with no stones; you must play h"


def test_unavoidable_starving_takes_every_stone_left_and_ends_the_game():
    # North has nothing and no South move reaches North: play any, take the board.
    state = position([1, 1, 0, 0, 0, 0, 0, 0], [0] * 8, captured=(23, 23))
    assert SUPERWARI.legal_moves(state, SOUTH) == ["a", "b"]
    play(state, "a")
    assert state.pits == [0] * 16
    assert state.captured == [25, 23]
    assert state.over == "starving"
    assert SUPERWARI.to_act(state) == frozenset()
    assert SUPERWARI.result(state) == Outcome(winners=(SOUTH,))


def test_unavoidable_starving_capture_counts_then_the_sweep_takes_the_rest():
    # Both South moves take North's last stone: g captures North's a (2) and the sweep
    # then takes South's h (2).
    state = position([0, 0, 0, 0, 0, 0, 2, 1], [1, 0, 0, 0, 0, 0, 0, 0], captured=(21, 23))
    assert SUPERWARI.legal_moves(state, SOUTH) == ["g", "h"]
    play(state, "g")
    assert state.pits == [0] * 16
    assert state.captured == [25, 23]
    assert state.over == "starving"


def test_unavoidable_starving_sweep_can_make_north_win():
    # South is empty and neither of North's f, g reaches South's row.
    state = position([0] * 8, [0, 0, 0, 0, 0, 1, 1, 0], to_move=NORTH, captured=(22, 24))
    assert SUPERWARI.legal_moves(state, NORTH) == ["f", "g"]
    play(state, "f")
    assert state.captured == [22, 26]
    assert SUPERWARI.result(state) == Outcome(winners=(NORTH,))


def test_majority_on_an_unavoidable_starving_move_ends_without_the_sweep():
    state = position([0, 0, 0, 0, 0, 0, 2, 1], [1, 0, 0, 0, 0, 0, 0, 0], captured=(23, 21))
    play(state, "g")
    assert state.over == "majority"
    assert state.captured == [25, 21]
    assert rows(state) == ([0, 0, 0, 0, 0, 0, 0, 2], [0] * 8)  # not swept
    assert SUPERWARI.result(state) == Outcome(winners=(SOUTH,))


# --- majority -------------------------------------------------------------------------


def test_reaching_25_of_48_ends_the_game_at_once():
    state = position([0] * 7 + [1], [2, 0, 0, 0, 0, 0, 0, 5], captured=(22, 18))
    play(state, "h")
    assert state.captured == [25, 18]
    assert state.over == "majority"
    assert SUPERWARI.to_act(state) == frozenset()
    assert SUPERWARI.result(state) == Outcome(winners=(SOUTH,))
    assert error(state, "a", seat=NORTH) == "the game is over"
    assert SUPERWARI.legal_moves(state, NORTH) == []


def test_24_of_48_is_not_a_majority():
    state = position([0] * 7 + [1], [1, 0, 0, 0, 0, 0, 0, 5], captured=(22, 19))
    play(state, "h")
    assert state.captured == [24, 19]
    assert state.over is None
    assert SUPERWARI.to_act(state) == frozenset({NORTH})


def test_majority_is_more_than_half_of_all_stones_on_other_sizes():
    # -pits=4 -stones=1: 8 stones, 5 a majority. d's stone makes North's a 2.
    state = SUPERWARI.setup(2, {"pits": 4, "stones": 1}, None)
    state.pits, state.captured = [0, 0, 0, 1, 1, 0, 0, 1], [3, 2]
    play(state, "d")
    assert (state.captured, state.over) == ([5, 2], "majority")


# --- repetition -----------------------------------------------------------------------


@pytest.mark.parametrize("captured, outcome", [((23, 23), Outcome(tie=True)), ((22, 24), Outcome(winners=(NORTH,)))])
def test_a_repeated_position_gives_each_player_their_own_side(captured, outcome):
    # One stone each, chasing round the board. After South's h, South is empty, so
    # North must feed with h; that brings back the start with South to move.
    state = position([1, 0, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0], captured=captured)
    play(state, *"aabbccddeeffgg", "h")
    assert rows(state) == ([0] * 8, [1, 0, 0, 0, 0, 0, 0, 1])
    assert SUPERWARI.legal_moves(state, NORTH) == ["h"]
    assert error(state, "a") == "that move would leave {seat0} with no stones; you must play h"
    play(state, "h")
    assert state.over == "repetition"
    assert state.pits == [0] * 16
    assert state.captured == [captured[0] + 1, captured[1] + 1]
    assert SUPERWARI.result(state) == outcome


def test_the_same_stones_with_the_other_side_to_move_is_not_a_repetition():
    # -pits=4: South a..d, North a..d. After nine moves the stones are back where
    # they started, but with North to move instead of South: the game goes on.
    state = SUPERWARI.setup(2, {"pits": 4, "stones": 1}, None)
    state.pits, state.captured, state.history = [0, 2, 0, 3, 0, 1, 0, 0], [1, 1], [[0, 2, 0, 3, 0, 1, 0, 0, SOUTH]]
    play(state, "d")
    assert state.pits == [0, 2, 0, 0, 1, 2, 1, 0]
    play(state, "b", "b", "c", "c", "d", "a", "a", "c")
    assert state.pits == [0, 2, 0, 3, 0, 1, 0, 0]
    assert state.to_move == NORTH
    assert state.over is None and state.captured == [1, 1]
    assert len(state.history) == 10


def test_positions_before_a_capture_are_forgotten():
    state = position([0] * 7 + [1], [1, 0, 0, 0, 0, 0, 0, 5])
    play(state, "h")
    assert state.captured == [2, 0]
    assert state.history == [[0] * 8 + [0, 0, 0, 0, 0, 0, 0, 5] + [NORTH]]


# --- resignation and the end ----------------------------------------------------------


@pytest.mark.parametrize("loser, winner", [(SOUTH, NORTH), (NORTH, SOUTH)])
def test_resigning_ends_the_game_for_the_other_player(loser, winner):
    state = play(SUPERWARI.setup(2, {}, None), "c")
    SUPERWARI.resign(state, loser)
    assert SUPERWARI.result(state) == Outcome(winners=(winner,))
    assert SUPERWARI.to_act(state) == frozenset()
    assert SUPERWARI.legal_moves(state, NORTH) == []
    assert error(state, "a", seat=NORTH) == "the game is over"


# --- move text ------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["c", "C", " c", "c\n", "\t C  "])
def test_moves_are_case_insensitive_letters(text):
    assert SUPERWARI.check(SUPERWARI.setup(2, {}, None), SOUTH, text).move == "c"


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "send the letter of one of your pits, a–h"),
        ("  \n", "send the letter of one of your pits, a–h"),
        ("k", "there is no pit k (your pits are a–h)"),
        ("Z", "there is no pit z (your pits are a–h)"),
        ("d", "pit d is empty"),
        ("cd", '"cd" is not a pit; send the letter of one of your pits, a–h'),
        ("3", '"3" is not a pit; send the letter of one of your pits, a–h'),
        ("é", '"é" is not a pit; send the letter of one of your pits, a–h'),
        ("ａ", '"ａ" is not a pit; send the letter of one of your pits, a–h'),
        ("a\x00", '"a?" is not a pit; send the letter of one of your pits, a–h'),
        ("b" * 100_000, '"bbbbbbbbbbbbbbbbbbbb..." is not a pit; send the letter of one of your pits, a–h'),
    ],
)
def test_bad_moves_get_precise_errors(text, message):
    state = position([3, 3, 3, 0, 3, 3, 3, 3], [3] * 8)
    assert error(state, text) == message


def test_only_the_seat_to_move_may_move():
    state = SUPERWARI.setup(2, {}, None)
    assert error(state, "a", seat=NORTH) == "it is not your turn; {seat0} is to move"


def test_apply_refuses_an_illegal_move():
    with pytest.raises(ValueError):
        SUPERWARI.apply(position([1, 0, 0, 0, 0, 0, 0, 1], [2] + [0] * 7), SOUTH, "h", None)


# --- views and the board --------------------------------------------------------------

START_SOUTH = """\
   h    g    f    e    d    c    b    a
+----+----+----+----+----+----+----+----+
|  3 |  3 |  3 |  3 |  3 |  3 |  3 |  3 |   bob
+----+----+----+----+----+----+----+----+
|  3 |  3 |  3 |  3 |  3 |  3 |  3 |  3 |   alice
+----+----+----+----+----+----+----+----+
   a    b    c    d    e    f    g    h
Captured: alice 0, bob 0
"""


def board(state, seat, game=SUPERWARI) -> str:
    return render_board(game, game.view(state, seat), NAMES)


def test_start_board_for_south_and_the_public_is_the_seeds():
    state = SUPERWARI.setup(2, {}, None)
    assert board(state, SOUTH) == START_SOUTH
    assert board(state, None) == START_SOUTH


def test_start_board_for_north_has_north_at_the_bottom():
    assert board(SUPERWARI.setup(2, {}, None), NORTH) == """\
   h    g    f    e    d    c    b    a
+----+----+----+----+----+----+----+----+
|  3 |  3 |  3 |  3 |  3 |  3 |  3 |  3 |   alice
+----+----+----+----+----+----+----+----+
|  3 |  3 |  3 |  3 |  3 |  3 |  3 |  3 |   bob
+----+----+----+----+----+----+----+----+
   a    b    c    d    e    f    g    h
Captured: alice 0, bob 0
"""


def test_midgame_board_with_two_digit_pits_from_both_sides():
    state = position([12, 0, 1, 2, 3, 4, 5, 6], [7, 8, 9, 10, 0, 1, 2, 0], to_move=NORTH, captured=(3, 10))
    assert board(state, SOUTH) == """\
   h    g    f    e    d    c    b    a
+----+----+----+----+----+----+----+----+
|  0 |  2 |  1 |  0 | 10 |  9 |  8 |  7 |   bob
+----+----+----+----+----+----+----+----+
| 12 |  0 |  1 |  2 |  3 |  4 |  5 |  6 |   alice
+----+----+----+----+----+----+----+----+
   a    b    c    d    e    f    g    h
Captured: alice 3, bob 10
"""
    assert board(state, NORTH) == """\
   h    g    f    e    d    c    b    a
+----+----+----+----+----+----+----+----+
|  6 |  5 |  4 |  3 |  2 |  1 |  0 | 12 |   alice
+----+----+----+----+----+----+----+----+
|  7 |  8 |  9 | 10 |  0 |  1 |  2 |  0 |   bob
+----+----+----+----+----+----+----+----+
   a    b    c    d    e    f    g    h
Captured: alice 3, bob 10
"""


def test_small_and_wari_boards_shrink():
    state = SUPERWARI.setup(2, {"pits": 4, "stones": 6}, None)
    assert board(state, NORTH) == """\
   d    c    b    a
+----+----+----+----+
|  6 |  6 |  6 |  6 |   alice
+----+----+----+----+
|  6 |  6 |  6 |  6 |   bob
+----+----+----+----+
   a    b    c    d
Captured: alice 0, bob 0
"""
    lines = board(WARI.setup(2, {}, None), SOUTH, game=WARI).splitlines()
    assert lines[0] == "   f    e    d    c    b    a"
    assert lines[2] == "|  4 |  4 |  4 |  4 |  4 |  4 |   bob"


def test_finished_board_says_why_it_ended():
    state = position([1, 0, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0], captured=(23, 23))
    play(state, *"aabbccddeeffgghh")
    assert board(state, None).splitlines()[-2:] == [
        "Captured: alice 24, bob 24",
        "The position repeated: each player took the stones on their own side.",
    ]
    state = position([1, 1, 0, 0, 0, 0, 0, 0], [0] * 8, captured=(23, 23))
    play(state, "b")
    last = board(state, NORTH).splitlines()[-1]
    assert last == "alice had to leave bob with no stones, and took the rest of the board."
    state = position([0] * 7 + [1], [2, 0, 0, 0, 0, 0, 0, 5], captured=(22, 18))
    play(state, "h")
    assert board(state, SOUTH).splitlines()[-1] == "alice has captured more than half of the stones."


def test_view_data_is_oriented_for_the_viewer():
    state = position([1, 2, 3, 4, 5, 6, 7, 8], [9, 10, 11, 12, 13, 14, 15, 16], to_move=NORTH, captured=(0, 0))
    view = SUPERWARI.view(state, NORTH)
    assert (view["bottom_seat"], view["top_seat"]) == (NORTH, SOUTH)
    assert view["bottom_row"] == [9, 10, 11, 12, 13, 14, 15, 16]
    assert view["top_row"] == [8, 7, 6, 5, 4, 3, 2, 1]
    assert view["bottom_letters"] == list("abcdefgh")
    assert view["top_letters"] == list("hgfedcba")
    assert view["to_move"] == NORTH


# --- properties over random games -----------------------------------------------------

SIZES = [
    ("superwari", {}),
    ("wari", {}),
    ("superwari", {"pits": 4, "stones": 1}),
    ("superwari", {"pits": 10, "stones": 6}),
]
MOVE_BOUND = 3000  # random games here end within ~850 moves; the repetition rule ends every game


@settings(max_examples=25, deadline=None)
@given(size=st.sampled_from(SIZES), seed=st.integers(0, 2**32 - 1))
def test_random_games_conserve_stones_round_trip_and_end(size, seed):
    name, params = size
    game = get_game(name)
    rng = random.Random(seed)
    state = game.setup(2, params, None)
    total = sum(state.pits)
    for _ in range(MOVE_BOUND):
        if not game.to_act(state):
            break
        seat = state.to_move
        legal = game.legal_moves(state, seat)
        letters = "abcdefghij"[: state.pits_per_side]
        assert [m for m in letters if game.check(state, seat, m).ok] == legal
        game.apply(state, seat, rng.choice(legal), None)
        assert sum(state.pits) + sum(state.captured) == total
        data = json.loads(json.dumps(game.serialise(state)))
        assert game.restore(data) == state
        if state.over is None:
            assert any(state.pits[i] for i in range(state.pits_per_side * (1 - seat), state.pits_per_side * (2 - seat)))
    else:
        pytest.fail(f"game not over after {MOVE_BOUND} moves")
    assert game.result(state) is not None
