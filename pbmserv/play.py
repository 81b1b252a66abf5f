"""Playing a game on the database: set-up, moves into the log, replays, board mails.

The move log is the source of truth: `replay` rebuilds any position from the set-up and
the logged (seat, move, chance) rows, and `GameRecord.state` is the cache of its end.
"""

from __future__ import annotations

import hashlib
import random
import re
import secrets
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Iterator

from sqlalchemy.orm import Session, object_session

from .clocks import FORFEIT, Deadline, clock_deadlines, turn_clocks
from .config import Config
from .ratings import rate
from .replyto import reply_address
from .games import Game, Outcome, State, get_game
from .games.base import fill_seats
from .mail.outbound import Mail
from .render import render, render_board
from .store.models import GameRecord, Seat, User
from .store.movelog import Logged, append, log_of
from .store.repo import next_board_number, save_board


def seeded_rng(*parts: object) -> random.Random:
    """An RNG seeded from text, the same on every platform and Python run."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:16], "big"))


def engine_of(record: GameRecord) -> Game:
    game = get_game(record.game_type)
    if game is None:
        raise RuntimeError(f"board {record.board} is of unknown game type {record.game_type!r}")
    return game


def start_game(session: Session, config: Config, game: Game, users: list[User], params: dict[str, int],
               now: datetime, nag_after: int = 0, forfeit_after: int = 0,
               starter: User | None = None) -> tuple[GameRecord, State]:
    """A new board of `users` in seat order, started by `starter` (the first seat by
    default), with its set-up's chance drawn and logged."""
    board = next_board_number(session, game.name)
    seed = f"{config.server.seed}:{game.name}:{board}" if config.server.seed else secrets.token_hex(16)
    chance = game.initial_chance(len(users), params, seeded_rng(seed, 0))
    state = game.setup(len(users), params, chance)
    record = GameRecord(
        game_type=game.name, board=board, params=params, seed=seed, setup_chance=chance,
        status="active", result="", state=game.serialise(state), created_at=now, updated_at=now, timers={},
        nag_after=nag_after, forfeit_after=forfeit_after, clocks={}, starter_id=(starter or users[0]).id,
        seats=[Seat(seat=i, user=user) for i, user in enumerate(users)],
    )
    refresh_timers(record, state, now)
    session.add(record)
    session.flush()
    return record, state


def current_state(record: GameRecord) -> State:
    return engine_of(record).restore(record.state)


UNDO, DRAW = "undo", "draw"  # logged outcomes of votes: moves taken back, a draw agreed


def standing(moves: list[Logged]) -> list[Logged]:
    """The logged actions still in force, oldest first: an `undo` row takes back every
    action from the one it names (`move` holds its number) up to itself."""
    return list(standing_newest_first(moves))[::-1]


def standing_newest_first(moves: list[Logged]) -> Iterator[Logged]:
    """`standing(moves)` from its newest action back, reading only as far back as the
    caller goes: a board mail shows the last few rows, and must not walk a long game's
    whole log for them. From an `undo` back, the actions from the one it names are
    skipped, and so are those an `undo` among them names (already taken back)."""
    floor = None  # while actions from this number on are being skipped
    for move in reversed(moves):
        if floor is not None and move.number >= floor:
            if move.kind == UNDO:
                floor = min(floor, int(move.move))
        elif move.kind == UNDO:
            floor = int(move.move)
        else:
            yield move


def replay(record: GameRecord, upto: int | None = None) -> State:
    """The position after the first `upto` logged actions (all of them by default)."""
    game = engine_of(record)
    state = game.setup(len(record.seats), record.params, record.setup_chance)
    for move in standing(log_of(record)[:upto]):
        apply_logged(game, state, move.kind, move.seat, move.move, move.chance)
    return state


def apply_logged(game: Game, state: State, kind: str, seat: int, move: str, chance) -> None:
    """One action of the log: a move, a resignation or forfeit, or a deadline passing
    (seat -1). A draw agreed changes no position."""
    if kind in ("resign", FORFEIT):
        game.resign(state, seat)
    elif kind == "timeout":
        game.timeout(state, move)
    elif kind != DRAW:
        game.apply(state, seat, move, chance)


