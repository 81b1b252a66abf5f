"""Playing a game on the database: set-up, moves into the log, replays, board mails.

The move log is the source of truth: `replay` rebuilds any position from the set-up and
the logged (seat, move, chance) rows, and `GameRecord.state` is the cache of its end.
"""

from __future__ import annotations

import hashlib
import random
import secrets
from datetime import datetime

from sqlalchemy.orm import Session

from .config import Config
from .games import Game, Outcome, State, get_game
from .render import render, render_board
from .store.models import GameRecord, Move, Seat, User
from .store.repo import next_board_number


def seeded_rng(*parts: object) -> random.Random:
    """An RNG seeded from text, the same on every platform and Python run."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def engine_of(record: GameRecord) -> Game:
    game = get_game(record.game_type)
    if game is None:
        raise RuntimeError(f"board {record.board} is of unknown game type {record.game_type!r}")
    return game


def start_game(session: Session, config: Config, game: Game, users: list[User],
               params: dict[str, int], now: datetime) -> tuple[GameRecord, State]:
    board = next_board_number(session, game.name)
    seed = f"{config.server.seed}:{game.name}:{board}" if config.server.seed else secrets.token_hex(16)
    chance = game.initial_chance(len(users), params, seeded_rng(seed, 0))
    state = game.setup(len(users), params, chance)
    record = GameRecord(
        game_type=game.name, board=board, params=params, seed=seed, setup_chance=chance,
        status="active", result="", state=game.serialise(state), created_at=now, updated_at=now,
        seats=[Seat(seat=i, user=user) for i, user in enumerate(users)],
    )
    session.add(record)
    session.flush()
    return record, state


def current_state(record: GameRecord) -> State:
    return engine_of(record).restore(record.state)


def replay(record: GameRecord, upto: int | None = None) -> State:
    """The position after the first `upto` logged actions (all of them by default)."""
    game = engine_of(record)
    state = game.setup(len(record.seats), record.params, record.setup_chance)
    for move in record.moves[:upto]:
        if move.kind == "resign":
            game.resign(state, move.seat)
        else:
            game.apply(state, move.seat, move.move, move.chance)
    return state


def record_action(session: Session, record: GameRecord, state: State, seat: int, kind: str,
                  move: str, comment: str, now: datetime, inbound_id: int | None) -> None:
    """Apply a checked move (or a resignation) to `state` and append it to the log."""
    game = engine_of(record)
    number = len(record.moves) + 1
    chance = None
    if kind == "resign":
        game.resign(state, seat)
    else:
        chance = game.draw(state, seat, move, seeded_rng(record.seed, number))
        game.apply(state, seat, move, chance)
    record.moves.append(Move(number=number, seat=seat, kind=kind, move=move, chance=chance,
                             comment=comment, inbound_id=inbound_id, created_at=now))
    record.state = game.serialise(state)
    record.updated_at = now
    outcome = game.result(state)
    if outcome is not None:
        record.status = "finished"
        record.result = status_line(record, state)
    session.flush()


# --- what players read -------------------------------------------------------------

def names(record: GameRecord) -> list[str]:
    return [seat.user.userid for seat in record.seats]


def seat_of(record: GameRecord, user: User) -> int | None:
    for seat in record.seats:
        if seat.user_id == user.id:
            return seat.seat
    return None


def outcome_line(outcome: Outcome, players: list[str]) -> str:
    if outcome.tie:
        return "Game was a tie."
    if not outcome.winners:
        return "Game over: nobody won."
    return f"Game won by {' and '.join(players[s] for s in outcome.winners)}."


def status_line(record: GameRecord, state: State) -> str:
    game = engine_of(record)
    players = names(record)
    outcome = game.result(state)
    if outcome is not None:
        return outcome_line(outcome, players)
    acting = sorted(game.to_act(state))
    if len(acting) == 1:
        return f"It is {players[acting[0]]}'s turn."
    return f"Waiting for: {', '.join(players[s] for s in acting)}."


def subject(record: GameRecord, state: State, new: bool = False) -> str:
    game = engine_of(record)
    words = [game.title, "Board", str(record.board)]
    if game.result(state) is None:
        acting = sorted(game.to_act(state))
        words.append(names(record)[acting[0]] if len(acting) == 1 else "ALL")
    return ("New " if new else "") + " ".join(words)


def recent_moves(record: GameRecord, limit: int, upto: int | None = None) -> list[tuple[int, list[str]]]:
    """The move log in rows of one action per seat, numbered, the last `limit` rows."""
    rows: list[tuple[int, list[str]]] = []
    last_seat = None
    for move in record.moves[:upto]:
        if not rows or last_seat is None or move.seat <= last_seat:
            rows.append((len(rows) + 1, [""] * len(record.seats)))
        rows[-1][1][move.seat] = "resign" if move.kind == "resign" else move.move
        last_seat = move.seat
    return rows[-limit:] if limit else []


def board_text(config: Config, record: GameRecord, state: State, viewer: int | None,
               comments: list[tuple[str, str]] = (), upto: int | None = None, note: str = "") -> str:
    """The body of a board mail as seat `viewer` (None: the public) sees it."""
    game = engine_of(record)
    players = names(record)
    rows = recent_moves(record, config.limits.recent_moves, upto)
    width = max([len(n) for n in players] + [len(c) for _, cells in rows for c in cells]) + 2
    if upto is not None:
        note = f"Position after move {upto} of {len(record.moves)}."
    return render(
        "board.txt", title=game.title, board=record.board, status=status_line(record, state),
        note=note, names=players, rows=rows, width=width,
        drawing=render_board(game, game.view(state, viewer), players),
        comments=[(who, text) for who, text in comments if text.strip()],
    )
