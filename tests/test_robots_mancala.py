"""The Super-Wari and Wari robots (pbmserv/robots/mancala.py): legal, repeatable, and
strong where it is obvious."""

from __future__ import annotations

import random

import pytest

from pbmserv.games import games
from pbmserv.robots import choose

BOARDS = [("superwari", {}), ("wari", {}), ("superwari", {"pits": 4, "stones": 1}),
          ("superwari", {"pits": 10, "stones": 6})]


def new_game(name: str, params: dict[str, int]):
    game = games()[name]
    return game, game.setup(2, {p.name: p.default for p in game.params} | params, None)


def positions(name: str, params: dict[str, int], count: int, seed: int):
    """`count` positions of random games, at random moments (over games skipped)."""
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        game, state = new_game(name, params)
        stop = rng.randrange(60)
        for _ in range(stop):
            if game.result(state) is not None:
                break
            game.apply(state, state.to_move, rng.choice(game.legal_moves(state, state.to_move)), None)
        if game.result(state) is None:
            found.append(state)
    return game, found


def hand_built(name: str, pits: list[int], captured: list[int], to_move: int):
    game, state = new_game(name, {})
    state.pits, state.captured, state.to_move = pits, captured, to_move
    state.history = [[*pits, to_move]]
    return game, state


@pytest.mark.parametrize("name, params", BOARDS)
def test_every_level_plays_a_legal_move(name, params):
    game, found = positions(name, params, 12, seed=len(name) + len(params))
    for i, state in enumerate(found):
        seat = state.to_move
        legal = game.legal_moves(state, seat)
        for level in range(4):
            move = choose(game, state, seat, level, random.Random(i))
            assert move in legal, (level, move, legal, state.pits)
            assert game.check(state, seat, move).ok


@pytest.mark.parametrize("name", ["superwari", "wari"])
def test_the_same_seed_gives_the_same_move(name):
    game, found = positions(name, {}, 4, seed=7)
    for state in found:
        for level in range(4):
            moves = {choose(game, state, state.to_move, level, random.Random(99)) for _ in range(2)}
            assert len(moves) == 1


@pytest.mark.parametrize("level", [1, 2, 3])
def test_takes_the_majority_when_it_can(level):
    # South has 22: h sows into North's a (2 stones) and captures 3, for 25 of 48.
    pits = [1, 0, 0, 0, 0, 0, 0, 1] + [2, 0, 0, 0, 2, 0, 0, 0]
    game, state = hand_built("superwari", pits, [22, 20], 0)
    assert choose(game, state, 0, level, random.Random(1)) == "h"


@pytest.mark.parametrize("level", [2, 3])
def test_does_not_hand_over_the_majority(level):
    # North has 23 and its h sows into South's a: playing c leaves a at 1, for North
    # to make 2 and capture the majority; playing a empties it.
    pits = [1, 0, 1, 0, 0, 0] + [0, 0, 0, 0, 0, 1]
    game, state = hand_built("wari", pits, [22, 23], 0)
    assert choose(game, state, 0, level, random.Random(1)) == "a"


def test_north_takes_the_majority_on_the_wari_board():
    # North has 22: its f sows into South's a (2 stones) and captures 3.
    pits = [2, 0, 0, 0, 1, 1] + [0, 1, 0, 0, 0, 1]
    game, state = hand_built("wari", pits, [20, 22], 1)
    move = choose(game, state, 1, 3, random.Random(5))
    game.apply(state, 1, move, None)
    assert game.result(state).winners == (1,)


@pytest.mark.parametrize("name", ["superwari", "wari"])
def test_the_strong_robot_beats_random_moves(name):
    for match in range(3):
        game, state = new_game(name, {})
        robot = match % 2
        rng = random.Random(match)
        while game.result(state) is None:
            seat = state.to_move
            move = choose(game, state, seat, 3 if seat == robot else 0, random.Random(rng.random()))
            game.apply(state, seat, move, None)
        assert game.result(state).winners == (robot,)
