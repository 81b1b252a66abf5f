"""The SMTP (or LMTP) edge: validate, store durably, then say yes. No game work
happens here. A message for several recipients is stored once; LMTP's one reply per
recipient after DATA is sent as that many copies of the one status.

An aiosmtpd handler (hook names are case-sensitive: they are tested over a real
socket). A message is answered 250 only once it is committed to the inbound queue;
any failure to store it is a 451 so the sending MTA tries again later.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime, timezone

from aiosmtpd.lmtp import LMTP
from aiosmtpd.smtp import SMTP, Envelope, Session as SmtpSession
from sqlalchemy.orm import Session, sessionmaker

from ..store.queue import enqueue
from .loopguard import split_address

log = logging.getLogger(__name__)


class InboundHandler:
    """Accepts mail for the server's address and its `+tag` sub-addresses only."""

    def __init__(self, sessions: sessionmaker[Session], address: str, on_stored: Callable[[], None] = lambda: None):
        self.sessions = sessions
        self.address = split_address(address)
        self.on_stored = on_stored
        self.stopping = False
        self.connections: set[SMTP] = set()  # kept up to date by `smtp_factory`

    def idle(self) -> bool:
        """True when no connection is between MAIL and the answer to its DATA."""
        return not any(c.envelope is not None and c.envelope.mail_from is not None for c in self.connections)

    async def handle_MAIL(self, server: SMTP, session: SmtpSession, envelope: Envelope,
                          address: str, mail_options: list[str]) -> str:
        if self.stopping:
            return "421 4.3.2 Shutting down, try again later"
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(self, server: SMTP, session: SmtpSession, envelope: Envelope,
                          address: str, rcpt_options: list[str]) -> str:
        if split_address(address) != self.address:
            return f"550 5.1.1 <{address}>: no such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: SmtpSession, envelope: Envelope) -> str:
        try:
            received_at = datetime.now(timezone.utc).replace(tzinfo=None)
            _id, new = await asyncio.to_thread(enqueue, self.sessions, with_recipients(envelope),
                                               received_at, envelope.mail_from or "")
        except Exception as error:  # noqa: BLE001 - the sender must retry, never lose it
            log.error("could not store a message from %r: %s", envelope.mail_from, error)
            status = "451 4.3.0 Could not store the message; please try again later"
        else:
            self.on_stored()
            status = "250 2.0.0 Stored" if new else "250 2.0.0 Already stored"
        if isinstance(server, LMTP):  # one reply per accepted recipient (RFC 2033 §4.2)
            return "\r\n".join([status] * max(len(envelope.rcpt_tos), 1))
        return status

    async def handle_exception(self, error: Exception) -> str:
        """An internal error is temporary (451), never a permanent 500."""
        log.exception("SMTP session error: %s", error)
        return "451 4.3.0 Internal error; please try again later"


def with_recipients(envelope: Envelope) -> bytes:
    """The message as stored: an `X-Original-To` line for each envelope recipient
    first, as an MTA's delivery adds, so a reply-to-play address given only in the
    envelope (a Bcc) is still seen."""
    raw = envelope.original_content or b""
    newline = b"\r\n" if b"\r\n" in raw[:2000] else b"\n"
    return b"".join(b"X-Original-To: " + address.encode("utf-8", "replace") + newline
                    for address in envelope.rcpt_tos) + raw


def smtp_factory(handler: InboundHandler, hostname: str, max_size: int, protocol: str = "smtp") -> Callable[[], SMTP]:
    """Protocol factory for `loop.create_server`, speaking SMTP or LMTP. The hostname
    is given so that no DNS look-up happens on connect; each connection is tracked so
    that shutdown can wait for the transactions in hand."""

    class TrackedSMTP(LMTP if protocol == "lmtp" else SMTP):
        def connection_made(self, transport) -> None:
            handler.connections.add(self)
            super().connection_made(transport)

        def connection_lost(self, error) -> None:
            handler.connections.discard(self)
            super().connection_lost(error)

    return lambda: TrackedSMTP(handler, hostname=hostname, data_size_limit=max_size, ident="pbmserv")
