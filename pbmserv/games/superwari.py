"""Super-Wari (Bill Taylor's 8-pit Wari) and classic Wari on one sowing engine.

The rules are in shared/rules/superwari.md. The board is one list of 2 * n pits:
South's a..h are indices 0..n-1 and North's a..h are n..2n-1, so sowing
anticlockwise is simply stepping to the next index, wrapping round.
"""

from __future__ import annotations

import string
import textwrap
from dataclasses import dataclass, field
from typing import Any, ClassVar

from . import register
from .base import Game, Outcome, Param, State, Verdict, echoed, either

SOUTH, NORTH = 0, 1
CAPTURABLE = (2, 3)


@dataclass
class SuperWariState(State):
    """A game in progress. `history` holds every position (pits + side to move) since
    the last capture: positions from before a capture can never recur."""

    pits_per_side: int = 8
    pits: list[int] = field(default_factory=list)
    captured: list[int] = field(default_factory=lambda: [0, 0])
    to_move: int = SOUTH
    history: list[list[int]] = field(default_factory=list)
    over: str | None = None  # "majority", "starving" or "repetition" once ended by play
    last_seat: int | None = None
    last_move: str | None = None


def _row(n: int, seat: int) -> range:
    """Board indices of `seat`'s pits, a to h."""
    return range(seat * n, (seat + 1) * n)


def _sow_and_capture(pits: list[int], n: int, seat: int, origin: int) -> tuple[list[int], int]:
    """The pits after `seat` sows from board index `origin`, and the stones captured."""
    board = list(pits)
    stones, board[origin] = board[origin], 0
    pos = origin
    while stones:
        pos = (pos + 1) % (2 * n)
        if pos == origin:  # the emptied pit is skipped on every lap
            continue
        board[pos] += 1
        stones -= 1
    captured = 0
    opponent_row = _row(n, 1 - seat)
    while pos in opponent_row and board[pos] in CAPTURABLE:  # never crosses to own row
        captured += board[pos]
        board[pos] = 0
        pos -= 1
    return board, captured


def _letters(n: int) -> str:
    return string.ascii_lowercase[:n]






def _help(intro: str, n: int, stones: int) -> str:
    """The rules in our own words for an n-pit board, wrapped for mail."""
    last = _letters(n)[-1]
    total = 2 * n * stones
    paragraphs = [
        intro,
        f"Each player owns a row of {n} pits, named a–{last} from their own left, with "
        f"{stones} stones in each at the start ({total} in all). South, the challenger, "
        "owns the bottom row and moves first. Each player's board shows their own row "
        "at the bottom.",
        'A move is the letter of one of your non-empty pits, e.g. "c" (case does not '
        "matter). You take all its stones and sow them one per pit anticlockwise: along "
        f"your row from a toward {last}, then along your opponent's row from their a "
        f"toward their {last}, and round again. The pit you emptied is skipped on every lap.",
        "If your last stone lands in an opponent's pit and makes it hold 2 or 3, you "
        "capture those stones, then the pit before it (toward their a) if it holds 2 or "
        "3, and so on, stopping at the first pit that does not or at the end of their "
        "row. Nothing is captured on your own side.",
        "You may not leave your opponent with no stones, whether by capturing them all "
        "or by not feeding an opponent who has none, unless every move does so: then "
        "you play any move, capture as usual, take all the stones left on the board, "
        "and the game ends.",
        "If a move brings back an earlier position (the same stones in every pit and the "
        "same side to move), each player takes the stones on their own side and the "
        "game ends.",
        f"The game also ends as soon as a player has captured more than half of the "
        f"stones ({total // 2 + 1} of {total}), even on a move that would otherwise take "
        "the whole board. More captures wins; equal captures is a tie. You may resign at "
        "any time.",
    ]
    return "\n\n".join(textwrap.fill(p, 70) for p in paragraphs) + "\n"


