"""Turn a raw command mail into what the command layer needs (DESIGN §2).

:func:`parse_message` finds the command(s) — in the Subject or in the body —
and the comment that goes out with the board. It never raises: whatever bytes
arrive, the worker gets a :class:`ParsedMail` (with empty values where the mail
made no sense), so a broken mail cannot wedge the queue.

Every step costs time linear in the size of the mail and reads a capped amount:
the first MAX_PARTS MIME parts, MAX_TEXT_CHARS characters and MAX_TEXT_LINES lines
of body text (``ParsedMail.truncated`` says when text was left unread), the first
MAX_HEADER_CHARS characters of the Subject and of each recipient header; a line
longer than MAX_COMMAND_CHARS is prose, never a command.

Which words make a command is not decided here: the command registry passes
``is_command`` (the words start with a command name; arguments unchecked) and
``takes_text`` (the command relays the following body lines: message,
broadcast, chat).
"""

from __future__ import annotations

import datetime as dt
import email.utils
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from email.message import EmailMessage
from html.parser import HTMLParser
from itertools import islice

from pbmserv.mail.loopguard import (DOT_ATOM, MAX_HEADER_CHARS, MAX_PARTS, clean_text, header_address,
                                   header_text, header_value, header_written, parse_bytes)

__all__ = [
    "CommandLine", "ParsedMail", "parse_message", "header_date", "html_to_text", "strip_subject",
]

WordsTest = Callable[[list[str]], bool]


@dataclass
class CommandLine:
    """One command as the player wrote it."""

    text: str  # the line, stripped
    words: list[str]  # text.split()
    relay: str = ""  # text to relay (message, broadcast, chat); '' otherwise


@dataclass
class ParsedMail:
    sender: str = ""
    reply_to: str = ""
    subject: str = ""
    message_id: str | None = None
    date: dt.datetime | None = None
    from_subject: bool = False
    commands: list[CommandLine] = field(default_factory=list)
    comment: str = ""
    text: str = ""
    recipients: list[str] = field(default_factory=list)  # To, Cc, Delivered-To, X-Original-To
    truncated: bool = False  # the body text held more than was read (MAX_TEXT_*)


# Commands are never long; whatever a mail holds beyond these is not read.
MAX_TEXT_CHARS = 256 * 1024  # of the body, decoded
MAX_TEXT_LINES = 2000
MAX_COMMAND_CHARS = 1000  # a longer line is prose


# --- headers ---------------------------------------------------------------

RECIPIENT_HEADERS = ("To", "Cc", "Delivered-To", "X-Original-To")

# Reply/forward prefixes of the common mail clients, and list-style [tags].
_SUBJECT_PREFIX = re.compile(r"^\s*(?:(?:re|fwd?|aw|wg|sv)\s*:|\[[^\]]*\])\s*", re.IGNORECASE)
_LINE_BREAKS = re.compile(r"\r\n|[\r\n]")


def strip_subject(subject: str) -> str:
    """The Subject without any leading ``Re:``/``Fwd:``/``AW:``/``[tag]`` prefixes."""
    while True:
        stripped = _SUBJECT_PREFIX.sub("", subject, count=1)
        if stripped == subject:
            return subject.strip()
        subject = stripped


def recipients(msg: EmailMessage) -> list[str]:
    """The addresses of To, Cc, Delivered-To and X-Original-To, each header read
    from its first MAX_HEADER_CHARS characters."""
    values = [value[:MAX_HEADER_CHARS] for key, value in msg.raw_items() if key.title() in RECIPIENT_HEADERS]
    return [clean_text(address) for _, address in email.utils.getaddresses(values) if "@" in address]


def header_date(msg: EmailMessage) -> dt.datetime | None:
    """The Date header as an aware datetime (``-0000`` taken as UTC); None if unusable.
    The datetime the header class gives is `parsedate_to_datetime` of the header as
    written, unfolded, and that is asked first: the class then parses its own
    rewriting of the date again, which costs ten times as much."""
    written = header_written(msg, "Date")
    try:
        value = email.utils.parsedate_to_datetime(written) if written else None
    except Exception:
        value = None
    return aware(value) if isinstance(value, dt.datetime) else parsed_date(msg)


def parsed_date(msg: EmailMessage) -> dt.datetime | None:
    """`header_date` by the Date header class, and the lenient parser for what it rejected."""
    try:
        value = getattr(header_value(msg, "Date"), "datetime", None)
    except Exception:
        value = None
    if value is None:
        # Fall back on the lenient parser for what the header class rejected.
        raw = header_text(msg, "Date")
        try:
            value = email.utils.parsedate_to_datetime(raw) if raw else None
        except Exception:
            value = None
    return aware(value) if isinstance(value, dt.datetime) else None


