"""Serpent (2025): eggs and snakes on a hex-hex board, kept alive by survival paths.

The rules are in shared/rules/serpent.md, readings included. Cells are numbered in
row order (row a first, left to right); a board is a string of ".", "x" and "o".
Seat 0 is Black (x) and moves first, seat 1 is White (o).

Survival paths are found by the rules page's method: one breadth-first search per
end `a`, where an empty cell touching no stone of the colour besides `a` may be passed
through, a cell touching exactly one such stone, an end or egg of another group, is
where a path may finish, and every other cell is blocked.
"""

from __future__ import annotations

import functools
import re
import textwrap
from dataclasses import dataclass, field
from typing import Any, ClassVar

from . import register
from .base import Game, Outcome, Param, State, Verdict, echoed

EMPTY = "."
STONE = ("x", "o")  # by seat: Black, White
COLOUR = ("Black", "White")
SUFFIX = ("b", "w")  # removal order suffix: whose dead groups go first
INF = 10**9
ROW_LETTERS = "abcdefghijk"
DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1))
COUNT_WORDS = {3: "three", 4: "four", 5: "five", 6: "six"}


class Geometry:
    """Cells, names and neighbours of the hex-hex board of side n (fixed tables)."""

    def __init__(self, n: int) -> None:
        self.n = n
        coords: list[tuple[int, int]] = []
        self.rows: list[list[int]] = []
        for i in range(2 * n - 1):
            r = i - (n - 1)
            row = []
            for q in range(max(-(n - 1), -(n - 1) - r), min(n - 1, n - 1 - r) + 1):
                row.append(len(coords))
                coords.append((q, r))
            self.rows.append(row)
        self.coords = coords
        self.cells = len(coords)
        self.names = [f"{ROW_LETTERS[i]}{j + 1}" for i, row in enumerate(self.rows) for j in range(len(row))]
        self.row_of = [i for i, row in enumerate(self.rows) for _ in row]
        self.index = {name: k for k, name in enumerate(self.names)}
        at = {coord: k for k, coord in enumerate(coords)}
        self.nbrs: tuple[tuple[int, ...], ...] = tuple(
            tuple(sorted(at[(q + dq, r + dr)] for dq, dr in DIRECTIONS if (q + dq, r + dr) in at))
            for q, r in coords
        )

    def name_list(self, cells) -> str:
        return " ".join(self.names[c] for c in sorted(cells))


GEOMETRIES = {n: Geometry(n) for n in (4, 5, 6)}


def _fmt(distance: int) -> str:
    return "none" if distance >= INF else str(distance)


