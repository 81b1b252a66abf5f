"""Serpent's robots (pbmserv/robots/serpent.py): their own move generation agrees with
the engine's on every size, every level plays legal moves, the same seed gives the
same move, the strong level takes a win and sidesteps a loss, and beats random play.

Size-4 cell names, for the literal positions below:

      a1  a2  a3  a4
    b1  b2  b3  b4  b5
  c1  c2  c3  c4  c5  c6
d1  d2  d3  d4  d5  d6  d7
  e1  e2  e3  e4  e5  e6
    f1  f2  f3  f4  f5
      g1  g2  g3  g4
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

from pbmserv.games import get_game
from pbmserv.games.serpent import SerpentState, position_key
from pbmserv.robots import choose
from pbmserv.robots.serpent import NODES, Searcher, root_position

SERPENT = get_game("serpent")
BLACK, WHITE = 0, 1


def position(board: str, to_move: int, size: int = 4, flags=(True, True)) -> SerpentState:
    """A game standing at `board` (the engine's string: cells in row order), as if
    just reached."""
    return SerpentState(size=size, board=board, flags=list(flags), to_move=to_move,
                        history=[position_key(board, flags, to_move)])


def copy(state: SerpentState) -> SerpentState:
    return SERPENT.restore(SERPENT.serialise(state))


def play(state: SerpentState, move: str) -> SerpentState:
    after = copy(state)
    verdict = SERPENT.check(after, after.to_move, move)
    assert verdict.ok, (move, verdict.error)
    SERPENT.apply(after, after.to_move, verdict.move, None)
    return after


def wins_at_once(state: SerpentState, move: str) -> bool:
    outcome = SERPENT.result(play(state, move))
    return outcome is not None and state.to_move in outcome.winners


def random_positions(size: int, seed: int, every: int):
    """Every `every`th position of a game of random moves and level-1 moves (so that
    the positions look like play, not noise), to its end."""
    rng = random.Random(f"serpent-robots-{size}-{seed}")
    state = SERPENT.setup(2, {"size": size}, None)
    ply = 0
    while SERPENT.result(state) is None:
        if ply % every == 0:
            yield state
        seat = state.to_move
        level = 1 if rng.random() < 0.5 else 0
        move = choose(SERPENT, state, seat, level, random.Random(rng.random()))
        state = play(state, move)
        ply += 1


@pytest.mark.parametrize("size", [4, 5, 6])
def test_its_own_move_generation_lists_exactly_the_engines_legal_moves(size):
    for state in random_positions(size, seed=1, every=1 if size == 4 else 3):
        rules, root = root_position(state)
        mine = sorted(text for text, _ in rules.children(root))
        assert mine == sorted(SERPENT.legal_moves(state, state.to_move)), state.board


def test_moves_that_repeat_a_position_are_refused_as_the_engine_refuses_them():
    # A seeded random game on size 4 whose 23rd position has two moves the
    # repetition rule forbids (found by search): the robots' history reading must
    # refuse them too.
    rng = random.Random(13)
    state = SERPENT.setup(2, {"size": 4}, None)
    for _ in range(22):
        state = play(state, rng.choice(sorted(SERPENT.legal_moves(state, state.to_move))))
    for move in ("a1/w", "a2/w"):
        assert "repeat an earlier position" in SERPENT.check(state, state.to_move, move).error
    rules, root = root_position(state)
    assert sorted(text for text, _ in rules.children(root)) == sorted(SERPENT.legal_moves(state, state.to_move))


def test_each_move_leads_to_the_engines_position():
    for state in random_positions(5, seed=2, every=4):
        rules, root = root_position(state)
        for text, child in rules.children(root)[:6]:
            after = play(state, text)
            assert root_position(after)[1].stones == child.stones
            assert tuple(after.flags) == child.flags


@pytest.mark.parametrize("size", [4, 5, 6])
def test_every_level_plays_a_legal_move(size):
    for state in random_positions(size, seed=3, every=6):
        legal = set(SERPENT.legal_moves(state, state.to_move))
        for level in (0, 1, 2, 3):
            move = choose(SERPENT, state, state.to_move, level, random.Random(level))
            verdict = SERPENT.check(state, state.to_move, move)
            assert verdict.ok, (level, move, verdict.error)
            assert move in legal


def test_the_same_seed_gives_the_same_move():
    states = list(random_positions(5, seed=4, every=9))
    for state in states:
        for level in (1, 2, 3):
            first = choose(SERPENT, state, state.to_move, level, random.Random(7))
            assert all(choose(SERPENT, state, state.to_move, level, random.Random(7)) == first for _ in range(2))


def test_a_budget_smaller_than_one_ply_finishes_that_ply_and_stops():
    # The empty size-6 board has 91 moves, more than level 2's budget: the search
    # must not go on deepening without a budget.
    rules, root = root_position(SERPENT.setup(2, {"size": 6}, None))
    searcher = Searcher(rules, NODES[2])
    assert searcher.best(root, random.Random(1)) in {text for text, _ in rules.children(root)}
    assert len(rules.children(root)) == 91
    assert searcher.used <= NODES[2] + 1 + 91  # the cut-short ply, then the whole of it once


def test_the_move_does_not_depend_on_string_hashing():
    """No set or dict order leaks into the choice: two interpreters with different
    hash seeds choose alike."""
    state = list(random_positions(5, seed=5, every=12))[2]
    script = (
        "import json, random, sys\n"
        "from pbmserv.games import get_game\n"
        "from pbmserv.robots import choose\n"
        "game = get_game('serpent')\n"
        "state = game.restore(json.loads(sys.stdin.read()))\n"
        "print(choose(game, state, state.to_move, 3, random.Random(11)))\n"
    )
    data = json.dumps(SERPENT.serialise(state))
    moves = set()
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        run = subprocess.run([sys.executable, "-c", script], input=data, capture_output=True, text=True,
                             env=env, check=True)
        moves.add(run.stdout.strip())
    assert len(moves) == 1
    assert moves == {choose(SERPENT, state, state.to_move, 3, random.Random(11))}


def test_the_strong_level_takes_an_obvious_win():
    # Black to move; d7 cuts White's last survival path or leaves White no move: a
    # win at once, the only one among nine moves.
    #      . o x x
    #     . o . . .
    #    x x . x x .
    #   . . o . o . .
    #    . o . . o o
    #     . o x x .
    #      . o . x
    state = position(".oxx.o...xx.xx...o.o...o..oo.oxx..o.x", BLACK)
    winning = [move for move in SERPENT.legal_moves(state, BLACK) if wins_at_once(state, move)]
    assert winning == ["d7"]
    for seed in range(3):
        assert choose(SERPENT, state, BLACK, 3, random.Random(seed)) == "d7"


def test_the_strong_level_avoids_an_obvious_loss():
    # White to move, thirteen moves; after all but b4 and g1-e3 Black wins at once.
    # The one-ply robot walks into it; levels 2 and 3 do not.
    #      . . . x
    #     . . . . x
    #    . . x x o .
    #   . . x o . . o
    #    . x . x o x
    #     . o . . x
    #      o x o x
    state = position("...x....x..xxo...xo..o.x.xox.o..xoxox", WHITE)
    moves = SERPENT.legal_moves(state, WHITE)
    assert len(moves) == 13

    def loses_next(move: str) -> bool:
        after = play(state, move)
        return SERPENT.result(after) is not None or any(
            wins_at_once(after, reply) for reply in SERPENT.legal_moves(after, BLACK))

    safe = {move for move in moves if not loses_next(move)}
    assert safe == {"b4", "g1-e3"}
    for seed in range(3):
        assert choose(SERPENT, state, WHITE, 3, random.Random(seed)) in safe


@pytest.mark.parametrize("size,games", [(4, 4), (5, 2)])
def test_the_strong_level_beats_random_moves(size, games):
    for game in range(games):
        robot = game % 2
        rng = random.Random(f"serpent-vs-random-{size}-{game}")
        state = SERPENT.setup(2, {"size": size}, None)
        while SERPENT.result(state) is None:
            seat = state.to_move
            move = choose(SERPENT, state, seat, 3 if seat == robot else 0, random.Random(rng.random()))
            state = play(state, move)
        assert SERPENT.result(state).winners == (robot,)
