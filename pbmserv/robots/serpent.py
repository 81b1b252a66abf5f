"""Robots for Serpent (`games/serpent.py`, rules in shared/rules/serpent.md).

The search runs on its own compact positions with its own move generation, which
plays every rule of the engine (placement, tail moves, removals and their order,
hostile terrain, repetition) on bitboards: one Python int per colour, a bit per cell,
laid out on a padded grid so that the six neighbours of every cell are six shifts.

Life and death without a search per end: a survival path of a colour is a run of
empty cells touching none of its stones ("free") between two cells that each touch
just one stone, an end ("private" to it), or a single cell touching two ends (a
"bridge"). So a group's shortest path is a breadth-first search over whole masks
from its private cells. Each position keeps one path per group (`Survey.paths`);
an action that touches none of a group's path cells leaves that group alive, so most
actions need no new search at all. About six times faster than the engine's
`legal_moves`, and the same list (tests/test_robots_serpent.py compares them).

A player who cannot move loses, and most games end so: the evaluation is the number
of cells each side could still place a living stone on, own minus opponent's
(`options`). Level 1 plays the move after which that count is best (one ply); levels
2 and 3 search with alpha-beta (`Searcher`) for 70 and 400 positions: level 2
completes one or two plies (and looks at the best moves one ply deeper), level 3 two
to three plies in the middle game and more near the end. Level 0 is a uniformly random legal move.
"""

from __future__ import annotations

import random

from ..games import Game, State
from ..games.serpent import GEOMETRIES
from .search import WIN, OutOfNodes, random_move

SUFFIX = ("b", "w")  # removal order suffix: whose dead groups go first
INF = 10**9
BLACK_DIGITS = str.maketrans("x.o", "100")
WHITE_DIGITS = str.maketrans("x.o", "001")


def low_bits(mask: int):
    """The single-bit masks of `mask`, lowest first."""
    while mask:
        bit = mask & -mask
        yield bit
        mask ^= bit


class Grid:
    """The cells of one board size as bits: cell (q, r) is bit (r + n) * w + (q + n)
    with w = 2n + 1, so a neighbour is a shift by 1, w or w - 1 and the padding
    column keeps rows from wrapping."""

    def __init__(self, size: int):
        geo = GEOMETRIES[size]
        self.w = 2 * size + 1
        self.w1 = self.w - 1
        self.bit = [1 << ((r + size) * self.w + (q + size)) for q, r in geo.coords]  # by engine cell index
        self.mask = sum(self.bit)
        self.name = {bit: name for bit, name in zip(self.bit, geo.names)}
        self.near = {bit: self.around(bit) for bit in self.bit}  # the neighbours of each cell
        self.rows = [(row[0], len(row), (self.bit[row[0]].bit_length() - 1)) for row in geo.rows]

    def stones(self, board: str) -> tuple[int, int]:
        """The engine's board string as (Black's stones, White's stones)."""
        found = []
        for table in (BLACK_DIGITS, WHITE_DIGITS):
            by_index = int(board[::-1].translate(table), 2)  # bit i: engine cell i
            found.append(sum(((by_index >> first) & ((1 << length) - 1)) << at for first, length, at in self.rows))
        return found[0], found[1]

    def around(self, x: int) -> int:
        """The cells next to some cell of `x`."""
        pair = x | (x << 1)  # shifting it by w - 1 and -w covers four of the six directions
        return ((x << 1) | (x >> 1) | (pair << self.w1) | (pair >> self.w)) & self.mask

    def counts(self, x: int) -> tuple[int, int, int]:
        """The cells with at least one, two and three neighbours in `x`."""
        w = self.w
        one = two = three = 0
        for shifted in (x << 1, x >> 1, x << w, x >> w, x << (w - 1), x >> (w - 1)):
            three |= two & shifted
            two |= one & shifted
            one |= shifted
        m = self.mask
        return one & m, two & m, three & m

    def group(self, seed: int, stones: int) -> int:
        """The stones of `stones` connected to `seed`."""
        group = seed
        while True:
            grown = group | (self.around(group) & stones)
            if grown == group:
                return group
            group = grown