class Side:
    """One colour's groups on one board, with its survival-path searches."""

    def __init__(self, board: list[str], stone: str, geo: Geometry) -> None:
        self.board, self.stone, self.geo = board, stone, geo
        nbrs = geo.nbrs
        # One pass over the stones: each stone's degree within its colour, and for
        # every empty cell the stones of this colour it touches (None if not empty).
        touch: list[list[int] | None] = [[] if v == EMPTY else None for v in board]
        degree: dict[int, int] = {}
        for c, v in enumerate(board):
            if v == stone:
                d = 0
                for y in nbrs[c]:
                    w = board[y]
                    if w == stone:
                        d += 1
                    elif w == EMPTY:
                        touch[y].append(c)
                degree[c] = d
        gid = [-1] * geo.cells
        groups: list[list[int]] = []
        self.ends: list[list[int]] = []
        self.valid: list[bool] = []
        is_end = [False] * geo.cells
        for c in degree:
            if gid[c] >= 0:
                continue
            k = len(groups)
            gid[c] = k
            members = [c]
            stack = [c]
            while stack:
                x = stack.pop()
                for y in nbrs[x]:
                    if board[y] == stone and gid[y] < 0:
                        gid[y] = k
                        members.append(y)
                        stack.append(y)
            groups.append(members)
            if len(members) == 1:
                ends, ok = members, True
            else:
                ends = [x for x in members if degree[x] == 1]
                ok = len(ends) == 2 and all(degree[x] <= 2 for x in members)
            self.valid.append(ok)
            self.ends.append(ends if ok else [])
            if ok:
                for x in ends:
                    is_end[x] = True
        self.gid, self.groups, self.is_end, self.touch = gid, groups, is_end, touch
        self._distance: dict[int, int] = {}

    def search(self, a: int, starts=None, path: bool = False):
        """The shortest survival path from end `a` (first cells limited to `starts` if
        given): (length, cells, other end) or None."""
        board, nbrs, touch, gid, is_end = self.board, self.geo.nbrs, self.touch, self.gid, self.is_end
        ga = gid[a]
        parent = {a: -1}
        frontier = [a]
        level = 0
        while frontier:
            level += 1
            following = []
            for x in frontier:
                for s in nbrs[x] if x != a or starts is None else starts:
                    if s in parent or board[s] != EMPTY:
                        continue
                    parent[s] = x
                    t = touch[s]
                    if a in t:
                        if len(t) == 1:
                            following.append(s)
                            continue
                        if len(t) != 2:
                            continue
                        b = t[0] if t[1] == a else t[1]
                    elif not t:
                        following.append(s)
                        continue
                    elif len(t) == 1:
                        b = t[0]
                    else:
                        continue
                    if gid[b] != ga and is_end[b]:
                        if not path:
                            return level, None, b
                        cells = []
                        while s != a:
                            cells.append(s)
                            s = parent[s]
                        return level, cells[::-1], b
            frontier = following
        return None

    def end_distance(self, a: int) -> int:
        if a not in self._distance:
            found = self.search(a)
            self._distance[a] = INF if found is None else found[0]
        return self._distance[a]

    def group_distance(self, k: int) -> int:
        return min((self.end_distance(a) for a in self.ends[k]), default=INF)

    def alive(self, k: int, flag: bool) -> bool:
        return not flag or any(self.end_distance(a) < INF for a in self.ends[k])

    def dead(self, flag: bool) -> list[int]:
        """Indices of the dead groups."""
        if not flag:
            return []
        return [k for k in range(len(self.groups)) if not self.alive(k, flag)]


def side_of(board, stone: str, geo: Geometry) -> Side:
    """The Side of `stone` on `board` (a string or a list of cells), shared: one move
    asks for the same few positions many times over (checking, applying, the stuck
    test, each reader's board), and a Side never changes but for its memo of
    distances, which depends on the board alone."""
    return _side(board if isinstance(board, str) else "".join(board), stone, geo.n)


@functools.lru_cache(maxsize=256)
def _side(board: str, stone: str, size: int) -> Side:
    return Side(board, stone, GEOMETRIES[size])


@dataclass
class SerpentState(State):
    """A game in progress. `history` holds every position so far (board, the two
    "has had two groups" flags, side to move) for the repetition rule."""

    size: int = 5
    board: str = ""
    flags: list[bool] = field(default_factory=lambda: [False, False])
    to_move: int = 0
    history: list[str] = field(default_factory=list)
    winner: int | None = None
    over: str | None = None  # "wipeout" or "stuck" once ended by play
    last_seat: int | None = None
    last_move: str | None = None
    removed: list[list[str]] = field(default_factory=lambda: [[], []])


def position_key(board: str, flags, to_move: int) -> str:
    return f"{board}{int(flags[0])}{int(flags[1])}{to_move}"


@dataclass
class Action:
    kind: str  # "place" or "tail"
    cell: int  # the placed cell, or the tail moved
    dest: int = -1
    suffix: str | None = None

    def text(self, geo: Geometry) -> str:
        if self.kind == "place":
            return geo.names[self.cell]
        return f"{geo.names[self.cell]}-{geo.names[self.dest]}"


@dataclass
class Prepared:
    """The board right after the action, before removals."""

    board: list[str]
    flags: list[bool]
    joined: bool = False
    before: int = INF  # the snake's distance before a tail move


@dataclass
class Ending:
    """One removal order played out: the final board, the removed cells by colour,
    the winner if a colour lost its last group, and why it is illegal, if it is."""

    first: int
    board: list[str]
    flags: list[bool]  # the "has had two groups" flags after the action
    removed: tuple[list[int], list[int]]
    winner: int | None
    error: str | None = None


