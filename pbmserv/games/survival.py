"""Survival (David Smith, 1995): place arrows on a 19-hex board; each arrow says
where its owner's next piece must go, and the first player who cannot place loses.

The rules are in shared/rules/survival.md. Cells are named by column (A–E) and row,
rows numbered from the top of each column: A and E have rows 1–3, B and D 1–4, C 1–5.
A1, C2 and E1 are level; B1 and D1 sit half a row above them, C1 a whole row.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from typing import Any, ClassVar

from . import register
from .base import Game, Outcome, State, Verdict, echoed, either

OHS, EKS = 0, 1
MARKS = ("O", "X")
PIECES = 10
COLUMNS = "ABCDE"
HEIGHTS = (3, 4, 5, 4, 3)
DIRECTIONS = ("N", "NE", "SE", "S", "SW", "NW")
CELLS: tuple[str, ...] = tuple(f"{col}{row}" for col, h in zip(COLUMNS, HEIGHTS) for row in range(1, h + 1))
SHAPE = "columns A–E; A and E have rows 1–3, B and D 1–4, C 1–5"
EXAMPLE = "C3/NE"


def _cell(col: int, row: int) -> str | None:
    """The cell in column index `col` (0 = A) and row `row`, or None if off the board."""
    if 0 <= col < len(COLUMNS) and 1 <= row <= HEIGHTS[col]:
        return f"{COLUMNS[col]}{row}"
    return None


def neighbour(cell: str, direction: str) -> str | None:
    """The cell next to `cell` through its `direction` edge, or None off the board."""
    col, row = COLUMNS.index(cell[0]), int(cell[1:])
    if direction == "N":
        return _cell(col, row - 1)
    if direction == "S":
        return _cell(col, row + 1)
    if direction in ("NE", "SE"):  # to the column on the right
        if col >= 4:
            return None
        low = col < 2  # A, B: the next column starts half a row higher
        if direction == "NE":
            return _cell(col + 1, row if low else row - 1)
        return _cell(col + 1, row + 1 if low else row)
    if direction in ("NW", "SW"):  # to the column on the left
        if col <= 0:
            return None
        low = col > 2  # D, E: the next column starts half a row higher
        if direction == "NW":
            return _cell(col - 1, row if low else row - 1)
        return _cell(col - 1, row + 1 if low else row)
    raise ValueError(f"no direction {direction!r}")


def ray(cell: str, direction: str) -> list[str]:
    """The cells reached by stepping from `cell` in `direction` until off the board."""
    cells = []
    here = neighbour(cell, direction)
    while here is not None:
        cells.append(here)
        here = neighbour(here, direction)
    return cells






DIRECTION_LIST = f"{', '.join(DIRECTIONS[:-1])} or {DIRECTIONS[-1]}"
_MOVE = re.compile(r"([a-z])([0-9]+)\s*(?:[/-]\s*)?([a-z]+)", re.ASCII | re.IGNORECASE)
_CELL_ONLY = re.compile(r"([a-z])([0-9]+)\s*[/-]?", re.ASCII | re.IGNORECASE)


@dataclass
class SurvivalState(State):
    """A game in progress. `board` maps each occupied cell to [seat, direction];
    `last` holds each seat's previously placed piece as [cell, direction] (or None)."""

    board: dict[str, list] = field(default_factory=dict)
    last: list[list[str] | None] = field(default_factory=lambda: [None, None])
    placed: list[int] = field(default_factory=lambda: [0, 0])
    to_move: int = OHS
    over: bool = False  # the seat to move could not place a piece


