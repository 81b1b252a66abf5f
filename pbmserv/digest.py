"""The daily digest of a user who chose `mail digest` (`set`): one mail at their time
of day with every board where they must act and what happened on their boards since
the last one. The scheduler sends it when `User.digest_due` comes (`scheduler.run_due`),
so a replay sends the same digests at the same moments."""

from __future__ import annotations

from datetime import datetime, time, timedelta

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from .config import Config
from .mail.outbound import Mail, queue_mails
from .play import current_state, engine_of, names, seat_of, show_board, when
from .store.models import GameRecord, Seat, Subscription, User
from .store.movelog import log_of

DAY = timedelta(days=1)
DIGEST_BOARDS = 20  # the most boards one digest draws: the rest are named by `all games`


def next_digest(now: datetime, at: str) -> datetime:
    """The first moment after `now` whose time of day is `at` (HH:MM, UTC)."""
    hours, minutes = (int(part) for part in at.split(":"))
    moment = datetime.combine(now.date(), time(hours, minutes))
    return moment if moment > now else moment + DAY


def due_digest(session: Session, now: datetime) -> User | None:
    """The user whose digest is due first, claimed (as `scheduler.next_due` a board)."""
    return session.scalar(select(User).where(User.digest_due <= now).order_by(User.digest_due, User.id)
                          .limit(1).with_for_update(skip_locked=True))


def send_digest(session: Session, config: Config, user: User) -> None:
    """Mail `user` the digest due now, if anything happened or waits for them, and set
    the next one a day later."""
    at, since = user.digest_due, user.digest_since or user.digest_due - DAY
    user.digest_since, user.digest_due = at, at + DAY
    if user.disabled or not user.emails:
        return
    watched = select(Subscription.game_id).where(Subscription.user_id == user.id)
    played = select(Seat.game_id).where(Seat.user_id == user.id)
    records = session.scalars(select(GameRecord).where(
        or_(GameRecord.id.in_(played), GameRecord.id.in_(watched)),
        or_(GameRecord.status == "active", GameRecord.updated_at > since))
        .order_by(GameRecord.game_type, GameRecord.board)).all()
    waiting, told = [], []
    for record in records:
        seat = seat_of(record, user)
        state = current_state(record)
        news = [move for move in log_of(record) if since < move.created_at <= at]
        must_act = record.status == "active" and seat in engine_of(record).to_act(state)
        ended = record.status != "active" and since < record.updated_at <= at  # an admin's abort logs no move
        if must_act:
            waiting.append(f"{engine_of(record).title} {record.board}")
        if news or must_act or ended:
            told.append((not must_act, record, seat, state, news))
    if not told:
        return
    told.sort(key=lambda entry: entry[0])  # stable: the boards waiting for the user first
    shown = [show_board(config, record, state, seat, at, readable(record, state, news, seat),
                        note=since_note(since, news)) for _later, record, seat, state, news in told[:DIGEST_BOARDS]]
    lines = [f"Your daily digest, {user.userid}: "
             + (f"your move on {', '.join(waiting)}." if waiting else "nothing waits for your move."),
             f"To get a mail for every action again, send: set {user.userid} PASSWORD mail every"]
    if len(told) > DIGEST_BOARDS:
        more = len(told) - DIGEST_BOARDS
        lines.append(f"Not drawn here: {more} more board{'s' if more > 1 else ''}; for all your boards, send: "
                     f"all games {user.userid}")
    body = "\n\n".join(["\n".join(lines)] + [drawn.text for drawn in shown])
    subject = "pbmserv digest" + (f": your move on {len(waiting)} board{'s' if len(waiting) > 1 else ''}"
                                  if waiting else "")
    queue_mails(session, config, [Mail(user.emails, subject, body, boards=shown)],
                f"d{user.id}-{at:%Y%m%d%H%M}", at)


def since_note(since: datetime, news: list) -> str:
    """What a digest's board says happened since the last digest."""
    if not news:
        return f"Nothing new since {when(since)}."
    numbers = f"move #{news[0].number}" if len(news) == 1 else f"moves #{news[0].number} to #{news[-1].number}"
    return f"Since {when(since)}: {numbers}."


def readable(record: GameRecord, state, moves: list, seat: int | None) -> list[tuple[str, str]]:
    """The comments of `moves` that `seat` may read: not those of another's private
    action (a tell, an offer)."""
    game, players = engine_of(record), names(record)
    return [(players[move.seat], move.comment) for move in moves
            if move.comment and move.seat >= 0
            and seat in (game.private_to(state, move.seat, move.move) or {seat})]