def aware(value: dt.datetime) -> dt.datetime:
    """`value` with UTC for a time zone it has not."""
    if value.tzinfo is None or value.utcoffset() is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    return value


PLAIN_MESSAGE_ID = re.compile(rf"<{DOT_ATOM}@{DOT_ATOM}>")


def _message_id(msg: EmailMessage) -> str | None:
    """The Message-ID with angle brackets: the first ``<...>``, or a bare id wrapped.
    One of the plain shape, `<dot-atom@dot-atom>` with no encoded word, is the header
    as written, which the header class gives back as it is (tested) after 70 us of
    parsing."""
    written = (header_written(msg, "Message-ID") or "").strip()
    if PLAIN_MESSAGE_ID.fullmatch(written) and "=?" not in written:
        return written
    return parsed_message_id(msg)


def parsed_message_id(msg: EmailMessage) -> str | None:
    """`_message_id` by the Message-ID header class."""
    value = header_text(msg, "Message-ID").strip()
    match = re.search(r"<[^<>\s]+>", value)
    if match:
        return match.group(0)
    if value and not re.search(r"[\s<>]", value):
        return f"<{value}>"
    return None


# --- body text -------------------------------------------------------------

# Invisible characters mail clients insert when wrapping or justifying text.
_DELETED_CHARS = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
_SPACE_CHARS = dict.fromkeys(map(ord, "\u00a0\u2007\u202f"), " ")
_INVISIBLES = {**_DELETED_CHARS, **_SPACE_CHARS}


def clean_lines(text: str) -> list[str]:
    """Lines with \\n endings, no trailing white space, no invisible characters.

    Zero-width characters and soft hyphens are deleted; non-breaking spaces
    become ordinary spaces so the words on either side stay separate words.
    """
    text = _LINE_BREAKS.sub("\n", text.translate(_INVISIBLES))
    return [line.rstrip() for line in text.split("\n")]


def _decode_part(part: EmailMessage, limit: int | None = None) -> str:
    """A text part's content (its first `limit` bytes); a bad or unknown charset
    falls back to UTF-8."""
    payload = part.get_payload(decode=True)
    if not isinstance(payload, (bytes, bytearray)):
        return ""
    payload = payload[:limit]
    charset = part.get_content_charset() or "utf-8"
    if charset in ("us-ascii", "ascii"):
        charset = "utf-8"  # undeclared 8-bit text is far more often UTF-8 than garbage
    try:
        return bytes(payload).decode(charset, "replace")
    except Exception:
        return bytes(payload).decode("utf-8", "replace")


def _body_part(msg: EmailMessage) -> EmailMessage | None:
    """The first text/plain part that is no attachment, else the first such text/html
    part, as ``get_body`` finds them but among the first MAX_PARTS parts only, and
    without recursion (``get_body`` walks every part, and deep nesting overflows it)."""
    html, stack, seen = None, [msg], 0
    while stack and seen < MAX_PARTS:
        part = stack.pop()
        seen += 1
        if part.is_attachment():
            continue
        if part.get_content_maintype() == "multipart":
            stack += reversed(list(islice(part.iter_parts(), MAX_PARTS)))
        elif part.get_content_type() == "text/plain":
            return part
        elif part.get_content_type() == "text/html" and html is None:
            html = part
    return html


def body_text(msg: EmailMessage) -> str:
    """The plain-text body: the text/plain part, else the HTML part as text; ''.
    At most MAX_TEXT_CHARS characters (one more when there was more to read)."""
    try:
        part = _body_part(msg)
        if part is None:
            return ""
        text = _decode_part(part, MAX_TEXT_CHARS * 2)  # room for markup and multi-byte UTF-8
        if part.get_content_subtype() == "html":
            text = html_to_text(text)
        return clean_text(text[:MAX_TEXT_CHARS + 1])
    except Exception:
        return ""


