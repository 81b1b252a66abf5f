"""Look-ups of users and games shared by the commands."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import cache
from collections.abc import Callable
from datetime import datetime, timedelta

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, joinedload
from sqlalchemy.orm.attributes import instance_state, set_committed_value
from sqlalchemy.orm.exc import StaleDataError

from .db import OnDriver, tables
from .kept import keep_board, kept_board
from .models import Address, GameRecord, RateEvent, Seat, Setting, User


_settings: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # engine -> {name: value}


def fixed_setting(session: Session, name: str, make: Callable[[], str]) -> str:
    """The value of a setting written once and never changed (a token, a secret), made
    by `make` the first time. Values found stored are cached per database, so the
    common case costs no query; a value made now is not, until it is read back
    committed (a rolled-back one must not linger)."""
    cache = _settings.setdefault(session.get_bind(), {})
    if name in cache:
        return cache[name]
    row = session.get(Setting, name)
    if row is not None:
        cache[name] = row.value
        return row.value
    try:
        with session.begin_nested():  # another process may be writing it this very moment
            session.add(Setting(name=name, value=make()))
    except IntegrityError:
        pass  # it won: its value stands
    return session.scalar(select(Setting.value).where(Setting.name == name))


def find_user(session: Session, userid: str) -> User | None:
    return session.scalar(select(User).where(User.userid_key == userid.lower()))


PASSWORD_WINDOW = timedelta(hours=1)  # wrong passwords are counted over the last hour


@dataclass
class SenderFacts:
    """What every mail's handling asks of the database about who wrote it."""

    registered: bool  # some account has the answers' address, confirmed
    bouncing: bool  # the sender's address has failed deliveries counted
    wrong_passwords: int  # sent from the sender's address in the last PASSWORD_WINDOW


# Statements every mail runs, built once: building and keying a statement costs about
# as much as running it.
SENDER_FACTS = OnDriver(select(
    select(Address.id).where(Address.address_key == bindparam("reply_to"), Address.confirmed).exists(),
    select(Address.id).where(Address.address_key == bindparam("sender"), Address.failures > 0).exists(),
    select(func.count(RateEvent.id)).where(RateEvent.kind == "wrong-password", RateEvent.key == bindparam("key"),
                                          RateEvent.at > bindparam("since", type_=RateEvent.at.type))
    .scalar_subquery()))
CLEAR_BOUNCES = (update(Address).where(Address.address_key == bindparam("bounced"), Address.failures > 0)
                 .values(failures=0).execution_options(synchronize_session="fetch"))


def sender_facts(session: Session, sender: str, reply_to: str, now: datetime) -> SenderFacts:
    """The facts of `SenderFacts` in one statement."""
    sender = sender.lower()
    (found,), _count = SENDER_FACTS.run(tables(session), dict(reply_to=reply_to.lower(), sender=sender,
                                                              key=f"address:{sender}", since=now - PASSWORD_WINDOW))
    return SenderFacts(bool(found[0]), bool(found[1]), found[2])


@cache  # loader options are immutable, and building this one costs as much as a query
def with_players():
    """Load a board's seats, their users and the users' addresses and vacations in the
    board's own statement: every board mail and deadline needs them."""
    return joinedload(GameRecord.seats).joinedload(Seat.user).options(joinedload(User.addresses),
                                                                     joinedload(User.vacations))


@cache  # built at the first use, after the mappers are configured
def board_with_players():
    """The board, locked until the transaction ends (PostgreSQL; SQLite's transaction
    holds the whole database): a second worker with the next mail for the same board
    waits for the first one's move instead of reading the board before it and
    answering "not your turn"."""
    return (select(GameRecord).where(GameRecord.game_type == bindparam("game_type"),
                                     GameRecord.board == bindparam("board")).options(with_players())
            .with_for_update(of=GameRecord))


def find_game(session: Session, game_type: str, board: int) -> GameRecord | None:
    """The board with its players: as the worker keeps it, if it does (`kept.py`)."""
    record = kept_board(session, game_type, board)
    if record is None:
        record = session.scalars(board_with_players(), {"game_type": game_type, "board": board}).unique().one_or_none()
        keep_board(session, record)
    return record


BOARD_COLUMNS = frozenset(GameRecord.__table__.columns.keys()) - {"id", "version"}
BOARD_ROW = GameRecord.__table__.c
# built once; the columns set are those of the parameters given
SAVE_BOARD = OnDriver(update(GameRecord.__table__).where(BOARD_ROW.id == bindparam("board_id"),
                                                          BOARD_ROW.version == bindparam("board_version")))


