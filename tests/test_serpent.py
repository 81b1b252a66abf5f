"""Serpent: every rule of shared/rules/serpent.md on literal size-4 positions, random
games, and whole games by mail.

Size-4 cell names (axial (q, r) in brackets for a few):

      a1  a2  a3  a4                a1 (0,-3)
    b1  b2  b3  b4  b5              b1 (-1,-2)
  c1  c2  c3  c4  c5  c6            c1 (-2,-1)
d1  d2  d3  d4  d5  d6  d7          d1 (-3,0)  d4 (0,0)
  e1  e2  e3  e4  e5  e6            e1 (-3,1)
    f1  f2  f3  f4  f5
      g1  g2  g3  g4
"""

from __future__ import annotations

import json
import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games import get_game
from pbmserv.games.serpent import EMPTY, GEOMETRIES, INF, STONE, SerpentState, Side, position_key
from pbmserv.render import render_board

SERPENT = get_game("serpent")
GEO = GEOMETRIES[4]
NAMES = ["alice", "bob"]
BLACK, WHITE = 0, 1


def position(black: str = "", white: str = "", to_move: int = BLACK, flags=(True, True)) -> SerpentState:
    """A size-4 game standing at this position, as if it had just been reached."""
    board = [EMPTY] * GEO.cells
    for stone, cells in (("x", black), ("o", white)):
        for name in cells.split():
            board[GEO.index[name]] = stone
    text = "".join(board)
    return SerpentState(size=4, board=text, flags=list(flags), to_move=to_move,
                        history=[position_key(text, flags, to_move)])


def check(state: SerpentState, text: str):
    return SERPENT.check(state, state.to_move, text)


def error(state: SerpentState, text: str) -> str | None:
    return check(state, text).error


def play(state: SerpentState, *moves: str) -> SerpentState:
    for move in moves:
        verdict = check(state, move)
        assert verdict.ok, (move, verdict.error)
        SERPENT.apply(state, state.to_move, verdict.move, None)
    return state


def stones(state: SerpentState, stone: str) -> str:
    return GEO.name_list(c for c in range(GEO.cells) if state.board[c] == stone)


def cell(name: str) -> int:
    return GEO.index[name]


# --- board and names ------------------------------------------------------------------


def test_cell_counts_names_and_neighbours_of_the_rules_page():
    assert [GEOMETRIES[n].cells for n in (4, 5, 6)] == [37, 61, 91]
    assert [len(row) for row in GEO.rows] == [4, 5, 6, 7, 6, 5, 4]
    assert [len(row) for row in GEOMETRIES[5].rows] == [5, 6, 7, 8, 9, 8, 7, 6, 5]
    assert GEOMETRIES[5].coords[GEOMETRIES[5].index["e5"]] == (0, 0)
    assert GEOMETRIES[6].coords[GEOMETRIES[6].index["f6"]] == (0, 0)
    assert GEO.coords[cell("d4")] == (0, 0)

    def touches(name):
        return GEO.name_list(GEO.nbrs[cell(name)])

    assert touches("b2") == "a1 a2 b1 b3 c2 c3"
    assert touches("d4") == "c3 c4 d3 d5 e3 e4"
    assert touches("e3") == "d3 d4 e2 e4 f2 f3"
    assert touches("a1") == "a2 b1 b2"
    assert touches("d7") == "c6 d6 e6"
    assert touches("g4") == "f4 f5 g3"


def test_start_and_parameters():
    assert [(p.name, p.default, p.low, p.high) for p in SERPENT.params] == [("size", 5, 4, 6)]
    assert (SERPENT.name, SERPENT.title, SERPENT.template) == ("serpent", "Serpent", "serpent.txt")
    state = SERPENT.setup(2, {"size": 4}, None)
    assert state.board == "." * 37 and state.to_move == BLACK
    assert SERPENT.to_act(state) == frozenset({BLACK})
    assert SERPENT.legal_moves(state, BLACK) == GEO.names
    assert SERPENT.legal_moves(state, WHITE) == []
    assert len(SERPENT.setup(2, {}, None).board) == 61