def _help() -> str:
    paragraphs = [
        "Survival is David Smith's game of arrows. Each piece you place carries an "
        "arrow, and the arrow decides where your next piece may go. The first player "
        "who cannot place a piece loses.",
        "The board is a hexagon of 19 hexagonal cells in five columns, A to E from "
        "left to right. Rows are numbered from the top of each column: A and E have "
        "rows 1-3, B and D rows 1-4, and the middle column C rows 1-5. C1 is the top "
        "cell of the board and C5 the bottom one; A1, C2 and E1 are level, and B1 and "
        "D1 are half a row higher. Each cell has up to six neighbours, through its "
        "edges N (up), NE, SE, S (down), SW and NW. For example, C3 touches C2 (N), "
        "D2 (NE), D3 (SE), C4 (S), B3 (SW) and B2 (NW). There is no E or W.",
        "The challenger plays Ohs (O) and moves first; the other player plays Eks (X). "
        "Each has 10 pieces. Ohs starts by placing a piece on any cell, its arrow "
        "pointing any way. Eks then places a piece on any empty cell, pointing any way.",
        "From then on you must place your piece on an empty cell that lies on the ray "
        "of your own previous piece: any cell along the straight line from that piece "
        "in the direction of its arrow, as far as the edge of the board. Cells taken "
        "on the way do not block the line; you may skip over them. The new piece may "
        "point in any direction, even off the board or at taken cells, though that "
        "may leave you nowhere to go next time.",
        "If the player to move has no empty cell on their ray, they lose and the game "
        "ends at once. The board holds 19 pieces, so a game lasts at most 19 moves: if "
        "Ohs fills the last cell, Eks cannot move and loses. There are no passes and "
        "no draws. You may resign at any time.",
        "A move is a cell and the direction of its arrow, such as C3/NE. You may also "
        "write C3 NE, C3-NE or c3ne; case does not matter. The board shows an empty "
        "cell by its name and a piece by its owner and arrow, such as O NE or X S.",
    ]
    return "\n\n".join(textwrap.fill(p, 70) for p in paragraphs) + "\n"


