"""Robots for Survival (`games/survival.py`).

The search runs on bit masks of the 19 cells (bit i: `CELLS[i]`), so a node costs a
few microseconds instead of an engine state's copy. Only the vacant part of a ray
matters for the rest of the game (cells fill and never empty), so a position is

    (occupied, rays, side)

- `occupied`: the taken cells; `side`: the seat to move;
- `rays`: each seat's ray from its last piece (every cell while it has none).

A move is (cell index, direction index). An arrow whose ray holds no vacant cell
loses at once (the opponent places, then the arrow's owner cannot), so the robots
never consider one unless the placement itself wins or nothing else is left.

Level 1 takes the move that leaves it the most cells to go to and the opponent the
fewest; level 2 searches a few plies with alpha-beta (`search.Search`) on the same
count. Level 3 (`Solver`) has its own alpha-beta with a transposition table (Search
has none, and here the same position is reached in many orders): from the fifth
piece on it first tries to prove a win to the end of the game, which usually
succeeds when one exists, then searches as deep as its budget allows with a better
evaluation, preferring the slowest loss when every move loses (the first player wins
with correct play, so as the second player it waits for a mistake).
"""

from __future__ import annotations

import random

from ..games import Game, State
from ..games.survival import CELLS, DIRECTIONS, ray
from .search import WIN, OutOfNodes, Search, random_move

NODES = {2: 250, 3: 20_000}  # search budgets (positions) by level
PROOF_NODES = 30_000  # level 3's budget for proving a win before it searches
PROOF_FROM = 15  # vacant cells from which a proof usually fits that budget

FULL = (1 << len(CELLS)) - 1
RAYS = tuple(tuple(sum(1 << CELLS.index(c) for c in ray(cell, d)) for d in DIRECTIONS) for cell in CELLS)

Position = tuple  # (occupied, rays, side): see the module docstring
Move = tuple  # (cell index, direction index)


def _cells(mask: int) -> list[int]:
    """The cell indices set in `mask`, lowest first."""
    found = []
    while mask:
        low = mask & -mask
        found.append(low.bit_length() - 1)
        mask ^= low
    return found


def _moves(occupied: int, mine: int, theirs: int) -> list[Move]:
    """The moves worth trying for the side whose ray is `mine`: a placement that
    leaves the opponent (ray `theirs`) no cell wins with any arrow, so it comes once;
    otherwise every arrow that points at a vacant cell, or one that does not if none
    does (a lost position, but a move must be sent)."""
    free = FULL & ~occupied
    found = []
    for cell in _cells(mine & free):
        after = free & ~(1 << cell)
        if not theirs & after:
            found.append((cell, 0))
            continue
        found += [(cell, d) for d in range(6) if RAYS[cell][d] & after]
    if found:
        return found
    return [(cell, 0) for cell in _cells(mine & free)]


def _lost(occupied: int) -> float:
    """The value of being unable to move with `occupied` taken: a loss, the sooner
    the worse (more vacant cells left)."""
    return -(WIN + (FULL & ~occupied).bit_count())


# --- levels 1 and 2: the room each side has -------------------------------------

def _play(p: Position, move: Move) -> Position:
    occupied, rays, side = p
    cell, direction = move
    mine = RAYS[cell][direction]
    return (occupied | 1 << cell, (mine, rays[1]) if side == 0 else (rays[0], mine), 1 - side)


def _children(p: Position) -> list[Move]:
    occupied, rays, side = p
    return _moves(occupied, rays[side], rays[1 - side])


def _room(me: int):
    """The simple evaluation: vacant cells on my ray minus those on the opponent's;
    a side that cannot move has lost."""
    def value(p: Position) -> float:
        occupied, rays, side = p
        free = FULL & ~occupied
        if not rays[side] & free:
            lost = _lost(occupied)
            return lost if side == me else -lost
        return float((rays[me] & free).bit_count() - (rays[1 - me] & free).bit_count())
    return value


def _greedy(root: Position, me: int, rng: random.Random) -> Move:
    """Level 1: the move whose position after it `_room` likes best."""
    value = _room(me)
    scored = [(value(_play(root, move)), move) for move in _children(root)]
    top = max(score for score, _ in scored)
    return rng.choice([move for score, move in scored if score == top])


# --- level 3: deep alpha-beta with a transposition table -------------------------

EXACT, LOWER, UPPER = 0, 1, 2


def _outlook(occupied: int, mine: int, theirs: int) -> float:
    """Level 3's evaluation for the side to move: the cells each side may go to,
    and how far the best arrow from one of them could reach; a cell both may go to
    counts a little for the side to move, which can take it from the other."""
    free = FULL & ~occupied
    mine &= free
    theirs &= free
    return (2 * (mine.bit_count() - theirs.bit_count()) + (mine & theirs).bit_count()
            + _reach(mine, free) - _reach(theirs, free))


def _reach(cells: int, free: int) -> int:
    """The most vacant cells an arrow placed on one of `cells` could point at."""
    best = 0
    for cell in _cells(cells):
        after = free & ~(1 << cell)
        for mask in RAYS[cell]:
            best = max(best, (mask & after).bit_count())
    return best


def _order(moves: list[Move], free: int, rest: int) -> None:
    """Sort `moves` (vacant cells `free`; `rest`: the opponent's cells) likeliest
    best first, so alpha-beta cuts sooner: those that leave the opponent fewest
    cells, then those whose arrow points at most vacant cells."""
    moves.sort(key=lambda move: 2 * (rest & ~(1 << move[0])).bit_count()
               - (RAYS[move[0]][move[1]] & free).bit_count())