# --- survival paths -------------------------------------------------------------------


def test_the_rules_page_survival_path_is_3_long_not_1():
    state = position("d2 d3 d4 b3", "c4")
    side = Side(list(state.board), "x", GEO)
    # A plain BFS would go d4 -> c3 -> b3, but c3 touches the body stone d3.
    assert side.end_distance(cell("d2")) == 3
    assert side.end_distance(cell("d4")) == 3
    assert side.end_distance(cell("b3")) == 3
    length, cells, other = side.search(cell("d2"), path=True)
    assert (length, GEO.name_list(cells), GEO.names[other]) == (3, "b1 b2 c1", "b3")
    length, cells, other = side.search(cell("d4"), path=True)
    assert (length, GEO.name_list(cells), GEO.names[other]) == (3, "b4 c5 d5", "b3")


def test_a_kill_that_a_plain_bfs_would_miss():
    # Black egg a1 and snake c2-c3. White's b1 leaves a1 only b2, which touches c2 AND c3:
    # a plain BFS still sees a1 next to the snake, but there is no survival path.
    state = position("a1 c2 c3", "a2", to_move=WHITE, flags=(True, False))
    assert Side(list(state.board), "x", GEO).dead(True) == []  # before: a1 b1 c2 is a path
    play(state, "b1")
    assert state.flags == [True, True]  # White now has two eggs
    assert stones(state, "x") == "" and stones(state, "o") == "a2 b1"
    assert state.removed == [["a1", "c2", "c3"], []]
    assert (state.over, SERPENT.result(state).winners) == ("wipeout", (WHITE,))
    assert SERPENT.to_act(state) == frozenset()


def brute_distance(board: list[str], stone: str, a: int, limit: int) -> int:
    """The true shortest survival path from end `a`, by trying every simple path of
    empty cells up to `limit` long and filling it: INF if none that short."""
    side = Side(board, stone, GEO)
    group_a = side.gid[a]
    best = INF

    def is_valid(path):
        filled = list(board)
        for c in path:
            filled[c] = stone
        after = Side(filled, stone, GEO)
        k = after.gid[a]
        members = set(after.groups[k])
        old = {c for c in range(GEO.cells) if board[c] == stone and after.gid[c] == k}
        groups_in = {side.gid[c] for c in old}
        ends_ok = a in side.ends[group_a]
        other = groups_in - {group_a}
        if not after.valid[k] or len(other) != 1 or not ends_ok:
            return False
        (g,) = other
        # exactly A, the path and B: no third group, and the B end touched is an end
        return members == set(side.groups[group_a]) | set(path) | set(side.groups[g]) and any(
            b in side.ends[g] and b in GEO.nbrs[path[-1]] for b in side.groups[g])

    def extend(path):
        nonlocal best
        if len(path) >= best:
            return
        if is_valid(path):
            best = len(path)
            return
        if len(path) == limit:
            return
        for n in GEO.nbrs[path[-1]]:
            if board[n] == EMPTY and n not in path:
                extend(path + [n])

    for s in GEO.nbrs[a]:
        if board[s] == EMPTY:
            extend([s])
    return best


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), plies=st.integers(4, 30))
def test_the_bfs_method_matches_filling_every_short_path(seed, plies):
    rng = random.Random(seed)
    state = SERPENT.setup(2, {"size": 4}, None)
    for _ in range(plies):
        if not SERPENT.to_act(state):
            break
        SERPENT.apply(state, state.to_move, rng.choice(SERPENT.legal_moves(state, state.to_move)), None)
    board = list(state.board)
    for stone in STONE:
        side = Side(board, stone, GEO)
        for ends in side.ends:
            for a in ends:
                fast = side.end_distance(a)
                slow = brute_distance(board, stone, a, 4)
                assert min(fast, 5) == min(slow, 5), (state.board, GEO.names[a])


# --- placement ------------------------------------------------------------------------


