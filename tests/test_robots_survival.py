"""Survival's robots: legal and reproducible moves at every level, the strong level's
grip on won and lost positions, and quick games against random moves.

Ohs (seat 0) moves first; with correct play Ohs wins (for example after A1/NE).
"""

from __future__ import annotations

import random

import pytest

from pbmserv.games import get_game
from pbmserv.games.survival import SurvivalState
from pbmserv.robots import choose
from pbmserv.robots.survival import Solver, _root

SURVIVAL = get_game("survival")
LEVELS = (0, 1, 2, 3)


def play(*moves: str) -> SurvivalState:
    """The position after `moves` from the start, each checked as a player's."""
    state = SURVIVAL.setup(2, {}, None)
    for move in moves:
        verdict = SURVIVAL.check(state, state.to_move, move)
        assert verdict.ok, (move, verdict.error)
        SURVIVAL.apply(state, state.to_move, verdict.move, None)
    return state


def after(state: SurvivalState, move: str) -> SurvivalState:
    copy = SURVIVAL.restore(SURVIVAL.serialise(state))
    SURVIVAL.apply(copy, copy.to_move, move, None)
    return copy


def random_positions(count: int, seed: int) -> list[SurvivalState]:
    """Positions of random games, from the empty board to the last plies."""
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        state = SURVIVAL.setup(2, {}, None)
        for _ in range(rng.randrange(0, 16)):
            if SURVIVAL.result(state) is not None:
                break
            SURVIVAL.apply(state, state.to_move, rng.choice(SURVIVAL.legal_moves(state, state.to_move)), None)
        if SURVIVAL.result(state) is None:
            found.append(state)
    return found


def wins_for_side_to_move(state: SurvivalState) -> bool:
    """The exact answer, from a search with no budget."""
    occupied, rays, side = _root(state)
    solver = Solver(0, 0)
    return solver.negamax(occupied, rays[side], rays[1 - side], 19, -1, 1, False) > 0


@pytest.mark.parametrize("level", LEVELS)
def test_every_move_is_legal_and_in_the_engines_list(level):
    for state in random_positions(8 if level == 3 else 30, seed=level):
        seat = state.to_move
        move = choose(SURVIVAL, state, seat, level, random.Random(7))
        assert move in SURVIVAL.legal_moves(state, seat)
        assert SURVIVAL.check(state, seat, move).ok


@pytest.mark.parametrize("level", LEVELS)
def test_the_same_seed_gives_the_same_move(level):
    for state in random_positions(3, seed=10 + level):
        seat = state.to_move
        moves = {choose(SURVIVAL, state, seat, level, random.Random(99)) for _ in range(2)}
        assert len(moves) == 1


@pytest.mark.parametrize("level", (1, 2, 3))
def test_takes_a_win_on_the_spot(level):
    # Eks's D4/SW points only at C5, which Ohs's C1/S also reaches: C5 leaves Eks nowhere.
    state = play("C1/S", "D4/SW")
    move = choose(SURVIVAL, state, 0, level, random.Random(1))
    assert move.startswith("C5/")
    assert SURVIVAL.result(after(state, move)).winners == (0,)


@pytest.mark.parametrize("level", (2, 3))
def test_does_not_point_at_a_cell_the_opponent_takes_next(level):
    # Ohs may go to D4 or C5 (E3/SW), Eks to B4 or C5 (A3/SE). An arrow at no vacant
    # cell loses, and so does one at a single cell Eks can take first (D4/SW at C5,
    # C5/NW at B4): 8 of the 12 moves lose at once; C5/N, C5/NE, D4/N and D4/NW do not.
    state = play("E3/SW", "A3/SE")
    for seed in range(4):
        move = choose(SURVIVAL, state, 0, level, random.Random(seed))
        assert move in ("C5/N", "C5/NE", "D4/N", "D4/NW")


def test_the_strong_level_keeps_a_won_position_won():
    rng = random.Random(5)
    checked = 0
    while checked < 3:
        state = play()
        for _ in range(7):
            state = after(state, rng.choice(SURVIVAL.legal_moves(state, state.to_move)))
            if SURVIVAL.result(state) is not None:
                break
        if SURVIVAL.result(state) is not None or not wins_for_side_to_move(state):
            continue
        move = choose(SURVIVAL, state, state.to_move, 3, random.Random(checked))
        following = after(state, move)
        assert SURVIVAL.result(following) is not None or not wins_for_side_to_move(following), move
        checked += 1


def test_the_strong_level_beats_random_moves():
    for game in range(6):
        robot = game % 2
        rng = random.Random(game)
        state = play()
        while SURVIVAL.result(state) is None:
            seat = state.to_move
            state = after(state, choose(SURVIVAL, state, seat, 3 if seat == robot else 0, random.Random(rng.random())))
        assert SURVIVAL.result(state).winners == (robot,)