def save_board(session: Session, record: GameRecord) -> None:
    """Write the board's changed columns in one UPDATE, its version checked and bumped
    as the ORM's flush does it (a board another worker changed meanwhile raises
    StaleDataError, and the worker plays the mail again), and mark them saved. The
    unit of work cost four times the statement, and a move changes just this row (its
    log row is written by `movelog.append`); the session's other changes, if any,
    are flushed as before, at the next query or the commit."""
    state = instance_state(record)
    if state.key is None:  # a new board: the unit of work inserts it
        session.flush()
        return
    assigned = [key for key in state.committed_state if key in BOARD_COLUMNS]
    changed = {key: state.dict[key] for key in assigned if state.dict[key] != state.committed_state[key]}
    if changed:
        version = record.version
        _rows, saved = SAVE_BOARD.run(  # the session's would flush the same changes first
            session.connection(), dict(changed, version=version + 1, board_id=record.id, board_version=version))
        if saved != 1:
            raise StaleDataError(f"board {record.id} was changed by another transaction (version {version})")
        set_committed_value(record, "version", version + 1)
    if len(assigned) == len(state.committed_state):  # only columns: the board is saved whole
        # and no longer "modified", which the next flush would look into for nothing (0.27 ms)
        state._commit_all(state.dict, session.identity_map)
    else:  # a collection changed too: the unit of work writes it, and leaves these be
        for key in assigned:
            set_committed_value(record, key, state.dict[key])


def game_by_id(session: Session, game_id: int) -> GameRecord | None:
    return session.get(GameRecord, game_id, options=[with_players()])


def next_board_number(session: Session, game_type: str) -> int:
    """Boards are counted per game type from 101, as on the original server."""
    highest = session.scalar(select(func.max(GameRecord.board)).where(GameRecord.game_type == game_type))
    return 101 if highest is None else highest + 1


def running_of_type(session: Session, game_type: str, user: User | None, limit: int) -> tuple[int, list[GameRecord]]:
    """How many boards of the type (of `user`, if given) are running, and the first
    `limit` of them by board number."""
    query = select(GameRecord).where(GameRecord.game_type == game_type, GameRecord.status == "active")
    if user is not None:
        query = query.where(GameRecord.id.in_(select(Seat.game_id).where(Seat.user_id == user.id)))
    total = session.scalar(select(func.count()).select_from(query.subquery()))
    return total, list(session.scalars(query.order_by(GameRecord.board).limit(limit)))


def running_games(session: Session, user: User) -> list[GameRecord]:
    """The running boards `user` has a seat on, by game and board number."""
    seated = select(Seat.game_id).where(Seat.user_id == user.id)
    return list(session.scalars(select(GameRecord).where(GameRecord.id.in_(seated), GameRecord.status == "active")
                                .order_by(GameRecord.game_type, GameRecord.board)))


def players_of_type(session: Session, game_type: str) -> list[User]:
    """Every person who has had a seat in a game of this type (robots read no mail)."""
    seated = select(Seat.user_id).join(GameRecord).where(GameRecord.game_type == game_type)
    return list(session.scalars(select(User).where(User.id.in_(seated), User.robot.is_(None))
                                .order_by(User.userid_key)))


def all_users(session: Session) -> list[User]:
    """Every person (not the robots)."""
    return list(session.scalars(select(User).where(User.robot.is_(None)).order_by(User.userid_key)))


def recent_events(session: Session, kind: str, key: str, now: datetime, window: timedelta) -> int:
    """How many events of `kind` by `key` were counted in the `window` before `now`."""
    return session.scalar(select(func.count(RateEvent.id)).where(
        RateEvent.kind == kind, RateEvent.key == key, RateEvent.at > now - window))


def rate_limited(session: Session, kind: str, key: str, now: datetime, per_day: int) -> bool:
    """Count one use of `kind` by `key`; True (and not counted) if `per_day` uses in the
    last 24 hours were counted already."""
    return uses_left(session, kind, key, now, per_day) is None


def uses_left(session: Session, kind: str, key: str, now: datetime, per_day: int) -> int | None:
    """Count one use of `kind` by `key`; the uses left in the last 24 hours after it, or
    None (and not counted) if none was left."""
    used = recent_events(session, kind, key, now, timedelta(days=1))
    if used >= per_day:
        return None
    session.add(RateEvent(kind=kind, key=key, at=now))
    return per_day - used - 1


def count_bounces(session: Session, addresses: list[str]) -> None:
    """One more failed delivery for each of these addresses (whoever registered them)."""
    for row in session.scalars(select(Address).where(Address.address_key.in_([a.lower() for a in addresses]))):
        row.failures += 1


def clear_bounces(session: Session, address: str) -> None:
    """The address works again (it just wrote): its failed deliveries are forgotten.
    One UPDATE, run for every mail, that touches no row in the common case."""
    session.execute(CLEAR_BOUNCES, {"bounced": address.lower()})
