"""The one scheduler of time-driven events (DESIGN.md §1).

Engines name their deadlines (`Game.timers`); the server notes when each started and
keeps the earliest in `GameRecord.due_at`. `run_due(now)` fires every deadline due by
`now`, earliest first, each in its own transaction, with the clock set to the deadline
itself: so a replay whose Date: jumps forward fires every deadline in between, in
order, and gets the same replies every time. `serve` calls it continuously, `replay`
before each mail with that mail's Date:, and `pbmserv tick` once.
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from .config import Config
from .mail.outbound import queue_mails
from .play import board_mails, current_state, next_timer, record_action
from .store.models import GameRecord

log = logging.getLogger(__name__)


def next_due(session: Session, now: datetime) -> GameRecord | None:
    return session.scalar(select(GameRecord).where(GameRecord.status == "active", GameRecord.due_at <= now)
                          .order_by(GameRecord.due_at, GameRecord.id).limit(1))


def run_due(sessions: sessionmaker[Session], config: Config, now: datetime) -> int:
    """Fire every deadline due by `now`; the number fired."""
    fired = 0
    while True:
        with sessions.begin() as session:
            record = next_due(session, now)
            if record is None:
                return fired
            fire(session, config, record)
        fired += 1


def fire(session: Session, config: Config, record: GameRecord) -> None:
    """Log the earliest due deadline of `record` as a timeout action and mail the
    players the board it leaves."""
    name, due = next_timer(record)
    state = current_state(record)
    record_action(session, record, state, -1, "timeout", name, "", due, None)
    log.info("deadline %r of %s board %s passed", name, record.game_type, record.board)
    mails = board_mails(config, record, state, [], note=f"Deadline passed: {name}.")
    queue_mails(session, config, mails, f"t{record.id}-{len(record.moves)}", due)


def earliest_due(sessions: sessionmaker[Session]) -> datetime | None:
    """When the next deadline of any active game falls due (for `serve` to sleep until)."""
    with sessions() as session:
        return session.scalar(select(GameRecord.due_at).where(GameRecord.status == "active",
                                                               GameRecord.due_at.is_not(None))
                              .order_by(GameRecord.due_at).limit(1))
