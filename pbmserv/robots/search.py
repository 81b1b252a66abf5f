"""What the robots of the two-player games share: a random legal move, and an
alpha-beta search deepened one ply at a time until a node budget runs out.

The budget counts positions, not seconds, so a search gives the same move on every
machine and in every replay; each game's budget is set so that its strongest robot
stays well inside a second of CPU per move (bench/bench_robots.py measures it).
"""

from __future__ import annotations

import random
from typing import Callable, Generic, Hashable, TypeVar

from ..games import Game, State

P = TypeVar("P")  # a game's own fast position
M = TypeVar("M", bound=Hashable)  # a move in that position's terms

WIN = 1_000_000.0


def random_move(game: Game, state: State, seat: int, rng: random.Random) -> str:
    """A uniformly random legal move: level 0, the benchmark's opponent."""
    return rng.choice(game.legal_moves(state, seat))


class OutOfNodes(Exception):
    """The node budget ran out in the middle of a depth: that depth is not used."""


class Search(Generic[P, M]):
    """Minimax with alpha-beta pruning over a game's own positions, from the side of
    `root_side`, deepened one ply at a time while the budget lasts.

    - `moves(p)`: the legal moves of the side to move (empty: the game is over);
    - `play(p, m)`: the position after `m` (a new one; `p` is not changed);
    - `side(p)`: who moves in `p`; `value(p)`: how good `p` is for `root_side`, where
      a won game is about WIN (sooner wins are worth more: see `search`).
    """

    def __init__(self, moves: Callable[[P], list[M]], play: Callable[[P, M], P], side: Callable[[P], int],
                 value: Callable[[P], float], root_side: int, nodes: int):
        self.moves, self.play, self.side, self.value = moves, play, side, value
        self.root_side, self.budget, self.used = root_side, nodes, 0

    def best(self, root: P, rng: random.Random, max_depth: int = 64) -> M:
        """The best move found by the deepest search the budget completes (at least
        depth 1); ties are broken by `rng`, so equal moves vary from game to game."""
        moves = self.moves(root)
        rng.shuffle(moves)
        best = moves[0]
        for depth in range(1, max_depth + 1):
            try:
                scored = self.root(root, moves, depth)
            except OutOfNodes:
                if depth != 1:
                    break
                self.budget = float("inf")  # always finish one ply: a legal, sensible move,
                scored = self.root(root, moves, depth)
                self.budget = self.used  # and no deeper: the budget is spent
            top = max(score for score, _ in scored)
            best = next(move for score, move in scored if score == top)
            moves = [move for _, move in sorted(scored, key=lambda pair: -pair[0])]  # best first next time
            if abs(top) >= WIN / 2:  # a forced result: deeper search changes nothing
                break
        return best

    def root(self, root: P, moves: list[M], depth: int) -> list[tuple[float, M]]:
        alpha, scored = -float("inf"), []
        for move in moves:
            score = self.search(self.play(root, move), depth - 1, alpha, float("inf"), 1)
            scored.append((score, move))
            alpha = max(alpha, score)
        return scored

    def search(self, p: P, depth: int, alpha: float, beta: float, ply: int) -> float:
        self.used += 1
        if self.used > self.budget:
            raise OutOfNodes
        moves = self.moves(p) if depth > 0 else []
        if not moves:
            value = self.value(p)
            if value >= WIN / 2:  # a win found sooner is better, a loss later is better
                return value - ply
            if value <= -WIN / 2:
                return value + ply
            return value
        if self.side(p) == self.root_side:
            for move in moves:
                alpha = max(alpha, self.search(self.play(p, move), depth - 1, alpha, beta, ply + 1))
                if alpha >= beta:
                    break
            return alpha
        for move in moves:
            beta = min(beta, self.search(self.play(p, move), depth - 1, alpha, beta, ply + 1))
            if alpha >= beta:
                break
        return beta