class Survey:
    """One colour's groups on one board, how the empty cells serve its survival
    paths, and (on demand) one shortest path per group."""

    __slots__ = ("grid", "stones", "ends", "eggs", "snakes", "free", "private", "bridges", "_groups", "_paths")

    def __init__(self, grid: Grid, stones: int, empty: int):
        one, two, three = grid.counts(stones)
        self.grid, self.stones = grid, stones
        body = stones & two
        self.ends = stones & ~two  # eggs and the ends of snakes
        self.eggs = stones & ~one
        self.snakes = stones & one
        by_body = grid.around(body)
        self.free = empty & ~one
        self.private = empty & one & ~two & ~by_body  # touches one stone, an end
        self.bridges = empty & two & ~three & ~by_body  # touches two stones, both ends
        self._groups: list[int] | None = None
        self._paths: list[int] | None = None

    @property
    def groups(self) -> list[int]:
        if self._groups is None:
            groups = []
            rest = self.stones
            while rest:
                seed = rest & -rest
                group = seed if seed & self.eggs else self.grid.group(seed, self.stones)
                groups.append(group)
                rest &= ~group
            self._groups = groups
        return self._groups

    def restrict(self, region: int) -> None:
        """Forget every path cell outside `region`."""
        self.free &= region
        self.private &= region
        self.bridges &= region

    def path(self, grid: Grid, group: int, starts: int, below: int = INF, trace: bool = False) -> tuple[int, int]:
        """(length, cells) of the shortest survival path from the ends `starts` of
        `group` (cells only if `trace`); (INF, 0) if none is shorter than `below`."""
        around = grid.around
        if below <= 1:
            return INF, 0
        bridge = self.bridges & around(starts) & around(self.ends & ~group)
        if bridge:
            return 1, bridge & -bridge
        others = self.private & ~around(self.ends & group)
        frontier = self.private & around(starts)
        reach = frontier
        levels = [frontier]
        length = 1
        free = self.free
        while frontier and length + 1 < below:
            near = around(frontier)
            hit = near & others
            if hit:
                if not trace:
                    return length + 1, 0
                cell = hit & -hit
                cells = cell
                for level in reversed(levels):
                    step = level & around(cell)
                    cell = step & -step
                    cells |= cell
                return length + 1, cells
            frontier = near & free & ~reach
            reach |= frontier
            levels.append(frontier)
            length += 1
        return INF, 0

    def paths(self, grid: Grid) -> list[int]:
        """The cells of one shortest survival path of every group (0: none)."""
        if self._paths is None:
            self._paths = [self.path(grid, g, g & self.ends, trace=True)[1] for g in self.groups]
        return self._paths

    def dead(self, grid: Grid, checked=None) -> list[int]:
        """The groups without a survival path (only among `checked`, if given)."""
        return [g for g in (self.groups if checked is None else checked)
                if self.path(grid, g, g & self.ends)[0] >= INF]


class Position:
    """A position of the search: the stones by colour, the "has had two groups"
    flags, the side to move, the winner once a colour has lost its last group, and
    the positions since the root (`trail`) for the repetition rule. Its moves and
    surveys are made once and kept."""

    __slots__ = ("stones", "flags", "side", "winner", "trail", "actions", "outcomes", "moves", "best", "_surveys")

    def __init__(self, stones: tuple[int, int], flags: tuple[bool, bool], side: int, winner: int | None,
                 trail: frozenset):
        self.stones, self.flags, self.side, self.winner, self.trail = stones, flags, side, winner, trail
        self.actions: list[Action] | None = None
        self.outcomes: list[list[Move] | None] = []
        self.moves: list[Move] | None = None
        self.best = -1  # the index of the best action a search found here
        self._surveys: list[Survey | None] = [None, None]

    def survey(self, grid: Grid, colour: int) -> Survey:
        if self._surveys[colour] is None:
            empty = grid.mask & ~(self.stones[0] | self.stones[1])
            self._surveys[colour] = Survey(grid, self.stones[colour], empty)
        return self._surveys[colour]


Move = tuple  # (text the engine accepts, position after)
Action = tuple  # (cell placed on or moved to, tail moved (0: a placement), flags after or (group, head, distance))