MOVE_RE = re.compile(r"([a-z])([0-9]{1,3})(?:-([a-z])([0-9]{1,3}))?(?:/([a-z]*))?")




def _help() -> str:
    paragraphs = [
        "Serpent is a game of eggs and snakes on a hexagonal board of hexagonal "
        "cells, 5 cells a side by default (-size=4, 5 or 6 at challenge). Black (x), "
        "the challenger, moves first; turns alternate. A cell is named by its row "
        "letter, a from the top, and its place in the row from the left, from 1: on "
        "the default board the centre is e5.",
        "A group is a set of connected stones of one colour. A single stone is an egg; "
        "a longer group is a snake and must be a simple chain: every stone touches one "
        "or two others of it, the two ends touch one, and there are no rings, branches "
        "or triangles.",
        "A survival path of a colour runs from an end (or egg) of one of its groups to "
        "an end (or egg) of another: empty cells, each touching the next, such that "
        "filling them with that colour would join the two groups into one snake. So no "
        "cell of the path may touch any other stone of that colour, not even the body "
        "of the two groups. Its length is the number of cells. The distance of an end "
        "is its shortest survival path; the head of a snake is the end with the smaller "
        "distance, the tail the other (on a tie either end may count as the tail).",
        "A group is alive if its colour has never had two groups on the board at once, "
        "or if it has a survival path. Once a colour has had two groups (counted right "
        "after each action, before removals, and remembered for the rest of the game), "
        "every group of it needs a survival path, and a lone group is dead.",
        "On your turn, either place a stone on an empty cell touching none of your "
        "snakes and at most two of your eggs (send the cell, e.g. e5), or move the tail "
        "of one of your snakes to an empty cell next to its head (send tail-cell, e.g. "
        "c3-e3). After a tail move the snake, and anything it joins, must be a snake; "
        "the moved stone must survive the removals; and either the snake joined "
        "another of your groups or its distance after the removals is smaller than "
        "before.",
        "Then the dead groups are removed: all dead groups of one colour at once, then, "
        "life and death counted again, those of the other. End your move with /b or /w "
        "to remove Black's or White's first; without it the server takes the order "
        "that is legal, and if both are, your opponent's colour first.",
        "A turn is illegal if an empty region of the final position that holds a cell "
        "just emptied by removals still has a survival path for the owner of the "
        "removed stones; if the stone you placed is the only stone removed; or if the "
        "position (board, both colours' two-groups record and side to move) has "
        "occurred before in the game.",
        "When a colour's last group is removed the game ends at once and the other "
        "player wins (so in a mutual wipe-out the colour removed first loses). A player "
        "with no legal action on their turn loses. You may resign at any time.",
    ]
    return "\n\n".join(textwrap.fill(p, 70) for p in paragraphs) + "\n"


