"""The worker: one stored mail at a time, one transaction per mail.

parse → loop guard → commands → replies into the outbound queue, all committed together.
A mail whose processing fails unexpectedly is kept, marked failed with its traceback,
and the worker goes on with the next one.
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Callable
from email.message import EmailMessage

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.exc import StaleDataError

from .commands.account import RELAY_SUBJECT, answer_message, confirm_by_reply, relay_reply_note
from .commands.base import Context, CommandError, resolve, unlock_by_reply
from .commands.lines import is_body_command, is_command, not_a_command, password_words, takes_text
from .commands.observe import answer_chat
from .commands.reply import play_by_reply
from .keys import address_tag, split_tag, tagged_address
from .config import Config
from .mail.loopguard import loop_reason, parse_bytes
from .mail.outbound import Mail, bounced_reply, queue_mails
from .mail.text import Masker, fit, passwords_in, quote, relay_safe
from .mail.parse import CommandLine, parse_message, recipients, strip_subject, unquoted_text
from .play import board_text, current_state, engine_of, seat_of
from .render import render
from .replyto import token_seat
from .store.models import Inbound
from .store.queue import queued_inbound_ids
from .mail.bounces import failed_recipients
from .store.repo import clear_bounces, count_bounces, is_registered_address, rate_limited, uses_left

log = logging.getLogger(__name__)

BOARD_SUBJECT = re.compile(r"\S+\s+board\s+\d+\b", re.IGNORECASE)  # in the subjects of board mails, after any prefix
RETRIES = 3  # attempts for a mail that lost a race with another writer
MAX_STARTS = 3  # a mail whose processing was begun this often without finishing is set aside
MAX_TAGGED = 100  # recipient addresses looked at for a tag
SET_ASIDE = "set aside: started 3 times, never finished (the process died each time)"


class Worker:
    def __init__(self, sessions: sessionmaker[Session], config: Config):
        self.sessions = sessions
        self.config = config

    def run_pending(self, stop: Callable[[], bool] = lambda: False) -> int:
        """Process every queued mail in arrival order, or until `stop()` says so between
        two mails; the number processed."""
        with self.sessions() as session:
            pending = queued_inbound_ids(session)
        done = 0
        for inbound_id in pending:
            if stop():
                break
            self.process(inbound_id)
            done += 1
        return done

    def process(self, inbound_id: int) -> None:
        if not self.start(inbound_id):
            return
        for attempt in range(1, RETRIES + 1):
            try:
                with self.sessions.begin() as session:
                    # claimed: another worker on the same (PostgreSQL) database skips it
                    row = session.scalar(select(Inbound).where(Inbound.id == inbound_id, Inbound.status == "queued")
                                         .with_for_update(skip_locked=True))
                    if row is None:  # done already, or in another worker's hands
                        return
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

    def start(self, inbound_id: int) -> bool:
        """Count one more start on a queued mail, committed before the work begins, so a
        mail that kills the process (out of memory, a crash in a library) is set aside
        after MAX_STARTS starts instead of looping for ever; False if it is not to be
        worked on (set aside now, done already, or in another worker's hands)."""
        with self.sessions.begin() as session:
            row = session.scalar(select(Inbound).where(Inbound.id == inbound_id, Inbound.status == "queued")
                                 .with_for_update(skip_locked=True))
            if row is None:
                return False
            if row.attempts >= MAX_STARTS:
                log.error("mail %s %s", inbound_id, SET_ASIDE)
                row.status, row.error = "failed", SET_ASIDE
                row.processed_at = row.received_at
                return False
            row.attempts += 1
        return True

    def _fail(self, inbound_id: int, error: BaseException) -> None:
        log.error("mail %s failed: %s", inbound_id, error)
        with self.sessions.begin() as session:
            row = session.get(Inbound, inbound_id)
            row.status = "failed"
            row.error = "".join(traceback.format_exception(error))
            row.processed_at = row.processed_at or row.received_at  # its secrets get masked in time


class Handler:
    """Everything done for one mail, inside its transaction."""

    def __init__(self, session: Session, config: Config, row: Inbound):
        self.session = session
        self.config = config
        self.row = row
        self.now = row.received_at
        self.outgoing: list[Mail] = []
        self.last_error = ""  # set when the day's last error reply to an unregistered address goes out

    def handle(self) -> None:
        row = self.row
        row.processed_at = self.now
        message = parse_bytes(row.raw)
        reason = loop_reason(message, self.config.server.address, row.envelope_from)
        if reason:
            row.status, row.error = "ignored", reason
            row.error += self.count_bounces(message)
            return
        mail = parse_message(message, is_command, takes_text, is_body_command)
        clear_bounces(self.session, mail.sender)  # the address works: it just wrote
        self.mail = mail
        self.mask = Masker(passwords_in([mail.subject, *mail.text.split("\n")], password_words),
                           self.config.server.address)
        self.registered = is_registered_address(self.session, mail.reply_to)  # who the answers go to
        limit = self.config.limits.commands_per_mail
        tag = self.tag(mail.recipients)
        if tag is not None and not mail.commands:
            self.run_tagged(tag)
        elif not mail.commands and (relay := RELAY_SUBJECT.fullmatch(strip_subject(mail.subject))):
            self.answer(*self.attempt(lambda ctx: relay_reply_note(ctx, *relay.groups()), ""), quoted_line=mail.subject)
        elif not mail.commands:
            self.error_reply("pbmserv error", CommandError(
                "Your mail holds no command: neither its Subject nor any line of its body.",
                "Put one command in the Subject, or one command a line in the body;\n"
                "send 'help' for the commands."),
                quoted_line=mail.subject)
        elif len(mail.commands) == 1:
            self.run_single(mail.commands[0])
        else:
            self.run_several(mail.commands[:limit], skipped=len(mail.commands) - limit)
        self.cap_unconfirmed()
        queue_mails(self.session, self.config, self.outgoing, str(row.id), self.now, mail.message_id, row.id)
        row.status = "done"

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
                      comment=relay_safe(self.mask(comment)))  # it goes to others
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
        if tag[:1].isdigit():
            self.run_reply(tag)
            return
        kind, payload, given = split_tag(tag) or ("", "", "")
        action = {"c": confirm_by_reply, "u": unlock_by_reply, "m": answer_message, "h": answer_chat}.get(kind)
        if action is None:
            self.error_reply("pbmserv error", CommandError(
                "This address of the server takes no mail from players.",
                "Send commands to " + self.config.server.address + "; send 'help' for the commands."),
                quoted_line=self.mail.subject)
            return
        text = self.mail.comment if kind in "mh" else ""  # what a reply to a relay relays
        self.answer(*self.attempt(lambda ctx: action(ctx, payload, given), text), quoted_line=self.mail.subject)

    def run_reply(self, token: str) -> None:
        """A mail to a reply-to-play address holding no command: its move is the
        Subject (unless that is the board mail's own), or else the first line of the body.
        An error about it has the same Reply-To, so that replying to the error with the
        corrected move plays it."""
        subject = strip_subject(self.mail.subject)
        body = unquoted_text(self.mail.text.split("\n"), is_body_command)
        if subject and not BOARD_SUBJECT.search(subject):
            move, comment = subject, body
        else:
            first, _, comment = body.partition("\n")
            move, comment = first.strip(), comment.strip("\n")
        ctx, outcome = self.attempt(lambda ctx: play_by_reply(ctx, token, move), comment)
        again = isinstance(outcome, CommandError) and self.may_play(token)
        if again:
            outcome.instead += "\nTo send a move again, reply to this mail with just the move."
        self.answer(ctx, outcome, quoted_line=move,
                    reply_to=tagged_address(self.config.server.address, token) if again else None)

    def may_play(self, token: str) -> bool:
        """Whether the sender may play by replying at this reply-to-play address: it is
        genuine, its board runs, and the sender is its player's registered address."""
        found = token_seat(self.session, self.config, token)
        if found is None or found[0].status != "active":
            return False
        record, seat = found
        return self.mail.sender.lower() in {a.address_key for a in record.seats[seat].user.addresses if a.confirmed}

    def run_single(self, line: CommandLine) -> None:
        self.answer(*self.run(line), quoted_line=line.text)

    def answer(self, ctx: Context, outcome: str | CommandError, quoted_line: str, reply_to: str | None = None) -> None:
        """The mails a mail's one command caused, or its error to the sender."""
        if isinstance(outcome, CommandError):
            self.error_reply(self.error_subject(outcome), outcome, quoted_line=quoted_line, reply_to=reply_to)
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
                results.append((self.mask(line.text), self.error_text(outcome, with_board=False)))
                continue
            answer = "\n".join(mail.body.rstrip("\n") for mail in ctx.replies) or outcome
            results.append((self.mask(line.text), answer))
            recipients += [a for mail in ctx.replies for a in mail.to if a.lower() not in map(str.lower, recipients)]
            self.outgoing += ctx.notices
        if skipped > 0:
            results.append(("...", f"{skipped} more command lines were not read: at most "
                                   f"{self.config.limits.commands_per_mail} commands a mail."))
        if failed and self.suppressed():
            return
        body = render("results.txt", results=results) + (f"\n{self.last_error}\n" if self.last_error else "")
        self.outgoing.append(Mail(recipients, "pbmserv results", body))

    # --- errors ------------------------------------------------------------------------
    def error_subject(self, error: CommandError) -> str:
        game = error.game
        if error.board is not None:
            return f"{engine_of(error.board).title} Board {error.board.board} Error"
        if game is not None:
            return f"{game.title} error"
        return "pbmserv error"

    def error_text(self, error: CommandError, with_board: bool = True, quoted: str = "") -> str:
        board = ""
        if with_board and error.board is not None:
            record = error.board
            viewer = seat_of(record, error.viewer) if error.viewer is not None else None
            board = board_text(self.config, record, current_state(record), viewer, self.now)
        return render("error.txt", problem=self.mask(error.problem), instead=self.mask(error.instead),
                      board=board, quoted=quoted)

    def error_reply(self, subject: str, error: CommandError, quoted_line: str, reply_to: str | None = None) -> None:
        """The error to the sender; to an unregistered address it quotes only the
        command line. A few a day at most (see `suppressed`)."""
        if self.suppressed():
            return
        text = f"Subject: {self.mail.subject}\n\n{self.mail.text}" if self.registered else quoted_line
        if self.last_error:
            error.instead += "\n\n" + self.last_error
        if self.mail.reply_to:
            self.outgoing.append(Mail([self.mail.reply_to], subject,
                                      self.error_text(error, quoted=quote(text, self.mask)), reply_to))

    def suppressed(self) -> bool:
        """Count an error reply to the sender; True if it is over the day's limit and
        must not be sent: a few to an address nobody registered (no backscatter), more
        to a player's (an auto-responder that marks nothing must not loop for ever)."""
        registered = self.registered
        kind = "error" if registered else "unregistered-error"
        limit = self.config.limits.errors_per_day if registered else self.config.limits.unregistered_errors_per_day
        left = uses_left(self.session, kind, self.mail.sender.lower(), self.now, limit)
        if left is None:
            self.row.error = f"error reply suppressed: {limit} a day to {'an' if registered else 'an unregistered'} address"
            return True
        if not registered and left == 0:
            self.last_error = fit(
                "This is the last error reply today to your address: no account has confirmed it, "
                f"and such an address gets {limit} error replies a day, so that forged mail cannot make "
                "this server write to strangers. Further errors today will not be answered. To get every "
                "answer, sign up: signup USERID PASSWORD")
        return False