class Rules:
    """Serpent's rules on `Position`s of one board size and one game's history."""

    def __init__(self, grid: Grid, history: History):
        self.grid, self.history = grid, history

    def children(self, p: Position) -> list[Move]:
        """Every legal move of the side to move; none once the game is over (and
        none if the side to move is stuck, which loses)."""
        if p.moves is None:
            p.moves = [move for i in range(len(self.actions(p))) for move in self.outcomes(p, i)]
        return p.moves

    def actions(self, p: Position) -> list[Action]:
        """The actions the placement and tail-move rules allow, removals not yet
        played out: `outcomes` tells which are legal. A search looks at them one by
        one, and a cut-off spares it the rest."""
        if p.actions is not None:
            return p.actions
        found: list[Action] = []
        p.actions = found
        if p.winner is not None:
            p.outcomes = []
            return found
        grid = self.grid
        seat = p.side
        own = p.survey(grid, seat)
        empty = grid.mask & ~(p.stones[0] | p.stones[1])
        egg_one, egg_two, egg_three = grid.counts(own.eggs)
        for cell in low_bits(empty & ~grid.around(own.snakes) & ~egg_three):
            flags = p.flags
            touched = 1 + bool(cell & egg_one) + bool(cell & egg_two)  # the stone and the eggs it joins
            if not flags[seat] and len(own.groups) + 2 - touched >= 2:
                flags = (True, flags[1]) if seat == 0 else (flags[0], True)
            found.append((cell, 0, flags))
        for group, path in zip(own.groups, own.paths(grid)):
            if group & own.eggs:
                continue
            # The group's shortest path starts at its head: a tail may move unless the
            # other end is as near (a tie: either end may move).
            ends = list(low_bits(group & own.ends))
            if path:
                distance = path.bit_count()
                head = group & own.ends & grid.around(path)
                other = ends[0] if ends[1] == head else ends[1]
                tails = [(other, head)]
                if own.path(grid, group, other, distance + 1)[0] == distance:
                    tails.append((head, other))
            else:
                distance = INF
                tails = [(ends[0], ends[1]), (ends[1], ends[0])]
            for tail, head in tails:
                for dest in low_bits(grid.near[head] & empty):
                    found.append((dest, tail, (group, head, distance)))
        p.outcomes = [None] * len(found)
        return found

    def outcomes(self, p: Position, i: int) -> list[Move]:
        """The legal moves the `i`th action makes: none, one, or one per removal
        order."""
        out = p.outcomes[i]
        if out is None:
            out = p.outcomes[i] = []
            cell, tail, more = p.actions[i]
            if tail:
                group, head, distance = more
                self._tail(p, group, tail, head, cell, distance, out)
            else:
                self._place(p, cell, p.stones[p.side] | cell, more, out)
        return out

    def stuck(self, p: Position) -> bool:
        """Whether the side to move has no legal move (and so has lost)."""
        return not any(self.outcomes(p, i) for i in range(len(self.actions(p))))

    def _place(self, p: Position, cell: int, mine: int, flags: tuple[bool, bool], out: list[Move]) -> None:
        """A placement on `cell`: which groups die, and whether the turn is legal."""
        grid, seat = self.grid, p.side
        theirs = p.stones[1 - seat]
        after = self._ordered(seat, mine, theirs)
        empty = grid.mask & ~(mine | theirs)
        dead_own: list[int] = []
        if flags[seat] and not p.flags[seat]:
            dead_own = Survey(grid, mine, empty).dead(grid)
        elif flags[seat]:  # a group whose path stays clear of the stone and its neighbours lives
            before = p.survey(grid, seat)
            zone = cell | grid.near[cell]
            merged = cell | (zone & before.eggs)
            paths = before.paths(grid)
            check = [g for g, path in zip(before.groups, paths) if not g & merged and path & zone]
            if not self._placed_lives(before, paths, cell, merged, zone):
                check.append(merged)
            if check:
                dead_own = Survey(grid, mine, empty).dead(grid, check)
        hit = self._hit(p, cell)
        dead_theirs = Survey(grid, theirs, empty).dead(grid, hit) if hit else []
        self._removals(p, self.name(cell), after, flags, None, dead_own, dead_theirs, cell, 0, False, INF, out)

    def _placed_lives(self, before: Survey, paths: list[int], cell: int, merged: int, zone: int) -> bool:
        """Whether the group of a stone placed on `cell` surely has a survival path,
        seen from the survey before it: an egg it joins kept a path clear of it (not
        to the other egg it joins), or a lone stone has an end's private cell next
        to it (a bridge now) or next to a free cell next to it."""
        grid = self.grid
        if merged != cell:
            return any(path and not path & zone and not grid.around(path) & merged & ~g
                       for g, path in zip(before.groups, paths) if g & merged)
        near = grid.near[cell]
        return bool(near & before.private or grid.around(near & before.free) & before.private)

    def _tail(self, p: Position, group: int, tail: int, head: int, dest: int, distance: int, out: list[Move]) -> None:
        """A tail move from `tail` to `dest`: whether the stones make a snake, which
        groups die, and whether the turn is legal."""
        grid, seat = self.grid, p.side
        mine = p.stones[seat] & ~tail | dest
        theirs = p.stones[1 - seat]
        if grid.near[dest] & mine == head:  # the snake moved on, touching nothing else: still a chain
            moved, joined = group & ~tail | dest, False
        else:
            moved = grid.group(dest, mine)
            one, two, three = grid.counts(moved)
            if moved & three or (moved & one & ~two).bit_count() != 2:
                return
            joined = bool(moved & ~group & ~dest)
        empty = grid.mask & ~(mine | theirs)
        own = Survey(grid, mine, empty)
        affected: list[int] = []
        if p.flags[seat]:  # as for a placement, but paths that ended at the tail, the head or an end
            before = p.survey(grid, seat)  # the moved stone joins are gone too
            zone = dest | grid.around(dest | tail | head | (grid.near[dest] & mine))
            affected = [g for g, path in zip(before.groups, before.paths(grid)) if not g & moved and path & zone]
        hit = self._hit(p, dest)
        if not (joined or affected or hit) and own.path(grid, moved, moved & own.ends, distance)[0] >= distance:
            return  # no nearer, and nothing but the snake itself can die: illegal either way
        dead_own = own.dead(grid, [moved] + affected) if p.flags[seat] else []
        dead_theirs = Survey(grid, theirs, empty).dead(grid, hit) if hit else []
        text = f"{self.name(tail)}-{self.name(dest)}"
        self._removals(p, text, self._ordered(seat, mine, theirs), p.flags, own, dead_own, dead_theirs,
                       0, dest, joined, distance, out)

    def _hit(self, p: Position, cell: int) -> list[int]:
        """The opponent's groups whose survival path runs through `cell` (the only
        ones a stone there may kill: stones leaving cells only open paths)."""
        colour = 1 - p.side
        if not p.flags[colour]:
            return []
        before = p.survey(self.grid, colour)
        return [g for g, path in zip(before.groups, before.paths(self.grid)) if path & cell]

    @staticmethod
    def _ordered(seat: int, mine: int, theirs: int) -> tuple[int, int]:
        return (mine, theirs) if seat == 0 else (theirs, mine)

    def name(self, bit: int) -> str:
        return self.grid.name[bit]

    def _removals(self, p: Position, text: str, after: tuple[int, int], flags: tuple[bool, bool],
                  own_survey: Survey | None, dead_own: list[int], dead_theirs: list[int], placed: int, dest: int,
                  joined: bool, before: int, out: list[Move]) -> None:
        """Play out the removals of an action that left `after` (`placed`: the stone
        placed, or `dest`: where the tail went, `joined` another group or not, from a
        head `before` cells from a survival path; `own_survey`: the mover's survey of
        `after`); add the legal outcomes to `out` (one, or one per removal order where
        the orders differ)."""
        seat = p.side
        dead = [dead_own, dead_theirs] if seat == 0 else [dead_theirs, dead_own]
        if not dead[0] and not dead[1]:
            if self._legal(p, placed, dest, after, flags, joined, before, (0, 0), None, own_survey):
                out.append((text, self._child(p, after, flags, None)))
            return
        firsts = [1 - seat, seat] if dead[0] and dead[1] else [1 - seat]
        grid = self.grid
        endings = []
        for first in firsts:
            stones = list(after)
            removed = [0, 0]
            winner = None
            for step, colour in enumerate((first, 1 - first)):
                gone = dead[colour]
                if step == 1 and removed[first]:
                    empty = grid.mask & ~(stones[0] | stones[1])
                    gone = Survey(grid, stones[colour], empty).dead(grid) if flags[colour] else []
                if not gone:
                    continue
                for g in gone:
                    removed[colour] |= g
                stones[colour] &= ~removed[colour]
                if not stones[colour]:
                    winner = 1 - colour
                    break
            final = (stones[0], stones[1])
            ok = self._legal(p, placed, dest, final, flags, joined, before, tuple(removed), winner, None)
            endings.append((first, final, winner, ok))
        if len(endings) == 2 and endings[0][1:3] == endings[1][1:3]:
            endings = endings[:1]
        for first, final, winner, ok in endings:
            if ok:
                out.append((text if len(endings) == 1 else f"{text}/{SUFFIX[first]}",
                            self._child(p, final, flags, winner)))

    def _child(self, p: Position, stones: tuple[int, int], flags: tuple[bool, bool], winner: int | None) -> Position:
        trail = p.trail if winner is not None else p.trail | {(stones, flags, 1 - p.side)}
        return Position(stones, flags, 1 - p.side, winner, trail)

    def _legal(self, p: Position, placed: int, dest: int, final: tuple[int, int], flags: tuple[bool, bool],
               joined: bool, before: int, removed: tuple[int, int], winner: int | None, own: Survey | None) -> bool:
        """The engine's `illegal`, as a yes or no."""
        grid, seat = self.grid, p.side
        if dest:
            if not final[seat] & dest:
                return False
            if not joined:
                if own is None or removed[0] or removed[1]:
                    own = Survey(grid, final[seat], grid.mask & ~(final[0] | final[1]))
                group = grid.group(dest, final[seat])
                if own.path(grid, group, group & own.ends, before)[0] >= before:
                    return False
        elif removed[seat] == placed and not removed[1 - seat]:
            return False
        empty = grid.mask & ~(final[0] | final[1])
        for colour in (0, 1):
            if removed[colour]:
                region = grid.group(removed[colour], empty)
                survey = Survey(grid, final[colour], empty)
                survey.restrict(region)
                if len(survey.dead(grid)) < len(survey.groups):
                    return False
        if winner is None:
            k = (final, flags, 1 - seat)
            if k in self.history or k in p.trail:
                return False
        return True