class Solver:
    """Negamax with alpha-beta over (occupied, my ray, their ray), a transposition
    table keyed by the vacant parts (the whole future), and iterative deepening
    until the node budget runs out or the game is solved.

    A finished game is worth WIN plus the vacant cells left, so a quick win and a
    slow loss are preferred, and the value of a position does not depend on the
    ply it was reached at (the table can share it)."""

    def __init__(self, proof_nodes: int, search_nodes: int):
        self.proof_nodes, self.search_nodes = proof_nodes, search_nodes
        self.budget, self.used = 0, 0
        self.table: dict[int, tuple[int, float, int, Move | None]] = {}

    def best(self, occupied: int, mine: int, theirs: int, rng: random.Random) -> Move:
        """A winning move if a proof within its budget finds one, else the best move
        of the deepest search the budget allows; equal moves are told apart by
        `rng`'s shuffle."""
        free = FULL & ~occupied
        moves = _moves(occupied, mine, theirs)
        rng.shuffle(moves)
        _order(moves, free, theirs & free)
        vacant = free.bit_count()
        if vacant <= PROOF_FROM:
            won = self.prove(occupied, theirs, moves, vacant)
            if won is not None:
                return won
        return self.deepen(occupied, theirs, moves, vacant)

    def prove(self, occupied: int, theirs: int, moves: list[Move], vacant: int) -> Move | None:
        """A move that wins whatever the opponent does, if the proof budget finds
        one: a search to the end with the window (-1, 1) only asks "win or loss?" (a
        finished game is never worth 0), so a node stops at its first winning move."""
        self.budget, self.used = self.proof_nodes, 0
        try:
            for move in moves:
                if -self.child(occupied, theirs, move, vacant - 1, -1, 1, True) > 0:
                    return move
        except OutOfNodes:
            pass
        return None

    def deepen(self, occupied: int, theirs: int, moves: list[Move], vacant: int) -> Move:
        """The best move of the deepest search the budget completes (depth 1 always
        is), a depth at a time; the proof's findings stay in the table."""
        self.budget, self.used = self.search_nodes, 0
        best = moves[0]
        for depth in range(1, vacant + 1):
            scored: list[tuple[float, Move]] = []
            try:
                alpha = -float("inf")
                for move in moves:
                    score = -self.child(occupied, theirs, move, depth - 1, -float("inf"), -alpha, depth > 1)
                    scored.append((score, move))
                    alpha = max(alpha, score)
            except OutOfNodes:
                if scored:  # the last best was searched first: a move that beat it is better
                    best = max(scored, key=lambda pair: pair[0])[1]
                break
            top = max(score for score, _ in scored)
            best = next(move for score, move in scored if score == top)
            moves = [best] + [move for move in moves if move != best]
            if abs(top) >= WIN / 2:  # a forced result: deeper search changes nothing
                break
        return best

    def child(self, occupied: int, theirs: int, move: Move, depth: int, alpha: float, beta: float,
              limited: bool) -> float:
        cell, direction = move
        return self.negamax(occupied | 1 << cell, theirs, RAYS[cell][direction], depth, alpha, beta, limited)

    def negamax(self, occupied: int, mine: int, theirs: int, depth: int, alpha: float, beta: float,
                limited: bool) -> float:
        """The value for the side to move (ray `mine`); `limited`: the budget counts."""
        self.used += 1
        if limited and self.used > self.budget:
            raise OutOfNodes
        free = FULL & ~occupied
        options = mine & free
        if not options:
            return _lost(occupied)
        rest = theirs & free
        vacant = free.bit_count()
        for cell in _cells(options):
            if not rest & ~(1 << cell):
                return WIN + vacant - 1
        if depth <= 0:
            return _outlook(occupied, mine, theirs)
        depth = min(depth, vacant)  # the game ends within `vacant` plies: deeper is exact
        key = occupied | options << 19 | rest << 38
        entry = self.table.get(key)
        first = None
        if entry is not None:
            stored_depth, value, flag, first = entry
            if stored_depth >= depth and (flag == EXACT or (flag == LOWER and value >= beta)
                                          or (flag == UPPER and value <= alpha)):
                return value
        moves = _moves(occupied, mine, theirs)
        _order(moves, free, rest)
        if first is not None:
            moves.remove(first)
            moves.insert(0, first)
        start, best, best_move = alpha, -float("inf"), moves[0]
        for cell, direction in moves:
            score = -self.negamax(occupied | 1 << cell, theirs, RAYS[cell][direction], depth - 1, -beta, -alpha,
                                  limited)
            if score > best:
                best, best_move = score, (cell, direction)
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
        flag = UPPER if best <= start else LOWER if best >= beta else EXACT
        self.table[key] = (depth, best, flag, best_move)
        return best


# --- the engine's state and move text --------------------------------------------

def _root(state: State) -> Position:
    occupied = 0
    for cell in state.board:
        occupied |= 1 << CELLS.index(cell)
    rays = tuple(FULL if last is None else RAYS[CELLS.index(last[0])][DIRECTIONS.index(last[1])]
                 for last in state.last)
    return occupied, rays, state.to_move


def choose(game: Game, state: State, seat: int, level: int, rng: random.Random) -> str:
    """The move of a level-`level` robot in `seat` (see the module docstring)."""
    if level <= 0:
        return random_move(game, state, seat, rng)
    root = _root(state)
    if level == 1:
        cell, direction = _greedy(root, seat, rng)
    elif level == 2:
        search = Search(_children, _play, lambda p: p[2], _room(seat), seat, NODES[2])
        cell, direction = search.best(root, rng)
    else:
        occupied, rays, _ = root
        cell, direction = Solver(PROOF_NODES, NODES[3]).best(occupied, rays[seat], rays[1 - seat], rng)
    return f"{CELLS[cell]}/{DIRECTIONS[direction]}"
