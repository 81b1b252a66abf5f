"""Playing a game on the database: set-up, moves into the log, replays, board mails.

The move log is the source of truth: `replay` rebuilds any position from the set-up and
the logged (seat, move, chance) rows, and `GameRecord.state` is the cache of its end.
"""

from __future__ import annotations

import hashlib
import random
import secrets
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from .config import Config
from .games import Game, Outcome, State, get_game
from .games.base import fill_seats
from .mail.outbound import Mail
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
        status="active", result="", state=game.serialise(state), created_at=now, updated_at=now, timers={},
        seats=[Seat(seat=i, user=user) for i, user in enumerate(users)],
    )
    refresh_timers(record, state, now)
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
        apply_logged(game, state, move.kind, move.seat, move.move, move.chance)
    return state


def apply_logged(game: Game, state: State, kind: str, seat: int, move: str, chance) -> None:
    """One action of the log: a move, a resignation, or a deadline passing (seat -1)."""
    if kind == "resign":
        game.resign(state, seat)
    elif kind == "timeout":
        game.timeout(state, move)
    else:
        game.apply(state, seat, move, chance)


def record_action(session: Session, record: GameRecord, state: State, seat: int, kind: str,
                  move: str, comment: str, now: datetime, inbound_id: int | None) -> None:
    """Apply a checked move (a resignation, a timeout) to `state` and append it to the log."""
    game = engine_of(record)
    number = len(record.moves) + 1
    chance = game.draw(state, seat, move, seeded_rng(record.seed, number)) if kind == "move" else None
    apply_logged(game, state, kind, seat, move, chance)
    record.moves.append(Move(number=number, seat=seat, kind=kind, move=move, chance=chance,
                             comment=comment, inbound_id=inbound_id, created_at=now))
    record.state = game.serialise(state)
    record.updated_at = now
    outcome = game.result(state)
    if outcome is not None:
        record.status = "finished"
        record.result = status_line(record, state)
    refresh_timers(record, state, now)
    session.flush()


def refresh_timers(record: GameRecord, state: State, now: datetime) -> None:
    """Note when each of the engine's timers started (now, for a new one), forget the
    ones that ended, and set `due_at` to the earliest deadline."""
    wanted = engine_of(record).timers(state) if record.status == "active" else {}
    started = {name: record.timers.get(name, now.isoformat()) for name in wanted}
    record.timers = started
    record.due_at = min((datetime.fromisoformat(started[name]) + timedelta(seconds=seconds)
                         for name, seconds in wanted.items()), default=None)


def next_timer(record: GameRecord) -> tuple[str, datetime]:
    """The timer that falls due first (by time, then name) and when."""
    durations = engine_of(record).timers(current_state(record))
    return min(((name, datetime.fromisoformat(start) + timedelta(seconds=durations[name]))
                for name, start in record.timers.items() if name in durations),
               key=lambda pair: (pair[1], pair[0]))


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
    if record.status != "active":  # ended from outside the rules (an admin's abort)
        return record.result
    acting = sorted(game.to_act(state))
    if len(acting) == 1:
        return f"It is {players[acting[0]]}'s turn."
    return f"Waiting for: {', '.join(players[s] for s in acting)}."


def subject(record: GameRecord, state: State, new: bool = False) -> str:
    game = engine_of(record)
    words = [game.title, "Board", str(record.board)]
    if game.result(state) is None and record.status == "active":
        acting = sorted(game.to_act(state))
        words.append(names(record)[acting[0]] if len(acting) == 1 else "ALL")
    return ("New " if new else "") + " ".join(words)


def recent_moves(record: GameRecord, limit: int, upto: int | None = None,
                 viewer: int | None = None) -> list[tuple[int, list[str]]]:
    """The move log in rows of one action per seat, numbered, the last `limit` rows, as
    `viewer` may read it."""
    game = engine_of(record)
    players = names(record)
    rows: list[tuple[int, list[str]]] = []
    last_seat = None
    for move in record.moves[:upto]:
        if move.seat < 0:  # deadlines are not a seat's move
            continue
        if not rows or last_seat is None or move.seat <= last_seat:
            rows.append((len(rows) + 1, [""] * len(record.seats)))
        shown = "resign" if move.kind == "resign" else game.shown_move(move.seat, move.move, viewer)
        rows[-1][1][move.seat] = fill_seats(shown, players)
        last_seat = move.seat
    return rows[-limit:] if limit else []


def board_text(config: Config, record: GameRecord, state: State, viewer: int | None,
               comments: list[tuple[str, str]] = (), upto: int | None = None, note: str = "") -> str:
    """The body of a board mail as seat `viewer` (None: the public) sees it."""
    game = engine_of(record)
    players = names(record)
    rows = recent_moves(record, config.limits.recent_moves, upto, viewer)
    width = max([len(n) for n in players] + [len(c) for _, cells in rows for c in cells]) + 2
    if upto is not None:
        note = f"Position after move {upto} of {len(record.moves)}."
    deadline = ""
    if upto is None and record.status == "active" and record.timers:
        name, due = next_timer(record)
        deadline = f"Next deadline: {due:%Y-%m-%d %H:%M} UTC ({name})."
    return render(
        "board.txt", title=game.title, board=record.board, status=status_line(record, state),
        note=note, deadline=deadline, names=players, rows=rows, width=width,
        drawing=render_board(game, game.view(state, viewer), players),
        comments=[(who, text) for who, text in comments if text.strip()],
    )


def board_mails(config: Config, record: GameRecord, state: State, comments: list[tuple[str, str]],
                *, new: bool = False, note: str = "", private: frozenset[int] | None = None,
                extra: dict[int, str] | None = None) -> list[Mail]:
    """One board mail to every player, each from that player's own side, to all their
    addresses (and `extra[seat]`, an unregistered address the seat's command came
    from). Comments on a private action go only to the seats in `private`."""
    mail_subject = subject(record, state, new=new)
    mails = []
    for seat in record.seats:
        to = seat.user.emails
        address = (extra or {}).get(seat.seat)
        if address and address.lower() not in {a.lower() for a in to}:
            to = to + [address]
        shown = comments if private is None or seat.seat in private else []
        mails.append(Mail(to, mail_subject, board_text(config, record, state, seat.seat, shown, note=note)))
    return mails