def options(rules: Rules, p: Position, colour: int) -> int:
    """How many cells `colour` could place a stone on that would live (roughly: the
    placement rule, and for a stone touching none of its own a run of free cells to
    some end's private cell). Whoever runs out of moves first loses, so the
    difference of the two sides' counts is the evaluation."""
    grid = rules.grid
    survey = p.survey(grid, colour)
    empty = grid.mask & ~(p.stones[0] | p.stones[1])
    _, _, egg_three = grid.counts(survey.eggs)
    places = empty & ~grid.around(survey.snakes) & ~egg_three
    if not p.flags[colour]:
        return places.bit_count()
    free = survey.free
    reach = grid.group(free & grid.around(survey.private), free)
    return (places & (reach | ~free)).bit_count()


class Searcher:
    """Negamax with alpha-beta, deepened one ply at a time while a node budget lasts
    (a node: a position reached, evaluated or searched). Moves are generated lazily
    (`Rules.actions`, `Rules.outcomes`), so a cut-off saves their legality checks.
    Tried first: the best action a position had in the previous iteration (kept in
    the position, as the tree is kept), then the last action that cut off at that
    ply, then the rest by how often they cut off so far (the history heuristic). A
    depth the budget cuts short still counts if the previous best move was searched
    to it: a move that then scored higher is better at that depth."""

    LOW = 2  # a side with this few `options` is checked for being stuck

    def __init__(self, rules: Rules, nodes: int):
        self.rules, self.budget, self.used = rules, nodes, 0
        self.killers: dict[int, Action] = {}
        self.history: dict[tuple[int, int, int], int] = {}  # (side, cell, tail): how often it cut off

    def best(self, root: Position, rng: random.Random, max_depth: int = 64) -> str:
        moves = list(self.rules.children(root))
        rng.shuffle(moves)
        best = moves[0]
        for depth in range(1, max_depth + 1):
            scored: list[tuple[float, Move]] = []
            complete = True
            try:
                self._root(moves, depth, scored)
            except OutOfNodes:
                complete = False
                if depth == 1:  # always finish one ply (and then stop: the budget is spent)
                    self.budget = INF
                    scored.clear()
                    self._root(moves, depth, scored)
                elif not scored:
                    break
            top = max(score for score, _ in scored)
            best = next(move for score, move in scored if score == top)
            if not complete or abs(top) >= WIN / 2:
                break
            moves = [move for _, move in sorted(scored, key=lambda pair: -pair[0])]
        return best[0]

    def _root(self, moves: list[Move], depth: int, scored: list[tuple[float, Move]]) -> None:
        alpha = -INF
        for move in moves:
            score = -self._negamax(move[1], depth - 1, -INF, -alpha, 1)
            scored.append((score, move))
            alpha = max(alpha, score)

    def _negamax(self, p: Position, depth: int, alpha: float, beta: float, ply: int) -> float:
        self.used += 1
        if self.used > self.budget:
            raise OutOfNodes
        rules = self.rules
        if p.winner is not None:
            return WIN - ply if p.winner == p.side else -WIN + ply
        if depth == 0:
            return self._evaluate(p, ply)
        actions = rules.actions(p)
        first = [p.best] if p.best >= 0 else []
        killer = self.killers.get(ply)
        if killer is not None and killer in actions and actions.index(killer) != p.best:
            first.append(actions.index(killer))
        history = self.history
        side = p.side
        rest = sorted((i for i in range(len(actions)) if i not in first),
                      key=lambda i: -history.get((side, actions[i][0], actions[i][1]), 0))
        best = -INF
        for i in first + rest:
            for _, child in rules.outcomes(p, i):
                score = -self._negamax(child, depth - 1, -beta, -alpha, ply + 1)
                if score > best:
                    best = score
                    p.best = i
                    if score > alpha:
                        alpha = score
                        if alpha >= beta:
                            self.killers[ply] = actions[i]
                            cut = (side, actions[i][0], actions[i][1])
                            history[cut] = history.get(cut, 0) + depth * depth
                            return best
        return best if best > -INF else -WIN + ply  # no legal move: stuck, lost

    def _evaluate(self, p: Position, ply: int) -> float:
        mine = options(self.rules, p, p.side)
        if mine <= self.LOW and self.rules.stuck(p):
            return -WIN + ply
        return mine - options(self.rules, p, 1 - p.side)