def test_placement_errors_say_exactly_what_is_wrong():
    state = position("d1 d2 d6 c3 e4", "g4")
    assert error(state, "d2") == "d2 is not empty"
    assert error(state, "g4") == "g4 is not empty"
    assert error(state, "c1") == "c1 touches your snake at d1 d2"
    assert error(state, "e9") == "e9 is not on the board: row e has cells e1–e6"
    assert error(state, "h1") == "h1 is not on the board: the rows are a–g"
    assert error(state, "a0") == "a0 is not on the board: row a has cells a1–a4"
    assert error(state, "") == ("send a cell to place on, e.g. e5, or a tail move, e.g. c3-e3, "
                                "optionally ending /b or /w")
    assert error(state, "pass").startswith('"pass" is not a move; send a cell')
    assert error(position("c3 d5 e3"), "d4") == "d4 touches three of your eggs (c3 d5 e3); a stone may touch at most two"
    assert error(position("c3 d5 e3 e4"), "d4") == "d4 touches your snake at d5 e3 e4"  # d5-e4-e3 is one snake
    assert SERPENT.check(state, WHITE, "a1").error == "it is not your turn; {seat0} is to move"


def test_placements_touching_enemy_stones_or_two_eggs_are_fine_and_join_them():
    state = position("c3 d5 a1 g4", "d3 e3 e4")
    play(state, "d4")  # touches eggs c3 and d5 and three White stones
    side = Side(list(state.board), "x", GEO)
    snake = side.groups[side.gid[cell("d4")]]
    assert GEO.name_list(snake) == "c3 d4 d5"
    assert GEO.name_list(side.ends[side.gid[cell("d4")]]) == "c3 d5"


def test_case_spaces_and_needless_suffix_give_the_canonical_move():
    state = position("d1 d2 d6")
    assert check(state, " D1 - d3 ").move == "d1-d3"
    assert check(state, "d1-d3/B").move == "d1-d3"
    assert check(state, "A4 / w").move == "a4"
    assert error(state, "a4/q").startswith('"/q" is not a removal order')


def test_the_flag_is_set_by_a_second_group_before_removals():
    state = position("", "", flags=(False, False))
    play(state, "d4")
    assert state.flags == [False, False]
    play(state, "a1")
    assert state.flags == [False, False]
    play(state, "d6")  # a second Black group: the flag is set for good
    assert state.flags == [True, False]
    play(state, "g4")
    assert state.flags == [True, True]
    # d5 joins d4 and d6 into one snake: the flag stays, so that lone snake is dead
    # and goes, Black's last group: Black loses.
    play(state, "d5")
    assert state.removed == [["d4", "d5", "d6"], []]
    assert SERPENT.result(state).winners == (WHITE,)


def test_a_lone_group_once_the_flag_is_set_is_dead():
    board = list(position("d4").board)
    side = Side(board, "x", GEO)
    assert side.dead(False) == [] and side.dead(True) == [0]


# --- tail moves -----------------------------------------------------------------------


def test_head_and_tail_and_moving_the_tail():
    # Snake d1-d2 and egg d6: d2 has the path d3 d4 d5 (3); d1's only empty
    # neighbours c1 and e1 touch the body d2, so it has none: d2 is the head.
    state = position("d1 d2 d6")
    side = Side(list(state.board), "x", GEO)
    assert (side.end_distance(cell("d2")), side.end_distance(cell("d1"))) == (3, INF)
    assert error(state, "d2-d3") == ("d2 is the head of its snake (survival path 3, against none from d1); "
                                     "only the tail d1 can move")
    assert error(state, "d6-d5") == "d6 is an egg; only the tail of a snake can move"
    assert error(state, "d1-e3") == "e3 does not touch the head of the snake at d2"
    assert error(state, "d1-d1") == "d1 is not empty"
    assert error(state, "c1-d3") == "there is no stone at c1"
    assert error(position("d1 d2 d6", "d3"), "d3-c3") == "d3 is not your stone"
    assert error(position("d1 d2 d3 d6"), "d2-c3") == "d2 is not an end of its snake (d1 d3); only the tail can move"
    # d1-d3: snake d2-d3, whose path d4 d5 is 2 < 3.
    play(state, "d1-d3")
    assert stones(state, "x") == "d2 d3 d6"
    assert state.last_move == "d1-d3"


