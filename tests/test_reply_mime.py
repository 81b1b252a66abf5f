"""The replies' MIME writer (`outbound.compose`, and `outbound.as_bytes` where it
needs the generator): the standard library's compat32 generator with shortcuts for
speed, which must give exactly the bytes the standard one gives, whatever a header or
a body holds (replays compare bytes)."""

from __future__ import annotations

from datetime import datetime
from email import message_from_bytes
from email.message import Message
from email.policy import compat32

import pytest
from hypothesis import given, settings, strategies as st

from pbmserv.config import load_config
from pbmserv.mail import outbound
from pbmserv.mail.outbound import REPLY_POLICY, compose

CONFIG = load_config(None, environ={})
WHEN = datetime(2026, 12, 2, 13, 30)
NAMES = st.sampled_from(["To", "Subject", "Reply-To", "In-Reply-To", "X-A-Rather-Long-Header-Name"])
# header values of every shape: short and long, spaces and tabs doubled or at the
# ends, line breaks, non-ASCII, and text near the 78-column edge
VALUES = st.one_of(
    st.text(alphabet=st.sampled_from("ab ,<>@.\t\r\n\u00e9:="), max_size=90),
    st.text(max_size=120),
    st.integers(60, 80).map(lambda width: "w" * width),
    st.integers(1, 12).map(lambda count: ", ".join(f"player{n}@example.org" for n in range(count))),
)


def standard_fold(name: str, value: str) -> bytes | type:
    try:
        return compat32.fold_binary(name, value)
    except Exception as error:  # noqa: BLE001 - the same failure is the same outcome
        return type(error)


def reply_fold(name: str, value: str) -> bytes | type:
    try:
        return REPLY_POLICY.fold_binary(name, value)
    except Exception as error:  # noqa: BLE001
        return type(error)


@settings(max_examples=500, deadline=None)
@given(NAMES, VALUES)
def test_a_header_is_folded_as_the_standard_policy_folds_it(name, value):
    assert reply_fold(name, value) == standard_fold(name, value)


def test_the_shortcut_takes_the_common_headers_and_leaves_the_rest():
    assert REPLY_POLICY.fold_binary("Subject", "Super-Wari Board 101") == b"Subject: Super-Wari Board 101\n"
    for name, value in [("To", ", ".join(f"player{n}@example.org" for n in range(6))),  # folded
                        ("Subject", "caf\u00e9"), ("Subject", "two  spaces"), ("Subject", "ends ")]:
        assert not outbound.fits_unfolded(name, value)
        assert REPLY_POLICY.fold_binary(name, value) == compat32.fold_binary(name, value)


BODIES = st.text(alphabet=st.sampled_from("ab |-+\n\r\u00e9\u2014"), max_size=300)


@settings(max_examples=300, deadline=None)
@given(to=st.lists(st.sampled_from(["a@example.org", "bob.the.long.named@example.org", "\u00e9@example.org"]),
                   min_size=0, max_size=6),
       subject=VALUES.filter(lambda text: len(f"{text}.".splitlines()) == 1),  # ours: one line
       body=BODIES, html=st.one_of(st.none(), BODIES),
       reply_to=st.one_of(st.none(), st.sampled_from(["pbmserv+2-1-o5stbypwzklb7jwki3ew@localhost", "w" * 75])),
       in_reply_to=st.one_of(st.none(), st.sampled_from(["<c@example.org>", "<" + "c" * 80 + "@example.org>"])))
def test_a_reply_has_the_bytes_the_standard_generator_writes(to, subject, body, html, reply_to, in_reply_to):
    """`compose` writes most replies directly and the rest through our generator:
    either way, the bytes of the standard generator writing `mime_message`."""
    arguments = (CONFIG.server.address, to, subject, body, "<pbmserv.x.1.1@localhost>", WHEN, in_reply_to, reply_to,
                 html)
    mine = compose(*arguments)
    assert mine == outbound.mime_message(*arguments).as_bytes()
    assert message_from_bytes(mine)["Message-ID"] == "<pbmserv.x.1.1@localhost>"


def test_a_board_mail_is_written_directly(monkeypatch):
    """The common reply (ASCII headers that fit, text and HTML without a carriage
    return) never builds a `Message`; one with a non-ASCII subject does."""
    built = []
    monkeypatch.setattr(outbound, "mime_message", lambda *arguments: built.append(arguments) or Message())
    compose(CONFIG.server.address, ["a@example.org"], "Super-Wari Board 101", "Board\n\u2014\n",
            "<pbmserv.x.1.1@localhost>", WHEN, "<c@example.org>", "pbmserv+2-1-x@localhost", "<p>\u00e9</p>\n")
    assert built == []
    compose(CONFIG.server.address, ["a@example.org"], "caf\u00e9", "Board\n", "<pbmserv.x.1.1@localhost>", WHEN, None)
    assert len(built) == 1