class SuperWari(Game):
    """Super-Wari: `-pits` per side and `-stones` per pit are parameters."""

    name: ClassVar[str] = "superwari"
    title: ClassVar[str] = "Super-Wari"
    can_tie: ClassVar[bool] = True  # equal captures at the end
    params: ClassVar[tuple[Param, ...]] = (
        Param("pits", 8, 4, 10, "pits on each side"),
        Param("stones", 3, 1, 6, "stones in each pit at the start"),
    )
    move_syntax: ClassVar[str] = "the letter of one of your own pits: c"
    summary: ClassVar[str] = "Bill Taylor's 8-pit Wari: sow, capture 2s and 3s, never starve your opponent"
    help_text: ClassVar[str] = _help(
        "Super-Wari is Bill Taylor's Wari on a larger board, for more room to plan.", 8, 3
    )
    template: ClassVar[str] = "superwari.txt"

    def board_size(self, params: dict[str, int]) -> tuple[int, int]:
        """(pits per side, stones per pit) for these parameters."""
        values = {p.name: p.default for p in self.params} | params
        return values["pits"], values["stones"]

    # --- set-up -------------------------------------------------------------------
    def setup(self, players: int, params: dict[str, int], chance: Any) -> SuperWariState:
        n, stones = self.board_size(params)
        state = SuperWariState(pits_per_side=n, pits=[stones] * (2 * n))
        state.history.append(self._position(state))
        return state

    # --- play ---------------------------------------------------------------------
    def is_over(self, state: SuperWariState) -> bool:
        return state.over is not None or bool(state.resigned)

    def to_act(self, state: SuperWariState) -> frozenset[int]:
        return frozenset() if self.is_over(state) else frozenset({state.to_move})

    def check(self, state: SuperWariState, seat: int, text: str) -> Verdict:
        if self.is_over(state):
            return Verdict(error="the game is over")
        if seat != state.to_move:
            return Verdict(error=f"it is not your turn; {{seat{state.to_move}}} is to move")
        letters = _letters(state.pits_per_side)
        span = f"{letters[0]}–{letters[-1]}"
        word = str(text).strip()
        if not word:
            return Verdict(error=f"send the letter of one of your pits, {span}")
        letter = word.lower()
        if len(letter) != 1 or letter not in string.ascii_lowercase:
            return Verdict(error=f'"{echoed(word)}" is not a pit; send the letter of one of your pits, {span}')
        if letter not in letters:
            return Verdict(error=f"there is no pit {letter} (your pits are {span})")
        origin = _row(state.pits_per_side, seat)[letters.index(letter)]
        if state.pits[origin] == 0:
            return Verdict(error=f"pit {letter} is empty")
        legal = self.legal_moves(state, seat)
        if letter not in legal:
            return Verdict(
                error=f"that move would leave {{seat{1 - seat}}} with no stones; you must play {either(legal)}"
            )
        return Verdict(move=letter)

    def apply(self, state: SuperWariState, seat: int, move: str, chance: Any) -> None:
        verdict = self.check(state, seat, move)
        if not verdict.ok:
            raise ValueError(f"illegal move {move!r}: {verdict.error}")
        n = state.pits_per_side
        origin = _row(n, seat)[_letters(n).index(verdict.move)]
        state.pits, gain = _sow_and_capture(state.pits, n, seat, origin)
        state.captured[seat] += gain
        state.last_seat, state.last_move = seat, verdict.move
        total = sum(state.pits) + sum(state.captured)
        if 2 * state.captured[seat] > total:
            state.over = "majority"
        elif not any(state.pits[i] for i in _row(n, 1 - seat)):  # unavoidable starving
            state.captured[seat] += sum(state.pits)
            state.pits = [0] * (2 * n)
            state.over = "starving"
        else:
            state.to_move = 1 - seat
            if gain:  # positions from before a capture can never recur
                state.history.clear()
            position = self._position(state)
            if position in state.history:
                for side in (SOUTH, NORTH):
                    state.captured[side] += sum(state.pits[i] for i in _row(n, side))
                state.pits = [0] * (2 * n)
                state.over = "repetition"
            else:
                state.history.append(position)

    def result(self, state: SuperWariState) -> Outcome | None:
        resigned = self.resigned_outcome(state, 2)
        if resigned is not None:
            return resigned
        if state.over is None:
            return None
        south, north = state.captured
        if south == north:
            return Outcome(tie=True)
        return Outcome(winners=(SOUTH if south > north else NORTH,))

    def legal_moves(self, state: SuperWariState, seat: int) -> list[str]:
        """Non-empty pits that leave the opponent stones; all non-empty pits if none do."""
        if self.is_over(state) or seat != state.to_move:
            return []
        n = state.pits_per_side
        letters = _letters(n)
        sowable = [(letters[i], index) for i, index in enumerate(_row(n, seat)) if state.pits[index]]
        feeding = [
            letter
            for letter, index in sowable
            if any(_sow_and_capture(state.pits, n, seat, index)[0][i] for i in _row(n, 1 - seat))
        ]
        return feeding or [letter for letter, _ in sowable]

    @staticmethod
    def _position(state: SuperWariState) -> list[int]:
        return [*state.pits, state.to_move]

    # --- views --------------------------------------------------------------------
    def view(self, state: SuperWariState, seat: int | None) -> dict[str, Any]:
        """The board from `seat`'s side: their row at the bottom, read a..h left to
        right; the opponent's row on top, read h..a (sowing runs anticlockwise)."""
        n = state.pits_per_side
        bottom = SOUTH if seat is None else seat
        top = 1 - bottom
        letters = list(_letters(n))
        return {
            "pits_per_side": n,
            "bottom_seat": bottom,
            "top_seat": top,
            "bottom_row": [state.pits[i] for i in _row(n, bottom)],
            "top_row": [state.pits[i] for i in reversed(_row(n, top))],
            "bottom_letters": letters,
            "top_letters": letters[::-1],
            "captured": list(state.captured),
            "to_move": None if self.is_over(state) else state.to_move,
            "over": state.over,
            "last_seat": state.last_seat,
            "last_move": state.last_move,
        }

    # --- storage ------------------------------------------------------------------
    def serialise(self, state: SuperWariState) -> dict[str, Any]:
        return {
            "resigned": list(state.resigned),
            "pits_per_side": state.pits_per_side,
            "pits": list(state.pits),
            "captured": list(state.captured),
            "to_move": state.to_move,
            "history": [list(p) for p in state.history],
            "over": state.over,
            "last_seat": state.last_seat,
            "last_move": state.last_move,
        }

    def restore(self, data: dict[str, Any]) -> SuperWariState:
        return SuperWariState(
            resigned=list(data["resigned"]),
            pits_per_side=data["pits_per_side"],
            pits=list(data["pits"]),
            captured=list(data["captured"]),
            to_move=data["to_move"],
            history=[list(p) for p in data["history"]],
            over=data["over"],
            last_seat=data["last_seat"],
            last_move=data["last_move"],
        )


class Wari(SuperWari):
    """Classic Wari: the same engine on a fixed board of 6 pits with 4 stones each."""

    name: ClassVar[str] = "wari"
    title: ClassVar[str] = "Wari"
    params: ClassVar[tuple[Param, ...]] = ()
    summary: ClassVar[str] = "The classic 6-pit mancala game (Oware): sow, capture 2s and 3s"
    help_text: ClassVar[str] = _help("Wari is the classic mancala game, also known as Oware.", 6, 4)

    def board_size(self, params: dict[str, int]) -> tuple[int, int]:
        return 6, 4


register(SuperWari())
register(Wari())