def test_a_tail_move_that_does_not_shorten_is_refused():
    # d1-c2 gives the snake c2-d2, whose best path (c3 d4 d5) is still 3 long.
    assert error(position("d1 d2 d6"), "d1-c2") == (
        "the move does not shorten the snake's survival path (3 before, 3 after the removals)")
    assert "d1-c2" not in SERPENT.legal_moves(position("d1 d2 d6"), BLACK)


def test_on_a_tie_either_end_is_the_tail():
    # The rules page's example: both ends of d2-d3-d4 are 3 from b3.
    state = position("d2 d3 d4 b3", "c4")
    assert check(state, "d2-c3").error  # c3 touches d3 too: not a snake
    legal = SERPENT.legal_moves(state, BLACK)
    tails = sorted(m.split("-")[0] for m in legal if "-" in m)
    assert set(tails) == {"d2", "d4"}


def test_a_tail_move_that_merges_needs_no_shorter_path():
    state = position("d1 d2 d4 a4")
    play(state, "d1-d3")  # d3 joins the head d2 to the egg d4
    assert stones(state, "x") == "a4 d2 d3 d4"
    side = Side(list(state.board), "x", GEO)
    assert GEO.name_list(side.groups[side.gid[cell("d3")]]) == "d2 d3 d4"


def test_a_tail_move_must_leave_a_simple_chain():
    state = position("d1 d2 d3 a4")
    assert error(state, "d1-c2") == "after d1-c2 your stones at c2 d2 d3 would not form a snake (a simple chain)"
    assert {"d1-c3", "d1-d4"} <= set(SERPENT.legal_moves(state, BLACK))


# --- removals -------------------------------------------------------------------------


def test_a_removal_legal_in_only_one_order():
    # Black d1 is dead at once (its only empty neighbour d2 touches d3 and c2), and it
    # cuts White's c1 off from e1. White first: c1 goes, then d1 is still dead and goes
    # too; nothing of either colour can cross the region left behind. Black first: d1
    # goes alone, c1 lives again, and a placed stone is the only stone removed.
    state = position("a1 b2 c2 d3 g4", "c1 e1 e2 g2")
    assert check(state, "d1").move == "d1/w"
    assert check(state, "d1/w").move == "d1/w"
    assert error(state, "d1/b") == ("removing Black's dead groups first, the stone placed at d1 would be the only "
                                    "stone removed; you cannot pass by placing a stone that dies")
    legal = SERPENT.legal_moves(state, BLACK)
    assert "d1/w" in legal and "d1" not in legal and "d1/b" not in legal
    play(state, "d1")
    assert state.removed == [["d1"], ["c1"]]
    assert state.last_move == "d1/w" and state.over is None


def test_a_mutual_wipe_out_goes_to_the_colour_removed_second():
    # Black's egg a1 is walled in by White's lone snake a2-b2-b1: after any second Black
    # stone, every group on the board is dead.
    state = position("a1", "a2 b2 b1")
    assert check(state, "d4").move == "d4/w"  # default: the opponent's colour first
    legal = SERPENT.legal_moves(state, BLACK)
    assert {"d4/b", "d4/w"} <= set(legal) and "d4" not in legal
    won = play(position("a1", "a2 b2 b1"), "d4")
    assert SERPENT.result(won).winners == (BLACK,) and won.removed == [[], ["a2", "b1", "b2"]]
    assert stones(won, "x") == "a1 d4"  # Black's removal step is skipped
    lost = play(position("a1", "a2 b2 b1"), "d4/b")
    assert SERPENT.result(lost).winners == (WHITE,) and lost.removed == [["a1", "d4"], []]


def test_a_removal_must_leave_hostile_terrain():
    # Black c1 makes the snake c1-c2 and cuts White's a1-b1 off: both its ends' only
    # empty neighbour b2 touches the other end's stone. But the region its removal
    # leaves joins the open board, where White a4 still reaches g3: not hostile.
    state = position("a2 c2", "a1 b1 a4 g3")
    assert error(state, "c1") == ("removing White's a1 b1 is not allowed: the region left behind still has a "
                                  "survival path for White through b4 c4 d4 e3 f3 (from a4 to g3)")
    assert "c1" not in SERPENT.legal_moves(state, BLACK)


