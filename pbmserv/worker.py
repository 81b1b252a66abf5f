"""The worker: stored mail in arrival order, each mail's work committed with its replies.

parse → loop guard → commands → replies into the outbound queue, all committed together.
Mails that wait together are played in one transaction (one commit and disk sync for
the group), each again alone if anything goes wrong. A mail whose processing fails
unexpectedly is kept, marked failed with its traceback, and the worker goes on with
the next one.
"""

from __future__ import annotations

import logging
import traceback
from contextlib import contextmanager
from itertools import takewhile
from collections.abc import Callable, Iterator
from email.message import EmailMessage

from sqlalchemy import bindparam, select, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, configure_mappers, make_transient_to_detached, sessionmaker
from sqlalchemy.orm.exc import StaleDataError

from .commands.account import RELAY_SUBJECT, answer_message, confirm_by_reply, relay_reply_note
from .commands.base import Context, CommandError, resolve, unlock_by_reply
from .commands.lines import is_body_command, not_a_command, read_command_mail
from .commands.observe import answer_chat
from .commands.reply import play_by_reply
from .keys import address_tag, split_tag, tagged_address
from .config import Config
from .mail.loopguard import loop_reason, parse_bytes
from .mail.outbound import Mail, bounced_reply, queue_mails
from .mail.errors import ErrorReplies, no_command
from .mail.text import relay_safe
from .mail.parse import CommandLine, recipients, reply_move, strip_subject
from .render import compile_templates, render
from .play import current_state, engine_of
from .replyto import token_seat
from .store.db import OnDriver, tables
from .store.kept import KeptBoards
from .store.models import ChangeCount, Inbound
from .store.queue import queued_inbound
from .mail.bounces import failed_recipients
from .store.repo import clear_bounces, count_bounces, rate_limited, sender_facts

log = logging.getLogger(__name__)

RETRIES = 3  # attempts for a mail that lost a race with another writer
MAX_STARTS = 3  # a mail whose processing was begun this often without finishing is set aside
MAX_TAGGED = 100  # recipient addresses looked at for a tag
SET_ASIDE = "set aside: started 3 times, never finished (the process died each time)"
GROUP = 20  # waiting mails played in one transaction, on SQLite (see Worker.group)


