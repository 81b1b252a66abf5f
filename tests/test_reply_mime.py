"""The replies' MIME writer (`outbound.as_bytes`): the standard library's compat32
generator with two shortcuts for speed, which must give exactly the bytes the
standard one gives, whatever a header or a body holds (replays compare bytes)."""

from __future__ import annotations

from datetime import datetime
from email import message_from_bytes
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


@settings(max_examples=200, deadline=None)
@given(to=st.lists(st.sampled_from(["a@example.org", "bob.the.long.named@example.org", "\u00e9@example.org"]),
                   min_size=1, max_size=6),
       subject=VALUES.filter(lambda text: len(f"{text}.".splitlines()) == 1),  # ours: one line
       body=BODIES, html=st.one_of(st.none(), BODIES))
def test_a_reply_has_the_bytes_the_standard_generator_writes(to, subject, body, html):
    mine = compose(CONFIG.server.address, to, subject, body, "<pbmserv.x.1.1@localhost>", WHEN, "<c@example.org>", None, html)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(outbound, "as_bytes", lambda message: message.as_bytes())
        standard = compose(CONFIG.server.address, to, subject, body, "<pbmserv.x.1.1@localhost>", WHEN, "<c@example.org>", None,
                           html)
    assert mine == standard
    assert message_from_bytes(mine)["Message-ID"] == "<pbmserv.x.1.1@localhost>"