class Serpent(Game):
    name: ClassVar[str] = "serpent"
    title: ClassVar[str] = "Serpent"
    params: ClassVar[tuple[Param, ...]] = (Param("size", 5, 4, 6, "cells on each side of the board"),)
    move_syntax: ClassVar[str] = "a cell to place on, e5, or a tail move, c3-e3; optionally /b or /w for the removal order"
    summary: ClassVar[str] = "Eggs and snakes on a hex board: groups without a survival path die"
    help_text: ClassVar[str] = _help()
    template: ClassVar[str] = "serpent.txt"

    # --- set-up -------------------------------------------------------------------
    def setup(self, players: int, params: dict[str, int], chance: Any) -> SerpentState:
        size = params.get("size", 5)
        board = EMPTY * GEOMETRIES[size].cells
        state = SerpentState(size=size, board=board)
        state.history.append(position_key(board, state.flags, 0))
        return state

    # --- play ---------------------------------------------------------------------
    def is_over(self, state: SerpentState) -> bool:
        return state.over is not None or bool(state.resigned)

    def to_act(self, state: SerpentState) -> frozenset[int]:
        return frozenset() if self.is_over(state) else frozenset({state.to_move})

    def result(self, state: SerpentState) -> Outcome | None:
        resigned = self.resigned_outcome(state, 2)
        if resigned is not None:
            return resigned
        if state.over is None:
            return None
        return Outcome(winners=(state.winner,))

    def parse(self, geo: Geometry, text: str) -> Action | str:
        """The action `text` names, or an error."""
        word = re.sub(r"\s+", "", str(text)).lower()
        syntax = "send a cell to place on, e.g. e5, or a tail move, e.g. c3-e3, optionally ending /b or /w"
        if not word:
            return syntax
        match = MOVE_RE.fullmatch(word)
        if match is None:
            return f'"{echoed(str(text).strip())}" is not a move; {syntax}'
        suffix = match[5]
        if suffix is not None and suffix not in SUFFIX:
            return f'"/{echoed(suffix)}" is not a removal order; end a move with /b (Black\'s dead first) or /w (White\'s first)'
        cells = []
        for letter, number in ((match[1], match[2]), (match[3], match[4])):
            if letter is None:
                continue
            name = f"{letter}{int(number)}"
            if name not in geo.index:
                row = ROW_LETTERS.find(letter)
                if 0 <= row < len(geo.rows):
                    return f"{letter}{number} is not on the board: row {letter} has cells {letter}1–{letter}{len(geo.rows[row])}"
                return f"{letter}{number} is not on the board: the rows are a–{ROW_LETTERS[len(geo.rows) - 1]}"
            cells.append(geo.index[name])
        if len(cells) == 1:
            return Action("place", cells[0], suffix=suffix)
        return Action("tail", cells[0], cells[1], suffix=suffix)

    def check(self, state: SerpentState, seat: int, text: str) -> Verdict:
        move, ending = self.judge(state, seat, text)
        return Verdict(error=move) if ending is None else Verdict(move=move)

    def judge(self, state: SerpentState, seat: int, text: str) -> tuple[str, Ending | None]:
        """(canonical move, the removals it makes) or (the error, None): the one
        judgement both `check` and `apply` rest on."""
        try:
            text = str(text)
        except Exception:  # pragma: no cover - str() of a str never fails
            return "send a move as text", None
        if self.is_over(state):
            return "the game is over", None
        if seat != state.to_move:
            return f"it is not your turn; {{seat{state.to_move}}} is to move", None
        action = self.parse(GEOMETRIES[state.size], text)
        if isinstance(action, str):
            return action, None
        return self.decide(state, seat, action)

    def prepare(self, state: SerpentState, seat: int, action: Action, board: list[str],
                own: Side | None = None) -> Prepared | str:
        """The board after the action itself, or why the action is not allowed."""
        geo = GEOMETRIES[state.size]
        nbrs, names = geo.nbrs, geo.names
        stone = STONE[seat]
        if action.kind == "place":
            cell = action.cell
            if board[cell] != EMPTY:
                return f"{names[cell]} is not empty"
            snake, eggs = [], []
            for y in nbrs[cell]:
                if board[y] == stone:
                    (snake if any(board[z] == stone for z in nbrs[y]) else eggs).append(y)
            if snake:
                return f"{names[cell]} touches your snake at {geo.name_list(snake)}"
            if len(eggs) > 2:
                return (f"{names[cell]} touches {COUNT_WORDS[len(eggs)]} of your eggs ({geo.name_list(eggs)}); "
                        "a stone may touch at most two")
            after = list(board)
            after[cell] = stone
            prepared = Prepared(after, list(state.flags))
        else:
            src, dst = action.cell, action.dest
            if board[src] == EMPTY:
                return f"there is no stone at {names[src]}"
            if board[src] != stone:
                return f"{names[src]} is not your stone"
            own = own or side_of(board, stone, geo)
            k = own.gid[src]
            if len(own.groups[k]) == 1:
                return f"{names[src]} is an egg; only the tail of a snake can move"
            ends = own.ends[k]
            if src not in ends:
                return f"{names[src]} is not an end of its snake ({geo.name_list(ends)}); only the tail can move"
            head = ends[0] if ends[1] == src else ends[1]
            d_src, d_head = own.end_distance(src), own.end_distance(head)
            if d_src < d_head:
                return (f"{names[src]} is the head of its snake (survival path {_fmt(d_src)}, against "
                        f"{_fmt(d_head)} from {names[head]}); only the tail {names[head]} can move")
            if board[dst] != EMPTY:
                return f"{names[dst]} is not empty"
            if dst not in nbrs[head]:
                return f"{names[dst]} does not touch the head of the snake at {names[head]}"
            after = list(board)
            after[src] = EMPTY
            after[dst] = stone
            group = {dst}
            stack = [dst]
            while stack:
                x = stack.pop()
                for y in nbrs[x]:
                    if after[y] == stone and y not in group:
                        group.add(y)
                        stack.append(y)
            degrees = [sum(1 for y in nbrs[x] if after[y] == stone) for x in group]
            if not all(d in (1, 2) for d in degrees) or degrees.count(1) != 2:
                return (f"after {action.text(geo)} your stones at {geo.name_list(group)} would not form a snake "
                        "(a simple chain)")
            joined = any(own.gid[y] != k for y in group if y != dst)
            prepared = Prepared(after, list(state.flags), joined=joined, before=d_head)
        # The "has had two groups" flag, set right after the action.
        if not prepared.flags[seat]:
            prepared.flags[seat] = self.count_groups(prepared.board, stone, geo) >= 2
        return prepared

    @staticmethod
    def count_groups(board: list[str], stone: str, geo: Geometry) -> int:
        nbrs = geo.nbrs
        seen = set()
        count = 0
        for c in range(geo.cells):
            if board[c] == stone and c not in seen:
                count += 1
                seen.add(c)
                stack = [c]
                while stack:
                    x = stack.pop()
                    for y in nbrs[x]:
                        if board[y] == stone and y not in seen:
                            seen.add(y)
                            stack.append(y)
        return count

    def endings(self, state: SerpentState, seat: int, action: Action, prepared: Prepared) -> list[Ending]:
        """The removals played out: one Ending if both orders come to the same thing,
        else two, the opponent's colour first and then the mover's."""
        geo = GEOMETRIES[state.size]
        board, flags = prepared.board, prepared.flags
        sides = [side_of(board, STONE[c], geo) for c in (0, 1)]
        dead = [sides[c].dead(flags[c]) for c in (0, 1)]
        if not dead[0] or not dead[1]:
            # Removing one colour only adds empty cells, which never kills the other:
            # with at most one colour dead, both orders are the same.
            firsts = [1 - seat]
        else:
            firsts = [1 - seat, seat]
        results = []
        for first in firsts:
            final = list(board)
            removed: tuple[list[int], list[int]] = ([], [])
            winner = None
            for step, colour in enumerate((first, 1 - first)):
                if step == 0:
                    side, gone = sides[colour], dead[colour]
                else:
                    side = side_of(final, STONE[colour], geo) if removed[first] else sides[colour]
                    gone = side.dead(flags[colour]) if removed[first] else dead[colour]
                if not gone:
                    continue
                for k in gone:
                    for c in side.groups[k]:
                        final[c] = EMPTY
                        removed[colour].append(c)
                if len(gone) == len(side.groups):
                    winner = 1 - colour
                    break
            ending = Ending(first, final, flags, removed, winner)
            ending.error = self.illegal(state, seat, action, prepared, ending)
            results.append(ending)
        return results

    def illegal(self, state: SerpentState, seat: int, action: Action, prepared: Prepared, ending: Ending) -> str | None:
        """Why this turn, with this removal order, is not allowed; None if it is."""
        geo = GEOMETRIES[state.size]
        names = geo.names
        final = ending.board
        stone = STONE[seat]
        if action.kind == "tail":
            if final[action.dest] != stone:
                return f"the moved stone at {names[action.dest]} would be removed"
            if not prepared.joined:
                side = side_of(final, stone, geo)
                after = side.group_distance(side.gid[action.dest])
                if not after < prepared.before:
                    return (f"the move does not shorten the snake's survival path ({_fmt(prepared.before)} before, "
                            f"{_fmt(after)} after the removals)")
        elif ending.removed[seat] == [action.cell] and not ending.removed[1 - seat]:
            return (f"the stone placed at {names[action.cell]} would be the only stone removed; "
                    "you cannot pass by placing a stone that dies")
        for colour in (0, 1):
            if ending.removed[colour]:
                why = self.not_hostile(geo, final, colour, ending.removed[colour])
                if why:
                    return why
        if ending.winner is None:
            key = position_key("".join(final), prepared.flags, 1 - seat)
            if key in state.history:
                return "the position after it would repeat an earlier position"
        return None

    @staticmethod
    def not_hostile(geo: Geometry, final: list[str], colour: int, emptied: list[int]) -> str | None:
        """Why a region left behind by removing `colour`'s stones is not hostile
        terrain for `colour` in the final position; None if every one is."""
        nbrs = geo.nbrs
        region: dict[int, int] = {}
        for e in emptied:
            if e in region:
                continue
            region[e] = e
            stack = [e]
            while stack:
                x = stack.pop()
                for y in nbrs[x]:
                    if final[y] == EMPTY and y not in region:
                        region[y] = e
                        stack.append(y)
        side = side_of(final, STONE[colour], geo)
        for ends in side.ends:
            for a in ends:
                starts = [s for s in nbrs[a] if s in region]
                if not starts:
                    continue
                found = side.search(a, starts=starts, path=True)
                if found:
                    _, cells, b = found
                    here = [e for e in emptied if region[e] == region[cells[0]]]
                    return (f"removing {COLOUR[colour]}'s {geo.name_list(here)} is not allowed: the region left "
                            f"behind still has a survival path for {COLOUR[colour]} through {' '.join(geo.names[c] for c in cells)} "
                            f"(from {geo.names[a]} to {geo.names[b]})")
        return None

    def decide(self, state: SerpentState, seat: int, action: Action) -> tuple[str, Ending | None]:
        """(canonical move, the removals it makes) or (the error, None)."""
        geo = GEOMETRIES[state.size]
        prepared = self.prepare(state, seat, action, list(state.board))
        if isinstance(prepared, str):
            return prepared, None
        endings = self.endings(state, seat, action, prepared)
        base = action.text(geo)
        if len(endings) == 1 or self.same(endings):
            ending = endings[0]
            return (ending.error, None) if ending.error else (base, ending)
        by_first = {e.first: e for e in endings}
        if action.suffix is not None:
            first = SUFFIX.index(action.suffix)
            ending = by_first[first]
            if ending.error:
                return f"removing {COLOUR[first]}'s dead groups first, {ending.error}", None
            return f"{base}/{action.suffix}", ending
        for ending in endings:  # the opponent's colour first, then the mover's
            if not ending.error:
                return f"{base}/{SUFFIX[ending.first]}", ending
        return "; ".join(f"removing {COLOUR[e.first]}'s dead groups first, {e.error}" for e in endings), None

    @staticmethod
    def same(endings: list[Ending]) -> bool:
        one, two = endings
        return one.board == two.board and one.winner == two.winner

    def candidates(self, state: SerpentState, seat: int):
        """Every action that passes the placement and tail-move rules, unchecked."""
        geo = GEOMETRIES[state.size]
        board = state.board
        for c in range(geo.cells):
            if board[c] == EMPTY:
                yield Action("place", c), None
        own = side_of(board, STONE[seat], geo)
        for k, ends in enumerate(own.ends):
            if len(own.groups[k]) < 2:
                continue
            for tail in ends:
                head = ends[0] if ends[1] == tail else ends[1]
                if own.end_distance(tail) < own.end_distance(head):
                    continue
                for d in geo.nbrs[head]:
                    if board[d] == EMPTY:
                        yield Action("tail", tail, d), own

    def options(self, state: SerpentState, seat: int, first_only: bool = False) -> list[str]:
        geo = GEOMETRIES[state.size]
        moves = []
        for action, own in self.candidates(state, seat):
            prepared = self.prepare(state, seat, action, list(state.board), own)
            if isinstance(prepared, str):
                continue
            endings = self.endings(state, seat, action, prepared)
            base = action.text(geo)
            if len(endings) == 1 or self.same(endings):
                found = [base] if not endings[0].error else []
            else:
                found = [f"{base}/{SUFFIX[e.first]}" for e in sorted(endings, key=lambda e: e.first) if not e.error]
            moves.extend(found)
            if first_only and moves:
                break
        return moves

    def legal_moves(self, state: SerpentState, seat: int) -> list[str]:
        if self.is_over(state) or seat != state.to_move:
            return []
        return self.options(state, seat)

    def apply(self, state: SerpentState, seat: int, move: str, chance: Any) -> None:
        canonical, ending = self.judge(state, seat, move)
        if ending is None:
            raise ValueError(f"illegal move {move!r}: {canonical}")
        geo = GEOMETRIES[state.size]
        state.board = "".join(ending.board)
        state.flags = list(ending.flags)
        state.to_move = 1 - seat
        state.history.append(position_key(state.board, state.flags, state.to_move))
        state.last_seat, state.last_move = seat, canonical
        state.removed = [[geo.names[c] for c in sorted(ending.removed[colour])] for colour in (0, 1)]
        if ending.winner is not None:
            state.over, state.winner = "wipeout", ending.winner
        elif not self.options(state, 1 - seat, first_only=True):
            state.over, state.winner = "stuck", seat

    # --- views --------------------------------------------------------------------
    def view(self, state: SerpentState, seat: int | None) -> dict[str, Any]:
        geo = GEOMETRIES[state.size]
        n = geo.n
        rows = []
        for i, row in enumerate(geo.rows):
            rows.append({
                "letter": ROW_LETTERS[i],
                "indent": 2 * abs(i - (n - 1)),
                "cells": [f"{state.board[c]}{j + 1}" for j, c in enumerate(row)],
            })
        return {
            "size": n,
            "rows": rows,
            "flags": list(state.flags),
            "to_move": None if self.is_over(state) else state.to_move,
            "over": state.over,
            "winner": state.winner,
            "last_seat": state.last_seat,
            "last_move": state.last_move,
            "removed": [list(r) for r in state.removed],
            "shapes": self.shapes(state, geo),
        }

    @staticmethod
    def shapes(state: SerpentState, geo: Geometry) -> list[list[str]]:
        """What each stone is, row by row as `rows` ("" empty, "egg", "snake", or a
        snake's "head" and "tail" where their distances differ): for the HTML board,
        which draws eggs and snakes apart, the template holding no game logic."""
        sides = [side_of(state.board, stone, geo) for stone in STONE]

        def shape(c: int) -> str:
            if state.board[c] == EMPTY:
                return ""
            side = sides[STONE.index(state.board[c])]
            k = side.gid[c]
            if len(side.groups[k]) == 1:
                return "egg"
            ends = side.ends[k]
            if c in ends:
                other = ends[1] if ends[0] == c else ends[0]
                mine, theirs = side.end_distance(c), side.end_distance(other)
                if mine != theirs:
                    return "head" if mine < theirs else "tail"
            return "snake"

        return [[shape(c) for c in row] for row in geo.rows]

    # --- storage ------------------------------------------------------------------
    def serialise(self, state: SerpentState) -> dict[str, Any]:
        return {
            "resigned": list(state.resigned),
            "size": state.size,
            "board": state.board,
            "flags": list(state.flags),
            "to_move": state.to_move,
            "history": list(state.history),
            "winner": state.winner,
            "over": state.over,
            "last_seat": state.last_seat,
            "last_move": state.last_move,
            "removed": [list(r) for r in state.removed],
        }

    def restore(self, data: dict[str, Any]) -> SerpentState:
        return SerpentState(
            resigned=list(data["resigned"]),
            size=data["size"],
            board=data["board"],
            flags=[bool(f) for f in data["flags"]],
            to_move=data["to_move"],
            history=list(data["history"]),
            winner=data["winner"],
            over=data["over"],
            last_seat=data["last_seat"],
            last_move=data["last_move"],
            removed=[list(r) for r in data["removed"]],
        )


register(Serpent())
