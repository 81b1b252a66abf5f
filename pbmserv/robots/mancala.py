"""Robots for Super-Wari and Wari (one sowing engine, `games/superwari.py`).

The search runs on a compact position of tuples with its own sowing, so a node costs
a few microseconds instead of an engine state's copy:

    (pits, captured, side, over, trail, fresh)

- `pits`: the board as the engine keeps it (South's a.. then North's a..);
- `captured`: (South's, North's); `side`: who moves; `over`: the game has ended;
- `trail`: the positions (pits + side) since the last capture within the search, and
  `fresh`: no capture since the root, so the game's own history still counts for the
  repetition rule.

Level 1 takes the most stones it can this move; levels 2 and 3 search with alpha-beta
(`search.Search`), level 3 with a budget about twelve times larger and an evaluation
that also values stones kept on its own side and the opponent's pits open to capture.
"""

from __future__ import annotations

import random
import string

from ..games import Game, State
from .search import WIN, Search, random_move

NODES = {2: 300, 3: 3_500}  # alpha-beta budgets (positions) by level: level 3 about 30 ms a move

Position = tuple  # (pits, captured, side, over, trail, fresh): see the module docstring
Move = tuple  # (board index sown from, stones captured, position after)


def _sow(pits: tuple, n: int, side: int, origin: int) -> tuple[list[int], int]:
    """The board after `side` sows from `origin`, and the stones captured: the
    engine's rule, with whole laps added at once."""
    board = list(pits)
    stones = board[origin]
    board[origin] = 0
    ring = 2 * n
    laps, rest = divmod(stones, ring - 1)
    if laps:
        board = [count + laps for count in board]
        board[origin] = 0
    for step in range(1, rest + 1):
        board[(origin + step) % ring] += 1
    last = (origin + rest) % ring if rest else (origin - 1) % ring
    gain = 0
    first = (1 - side) * n
    while first <= last < first + n and board[last] in (2, 3):  # never crosses to own row
        gain += board[last]
        board[last] = 0
        last -= 1
    return board, gain


class Rules:
    """The game's rules on compact positions, for one board size and one history."""

    def __init__(self, n: int, total: int, history: set[tuple]):
        self.n, self.total, self.history = n, total, history

    def children(self, p: Position) -> list[Move]:
        """Every legal move of the side to move, captures first (alpha-beta prunes
        more when good moves come early); none once the game is over."""
        pits, captured, side, over, trail, fresh = p
        if over:
            return []
        n = self.n
        own = side * n
        opponent = (1 - side) * n
        feeding, starving = [], []
        for origin in range(own, own + n):
            if pits[origin]:
                board, gain = _sow(pits, n, side, origin)
                child = self.after(board, gain, captured, side, trail, fresh)
                (feeding if any(board[opponent:opponent + n]) else starving).append((origin, gain, child))
        moves = feeding or starving
        moves.sort(key=lambda move: -move[1])
        return moves

    def after(self, board: list[int], gain: int, captured: tuple, side: int, trail: tuple, fresh: bool) -> Position:
        """The position once `side` has sown to `board` capturing `gain`: majority,
        unavoidable starving and repetition end the game as the engine ends it."""
        n = self.n
        caps = list(captured)
        caps[side] += gain
        if 2 * caps[side] > self.total:
            return (tuple(board), tuple(caps), 1 - side, True, trail, fresh)
        opponent = (1 - side) * n
        if not any(board[opponent:opponent + n]):  # only reached when every move starves
            caps[side] += sum(board)
            return ((0,) * (2 * n), tuple(caps), 1 - side, True, trail, fresh)
        pits = tuple(board)
        key = (pits, 1 - side)
        if gain:
            trail, fresh = (), False
        if key in trail or (fresh and key in self.history):
            caps[0] += sum(pits[:n])
            caps[1] += sum(pits[n:])
            return ((0,) * (2 * n), tuple(caps), 1 - side, True, trail, fresh)
        return (pits, tuple(caps), 1 - side, False, trail + (key,), fresh)


def _outcome(p: Position, me: int) -> float:
    """A finished game's value for `me`: about WIN for a win, by the margin."""
    margin = p[1][me] - p[1][1 - me]
    if margin > 0:
        return WIN + margin
    if margin < 0:
        return -WIN + margin
    return 0.0


def _store_difference(rules: Rules, me: int):
    """Level 2's evaluation: the captures so far."""
    def value(p: Position) -> float:
        if p[3]:
            return _outcome(p, me)
        return float(p[1][me] - p[1][1 - me])
    return value


def _positional(rules: Rules, me: int):
    """Level 3's evaluation: captures, plus a little for stones on one's own side
    (they feed later captures and the final count of a repetition or starving), and
    a little against pits holding 1 or 2 that the side to move may turn into 2s and
    3s; a win within reach of majority weighs more than a margin."""
    n = rules.n
    half = rules.total // 2
    mine = range(me * n, me * n + n)
    theirs = range((1 - me) * n, (1 - me) * n + n)

    def value(p: Position) -> float:
        pits, captured, side, over = p[0], p[1], p[2], p[3]
        if over:
            return _outcome(p, me)
        score = captured[me] - captured[1 - me]
        score += 0.25 * (sum(pits[i] for i in mine) - sum(pits[i] for i in theirs))
        weak_mine = sum(1 for i in mine if pits[i] in (1, 2))
        weak_theirs = sum(1 for i in theirs if pits[i] in (1, 2))
        score += 0.3 * (weak_theirs - weak_mine) if side == me else 0.15 * (weak_theirs - weak_mine)
        if captured[me] > half - 4 or captured[1 - me] > half - 4:
            score += 0.5 * (captured[me] - captured[1 - me])
        return score
    return value


def _root(state: State) -> tuple[Rules, Position]:
    """The rules for this board and its history since the last capture, and the position."""
    n = state.pits_per_side
    rules = Rules(n, sum(state.pits) + sum(state.captured), {(tuple(h[:-1]), h[-1]) for h in state.history})
    return rules, (tuple(state.pits), tuple(state.captured), state.to_move, False, (), True)


def choose(game: Game, state: State, seat: int, level: int, rng: random.Random) -> str:
    """The move of a level-`level` robot in `seat` (see the module docstring)."""
    if level <= 0:
        return random_move(game, state, seat, rng)
    rules, root = _root(state)
    moves = sorted(rules.children(root), key=lambda move: move[0])
    if level == 1:
        gains = [(move[2][1][seat] - root[1][seat], move[0]) for move in moves]  # sweeps count too
        most = max(gain for gain, _ in gains)
        origin = rng.choice([origin for gain, origin in gains if gain == most])
    elif len(moves) == 1:  # nothing to weigh
        origin = moves[0][0]
    else:
        evaluation = _store_difference if level == 2 else _positional
        search = Search(rules.children, lambda p, move: move[2], lambda p: p[2],
                        evaluation(rules, seat), seat, NODES[min(level, 3)])
        origin = search.best(root, rng)[0]
    return string.ascii_lowercase[origin - seat * rules.n]