def record_action(session: Session, record: GameRecord, state: State, seat: int, kind: str,
                  move: str, comment: str, now: datetime, inbound_id: int | None, auto: bool = False) -> State:
    """Apply a checked move (a resignation, a forfeit, a timeout, a vote's outcome) to
    `state` and append it to the log; the position after it (a new one after an undo).
    A board that ends is rated (`ratings.rate`)."""
    game = engine_of(record)
    number = len(log_of(record)) + 1
    chance = game.draw(state, seat, move, seeded_rng(record.seed, number)) if kind == "move" else None
    if kind != UNDO:
        apply_logged(game, state, kind, seat, move, chance)
    append(record, seat=seat, kind=kind, move=move, chance=chance, auto=auto, comment=comment,
           inbound_id=inbound_id, created_at=now)
    if kind == UNDO:
        state = replay(record)
    record.state = game.serialise(state)
    record.updated_at = now
    outcome = Outcome(tie=True) if kind == DRAW else game.result(state)
    if outcome is not None:
        record.status = "finished"
        record.result = "Draw agreed: the game is a tie." if kind == DRAW else status_line(record, state)
        record.vote = None  # nothing left to vote on
        rate(session, record, outcome)
    refresh_timers(record, state, now, actor=seat if seat >= 0 else None)
    save_board(session, record)
    return state


def refresh_timers(record: GameRecord, state: State, now: datetime, actor: int | None = None) -> None:
    """Note when each of the engine's timers started (now, for a new one) and when each
    waiting seat's turn began (`clocks`), forget the ones that ended, and set `due_at`
    to the earliest deadline."""
    game = engine_of(record)
    active = record.status == "active"
    record.timers = {name: record.timers.get(name, now.isoformat()) for name in (game.timers(state) if active else {})}
    record.clocks = turn_clocks(record, game.to_act(state) if active else frozenset(), actor, now)
    record.robot_turn = bool(active and robots_waited_for(record, state))
    set_due(record, state)


def robots_waited_for(record: GameRecord, state: State) -> list[int]:
    """The robot players' seats the board waits for now (`robots/turns.py` plays them)."""
    waiting = engine_of(record).waiting_for(state)
    return [seat.seat for seat in record.seats if seat.user.robot and seat.seat in waiting]


# `state` below is the board's current position when the caller has it at hand (else it
# is restored from the record): the engine's timers depend on it.

def set_due(record: GameRecord, state: State | None = None) -> None:
    """Set `due_at`; without flushing the record's other changes first, so that a
    move stays one write (the vacations it reads may need loading)."""
    session = object_session(record)
    with session.no_autoflush if session is not None else nullcontext():
        record.due_at = min((d.due for d in deadlines(record, state)), default=None)


def engine_deadlines(record: GameRecord, state: State | None = None) -> list[Deadline]:
    """The engine's running timers."""
    if not record.timers:
        return []
    durations = engine_of(record).timers(state if state is not None else current_state(record))
    return [Deadline(datetime.fromisoformat(start) + timedelta(seconds=durations[name]), name)
            for name, start in record.timers.items() if name in durations]


def deadlines(record: GameRecord, state: State | None = None) -> list[Deadline]:
    return engine_deadlines(record, state) + list(clock_deadlines(record))


def next_deadline(record: GameRecord, state: State | None = None) -> Deadline:
    """The deadline that falls due first (by time, then name, then seat)."""
    return min(deadlines(record, state), key=Deadline.order)


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
    may_act = game.to_act(state)
    acting = sorted(game.waiting_for(state) or may_act)
    if len(acting) == 1 and len(may_act) == 1:  # a turn; else a phase waits for some (Survive)
        return f"It is {players[acting[0]]}'s turn."
    return f"Waiting for: {', '.join(players[s] for s in acting)}."


def subject(record: GameRecord, state: State, new: bool = False) -> str:
    game = engine_of(record)
    words = [game.title, "Board", str(record.board)]
    if game.result(state) is None and record.status == "active":
        acting = sorted(game.to_act(state))
        words.append(names(record)[acting[0]] if len(acting) == 1 else "ALL")
    return ("New " if new else "") + " ".join(words)