class History:
    """The game's earlier positions, for the repetition rule, kept as the engine's
    keys and read into stones only when a position of the same stone counts, flags
    and side to move comes up: most searches never need to read one."""

    def __init__(self, grid: Grid, keys: list[str]):
        self.grid = grid
        cells = len(grid.bit)
        self.unread: dict[tuple, list[str]] = {}
        for text in keys:
            board = text[:cells]
            shape = (board.count("x"), board.count("o"), text[cells:])  # the flags and side as digits
            self.unread.setdefault(shape, []).append(text)
        self.read: set[tuple] = set()

    def __contains__(self, key: tuple) -> bool:
        (black, white), flags, side = key
        shape = (black.bit_count(), white.bit_count(), f"{int(flags[0])}{int(flags[1])}{side}")
        texts = self.unread.pop(shape, None)
        if texts:
            cells = len(self.grid.bit)
            self.read.update((self.grid.stones(text[:cells]), flags, side) for text in texts)
        return key in self.read


def root_position(state: State) -> tuple[Rules, Position]:
    """The engine's state as `Rules` (with the game's history) and a `Position`."""
    grid = Grid(state.size)
    flags = (bool(state.flags[0]), bool(state.flags[1]))
    return Rules(grid, History(grid, state.history)), Position(grid.stones(state.board), flags, state.to_move, None,
                                                               frozenset())


NODES = {2: 70, 3: 400}  # alpha-beta budgets (positions) by level


def choose(game: Game, state: State, seat: int, level: int, rng: random.Random) -> str:
    """The move of a level-`level` robot in `seat` (see the module docstring)."""
    if level <= 0:
        return random_move(game, state, seat, rng)
    rules, root = root_position(state)
    if level == 1:
        return Searcher(rules, 0).best(root, rng, max_depth=1)
    return Searcher(rules, NODES[min(level, 3)]).best(root, rng)