class Worker:
    def __init__(self, sessions: sessionmaker[Session], config: Config):
        self.sessions = sessions
        self.config = config
        self.warm = False  # whether this process's one-off work is done (warm_up)
        # Groups only where the database plays one transaction at a time (SQLite's
        # write lock). On PostgreSQL several workers play at once, and a group would
        # let a mail overtake one up to a group's length before it in another worker's
        # hands (a move before the move it follows): there one mail a transaction, as
        # before groups, which keeps the workers close to the order of arrival.
        sqlite = sessions.kw["bind"].dialect.name == "sqlite"
        self.group = GROUP if sqlite else 1
        self.kept = KeptBoards(sessions) if sqlite else None  # boards kept between mails

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A transaction to play mails in: on SQLite in the one session that keeps
        boards (`store/kept.py`), elsewhere in a session of its own."""
        if self.kept is None:
            with self.sessions.begin() as session:
                yield session
        else:
            with self.kept.transaction() as session:
                yield session

    def run_pending(self, stop: Callable[[], bool] = lambda: False, played: Callable[[], None] = lambda: None) -> int:
        """Process every queued mail in arrival order, or until `stop()` says so between
        two groups of mails, calling `played()` after each group (its replies are
        queued: the sender need not wait for the rest); the number processed. Mails
        never begun are played in groups (on SQLite: `self.group`); a mail begun before
        did not finish (the process died on it or on another mail of its group), so it
        is played alone: only a mail that kills the process is ever set aside."""
        pending = queued_inbound(self.sessions)
        done = 0
        while pending and not stop():
            group = [inbound_id for inbound_id, _starts in takewhile(lambda mail: mail[1] == 0, pending[:self.group])]
            group, seen = (group, 0) if group else ([pending[0][0]], pending[0][1])
            if seen and not self.warm:
                self.warm_up()
            pending = pending[len(group):]
            started = self.start(group, seen)
            if len(started) > 1:
                self.play_together(started)
            elif started:
                self.play(started[0])
            if started:
                played()
            done += len(started)
        return done

    def warm_up(self) -> None:
        """Do this process's one-off work before a mail begun before (by a process that
        died) is counted again: configuring the mappers and compiling the templates
        cost a fresh process about 25 mails' time, and a process killed again during
        them (a restart loop, a supervisor's timeout) must not count that against the
        mail and set an innocent one aside."""
        configure_mappers()
        compile_templates()
        self.warm = True

    def play_together(self, group: list[int]) -> None:
        """Play mails one after another in one transaction (one commit, one disk sync for
        them all); if anything goes wrong, each again in a transaction of its own."""
        try:
            with self.transaction() as session:
                for row in claim(session, group, self.kept):  # none is missing, unless another worker began it too
                    Handler(session, self.config, row).handle()
        except Exception as error:  # noqa: BLE001 - each is played again alone, and kept if it fails
            log.info("a group of %s mails failed (%s); playing each alone", len(group), error.__class__.__name__)
            for inbound_id in group:
                self.play(inbound_id)

    def play(self, inbound_id: int) -> None:
        """Play one started mail in a transaction of its own, trying again after a lost
        race; a mail that fails is kept, marked failed with its traceback."""
        for attempt in range(1, RETRIES + 1):
            try:
                with self.transaction() as session:
                    for row in claim(session, [inbound_id], self.kept):  # none if another worker began it too and is done
                        Handler(session, self.config, row).handle()
                return
            except (StaleDataError, IntegrityError, OperationalError) as error:
                if attempt == RETRIES:
                    self._fail(inbound_id, error)
                    return
                log.info("mail %s lost a race (%s); trying again", inbound_id, error.__class__.__name__)
            except Exception as error:  # noqa: BLE001 - kept and reported, never lost
                self._fail(inbound_id, error)
                return

    def start(self, inbound_ids: list[int], seen: int) -> list[int]:
        """Count one more start on each of these queued mails, committed before the work
        begins, so a mail that kills the process (out of memory, a crash in a library)
        is set aside after MAX_STARTS starts instead of looping for ever; those to be
        worked on (not set aside now, not done already, not in another worker's hands),
        in order. One statement in the common case, on an engine's connection (see
        `enqueue_many`).

        Only a mail still begun `seen` times, as the queue was read, is counted: one
        another worker began meanwhile is its (several workers on PostgreSQL), and must
        not be counted twice for one start."""
        with self.sessions.kw["bind"].begin() as connection:
            started = dict(START.run(connection, {"ids": inbound_ids, "seen": seen})[0])
            dying = [inbound_id for inbound_id, starts in started.items() if starts > MAX_STARTS]
            if dying:
                log.error("mails %s %s", dying, SET_ASIDE)
                connection.execute(update(Inbound.__table__).where(inbound.id.in_(dying))
                                   .values(status="failed", error=SET_ASIDE, attempts=MAX_STARTS,
                                           processed_at=inbound.received_at))
        return [inbound_id for inbound_id in inbound_ids if started.get(inbound_id, MAX_STARTS + 1) <= MAX_STARTS]

    def _fail(self, inbound_id: int, error: BaseException) -> None:
        log.error("mail %s failed: %s", inbound_id, error)
        with self.sessions.begin() as session:
            row = session.get(Inbound, inbound_id)
            row.status = "failed"
            row.error = "".join(traceback.format_exception(error))
            row.processed_at = row.processed_at or row.received_at  # its secrets get masked in time


# The worker's statements on the queue, built once (building and keying a statement
# costs about as much as running it), on the table itself (the ORM's bulk paths cost
# as much again, and these write no object the session holds). Parameters: `ids`, the
# mails; `seen`, their starts.
IDS = bindparam("ids", expanding=True)
inbound = Inbound.__table__.c
# The mails of `ids` still queued, begun `seen` times, that no other worker holds (on
# PostgreSQL; SQLite's BEGIN IMMEDIATE already keeps every other writer out), locked.
# The start count is checked here, not beside: a mail another worker has just started
# would be locked by this start and not counted.
STARTABLE = (select(inbound.id).where(inbound.id.in_(IDS), inbound.status == "queued",
                                      inbound.attempts == bindparam("seen"))
             .with_for_update(skip_locked=True))
START = OnDriver(update(Inbound.__table__).where(inbound.id.in_(STARTABLE)).values(attempts=inbound.attempts + 1)
                 .returning(inbound.id, inbound.attempts))
CLAIMING = (update(Inbound.__table__).where(inbound.id.in_(IDS), inbound.status == "queued")
            .values(status="done", processed_at=inbound.received_at)
            .returning(inbound.id, inbound.message_id, inbound.raw, inbound.envelope_from, inbound.received_at,
                       inbound.error, inbound.attempts, inbound.masked))
CLAIMED = list(CLAIMING.exported_columns.keys())  # the columns of a claimed row, in order
CLAIM = OnDriver(CLAIMING)
# the same, with the count of written rows as the claim found it (`store/kept.py`) after them
CLAIM_COUNTED = OnDriver(CLAIMING.returning(select(ChangeCount.count).where(ChangeCount.id == 1).scalar_subquery()))


def claim(session: Session, inbound_ids: list[int], kept: KeptBoards | None = None) -> list[Inbound]:
    """Take these mails, started by this worker, for this transaction and mark them
    done, in one statement; what the handler finds otherwise (ignored, an error noted)
    it writes over that. In arrival order.

    A plain UPDATE, which waits for a lock another transaction holds on one of them
    (another worker's start, for a moment; or its whole play, if it started the mail
    too) and then skips a mail found done. Skipping locked mails here instead would
    leave a mail started, queued and never played when another worker's start had
    locked it for that moment. Locked until the transaction ends: another worker's
    start skips them meanwhile. With `kept`, the count of written rows comes with
    them, and what it keeps is checked against it before anything is read."""
    found, _count = (CLAIM if kept is None else CLAIM_COUNTED).run(tables(session), {"ids": inbound_ids})
    if kept is not None:
        kept.check(found[0][len(CLAIMED)] if found else None)
    rows = []
    for values in sorted(found, key=lambda values: values[0]):
        values = dict(zip(CLAIMED, values))  # without the count after them
        row = Inbound(status="done", processed_at=values["received_at"], **values)
        make_transient_to_detached(row)  # as if loaded: only what changes from here on is written
        session.add(row)
        rows.append(row)
    return rows


class Handler:
    """Everything done for one mail, inside its transaction."""

    def __init__(self, session: Session, config: Config, row: Inbound):
        self.session = session
        self.config = config
        self.row = row
        self.now = row.received_at
        self.outgoing: list[Mail] = []

    def handle(self) -> None:
        row = self.row  # claimed: marked done and processed now, unless found otherwise below
        message = parse_bytes(row.raw)
        reason = loop_reason(message, self.config.server.address, row.envelope_from)
        if reason:
            row.status, row.error = "ignored", reason
            row.error += self.count_bounces(message)
            return
        mail, self.mask = read_command_mail(message, self.config.server.address)
        self.mail = mail
        facts = sender_facts(self.session, mail.sender, mail.reply_to, self.now)
        if facts.bouncing:
            clear_bounces(self.session, mail.sender)  # the address works: it just wrote
        self.registered = facts.registered  # whether the answers go to a registered address
        self.wrong_passwords = facts.wrong_passwords  # for the first command's password check
        self.errors = ErrorReplies(self.session, self.config, mail, self.mask, self.registered, row)
        limit = self.config.limits.commands_per_mail
        tag = self.tag(mail.recipients)
        if tag is not None and not mail.commands:
            self.run_tagged(tag)
        elif not mail.commands and (relay := RELAY_SUBJECT.fullmatch(strip_subject(mail.subject))):
            self.answer(*self.attempt(lambda ctx: relay_reply_note(ctx, *relay.groups()), ""), quoted_line=mail.subject)
        elif not mail.commands:
            self.error_reply(no_command(), quoted_line=mail.subject)
        elif len(mail.commands) == 1:
            self.run_single(mail.commands[0])
        else:
            self.run_several(mail.commands[:limit], skipped=len(mail.commands) - limit)
        self.cap_unconfirmed()
        queue_mails(self.session, self.config, self.outgoing, str(row.id), self.now, mail.message_id, row.id)

    def cap_unconfirmed(self) -> None:
        """Answers to an address no account has confirmed go out a few times a day at
        most ([limits] unconfirmed_replies_per_day): its From or Reply-To may be forged,
        and a stranger's word must not make the server mail a third party."""
        target = self.mail.reply_to.lower()
        if self.registered or not target:
            return
        limit = self.config.limits.unconfirmed_replies_per_day
        for mail in self.outgoing:
            if target in (a.lower() for a in mail.to) and \
                    rate_limited(self.session, "unconfirmed-reply", target, self.now, limit):
                mail.to = [a for a in mail.to if a.lower() != target]
                self.row.error = f"not answered: {limit} answers a day to an address no account has confirmed"

    def count_bounces(self, message: EmailMessage) -> str:
        """Count a delivery report against the addresses it names, but only if it came
        back to the tagged envelope sender of a reply (VERP) and only for addresses that
        reply went to: a forged report silences nobody. What was counted, for the log."""
        bounced = failed_recipients(message)
        if not bounced:
            return ""
        addresses = recipients(message)[:MAX_TAGGED]
        reply = next((found for address in addresses
                      if (found := bounced_reply(self.session, self.config.server.address, address))), None)
        if reply is None:
            return f"; a delivery report for {', '.join(bounced)} not sent to a reply's bounce address: not counted"
        sent_to = {a.lower() for a in reply.recipients}
        counted = [a for a in bounced if a in sent_to]
        count_bounces(self.session, counted)
        return f"; delivery failed for {', '.join(counted) or 'no address of that reply'}"

    # --- running commands ------------------------------------------------------------
    def run(self, line: CommandLine) -> tuple[Context, str | CommandError]:
        """Run one command line inside a savepoint: an error undoes all it changed."""
        def action(ctx: Context) -> str:
            found = resolve(line.words)
            if found is None:
                raise not_a_command(ctx, line.words)
            cmd, ctx.game, args = found
            cmd.check_arity(args, ctx.game)
            return cmd.run(ctx, args, ctx.game) if ctx.game is not None else cmd.run(ctx, args)
        return self.attempt(action, line.relay or self.mail.comment)

    def attempt(self, action: Callable[[Context], str], comment: str) -> tuple[Context, str | CommandError]:
        """Run `action` inside a savepoint: an error undoes all it changed."""
        ctx = Context(self.session, self.config, self.now, self.mail, self.row.id,
                      comment=relay_safe(self.mask(comment)),  # it goes to others
                      wrong_passwords=self.wrong_passwords)
        self.wrong_passwords = None  # a later command counts again: this one may add to them
        savepoint = self.session.begin_nested()
        try:
            summary = action(ctx)
        except CommandError as error:
            savepoint.rollback()
            self.session.add_all(ctx.after_error)
            self.outgoing += ctx.after_error_mails
            if error.game is None:
                error.game = ctx.game
            if error.board is None:
                error.board = ctx.board
            return ctx, error
        savepoint.commit()
        return ctx, summary

    def tag(self, recipients: list[str]) -> str | None:
        """The tag of the first sub-address of the server (`pbmserv+TAG@domain`) the mail
        was sent to, if any."""
        for address in recipients[:MAX_TAGGED]:
            tag = address_tag(self.config.server.address, address)
            if tag:
                return tag
        return None

    def run_tagged(self, tag: str) -> None:
        """A mail to one of the server's tagged addresses, holding no command: a move
        (reply to play), a reply that confirms an address or lifts a lock-out, or an
        answer to a relayed message or chat."""
        if tag[:1].isdecimal():
            self.run_reply(tag)
            return
        kind, payload, given = split_tag(tag) or ("", "", "")
        action = {"c": confirm_by_reply, "u": unlock_by_reply, "m": answer_message, "h": answer_chat}.get(kind)
        if action is None:
            self.error_reply(CommandError("This address of the server takes no mail from players.",
                                          f"Send commands to {self.config.server.address}; send 'help' for the commands."),
                             quoted_line=self.mail.subject)
            return
        text = self.mail.comment if kind in "mh" else ""  # what a reply to a relay relays
        self.answer(*self.attempt(lambda ctx: action(ctx, payload, given), text), quoted_line=self.mail.subject)

    def run_reply(self, token: str) -> None:
        """A mail to a reply-to-play address holding no command (`reply_move` finds the
        move). An error about it has the same Reply-To, so that replying to the error with the
        corrected move plays it."""
        move, comment = reply_move(self.mail, is_body_command)
        ctx, outcome = self.attempt(lambda ctx: play_by_reply(ctx, token, move), comment)
        again = isinstance(outcome, CommandError) and self.may_play(token)
        if again:
            outcome.instead += "\nTo send a move again, reply to this mail with just the move."
        self.answer(ctx, outcome, quoted_line=move,
                    reply_to=tagged_address(self.config.server.address, token) if again else None)

    def may_play(self, token: str) -> bool:
        """Whether the sender may play now by replying at this reply-to-play address: it
        is genuine, its board runs, its seat may act, and the sender is its player's
        registered address."""
        found = token_seat(self.session, self.config, token)
        if found is None or found[0].status != "active":
            return False
        record, seat = found
        return seat in engine_of(record).to_act(current_state(record)) and \
            self.mail.sender.lower() in {a.address_key for a in record.seats[seat].user.addresses if a.confirmed}

    def run_single(self, line: CommandLine) -> None:
        self.answer(*self.run(line), quoted_line=line.text)

    def answer(self, ctx: Context, outcome: str | CommandError, quoted_line: str, reply_to: str | None = None) -> None:
        """The mails a mail's one command caused, or its error to the sender."""
        if isinstance(outcome, CommandError):
            self.error_reply(outcome, quoted_line=quoted_line, reply_to=reply_to)
            return
        self.outgoing += ctx.replies + ctx.notices

    def run_several(self, lines: list[CommandLine], skipped: int) -> None:
        """One `pbmserv results` mail lists each line with its result; the mails the
        commands cause for others still go out."""
        results = []
        recipients = [self.mail.reply_to]  # and the addresses of users who authenticated
        failed = False
        for line in lines:
            ctx, outcome = self.run(line)
            if isinstance(outcome, CommandError):
                failed = True
                results.append((self.mask(line.text), self.errors.text(outcome)))
                continue
            answer = "\n".join(mail.body.rstrip("\n") for mail in ctx.replies) or outcome
            results.append((self.mask(line.text), answer))
            recipients += [a for mail in ctx.replies for a in mail.to if a.lower() not in map(str.lower, recipients)]
            self.outgoing += ctx.notices
        if skipped > 0:
            results.append(("...", f"{skipped} more command lines were not read: at most "
                                   f"{self.config.limits.commands_per_mail} commands a mail."))
        if failed and not self.errors.allowed():
            return
        last = self.errors.last_note
        body = render("results.txt", results=results) + (f"\n{last}\n" if last else "")
        self.outgoing.append(Mail(recipients, "pbmserv results", body))

    def error_reply(self, error: CommandError, quoted_line: str, reply_to: str | None = None) -> None:
        mail = self.errors.reply(error, quoted_line, reply_to)
        if mail is not None:
            self.outgoing.append(mail)
