"""Text the server writes from what a mail holds: passwords and tokens masked, quotes.

Whatever of a player's mail is quoted back or relayed to others goes through here, so
that no password, nor any reply-to-play token (which plays moves as a password would),
leaves the server in it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

MASK = "********"

PasswordWords = Callable[[list[str]], list[str]]


def passwords_in(lines: Iterable[str], password_words: PasswordWords) -> list[str]:
    """The passwords on every line that reads as a command, run or not (quoted lines
    too), longest first, so that no quote of the mail can echo one."""
    return sorted({word for line in lines for word in password_words(line.lstrip("> \t").split())},
                  key=len, reverse=True)


class Masker:
    """Masks a mail's passwords and the server's `local+TAG@` tokens in any text."""

    def __init__(self, secrets: Iterable[str], server_address: str):
        self.secrets = list(secrets)
        self.local = re.escape(server_address.rpartition("@")[0])

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = re.sub(rf"(?<!\S){re.escape(secret)}(?!\S)", MASK, text)
        return re.sub(rf"\b({self.local})\+[^@\s]+@", rf"\1+{MASK}@", text, flags=re.IGNORECASE)


def quote(text: str, mask: Masker) -> str:
    """`text` masked, each line behind `> `."""
    return "\n".join(f"> {line}".rstrip() for line in mask(text).strip("\n").split("\n"))