def test_a_repeated_position_is_refused():
    state = position("d1 d2 d6")
    after = position("d1 d2 d6 a4", to_move=WHITE)
    state.history.append(after.history[0])
    assert error(state, "a4") == "the position after it would repeat an earlier position"
    assert "a4" not in SERPENT.legal_moves(state, BLACK)


def test_a_player_with_no_legal_action_loses():
    # From a random game: after Black's g2-e2 White has no legal action left.
    state = position("a1 a3 a4 b1 b3 b5 c1 d6 e5 f2 f4 g2 g4", "b2 c3 c5 d4 d5 d7 e6")
    assert SERPENT.options(state, BLACK, first_only=True)
    play(state, "g2-e2")
    assert (state.over, state.winner) == ("stuck", BLACK)
    assert SERPENT.result(state).winners == (BLACK,) and SERPENT.to_act(state) == frozenset()
    state.over = None  # look again: every White action really is illegal
    assert SERPENT.options(state, WHITE) == []


def test_resignation_ends_the_game():
    state = position("d4")
    SERPENT.resign(state, BLACK)
    assert SERPENT.to_act(state) == frozenset() and SERPENT.result(state).winners == (WHITE,)


# --- rendering ------------------------------------------------------------------------


def test_rendered_board():
    state = position("a1 c2 c3", "a2", to_move=WHITE, flags=(True, False))
    play(state, "b1")
    assert render_board(SERPENT, SERPENT.view(state, None), NAMES) == """\
a       .1  o2  .3  .4
b     o1  .2  .3  .4  .5
c   .1  .2  .3  .4  .5  .6
d .1  .2  .3  .4  .5  .6  .7
e   .1  .2  .3  .4  .5  .6
f     .1  .2  .3  .4  .5
g       .1  .2  .3  .4

x alice (Black), has had two groups
o bob (White), has had two groups
Last move: bob b1
Removed: Black a1 c2 c3; White none
Black's last group was removed: bob wins.
"""
    state = position("d1 d2 d6", "c4", flags=(True, False))
    assert render_board(SERPENT, SERPENT.view(state, BLACK), NAMES) == """\
a       .1  .2  .3  .4
b     .1  .2  .3  .4  .5
c   .1  .2  .3  o4  .5  .6
d x1  x2  .3  .4  .5  x6  .7
e   .1  .2  .3  .4  .5  .6
f     .1  .2  .3  .4  .5
g       .1  .2  .3  .4

x alice (Black), has had two groups
o bob (White)
alice (x) to move.
"""


# --- random games ---------------------------------------------------------------------

PLY_BOUND = 600


def assert_all_alive(state: SerpentState) -> None:
    board = list(state.board)
    for seat, stone in enumerate(STONE):
        side = Side(board, stone, GEO if state.size == 4 else GEOMETRIES[state.size])
        assert all(side.valid), state.board
        assert side.dead(state.flags[seat]) == [], state.board


def random_game(seed: int, size: int) -> int:
    rng = random.Random(seed)
    state = SERPENT.setup(2, {"size": size}, None)
    for ply in range(PLY_BOUND):
        if not SERPENT.to_act(state):
            assert SERPENT.result(state) is not None
            return ply
        seat = state.to_move
        legal = SERPENT.legal_moves(state, seat)
        assert legal, "a player to move always has a legal action"
        move = rng.choice(legal)
        assert check(state, move).move == move
        SERPENT.apply(state, seat, move, None)
        data = json.loads(json.dumps(SERPENT.serialise(state)))
        assert SERPENT.restore(data) == state
        if state.over is None:
            assert_all_alive(state)
    pytest.fail(f"game not over after {PLY_BOUND} plies")


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_on_size_4_stay_valid_and_end(seed):
    random_game(seed, 4)


@pytest.mark.skipif(not os.environ.get("PBMSERV_SLOW"), reason="slow: set PBMSERV_SLOW=1")
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_on_size_5_stay_valid_and_end(seed):
    random_game(seed, 5)
