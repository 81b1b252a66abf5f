"""The loop guard: which incoming mails the server must never answer.

Answering a bounce, an auto-reply, a mailing list or itself is how a mail server
starts a mail loop (DESIGN §3), so the worker asks :func:`loop_reason` before it
sends anything.

This module is also the lowest layer of ``pbmserv.mail``: it owns
:func:`parse_bytes` and the header accessors that never raise, which
``parse`` and ``mailbox`` share, because a hostile or broken mail must not be
able to crash the worker through a header it happens to read.
"""

from __future__ import annotations

import email.policy
import email.utils
from email.headerregistry import Address
from email.message import EmailMessage
from email.parser import BytesParser

__all__ = [
    "loop_reason",
    "parse_bytes",
    "header_text",
    "header_addresses",
    "header_address",
    "clean_text",
    "split_address",
]

# Local parts of the robots that send bounces and list traffic.
DAEMON_LOCAL_PARTS = frozenset({
    "mailer-daemon", "mailer_daemon", "mailerdaemon", "mail-daemon",
    "postmaster", "majordomo", "listserv", "listproc",
})
BULK_PRECEDENCES = frozenset({"bulk", "list", "junk"})
LIST_HEADERS = ("List-Id", "List-Unsubscribe")
AUTOREPLY_HEADERS = ("X-Autoreply", "X-Autorespond")
REPORT_TYPES = frozenset({
    "multipart/report", "message/delivery-status", "message/disposition-notification",
})


def parse_bytes(raw: bytes, headers_only: bool = False) -> EmailMessage:
    """Parse raw mail bytes with ``policy.default``; never raises.

    Anything the parser cannot cope with yields an empty message, which every
    caller already treats as "nothing usable here" (and the loop guard refuses
    to answer, having no From).
    """
    try:
        if not isinstance(raw, (bytes, bytearray)):
            raw = bytes(raw)
        return BytesParser(policy=email.policy.default).parsebytes(
            bytes(raw), headersonly=headers_only)
    except Exception:
        return EmailMessage()


def clean_text(value: str) -> str:
    """Turn undecodable raw bytes (surrogate escapes) into U+FFFD.

    The parser keeps 8-bit bytes of badly encoded headers as lone surrogates;
    those would crash the first ``encode`` further down the line. Raw UTF-8 is
    decoded properly on the way.
    """
    try:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeError:
        return value.encode("utf-8", "replace").decode("utf-8", "replace")


def header_text(msg: EmailMessage, name: str) -> str:
    """The decoded value of header ``name``; '' if absent or malformed."""
    try:
        value = msg.get(name)
        return "" if value is None else clean_text(str(value))
    except Exception:
        return ""


def header_addresses(msg: EmailMessage, name: str) -> list[Address]:
    """The addresses of an address header (From, Reply-To...); [] if malformed.

    Entries may lack a domain (``From: MAILER-DAEMON``); callers decide
    whether that is usable.
    """
    try:
        value = msg.get(name)
        return list(getattr(value, "addresses", ()) or ())
    except Exception:
        return []


def header_address(msg: EmailMessage, name: str) -> str:
    """The first complete ``local@domain`` of an address header, as written; ''."""
    for address in header_addresses(msg, name):
        try:
            if address.username and address.domain:
                return clean_text(address.addr_spec)
        except Exception:
            continue
    return ""


def split_address(address: str) -> tuple[str, str]:
    """(local part without its ``+tag``, domain), both lower-cased."""
    local, _, domain = address.strip().strip("<>").rpartition("@")
    if not local:
        local, domain = domain, ""
    return local.split("+", 1)[0].lower(), domain.lower()


def _first_token(value: str) -> str:
    """The keyword of a header such as ``Auto-Submitted: auto-replied; x=y``."""
    words = value.replace(";", " ").split()
    return words[0].lower() if words else ""


def _is_report(msg: EmailMessage) -> bool:
    """A delivery-status or disposition report, at the top or anywhere inside."""
    try:
        return any(part.get_content_type() in REPORT_TYPES for part in msg.walk())
    except Exception:
        return False


def _sender_locals(msg: EmailMessage, envelope_from: str | None) -> list[str]:
    """Local parts of every sender identity the mail claims."""
    locals_ = [
        clean_text(address.username or "").lower()
        for name in ("From", "Sender")
        for address in header_addresses(msg, name)
    ]
    if envelope_from:
        locals_.append(split_address(envelope_from)[0])
    return locals_


def _from_server(msg: EmailMessage, server_address: str, envelope_from: str | None) -> bool:
    """True if From, Sender, Reply-To or the envelope is the server or a sub-address.

    A Reply-To pointing at the server counts too: answering it would mail
    ourselves.
    """
    server = split_address(email.utils.parseaddr(server_address)[1] or server_address)
    if not server[0]:
        return False
    candidates = [header_address(msg, name) for name in ("From", "Sender", "Reply-To")]
    if envelope_from:
        candidates.append(envelope_from)
    return any(split_address(address) == server for address in candidates if address)


def loop_reason(
    msg: EmailMessage, server_address: str, envelope_from: str | None = None
) -> str | None:
    """A short reason why answering ``msg`` could start a mail loop, or None.

    ``envelope_from`` is the SMTP ``MAIL FROM`` when known ('' is the null
    sender of bounces); None means "not known" (replay, stdin pipe).
    """
    return_path = header_text(msg, "Return-Path").strip()
    if envelope_from == "" or ("Return-Path" in msg and return_path.replace(" ", "") == "<>"):
        return "null sender"
    daemon = next((p for p in _sender_locals(msg, envelope_from) if p in DAEMON_LOCAL_PARTS), None)
    if daemon:
        return f"sent by {daemon}"
    if not header_address(msg, "From"):
        return "no usable From address"
    if _from_server(msg, server_address, envelope_from):
        return "mail from the server's own address"
    if "Auto-Submitted" in msg and _first_token(header_text(msg, "Auto-Submitted")) != "no":
        return "Auto-Submitted mail"
    precedence = _first_token(header_text(msg, "Precedence"))
    if precedence in BULK_PRECEDENCES:
        return f"Precedence: {precedence}"
    for name in LIST_HEADERS + AUTOREPLY_HEADERS:
        if name in msg:
            return f"{name} header"
    if _is_report(msg):
        return "delivery or disposition report"
    return None
