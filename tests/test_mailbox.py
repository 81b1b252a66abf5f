"""pbmserv.mail.mailbox: reading replay mailboxes in Date: order (DESIGN §4)."""

from __future__ import annotations

import datetime as dt
import mailbox
import os
from pathlib import Path

import pytest

from pbmserv.mail.mailbox import Dated, MailboxError, message_date, read_mailboxes


def raw(name: str, date: str | None) -> bytes:
    """A small message whose Subject is its name, so order is easy to read."""
    date_line = f"Date: {date}\n" if date else ""
    return (f"From: {name}@example.com\nSubject: {name}\n{date_line}\nbody of {name}\n").encode()


def subjects(messages: list[Dated]) -> list[str]:
    return [m.raw.split(b"Subject: ", 1)[1].split(b"\n", 1)[0].decode() for m in messages]


def make_mbox(path: Path, messages: list[bytes]) -> Path:
    box = mailbox.mbox(path)
    for message in messages:
        box.add(message)
    box.close()
    return path


def make_maildir(path: Path, named: dict[str, bytes]) -> Path:
    """A Maildir whose files get the given unique names (some in new/, some in cur/)."""
    box = mailbox.Maildir(path)
    box.close()
    for index, (name, message) in enumerate(named.items()):
        folder = "new" if index % 2 == 0 else "cur"
        suffix = "" if folder == "new" else ":2,S"
        (path / folder / f"{name}{suffix}").write_bytes(message)
    return path


JAN1 = "Mon, 01 Jan 2024 10:00:00 +0000"
JAN2 = "Tue, 02 Jan 2024 10:00:00 +0000"
JAN3 = "Wed, 03 Jan 2024 10:00:00 +0000"


def test_message_date():
    assert message_date(raw("a", "Mon, 01 Jan 2024 11:00:00 +0100")) == \
        dt.datetime(2024, 1, 1, 10, tzinfo=dt.timezone.utc)
    assert message_date(raw("a", None)) is None
    assert message_date(raw("a", "not a date")) is None
    assert message_date(b"\xff\x00 garbage") is None


def test_mbox_in_date_order_without_from_lines(tmp_path):
    messages = [raw("c", JAN3), raw("a", JAN1), raw("b", JAN2)]
    result = read_mailboxes([make_mbox(tmp_path / "box.mbox", messages)])
    assert subjects(result) == ["a", "b", "c"]
    assert result[0] == Dated(raw("a", JAN1), dt.datetime(2024, 1, 1, 10, tzinfo=dt.timezone.utc))
    assert not any(message.raw.startswith(b"From ") for message in result)


def test_maildir_sorted_by_file_name_then_date(tmp_path):
    folder = make_maildir(tmp_path / "Maildir", {
        "1700000003.M3.host": raw("third", JAN1),
        "1700000001.M1.host": raw("first", JAN1),
        "1700000002.M2.host": raw("second", JAN1),
        "1700000000.M0.host": raw("late", JAN2),
    })
    assert subjects(read_mailboxes([str(folder)])) == ["first", "second", "third", "late"]


def test_date_order_across_two_mailboxes(tmp_path):
    mbox = make_mbox(tmp_path / "a.mbox", [raw("a1", JAN1), raw("a3", JAN3)])
    maildir = make_maildir(tmp_path / "md", {"1": raw("b2", JAN2), "2": raw("b1", JAN1)})
    assert subjects(read_mailboxes([mbox, maildir])) == ["a1", "b1", "b2", "a3"]


def test_equal_dates_keep_mailbox_order(tmp_path):
    first = make_mbox(tmp_path / "first.mbox", [raw("x", JAN1), raw("y", JAN1)])
    second = make_mbox(tmp_path / "second.mbox", [raw("p", JAN1), raw("q", JAN1)])
    assert subjects(read_mailboxes([second, first])) == ["p", "q", "x", "y"]
    assert subjects(read_mailboxes([first, second])) == ["x", "y", "p", "q"]


def test_equal_instants_in_different_zones_are_equal(tmp_path):
    box = make_mbox(tmp_path / "b.mbox", [
        raw("ten-utc", "Mon, 01 Jan 2024 12:00:00 +0200"),
        raw("half-past-nine-utc", "Mon, 01 Jan 2024 10:30:00 +0100"),
        raw("also-ten-utc", "Mon, 01 Jan 2024 10:00:00 +0000"),
    ])
    assert subjects(read_mailboxes([box])) == ["half-past-nine-utc", "ten-utc", "also-ten-utc"]


def test_missing_date_follows_the_message_before_it(tmp_path):
    box = make_mbox(tmp_path / "b.mbox", [
        raw("undated-first", None), raw("d3", JAN3), raw("undated", None),
        raw("bad-date", "yesterday"), raw("d1", JAN1), raw("d2", JAN2),
    ])
    result = read_mailboxes([box])
    assert subjects(result) == ["undated-first", "d1", "d2", "d3", "undated", "bad-date"]
    assert [message.date is None for message in result] == [True, False, False, False, True, True]


def test_missing_date_inherits_across_mailboxes(tmp_path):
    first = make_mbox(tmp_path / "a.mbox", [raw("a2", JAN2)])
    second = make_mbox(tmp_path / "b.mbox", [raw("undated", None), raw("b1", JAN1)])
    assert subjects(read_mailboxes([first, second])) == ["b1", "a2", "undated"]


def test_empty_inputs(tmp_path):
    empty = tmp_path / "empty.mbox"
    empty.write_bytes(b"")
    assert read_mailboxes([]) == []
    assert read_mailboxes([empty, make_maildir(tmp_path / "md", {})]) == []


def test_missing_path(tmp_path):
    with pytest.raises(MailboxError, match="no such file or directory"):
        read_mailboxes([tmp_path / "nope"])


def test_file_that_is_not_an_mbox(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("just some notes\nFrom here on\n")
    with pytest.raises(MailboxError, match="not an mbox file"):
        read_mailboxes([notes])


def test_directory_that_is_not_a_maildir(tmp_path):
    (tmp_path / "dir" / "cur").mkdir(parents=True)
    with pytest.raises(MailboxError, match="not a Maildir"):
        read_mailboxes([tmp_path / "dir"])


def test_error_names_the_bad_path_even_after_good_ones(tmp_path):
    good = make_mbox(tmp_path / "good.mbox", [raw("a", JAN1)])
    with pytest.raises(MailboxError) as caught:
        read_mailboxes([good, tmp_path / "missing.mbox"])
    assert str(caught.value) == f"{tmp_path / 'missing.mbox'}: no such file or directory"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything")
def test_read_only_mbox_is_readable(tmp_path):
    box = make_mbox(tmp_path / "ro.mbox", [raw("a", JAN1)])
    box.chmod(0o444)
    assert subjects(read_mailboxes([box])) == ["a"]