def recent_moves(record: GameRecord, limit: int | None, upto: int | None = None,
                 viewer: int | None = None) -> list[list[str]]:
    """The move log in rows of one action per seat, the last `limit` rows (all for
    None), as `viewer` may read it. Each cell carries the action's number as the #N
    guard counts it (`#3 d`): every logged action counts, votes and deadlines too,
    so the numbers of a row need not follow on."""
    game = engine_of(record)
    players = names(record)
    if limit == 0:
        return []
    log = log_of(record)
    picked: list[Logged] = []  # newest first, back to the first action of the rows shown
    begun = 0  # rows of `picked` whose first action is in it
    for move in standing_newest_first(log if upto is None else log[:upto]):
        if move.seat < 0 or move.kind == DRAW:  # deadlines and votes are not a seat's move
            continue
        if picked and move.seat >= picked[-1].seat:  # a row begins with the action after it
            begun += 1
            if begun == limit:
                break
        picked.append(move)
    rows: list[list] = []
    last_seat = None
    for move in reversed(picked):
        if last_seat is None or move.seat <= last_seat:
            rows.append([None] * len(players))
        rows[-1][move.seat] = move
        last_seat = move.seat

    def text(move: Logged) -> str:  # only for the rows shown
        shown = move.kind if move.kind in ("resign", FORFEIT) else game.shown_move(move.seat, move.move, viewer)
        return f"#{move.number} " + fill_seats(shown + (" (auto)" if move.auto else ""), players)
    return [[text(move) if move is not None else "" for move in cells] for cells in rows]


def next_move(record: GameRecord) -> str:
    """The number the #N guard wants on the board's next action: `#7`."""
    return f"#{len(log_of(record)) + 1}"


