"""Error replies to the sender of a mail: their Subject, their text, what they quote,
and how many go out a day (DESIGN §3)."""

from __future__ import annotations


from sqlalchemy.orm import Session

from ..commands.base import CommandError
from ..config import Config
from ..play import Board, current_state, engine_of, seat_of, show_board
from ..render import render
from ..store.models import Inbound
from ..store.repo import uses_left
from .outbound import Mail
from .parse import ParsedMail
from .text import Masker, fit, quote

def no_command() -> CommandError:
    return CommandError("Your mail holds no command: neither its Subject nor any line of its body.",
                        "Put one command in the Subject, or one command a line in the body;\n"
                        "send 'help' for the commands.")


def error_subject(error: CommandError) -> str:
    if error.board is not None:
        return f"{engine_of(error.board).title} Board {error.board.board} Error"
    if error.game is not None:
        return f"{error.game.title} error"
    return "pbmserv error"


class ErrorReplies:
    """The error replies to one mail. A registered sender's error quotes the whole mail;
    an unregistered one's only the command line, and only a few a day (no backscatter);
    the day's last such reply says so."""

    def __init__(self, session: Session, config: Config, mail: ParsedMail, mask: Masker, registered: bool,
                 row: Inbound):
        self.session = session
        self.config = config
        self.mail = mail
        self.mask = mask
        self.registered = registered
        self.row = row  # its `error` column records a reply not sent
        self.last_note = ""  # set once the day's last error reply to an unregistered address is counted

    def board(self, error: CommandError) -> Board | None:
        """The board the error is about, as its viewer sees it, if it shows one."""
        if error.board is None:
            return None
        record = error.board
        viewer = seat_of(record, error.viewer) if error.viewer is not None else None
        return show_board(self.config, record, current_state(record), viewer, self.row.received_at)

    def text(self, error: CommandError, shown: Board | None = None, quoted: str = "") -> str:
        return render("error.txt", problem=self.mask(error.problem), instead=self.mask(error.instead),
                      board=shown.text if shown else "", quoted=quoted)

    def reply(self, error: CommandError, quoted_line: str, reply_to: str | None = None) -> Mail | None:
        """The error mail to the sender, or None if the day's limit is reached."""
        if not self.mail.reply_to or not self.allowed():
            return None
        text = f"Subject: {self.mail.subject}\n\n{self.mail.text}" if self.registered else quoted_line
        if self.last_note:
            error.instead += "\n\n" + self.last_note
        shown = self.board(error)
        return Mail([self.mail.reply_to], error_subject(error), self.text(error, shown, quoted=quote(text, self.mask)),
                    reply_to, [shown] if shown else [])

    def allowed(self) -> bool:
        """Count an error reply to the sender; False if it is over the day's limit and
        must not be sent: a few to an address nobody registered (no backscatter), more
        to a player's (an auto-responder that marks nothing must not loop for ever)."""
        limits = self.config.limits
        kind = "error" if self.registered else "unregistered-error"
        limit = limits.errors_per_day if self.registered else limits.unregistered_errors_per_day
        left = uses_left(self.session, kind, self.mail.sender.lower(), self.row.received_at, limit)
        if left is None:
            self.row.error = f"error reply suppressed: {limit} a day to an {'' if self.registered else 'unregistered '}address"
            return False
        if not self.registered and left == 0:
            self.last_note = fit(
                "This is the last error reply today to your address: no account has confirmed it, "
                f"and such an address gets {limit} error replies a day, so that forged mail cannot make "
                "this server write to strangers. Further errors today will not be answered. To get every "
                "answer, sign up: signup USERID PASSWORD")
        return True
