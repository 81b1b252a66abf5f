"""Text the server writes from what a mail holds: passwords and tokens masked, quotes,
relayed text.

Whatever of a player's mail is quoted back or relayed to others goes through here, so
that no password, nor any reply-to-play token (which plays moves as a password would),
leaves the server in it, no control character reaches another player's terminal, and
no line is longer than a reply line may be. Every function here costs time linear in
its input, and what it writes is capped.
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from collections.abc import Callable, Iterable
from functools import cached_property
from itertools import groupby

MASK = "********"

PasswordWords = Callable[[list[str]], list[str]]

MAX_PASSWORDS = 1000  # distinct passwords a mail may carry before all its text is masked
MAX_SECRET_CHARS = 256  # longer words are no password (at most 64 characters, 4 bytes each)
WIDTH = 78  # the longest line the server writes
RELAY_LINES, RELAY_CHARS = 200, 16 * 1024  # the most of a mail's text relayed to others
QUOTE_LINES, QUOTE_CHARS = 200, 16 * 1024  # the most of a mail quoted back to its sender

# Control and format characters (escape sequences, NUL, bidi overrides...) and line
# or paragraph separators; tab and newline are kept.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_NOT_PLAIN = re.compile(r"[^\t\n -~]")  # only these are looked up (one at a time)


def passwords_in(lines: Iterable[str], password_words: PasswordWords) -> list[str]:
    """The distinct passwords on every line that reads as a command, run or not (quoted
    lines too), longest first, so that no quote of the mail can echo one.

    Reading stops once more than MAX_PASSWORDS are found: a :class:`Masker` given more
    than that masks every word (no player writes a thousand passwords in one mail)."""
    found: dict[str, None] = {}
    for line in lines:
        found.update(dict.fromkeys(password_words(line.lstrip("> \t").split())))
        if len(found) > MAX_PASSWORDS:
            break
    return sorted(found, key=len, reverse=True)


def _is_word_char(char: str) -> bool:
    return bool(re.match(r"\w", char))


def _alternation(secrets: list[str], depth: int = 0) -> str:
    """A regex matching any of the sorted `secrets` (which share their first `depth`
    characters) from character `depth` on, as a tree of their common prefixes: the
    regex engine then tries a few characters per position, however many secrets
    there are. Longer secrets are tried first. A secret does not match as part of a
    longer word: if it starts (ends) with a word character, the character before
    (after) it is none."""
    branches, ends = [], False
    for char, group in groupby(secrets, key=lambda secret: secret[depth:depth + 1]):
        if not char:
            ends = True
            continue
        # the guard is after the first character, so every branch starts with a literal
        guard = r"(?<!\w.)" if depth == 0 and _is_word_char(char) else ""
        branches.append(re.escape(char) + guard + _alternation(list(group), depth + 1))
    if ends:
        branches.append(r"(?!\w)" if _is_word_char(secrets[0][depth - 1]) else "")
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


class Masker:
    """Masks a mail's passwords and the server's `local+TAG@` tokens in any text.

    A password is masked wherever it stands but inside a longer word: "hunter2.",
    "(hunter2)" and "pw=hunter2" are masked, "hunter22" is not. All passwords are one
    regex, compiled once per mail, when first needed: most mails only ever mask an empty
    comment."""

    def __init__(self, secrets: Iterable[str], server_address: str):
        self.secrets = list(secrets)
        self.everything = len(set(self.secrets)) > MAX_PASSWORDS
        self.server_address = server_address

    @cached_property
    def passwords(self) -> re.Pattern | None:
        usable = sorted({secret for secret in self.secrets if 0 < len(secret) <= MAX_SECRET_CHARS})
        return re.compile(_alternation(usable), re.DOTALL) if usable and not self.everything else None

    @cached_property
    def tokens(self) -> re.Pattern:
        local = re.escape(self.server_address.rpartition("@")[0])
        # a tag ends at the next `local+`, so that a long run of them is read once
        return re.compile(rf"\b({local})\+(?:(?!{local}\+)[^@\s])+@", re.IGNORECASE)

    def __call__(self, text: str) -> str:
        if not text:  # nothing to mask
            return text
        if self.everything:
            return re.sub(r"\S+", MASK, text)
        if self.passwords is not None:
            text = self.passwords.sub(MASK, text)
        return self.tokens.sub(rf"\1+{MASK}@", text)


def _visible(match: re.Match) -> str:
    return "\ufffd" if unicodedata.category(match[0]) in _UNSAFE_CATEGORIES else match[0]


def _fit(lines: list[str], width: int, max_lines: int, max_chars: int) -> tuple[list[str], int]:
    """`lines` with every control character shown as U+FFFD and wrapped to `width`
    (at spaces; longer words are cut), as many as fit in `max_lines` lines and
    `max_chars` characters; and how many of `lines` did not fit."""
    out: list[str] = []
    chars = 0
    for index, line in enumerate(lines):
        line = _NOT_PLAIN.sub(_visible, line[:max_chars])
        pieces = (textwrap.wrap(line, width, break_on_hyphens=False) or [""]) if len(line) > width else [line]
        chars += sum(len(piece) + 1 for piece in pieces)
        if len(out) + len(pieces) > max_lines or chars > max_chars:
            return out, len(lines) - index
        out += pieces
    return out, 0


def wrap(text: str, indent: int = 0, first: str | None = None) -> str:
    """`text` filled to WIDTH, its lines indented by `indent` (the first line starts
    with `first` instead, e.g. a game's name): for the server's own prose."""
    return textwrap.fill(text, WIDTH, initial_indent=" " * indent if first is None else first,
                         subsequent_indent=" " * indent, break_on_hyphens=False)


# A quoted word group ('superwari games bob', "c3-e3") that a line is not broken in
_QUOTED = re.compile(r"""(?<!\w)'[^'\n]{1,60}'(?!\w)|(?<!\w)"[^"\n]{1,60}"(?!\w)""")
_GLUE = "\ue000"  # stands for a space that must not break, while wrapping