class Survival(Game):
    """Survival for two: Ohs (seat 0, moves first) and Eks (seat 1)."""

    name: ClassVar[str] = "survival"
    title: ClassVar[str] = "Survival"
    # no example cell: errors show this, and any one cell may be taken (legal_hint adds a legal move)
    move_syntax: ClassVar[str] = "a cell and the direction of its arrow (N, NE, SE, S, SW, NW): CELL/DIRECTION"
    summary: ClassVar[str] = "David Smith's arrow game: place where your last arrow points, or lose"
    help_text: ClassVar[str] = _help()
    template: ClassVar[str] = "survival.txt"

    # --- set-up -------------------------------------------------------------------
    def setup(self, players: int, params: dict[str, int], chance: Any) -> SurvivalState:
        return SurvivalState()

    # --- play ---------------------------------------------------------------------
    def is_over(self, state: SurvivalState) -> bool:
        return state.over or bool(state.resigned)

    def to_act(self, state: SurvivalState) -> frozenset[int]:
        return frozenset() if self.is_over(state) else frozenset({state.to_move})

    def allowed_cells(self, state: SurvivalState, seat: int) -> list[str]:
        """The cells `seat` may place on if it were their turn, in board order
        (a ray's cells in the order the ray reaches them)."""
        if state.placed[seat] >= PIECES:
            return []
        previous = state.last[seat]
        if previous is None:  # the first piece of either player: any vacant cell
            return [c for c in CELLS if c not in state.board]
        return [c for c in ray(*previous) if c not in state.board]

    def check(self, state: SurvivalState, seat: int, text: str) -> Verdict:
        if self.is_over(state):
            return Verdict(error="the game is over")
        if seat != state.to_move:
            return Verdict(error=f"it is not your turn; {{seat{state.to_move}}} is to move")
        word = str(text).strip()
        if not word:
            return Verdict(error=f"send a cell and the direction of its arrow, e.g. {self._example(state, seat)}")
        match = _MOVE.fullmatch(word)
        cell_only = None if match else _CELL_ONLY.fullmatch(word)
        if not match and not cell_only:
            return Verdict(
                error=f'"{echoed(word)}" is not a move; send a cell and the direction of its arrow, '
                f"e.g. {self._example(state, seat)}"
            )
        cell = ((match or cell_only)[1] + (match or cell_only)[2]).upper()
        if cell not in CELLS:
            return Verdict(error=f"there is no cell {echoed(cell)} ({SHAPE})")
        direction = match[3].upper() if match else None
        if direction is not None and direction not in DIRECTIONS:
            return Verdict(error=f"there is no direction {echoed(direction)}: use {DIRECTION_LIST}")
        if cell in state.board:
            return Verdict(error=f"{cell} is taken")
        allowed = self.allowed_cells(state, seat)
        if cell not in allowed:
            here, pointing = state.last[seat]
            return Verdict(
                error=f"{cell} is not on the ray of your last piece ({here} pointing {pointing}): "
                f"you may place on {either(allowed)}"
            )
        if direction is None:  # checked after the cell, so that the example is a legal move
            return Verdict(error=f"{cell} needs a direction for its arrow: use {DIRECTION_LIST}, e.g. {cell}/NE")
        return Verdict(move=f"{cell}/{direction}")

    def _example(self, state: SurvivalState, seat: int) -> str:
        """A legal move of `seat`'s: C3/NE while C3 is free for it, else the first
        cell it may place on, pointing NE (any direction is legal)."""
        allowed = self.allowed_cells(state, seat)
        if not allowed:
            return EXAMPLE
        return EXAMPLE if EXAMPLE.split("/")[0] in allowed and state.last[seat] is None else f"{allowed[0]}/NE"

    def apply(self, state: SurvivalState, seat: int, move: str, chance: Any) -> None:
        verdict = self.check(state, seat, move)
        if not verdict.ok:
            raise ValueError(f"illegal move {move!r}: {verdict.error}")
        cell, direction = verdict.move.split("/")
        state.board[cell] = [seat, direction]
        state.last[seat] = [cell, direction]
        state.placed[seat] += 1
        state.to_move = 1 - seat
        if not self.allowed_cells(state, state.to_move):
            state.over = True  # the opponent cannot place: `seat` has won

    def result(self, state: SurvivalState) -> Outcome | None:
        resigned = self.resigned_outcome(state, 2)
        if resigned is not None:
            return resigned
        if not state.over:
            return None
        return Outcome(winners=(1 - state.to_move,))

    def legal_moves(self, state: SurvivalState, seat: int) -> list[str]:
        """Every legal cell × direction: cells in A1..E3 order, directions N..NW."""
        if self.is_over(state) or seat != state.to_move:
            return []
        allowed = set(self.allowed_cells(state, seat))
        return [f"{cell}/{d}" for cell in CELLS if cell in allowed for d in DIRECTIONS]

    # --- views --------------------------------------------------------------------
    def view(self, state: SurvivalState, seat: int | None) -> dict[str, Any]:
        """The same for every seat: nothing is hidden in Survival.

        `labels` holds a 4-character label for each cell, centred where its name
        stands in the seed's figure: " C3 " when empty, "O NE" or "X S " when taken."""
        labels = {}
        for cell in CELLS:
            if cell in state.board:
                owner, direction = state.board[cell]
                labels[cell] = f"{MARKS[owner]} {direction}".ljust(4)
            else:
                labels[cell] = f" {cell} "
        to_move = state.to_move
        previous = state.last[to_move]
        if state.resigned:
            ending = "resigned"
        elif not state.over:
            ending = None
        elif len(state.board) == len(CELLS):
            ending = "full"
        elif state.placed[to_move] >= PIECES:
            ending = "no pieces"
        else:
            ending = "blocked"
        outcome = self.result(state)
        return {
            "labels": labels,
            "marks": list(MARKS),
            "to_move": None if self.is_over(state) else to_move,
            "pieces_left": [PIECES - n for n in state.placed],
            "first_piece": previous is None,
            "first_move": not state.board,
            "ray_from": None if previous is None else list(previous),
            "ray_off_board": previous is not None and not ray(*previous),
            "cells": self.allowed_cells(state, to_move),
            "ending": ending,
            "loser": None if ending is None else (state.resigned[0] if state.resigned else to_move),
            "winners": [] if outcome is None else list(outcome.winners),
        }

    # --- storage ------------------------------------------------------------------
    def serialise(self, state: SurvivalState) -> dict[str, Any]:
        return {
            "resigned": list(state.resigned),
            "board": {cell: list(piece) for cell, piece in state.board.items()},
            "last": [None if p is None else list(p) for p in state.last],
            "placed": list(state.placed),
            "to_move": state.to_move,
            "over": state.over,
        }

    def restore(self, data: dict[str, Any]) -> SurvivalState:
        return SurvivalState(
            resigned=list(data["resigned"]),
            board={cell: list(piece) for cell, piece in data["board"].items()},
            last=[None if p is None else list(p) for p in data["last"]],
            placed=list(data["placed"]),
            to_move=data["to_move"],
            over=data["over"],
        )


register(Survival())
