"""The one scheduler of time-driven events (DESIGN.md §1).

Engines name their deadlines (`Game.timers`), the server adds its own nag and forfeit
clocks (`clocks.py`), and `GameRecord.due_at` keeps the earliest; daily digests and
the expiry of open challenges (`commands/seeks.py`) are events of the same kind.
`run_due(now)` fires every event due by `now`, earliest first, each in its own
transaction, with the clock set to the event's own time: so a replay whose Date:
jumps forward fires every event in between, in order, and gets the same replies
every time. `serve` calls it continuously, `replay` before each mail with that mail's
Date:, and `pbmserv tick` once. The same two also mask and delete the secrets kept in
stored mail (`store/retention.py`): `serve` about once an hour, `tick` on every run.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from .clocks import FORFEIT, NAG, Deadline, in_words, setting_seconds, shifted
from .config import Config
from .games import State
from .mail.outbound import Mail, queue_mails
from .play import (board_mails, current_state, engine_of, next_deadline, record_action, set_due, show_board,
                   when)
from .replyto import reply_address
from .commands.seeks import due_seek, expire
from .digest import due_digest, send_digest
from .store.db import OnDriver
from .store.models import GameRecord, Seek, Setting, User
from .store.movelog import log_of
from .store.retention import Retained, retain

log = logging.getLogger(__name__)

ALIVE = "alive_at"  # the Setting that notes when `serve` or `tick` last ran
RETAINED = "retained_at"  # the Setting that notes when stored mail was last masked
RETAIN_EVERY = timedelta(hours=1)


def next_due(session: Session, now: datetime) -> GameRecord | None:
    """The board whose deadline is due first, claimed (another scheduler on the same
    PostgreSQL database skips it; SQLite has one writer anyway)."""
    return session.scalar(select(GameRecord).where(GameRecord.status == "active", GameRecord.due_at <= now)
                          .order_by(GameRecord.due_at, GameRecord.id).limit(1).with_for_update(skip_locked=True))


def run_due(sessions: sessionmaker[Session], config: Config, now: datetime) -> int:
    """Fire every deadline, send every digest and expire every open challenge (seek)
    due by `now`, earliest first (at the same moment: a board's deadline, then a
    digest, then a seek), each in its own transaction; the number fired."""
    fired = 0
    while True:
        with sessions.begin() as session:
            record, user, seek = next_due(session, now), due_digest(session, now), due_seek(session, now)
            events = [(moment, rank, action, row) for moment, rank, action, row in (
                (record and record.due_at, 0, fire, record), (user and user.digest_due, 1, send_digest, user),
                (seek and seek.expires_at, 2, expire, seek)) if row is not None]
            if not events:
                return fired
            _moment, _rank, action, row = min(events, key=lambda event: event[:2])
            action(session, config, row)
        fired += 1


def fire(session: Session, config: Config, record: GameRecord) -> None:
    """Act on the earliest due deadline of `record` and mail those it concerns."""
    state = current_state(record)
    deadline = next_deadline(record, state)
    if deadline.name == NAG:
        nag(session, config, record, state, deadline)
        return
    if deadline.name == FORFEIT:
        userid = record.seats[deadline.seat].user.userid
        record_action(session, record, state, deadline.seat, FORFEIT, FORFEIT, "", deadline.due, None)
        note = f"{userid} forfeited: no move for {in_words(record.forfeit_after)}."
    else:
        record_action(session, record, state, -1, "timeout", deadline.name, "", deadline.due, None)
        note = f"Deadline passed: {deadline.name}."
    log.info("%s of %s board %s", note, record.game_type, record.board)
    mails = board_mails(config, record, state, [], deadline.due, note=note, always=True)
    queue_mails(session, config, mails, f"t{record.id}-{len(log_of(record))}", deadline.due)


def nag(session: Session, config: Config, record: GameRecord, state: State, deadline: Deadline) -> None:
    """Remind the player of `deadline.seat` that it is their turn, once per turn."""
    key = str(deadline.seat)
    record.clocks = {**record.clocks, key: {**record.clocks[key], "nagged": True}}
    set_due(record, state)
    user = record.seats[deadline.seat].user
    since = datetime.fromisoformat(record.clocks[key]["since"])
    note = f"Reminder: it has been {user.userid}'s turn since {when(since)}."
    title = engine_of(record).title
    shown = show_board(config, record, state, deadline.seat, deadline.due, note=note)
    log.info("nag to %s on %s board %s", user.userid, record.game_type, record.board)
    mail = Mail(user.emails, f"Nag: {title} Board {record.board} {user.userid}", shown.text,
                reply_address(config, record, deadline.seat), [shown])
    queue_mails(session, config, [mail],
                f"n{record.id}-{len(log_of(record))}-{key}", deadline.due)


def keep_alive(sessions: sessionmaker[Session], config: Config, now: datetime,
               retain_every: timedelta = RETAIN_EVERY) -> timedelta | None:
    """Note that the server runs at `now`, and mask old secrets if the last time was
    `retain_every` ago. After a longer silence than `[games] downtime_grace`, give the
    time back: every running deadline starts that much later, so nobody is nagged or
    forfeited for mail the server could not read. The gap given back, if any."""
    gap = note_alive(sessions, config, now)
    try:
        retain_due(sessions, config, now, retain_every)
    except Exception:  # noqa: BLE001 - never at the cost of the deadlines; again in an hour
        log.exception("masking the secrets of stored mail failed")
    return gap


def retain_due(sessions: sessionmaker[Session], config: Config, now: datetime,
               every: timedelta = RETAIN_EVERY) -> Retained | None:
    """Run `retain` if it last ran `every` ago or longer (or never), by whichever
    server on the database comes first; what it did, or None if it was not due."""
    with sessions.begin() as session:
        row = session.get(Setting, RETAINED, with_for_update=True)
        if row is not None and now - datetime.fromisoformat(row.value) < every:
            return None
        if row is None:
            try:
                with session.begin_nested():  # another server may write it first
                    session.add(Setting(name=RETAINED, value=now.isoformat()))
            except IntegrityError:
                return None
        else:
            row.value = now.isoformat()  # noted first: a pass that fails is tried again in an hour
    done = retain(sessions, config, now)
    if done != Retained():
        log.info("stored mail kept %s days: %d masked, %d sent replies deleted, %d failed ones masked, "
                 "%d rate events deleted", config.limits.keep_raw_days, done.masked, done.deleted,
                 done.scrubbed, done.events)
    return done


def note_alive(sessions: sessionmaker[Session], config: Config, now: datetime) -> timedelta | None:
    """Note that the server runs at `now`; give the time of a silence back."""
    grace = timedelta(seconds=setting_seconds(config.games.downtime_grace))
    with sessions.begin() as session:
        # Locked: of several servers on one database back from one outage, the first
        # gives the time back and the others then see its note, not the old one.
        row = session.get(Setting, ALIVE, with_for_update=True)
        if row is None:
            try:
                with session.begin_nested():  # the first note; another server may write it too
                    session.add(Setting(name=ALIVE, value=now.isoformat()))
            except IntegrityError:
                pass
            return None
        gap = now - datetime.fromisoformat(row.value)
        row.value = max(now, datetime.fromisoformat(row.value)).isoformat()
        if gap <= grace:
            return None
        for record in session.scalars(select(GameRecord).where(GameRecord.status == "active",
                                                                GameRecord.due_at.is_not(None))):
            shifted(record, gap)
            set_due(record)
        log.warning("the server was silent for %s: running deadlines pushed back by as much", gap)
        return gap


DUE_MOMENTS = (  # the first deadline of an active game, the first digest, the first expiry of an open seek
    select(GameRecord.due_at).where(GameRecord.status == "active", GameRecord.due_at.is_not(None))
    .order_by(GameRecord.due_at).limit(1).scalar_subquery(),
    select(User.digest_due).where(User.digest_due.is_not(None)).order_by(User.digest_due).limit(1).scalar_subquery(),
    select(Seek.expires_at).where(Seek.status == "open").order_by(Seek.expires_at).limit(1).scalar_subquery())
# built once: building and keying them cost more than running them
EARLIEST_DUE = OnDriver(select(*DUE_MOMENTS))
DUE_AND_ROBOTS = OnDriver(select(*DUE_MOMENTS, select(GameRecord.id).where(GameRecord.robot_turn,
                                                                           GameRecord.status == "active").exists()))


def earliest_due(sessions: sessionmaker[Session]) -> datetime | None:
    """When the next deadline of any active game, the next digest or the first
    expiry of an open seek falls due (for `serve` to sleep until), in one statement."""
    return soonest(read_row(sessions, EARLIEST_DUE))


def due_and_robots(sessions: sessionmaker[Session]) -> tuple[datetime | None, bool]:
    """`earliest_due`, and whether a board waits for a robot (`robots.turns.play_robots`
    then has a move to play), in one statement: what `replay` asks after every mail,
    and `serve` after every batch it played (`Server.wake_for_played`)."""
    *found, robots = read_row(sessions, DUE_AND_ROBOTS)
    return soonest(found), bool(robots)


def soonest(moments) -> datetime | None:
    """The earliest of the due moments that are set (a subquery finding none gives None)."""
    return min((moment for moment in moments if moment is not None), default=None)


def read_row(sessions: sessionmaker[Session], statement: OnDriver) -> tuple:
    """The one row of a statement that reads tables, on a connection of the sessions'
    engine: a session around it cost as much again (175 against 86 us on SQLite), and
    on SQLite's driver the row takes 27 (2026-12-07)."""
    with sessions.kw["bind"].connect() as connection:
        (row,), _count = statement.run(connection, {})
        return row