def _wrap_glued(text: str, indent: int) -> str:
    glued = _QUOTED.sub(lambda match: match[0].replace(" ", _GLUE), text)
    return wrap(glued, indent).replace(_GLUE, " ")


def _fit_line(line: str, command: Callable[[str], bool] | None) -> str:
    indent = len(line) - len(line.lstrip(" "))
    text = line[indent:]
    if command is not None:
        for colon in re.finditer(r": ", text):
            tail = text[colon.end():]
            if indent + 2 + len(tail) <= WIDTH and command(tail):
                return _wrap_glued(text[:colon.start() + 1], indent) + "\n" + " " * (indent + 2) + tail
    return _wrap_glued(text, indent)


def fit(text: str, command: Callable[[str], bool] | None = None) -> str:
    """`text` with each line longer than WIDTH filled, keeping its indent (a long
    address or userid in a line of the server's, an error's prose): lines that fit,
    such as a command to send or an indented example, are left as they are.

    A quoted group of words ('superwari games bob') is not broken. Where `command`
    says that what follows a colon of an over-long line is a command to send ("...,
    send: superwari queue 101 bob PASSWORD cancel"), the command goes whole on a line
    of its own, indented by two more spaces, if it fits there. A quoted line (`> `,
    the player's own words quoted back) stays as it is: the outbound queue fits whole
    bodies with this, the last guard of the 78 columns."""
    return "\n".join(line if len(line) <= WIDTH or line.startswith(">") else _fit_line(line.rstrip(), command)
                      for line in text.split("\n"))


def wrap_items(first: str, items: Iterable[str], indent: int = 2, sep: str = ",") -> str:
    """`first`, then `items` separated by `sep` and a space, filled to WIDTH: lines
    break only between items and go on indented by `indent` (a list of moves)."""
    items = list(items)
    words = [item + sep for item in items[:-1]] + items[-1:]
    lines = [first.rstrip()]
    for word in words:
        if lines[-1].strip() and len(lines[-1]) + 1 + len(word) > WIDTH:
            lines.append(" " * indent + word)
        else:
            lines[-1] += (" " if lines[-1] else "") + word
    return "\n".join(lines)


def relay_safe(text: str) -> str:
    """`text` fit to go to other players: control and format characters (escape
    sequences, NUL, bidi overrides...) shown as U+FFFD, lines wrapped to 78 characters
    (WIDTH), and at most RELAY_LINES lines / RELAY_CHARS characters, then a line
    ``[... N more lines not relayed]``. Mask passwords before: wrapping may cut one."""
    lines = text.split("\n")
    out, left = _fit(lines, WIDTH, RELAY_LINES, RELAY_CHARS)
    if left:
        out.append(f"[... {left} more lines not relayed]")
    return "\n".join(out)


def quote(text: str, mask: Masker) -> str:
    """`text` masked, made safe and wrapped as :func:`relay_safe` does, each line behind
    `> ` (78 characters in all); at most QUOTE_LINES lines / QUOTE_CHARS characters."""
    lines = text.strip("\n").split("\n", QUOTE_LINES)
    left = lines.pop().count("\n") + 1 if len(lines) > QUOTE_LINES else 0
    out, cut = _fit(mask("\n".join(lines)).split("\n"), WIDTH - 2, QUOTE_LINES, QUOTE_CHARS)
    out = [f"> {line}".rstrip() for line in out]
    if left + cut:
        out.append(f"> [... {left + cut} more lines not quoted]")
    return "\n".join(out)
