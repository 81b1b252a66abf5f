"""Where robots think: outside any mail's transaction, then in a short one of their own.

`play_robots(now)` looks for a board that waits for a robot (`GameRecord.robot_turn`,
kept by `play.refresh_timers`), reads it, closes the session, and thinks with no lock
held, so that a slow search never holds up the worker, the scheduler or another
robots process. It then plays the move as a player's move is played: checked,
logged, with board mails to the people (a robot has no address) and the queued moves
it gives the turn to, unless the board changed meanwhile (a move, a resignation, a
deadline): then it thinks again.

The robot's random choices come from the board's seed and the move's number
(`play.seeded_rng`), so `replay`, which calls this after each mail with the mail's
clock, plays the same moves every time. A robot that cannot find a legal move (a bug)
resigns rather than hold the board up; the log says why.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Callable

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from ..commands.base import Context
from ..commands.boards import play_queued
from ..commands.votes import proposal
from ..config import Config
from ..mail.outbound import queue_mails
from ..play import board_mails, current_state, engine_of, record_action, robots_waited_for, seeded_rng
from ..store.models import GameRecord
from ..store.movelog import log_of
from . import choose

log = logging.getLogger(__name__)

MAX_PER_PASS = 10_000  # robot moves in one call: a game of robots only ends well before


def play_robots(sessions: sessionmaker[Session], config: Config, now: datetime,
                stop: Callable[[], bool] = lambda: False) -> int:
    """Play every robot move the boards wait for at `now` (until `stop()`); the
    number played."""
    played = 0
    while played < MAX_PER_PASS and not stop():
        thought = think(sessions)
        if thought is None:
            return played
        board_id, number, seat, move = thought
        with sessions.begin() as session:
            record = session.get(GameRecord, board_id, with_for_update=True)
            if record is None or len(log_of(record)) != number or not record.robot_turn:
                continue  # the board changed while the robot thought: think again
            play(session, config, record, seat, move, now)
        played += 1
    log.error("robots played %d moves in one pass and stopped; the rest wait for the next", played)
    return played


# built once: asked after every mail, and building and keying it cost more than running it
LONGEST_WAITING = (select(GameRecord).where(GameRecord.robot_turn, GameRecord.status == "active")
                   .order_by(GameRecord.updated_at, GameRecord.id).limit(1))


def think(sessions: sessionmaker[Session]) -> tuple[int, int, int, str | None] | None:
    """The first board that waits for a robot (the longest waiting first), and the
    move of its robot: (board id, moves logged when it thought, seat, move; None
    if the robot found none)."""
    with sessions() as session:
        while True:
            record = session.scalar(LONGEST_WAITING)
            if record is None:
                return None
            state = current_state(record)
            seats = robots_waited_for(record, state)
            if seats:
                break
            record.robot_turn = False  # stale: nothing to think about
            session.commit()
        seat = seats[0]
        game, level, number = engine_of(record), record.seats[seat].user.robot, len(log_of(record))
        rng = seeded_rng(record.seed, "robot", number + 1)
        board_id, board = record.id, record.board
    # the session is closed: no transaction, no lock, while the robot thinks
    try:
        move = choose(game, state, seat, level, rng)
    except Exception:  # noqa: BLE001 - a robot's bug must not stop the server
        log.exception("robot level %s could not choose a move on %s board %s", level, game.name, board)
        move = None
    return board_id, number, seat, move


def play(session: Session, config: Config, record: GameRecord, seat: int, move: str | None, now: datetime) -> None:
    """Play the robot's move as a mail's move is played, or resign for it if the move
    is missing or illegal."""
    game = engine_of(record)
    state = current_state(record)
    robot = record.seats[seat].user
    verdict = game.check(state, seat, move) if move is not None else None
    if verdict is None or not verdict.ok:
        log.error("robot %s chose %r on %s board %s, which is not legal (%s): it resigns", robot.userid, move,
                  game.name, record.board, verdict.error if verdict else "no move")
        record_action(session, record, state, seat, "resign", "resign", "", now, None)
        mails = board_mails(config, record, state, [], now, note=f"{robot.userid} could not move and resigned.")
    else:
        private = game.private_to(state, seat, verdict.move)
        note = f"{robot.userid}'s move cancelled {proposal(record, record.vote)}." if record.vote else ""
        record.vote = None  # a move cancels a pending vote, as a player's does
        record_action(session, record, state, seat, "move", verdict.move, "", now, None)
        mails = board_mails(config, record, state, [], now, note=note, private=private)
    ctx = Context(session=session, config=config, now=now, mail=None, inbound_id=None)
    play_queued(ctx, game, record)  # players' queued moves whose turn the robot's move brought
    queue_mails(session, config, mails + ctx.notices, f"r{record.id}-{len(log_of(record))}", now)