class _HtmlToText(HTMLParser):
    """Just enough HTML rendering to read commands out of an HTML-only mail."""

    BLOCKS = frozenset({
        "address", "article", "aside", "blockquote", "center", "dd", "div", "dl", "dt",
        "fieldset", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
        "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table",
        "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
    })
    DROPPED = frozenset({"script", "style", "title", "noscript", "template"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str] = []
        self._current: list[str] = []
        self._quote_depth = 0  # a block tag ends the line before this changes
        self._dropped = 0
        self._pre = 0

    def _end_line(self, keep_empty: bool = False) -> None:
        line = "".join(self._current)
        if not self._pre:
            line = re.sub(r"\s+", " ", line).strip()
        if line or keep_empty:  # one `>` says quoted: the depth means nothing here
            self.lines.append((("> " if self._quote_depth else "") + line).rstrip())
        self._current = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in self.DROPPED:
            self._dropped += 1
        elif tag == "br":
            self._end_line(keep_empty=True)
        elif tag in self.BLOCKS:
            self._end_line()
            self._quote_depth += tag == "blockquote"
            self._pre += tag == "pre"

    def handle_endtag(self, tag: str) -> None:
        if tag in self.DROPPED:
            self._dropped = max(0, self._dropped - 1)
        elif tag in self.BLOCKS:
            self._end_line()
            if tag == "blockquote":
                self._quote_depth = max(0, self._quote_depth - 1)
            if tag == "pre":
                self._pre = max(0, self._pre - 1)

    def handle_data(self, data: str) -> None:
        if self._dropped:
            return
        if not self._pre:
            self._current.append(data)
            return
        first, *rest = data.split("\n")
        self._current.append(first)
        for piece in rest:
            self._end_line(keep_empty=True)
            self._current.append(piece)


# The standard library's HTMLParser reads an unterminated tag or comment again on
# every feed and at close(), character by character: time grows with the square of its
# length. So the HTML goes in by chunks, and reading stops at the first such construct
# longer than MAX_HTML_PENDING (no tag worth reading is); a long one left at the end
# is dropped.
HTML_CHUNK = 4096
MAX_HTML_PENDING = 16 * 1024


def html_to_text(html: str) -> str:
    """Plain text of an HTML mail: blocks and <br> break lines, a line in a
    <blockquote> is ``> `` quoted (once, however deep), scripts and styles are dropped, entities decoded."""
    parser = _HtmlToText()
    try:
        for start in range(0, len(html), HTML_CHUNK):
            parser.feed(html[start:start + HTML_CHUNK])
            if len(parser.rawdata) > MAX_HTML_PENDING:
                break  # see MAX_HTML_PENDING
        else:
            if len(parser.rawdata) <= HTML_CHUNK:
                parser.close()
    except Exception:
        pass  # keep what was read before the parser gave up
    try:
        parser._end_line()
    except Exception:
        pass
    return "\n".join(parser.lines)


# --- finding the commands --------------------------------------------------

_ATTRIBUTION = re.compile(r"(?:\bwrote|\bschrieb)\s*:$", re.IGNORECASE)
_ATTRIBUTION_START = re.compile(r"^(?:on|am)\s", re.IGNORECASE)
_ORIGINAL_MESSAGE = re.compile(
    r"^-{2,}\s*(?:original message|ursprüngliche nachricht)\s*-{2,}$", re.IGNORECASE)


def _is_end(stripped: str) -> bool:
    """A line after which nothing is read: a signature, ``end``, a quoted original."""
    return stripped == "--" or stripped.lower() == "end" or bool(_ORIGINAL_MESSAGE.match(stripped))


def _is_quoted(stripped: str) -> bool:
    return stripped.startswith(">")


def _is_attribution(lines: list[str], index: int) -> bool:
    """``On ... wrote:`` / ``... schrieb:``, also when the client wrapped it onto
    the next line (then the ``On ...`` half is recognised by what follows)."""
    stripped = lines[index].strip()
    if _ATTRIBUTION.search(stripped):
        return True
    following = lines[index + 1].strip() if index + 1 < len(lines) else ""
    return bool(_ATTRIBUTION_START.match(stripped) and _ATTRIBUTION.search(following))


def _trim_blank(lines: list[str]) -> str:
    """Join lines, dropping blank lines at both ends (inner ones are kept)."""
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end])


def unquoted_text(lines: list[str], is_command: WordsTest) -> str:
    """The comment of a Subject command, or the text below a message/broadcast/chat
    command: the lines up to the signature, ``end`` or ``-----Original Message-----``,
    without quoted and attribution lines (what was quoted may be private) and without
    command lines (a Subject command repeated in the body carries a password), blank
    lines trimmed at both ends."""
    kept = []
    for index, line in enumerate(lines):
        stripped = line.strip()
        if _is_end(stripped):
            break
        if not (_is_quoted(stripped) or _is_attribution(lines, index) or _is_command_line(is_command, stripped)):
            kept.append(line)
    return _trim_blank(kept)