def when(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC"


def deadline_lines(record: GameRecord, state: State, now: datetime) -> list[str]:
    """What a board mail of a running board says of the next move's #N, the running
    deadlines and the players on vacation (`state`: the current position)."""
    if record.status != "active":
        return []
    players = names(record)
    lines = [f"Next move: {next_move(record)}"]
    timers = engine_deadlines(record, state)
    if timers:
        first = min(timers, key=Deadline.order)
        lines.append(f"Next deadline: {when(first.due)} ({first.name}).")
    lines += [f"{players[d.seat]} forfeits if no move by {when(d.due)}."
              for d in sorted(clock_deadlines(record), key=Deadline.order) if d.name == FORFEIT]
    if record.vote:
        lines.append(vote_line(record))
    away = [f"{seat.user.userid} until {when(until)}" for seat in record.seats
            if (until := away_until(seat.user, now)) is not None]
    if away:
        lines.append(f"On vacation: {', '.join(away)}.")
    return lines


def proposed(vote: dict) -> str:
    """What a vote proposes: `a draw`, `to take back the moves from move 3 on`."""
    return "a draw" if vote["kind"] == DRAW else f"to take back the moves from move {vote['move']} on"


def waiting_for(record: GameRecord, vote: dict) -> list[str]:
    """The players who have still to answer the vote."""
    return [name for seat, name in enumerate(names(record)) if seat != vote["by"] and seat not in vote["accepted"]]


def vote_line(record: GameRecord) -> str:
    """The vote in progress, as every board mail shows it."""
    vote = record.vote
    return (f"Vote: {names(record)[vote['by']]} proposes {proposed(vote)}; "
            f"waiting for {', '.join(waiting_for(record, vote))} to accept or reject.")


def away_until(user: User, now: datetime) -> datetime | None:
    """When the vacation `user` is on at `now` ends; None if they are not away."""
    return next((v.end for v in user.vacations if v.start <= now < v.end), None)


@dataclass
class Board:
    """A board as one reader's mail shows it: `text` for the text/plain part, and what
    the text/html part draws it from (`render.board_html`, when the sender renders the
    mail: `mail/outbound.py`)."""

    text: str
    context: dict[str, Any]  # what board.txt was given, but the drawing
    game: Game
    view: dict[str, Any]


def show_board(config: Config, record: GameRecord, state: State, viewer: int | None, now: datetime,
               comments: list[tuple[str, str]] = (), upto: int | None = None, note: str = "",
               hypothetical: bool = False, drawn: list[Board] | None = None) -> Board:
    """A board mail's board as seat `viewer` (None: the public) sees it at `now`.
    A `hypothetical` position (a preview) shows no deadlines nor next move: they are
    the real board's. `drawn` keeps the boards drawn for other readers of the same
    position: one whose view and words are the same is not drawn again (nothing is
    hidden in most games, and observers share the public view)."""
    game = engine_of(record)
    players = names(record)
    # the last few moves while the game runs; once it is over, the whole game
    limit = config.limits.recent_moves if record.status == "active" or upto is not None else None
    rows = recent_moves(record, limit, upto, viewer) if game.move_table else []
    width = max([len(n) for n in players] + [len(c) for cells in rows for c in cells]) + 2
    if upto is not None:
        note = f"Position after move {upto} of {len(log_of(record))}."
    view = game.view(state, viewer)
    context = dict(
        title=game.title, board=record.board, status=status_line(record, state), note=note,
        deadline="\n".join(deadline_lines(record, state, now) if upto is None and not hypothetical else []),
        names=players, rows=rows, width=width, comments=[(who, text) for who, text in comments if text.strip()])
    drawn = [] if drawn is None else drawn
    for board in drawn:
        if board.view == view and board.context == context:
            return board
    drawn.append(Board(render("board.txt", **context, drawing=render_board(game, view, players)), context, game, view))
    return drawn[-1]


SIGN_OFF = re.compile(r"sent from .*|get outlook for .*|von meinem .* gesendet|cheers|(kind |best |warm )?regards"
                      r"|best( wishes)?|all the best|take care|yours( truly| sincerely)?|bye|ciao|greetings",
                      re.IGNORECASE)


def real_comment(comments: list[tuple[str, str]]) -> bool:
    """Whether any comment says something: more than a signature (the author's userid)
    or a mail program's sign-off line. Such board mails get ` **` in the Subject."""
    for who, text in comments:
        for line in text.splitlines():
            words = re.sub(rf"[\s,]*\b{re.escape(who)}$", "", line.strip().strip("-~*_.,!"), flags=re.IGNORECASE)
            if words and not SIGN_OFF.fullmatch(words.strip(" ,")):
                return True
    return False


def board_mails(config: Config, record: GameRecord, state: State, comments: list[tuple[str, str]], now: datetime,
                *, new: bool = False, note: str = "", private: frozenset[int] | None = None,
                extra: dict[int, str] | None = None, notes: dict[int, str] | None = None,
                always: bool = False) -> list[Mail]:
    """One board mail to every player, each from that player's own side, to all their
    addresses (and `extra[seat]`, an unregistered address the seat's command came
    from), and one to each observer, as the public sees it. Comments on a private
    action go only to the seats in `private`; `notes[seat]` goes to that seat alone,
    after `note`. A player's mail has a Reply-To of its own
    (`replyto.py`): an answer holding just the next move plays it. Each reader's
    `mail` preference (`wants_mail`) may hold a mail back, unless it is `always`
    sent (a deadline's); the seats of `extra`, whose command this answers, get theirs."""
    mail_subject = subject(record, state, new=new)
    players = {seat.user_id for seat in record.seats}
    acting = engine_of(record).to_act(state) if record.status == "active" else frozenset()
    readers: list[tuple[int | None, list[str], User]] = []
    for seat in record.seats:
        to = seat.user.emails
        address = (extra or {}).get(seat.seat)
        if address and address.lower() not in {a.lower() for a in to}:
            to = to + [address]
        if to and (always or seat.seat in (extra or {}) or wants_mail(seat.user, seat.seat in acting, record)):
            readers.append((seat.seat, to, seat.user))  # a robot has no address: it reads no mail
    readers += [(None, sub.user.emails, sub.user) for sub in record.subscriptions
                if sub.user_id not in players and not sub.user.disabled
                and (always or wants_mail(sub.user, False, record))]
    mails, drawn = [], []
    for viewer, to, reader in readers:
        shown = comments if private is None or viewer in private else []
        marked = mail_subject + (" **" if real_comment(shown) else "")
        reply_to = reply_address(config, record, viewer) if viewer is not None else None
        own = "\n".join(line for line in (note, (notes or {}).get(viewer, "")) if line)
        board = show_board(config, record, state, viewer, now, shown, note=own, drawn=drawn)
        mails.append(Mail(to, marked, board.text, reply_to, [board], html=reader.html))
    return mails


def wants_mail(user: User, must_act: bool, record: GameRecord) -> bool:
    """Whether `user`'s `mail` preference takes this board mail now: `every` all of
    them, `turn` those where they must act and the game's end, `digest` none (the
    daily digest tells them, `digest.py`)."""
    if user.mail == "turn":
        return must_act or record.status != "active"
    return user.mail != "digest"
