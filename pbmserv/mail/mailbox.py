"""Reading mbox files and Maildir folders for ``pbmserv replay`` (DESIGN §4).

Replay feeds the messages to the worker in ``Date:`` order, because the clock
of a replay is each message's Date: a move must not be played before the
challenge it answers merely because it sits earlier in some mailbox.
"""

from __future__ import annotations

import datetime as dt
import mailbox
from pathlib import Path
from typing import NamedTuple

from pbmserv.mail.loopguard import parse_bytes
from pbmserv.mail.parse import header_date

__all__ = ["MailboxError", "Dated", "read_mailboxes", "message_date"]

# The date of a message that has none and no dated message before it.
EARLIEST = dt.datetime.min.replace(tzinfo=dt.timezone.utc)


class Dated(NamedTuple):
    """A message of a mailbox and its own ``Date:`` (None if it has none usable),
    read once: replay's clock needs it again after the sort."""
    raw: bytes
    date: dt.datetime | None


class MailboxError(Exception):
    """A path given to replay is missing or is not a mailbox (one clear message)."""


def message_date(raw: bytes) -> dt.datetime | None:
    """The aware ``Date:`` of a raw message, or None if missing or unparseable."""
    return header_date(parse_bytes(raw, headers_only=True))


def _is_maildir(path: Path) -> bool:
    return all((path / sub).is_dir() for sub in ("cur", "new", "tmp"))


def _read_mbox(path: Path) -> list[bytes]:
    """The messages of an mbox file in file order, without their ``From `` lines."""
    with path.open("rb") as file:
        start = file.read(5)
    if start and start != b"From ":
        raise MailboxError(f"{path}: not an mbox file (it does not start with a 'From ' line)")
    box = mailbox.mbox(path, create=False)
    try:
        return [box.get_bytes(key) for key in sorted(box.keys())]
    finally:
        box.close()


def _read_maildir(path: Path) -> list[bytes]:
    """The messages of a Maildir (new and cur), sorted by their unique file names.

    Maildir has no order of its own; the unique names start with the delivery
    time, so sorting by them is stable and close to arrival order.
    """
    box = mailbox.Maildir(path, factory=None, create=False)
    try:
        return [box.get_bytes(key) for key in sorted(box.keys())]
    finally:
        box.close()


def _read_one(path: Path) -> list[bytes]:
    if not path.exists():
        raise MailboxError(f"{path}: no such file or directory")
    if path.is_dir():
        if not _is_maildir(path):
            raise MailboxError(f"{path}: a directory but not a Maildir (no cur/, new/ and tmp/)")
        return _read_maildir(path)
    if not path.is_file():
        raise MailboxError(f"{path}: neither an mbox file nor a Maildir folder")
    return _read_mbox(path)


def read_mailboxes(paths: list[str | Path]) -> list[Dated]:
    """All messages of the given mbox files / Maildir folders, each with its own
    Date, in ``Date:`` order.

    Ties keep mailbox order (the paths in the order given, then the order
    inside each mailbox). A message without a usable Date (its date None) sorts
    with the date of the message before it in that combined order (the earliest
    possible date if there is none), so it stays right after its predecessor.
    """
    messages: list[bytes] = []
    for path in map(Path, paths):
        try:
            messages.extend(_read_one(path))
        except MailboxError:
            raise
        except (OSError, mailbox.Error) as error:
            raise MailboxError(f"{path}: cannot read mailbox: {error}") from error

    dated = [Dated(raw, message_date(raw)) for raw in messages]
    keys: list[dt.datetime] = []
    previous = EARLIEST
    for message in dated:
        previous = message.date or previous
        keys.append(previous)
    order = sorted(range(len(dated)), key=keys.__getitem__)  # stable
    return [dated[index] for index in order]