def _body_commands(
    lines: list[str], is_command: WordsTest, takes_text: WordsTest
) -> tuple[list[CommandLine], str]:
    """Commands and comment from the body (see :func:`parse_message`)."""
    commands: list[CommandLine] = []
    comment: list[str] = []
    for index, line in enumerate(lines):
        stripped = line.strip()
        if _is_end(stripped):
            break
        if not stripped:
            comment.append("")
            continue
        if _is_quoted(stripped) or _is_attribution(lines, index):
            continue
        if _is_command_line(is_command, stripped):
            words = stripped.split()
            command = CommandLine(stripped, words)
            commands.append(command)
            if _safe(takes_text, words):
                command.relay = unquoted_text(lines[index + 1:], is_command)
                break
            continue
        comment.append(line)
    return commands, _trim_blank(comment)


def _is_command_line(test: WordsTest, stripped: str) -> bool:
    """Whether the line is a command: not longer than MAX_COMMAND_CHARS, and `test`
    says so."""
    return len(stripped) <= MAX_COMMAND_CHARS and _safe(test, stripped.split())


def _safe(test: WordsTest, words: list[str]) -> bool:
    """Ask the registry; a registry that raises counts as "no"."""
    try:
        return bool(test(list(words)))
    except Exception:
        return False


BOARD_SUBJECT = re.compile(r"\S+\s+board\s+\d+\b", re.IGNORECASE)  # in the subjects of board mails, after any prefix


def reply_move(mail: ParsedMail, is_command: WordsTest) -> tuple[str, str]:
    """The move and the comment of a reply to play (a mail holding no command): the move
    is the Subject unless that is a board mail's own (`Re: Super-Wari Board 101 bob`,
    `Re: ... Board 101 Error`), else the first line of the body not quoted."""
    subject = strip_subject(mail.subject)
    body = unquoted_text(mail.text.split("\n"), is_command)
    if subject and not BOARD_SUBJECT.search(subject):
        return subject, body
    first, _, comment = body.partition("\n")
    return first.strip(), comment.strip("\n")


def parse_message(raw: bytes | EmailMessage, is_command: WordsTest, takes_text: WordsTest,
                  is_body_command: WordsTest | None = None) -> ParsedMail:
    """Parse a command mail; never raises.

    Where the commands are:

    * The Subject, after stripping ``Re:``/``Fwd:``/``Fw:``/``AW:``/``WG:``/
      ``SV:`` and ``[tag]`` prefixes (repeatedly, any case), is the single
      command if its words satisfy ``is_command`` (``from_subject`` is True).
      Body lines are tested with ``is_body_command`` when given (a stricter test:
      prose such as "All the best!" must not read as a command).
      The comment is the body up to the signature / ``end`` /
      ``-----Original Message-----`` without quoted (``>``), attribution and
      command lines; a ``takes_text`` command relays that comment.
    * Otherwise the body is read line by line and stops at the first line that
      is ``--``/``-- `` (signature), ``end`` (any case) or
      ``-----Original Message-----``. Blank, quoted and attribution
      (``On ... wrote:``, ``... schrieb:``) lines are skipped. A line whose
      words satisfy ``is_command`` is a command; after a ``takes_text``
      command the remaining lines (up to the signature / ``end`` /
      ``-----Original Message-----``, without quoted, attribution and command
      lines) are its relay text and reading stops. Any other line is prose: it
      goes into the comment, however many there are (a command after a letter
      of prose is still run).
    * The body-mode comment is every prose line and blank line read before
      reading stopped (commands, relay text, quoted and attribution lines
      excluded), in order, blank lines trimmed at both ends.
    """
    parsed = ParsedMail()
    try:
        msg = raw if isinstance(raw, EmailMessage) else parse_bytes(raw)  # parsed once by the worker
        parsed.sender = header_address(msg, "From")
        parsed.reply_to = header_address(msg, "Reply-To") or parsed.sender
        parsed.subject = _LINE_BREAKS.sub(" ", header_text(msg, "Subject")).strip()
        parsed.message_id = _message_id(msg)
        parsed.date = header_date(msg)
        parsed.recipients = recipients(msg)
        text = body_text(msg)
        lines = clean_lines(text[:MAX_TEXT_CHARS])
        parsed.truncated = len(text) > MAX_TEXT_CHARS or len(lines) > MAX_TEXT_LINES
        lines = lines[:MAX_TEXT_LINES]
        parsed.text = "\n".join(lines)

        subject = strip_subject(parsed.subject)
        words = subject.split()
        if words and _safe(is_command, words):
            parsed.from_subject = True
            parsed.comment = unquoted_text(lines, is_body_command or is_command)
            relay = parsed.comment if _safe(takes_text, words) else ""
            parsed.commands = [CommandLine(subject, words, relay)]
        else:
            parsed.commands, parsed.comment = _body_commands(lines, is_body_command or is_command, takes_text)
    except Exception:
        pass  # whatever was filled in so far is the best this mail offers
    return parsed
