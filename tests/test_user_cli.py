"""`pbmserv user` (accounts made and looked after by an admin, passwords never on the
command line), the start-up line without the database password, and `pbmserv queue
list` with mail the worker set aside."""

from __future__ import annotations

import io
import sys

import pytest
from sqlalchemy import select

from conftest import Server
from pbmserv.cli import main, shown_url
from pbmserv.passwords import verify_password
from pbmserv.store.models import Inbound, User
from pbmserv.store.queue import enqueue


@pytest.fixture
def admin_cli(tmp_path, monkeypatch):
    """Run `pbmserv ARGS` against the test's database with `stdin` as standard input;
    (exit code, stdout, stderr)."""
    url = f"sqlite:///{tmp_path / 'test.db'}"
    monkeypatch.setenv("PBMSERV_DATABASE_URL", url)
    monkeypatch.setenv("PBMSERV_SECURITY_PASSWORD_COST", "fast")
    monkeypatch.setenv("PBMSERV_SERVER_ADMINS", "root")

    def run(*args: str, stdin: bytes = b"") -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with monkeypatch.context() as patch:
            patch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
            patch.setattr(sys, "stdout", out)
            patch.setattr(sys, "stderr", err)
            code = main(list(args))
        return code, out.getvalue(), err.getvalue()

    run.url = url
    return run


def user_row(url: str, userid: str) -> User | None:
    from pbmserv.store.db import open_database
    sessions = open_database(url)
    with sessions() as session:
        return session.scalar(select(User).where(User.userid_key == userid.lower()))


def test_user_add_makes_an_admin_with_confirmed_addresses_from_a_password_on_stdin(admin_cli):
    code, out, err = admin_cli("user", "add", "root", "root@example.org", "Root@Example.ORG", "ops@example.org",
                               stdin=b"s3cret!\n")
    assert (code, err) == (0, "")
    assert out == "Added root (an admin) with 2 confirmed addresses.\n"
    user = user_row(admin_cli.url, "root")
    assert [(a.address, a.confirmed) for a in user.addresses] == [("root@example.org", True),
                                                                  ("ops@example.org", True)]
    assert user.emails == ["root@example.org", "ops@example.org"]  # mail goes to them at once
    assert verify_password(user.password_hash, "s3cret!") and not verify_password(user.password_hash, "s3cret!\n")


@pytest.mark.parametrize(("args", "stdin", "problem"), [
    (("bob", "bob@example.org"), b"", "No password: write it as one line on standard input."),
    (("bob", "bob@example.org"), b"\n", "No password: write it as one line on standard input."),
    (("bob", "bob@example.org"), b"abc\n", "A password must have 4 to 64 characters (no spaces)."),
    (("bob", "bob@example.org"), b"x" * 65 + b"\n", "A password must have 4 to 64 characters (no spaces)."),
    (("bob", "bob@example.org"), b"two words\n", "A password cannot contain spaces."),
    (("bob", "bob@example.org"), b"\tpass\n", "A password cannot contain spaces."),
    (("bob", "bob@example.org"), b"\xff\xfepass\n", "The password on standard input is not UTF-8 text."),
    (("all", "bob@example.org"), b"secret\n", "'all' cannot be a userid: the word is used in board subjects."),
    (("bob smith", "bob@example.org"), b"secret\n",
     "'bob smith' cannot be a userid: use ASCII letters, digits, '_', '.' or '-'."),
    (("bäb", "bob@example.org"), b"secret\n", "'bäb' cannot be a userid: use ASCII letters, digits, '_', '.' or '-'."),
    (("b" * 21, "bob@example.org"), b"secret\n", "'bbbbbbbbb...' cannot be a userid: it has 21 characters, at most 20."),
])
def test_user_add_refuses_what_signup_refuses_in_one_line_with_exit_2(admin_cli, args, stdin, problem):
    code, out, err = admin_cli("user", "add", *args, stdin=stdin)
    assert (code, out, err) == (2, "", f"pbmserv user add: {problem}\n")
    assert user_row(admin_cli.url, args[0]) is None


def test_user_add_refuses_a_bad_address_without_writing_its_control_characters(admin_cli):
    code, out, err = admin_cli("user", "add", "bob", "bob@example.org", "\x1b[2J@example.org", stdin=b"secret\n")
    assert code == 2 and out == "" and "\x1b" not in err and err.count("\n") == 1
    assert err.startswith("pbmserv user add: '\\x1b[2J@example.org' is not an address"), err


def test_user_add_refuses_a_taken_userid_ignoring_case_and_keeps_the_first(admin_cli):
    admin_cli("user", "add", "Root", "root@example.org", stdin=b"first-pw\n")
    code, out, err = admin_cli("user", "add", "ROOT", "evil@example.org", stdin=b"second-pw\n")
    assert (code, out, err) == (2, "", "pbmserv user add: The userid Root is taken.\n")
    user = user_row(admin_cli.url, "root")
    assert verify_password(user.password_hash, "first-pw") and user.emails == ["root@example.org"]


def test_the_password_never_appears_in_what_the_command_prints(admin_cli):
    for stdin in (b"Hunter2-Secret\n", b"Hunter2 Secret\n"):
        code, out, err = admin_cli("user", "add", "carol", "carol@example.org", stdin=stdin)
        assert "Hunter2" not in out + err


def test_user_list_shows_state_admin_addresses_and_date_in_aligned_columns(admin_cli, tmp_path):
    admin_cli("user", "add", "root", "root@example.org", "ops@example.org", stdin=b"rootpw\n")
    server = Server(tmp_path, database={"url": admin_cli.url})  # trust_from: the sender's address counts
    server.send("bob@example.org", "signup bob bobpw1 bob@example.org bob@work.example")
    admin_cli("user", "disable", "bob")
    code, out, err = admin_cli("user", "list")
    assert (code, err) == (0, "")
    day = user_row(admin_cli.url, "root").created_at.strftime("%Y-%m-%d")
    bob_day = user_row(admin_cli.url, "bob").created_at.strftime("%Y-%m-%d")
    pad = " " * len("bob     closed  no     2026-11-01  ")
    assert out == (
        "USERID  STATE   ADMIN  CREATED     ADDRESSES\n"
        f"bob     closed  no     {bob_day}  bob@example.org (confirmed)\n"
        f"{pad}bob@work.example (pending)\n"
        f"root    open    yes    {day}  root@example.org (confirmed)\n"
        f"{pad}ops@example.org (confirmed)\n"
        "2 users.\n")


def test_user_disable_and_enable_close_and_open_an_account_and_say_when_nothing_changed(admin_cli):
    admin_cli("user", "add", "dave", "dave@example.org", stdin=b"davepw\n")
    assert admin_cli("user", "disable", "dave") == (0, "The account dave is closed.\n", "")
    assert user_row(admin_cli.url, "dave").disabled
    assert admin_cli("user", "disable", "DAVE") == (0, "The account dave is closed already; nothing was changed.\n", "")
    assert admin_cli("user", "enable", "dave") == (0, "The account dave is open.\n", "")
    assert not user_row(admin_cli.url, "dave").disabled
    assert admin_cli("user", "enable", "nobody") == (2, "", "pbmserv user enable: There is no user nobody.\n")


def test_user_password_sets_a_new_password_and_cancels_a_mailed_reset_token(admin_cli, tmp_path):
    server = Server(tmp_path, database={"url": admin_cli.url})
    server.send("erin@example.org", "signup erin old-pw")
    server.send("erin@example.org", "forgot erin")
    assert user_row(admin_cli.url, "erin").reset_token_hash is not None
    assert admin_cli("user", "password", "erin", stdin=b"new-pw!\n") == (0, "The password of erin is changed.\n", "")
    user = user_row(admin_cli.url, "erin")
    assert verify_password(user.password_hash, "new-pw!") and not verify_password(user.password_hash, "old-pw")
    assert user.reset_token_hash is None and user.reset_expires is None
    code, _out, err = admin_cli("user", "password", "erin", stdin=b"no\n")
    assert code == 2 and err == "pbmserv user password: A password must have 4 to 64 characters (no spaces).\n"
    assert verify_password(user_row(admin_cli.url, "erin").password_hash, "new-pw!")


def test_user_password_is_never_an_argument(admin_cli):
    admin_cli("user", "add", "frank", "frank@example.org", stdin=b"frankpw\n")
    code, out, err = admin_cli("user", "password", "frank", "new-password")
    assert (code, out) == (2, "") and "new-password" not in err
    assert err == ("pbmserv user password: too many arguments; give only the USERID "
                   "(a password is read from standard input)\n")
    assert verify_password(user_row(admin_cli.url, "frank").password_hash, "frankpw")


def test_shown_url_hides_the_database_password():
    assert shown_url("postgresql+psycopg://pbm:s3cr%40t@db.example/pbm") == "postgresql+psycopg://pbm:***@db.example/pbm"
    assert shown_url("sqlite:///var/pbmserv.db") == "sqlite:///var/pbmserv.db"
    assert "s3cret" not in shown_url("postgresql://user:s3cret@")


def test_migrate_prints_the_database_url_without_its_password(monkeypatch, capsys):
    printed = []
    monkeypatch.setattr("pbmserv.cli.open_database", lambda url, *rest: printed.append(url))
    monkeypatch.setenv("PBMSERV_DATABASE_URL", "postgresql+psycopg://pbm:hunter2@db.example/pbm")
    assert main(["migrate"]) == 0
    out = capsys.readouterr().out
    assert out == "Database postgresql+psycopg://pbm:***@db.example/pbm is up to date.\n"
    assert printed == ["postgresql+psycopg://pbm:hunter2@db.example/pbm"]


QUARANTINE = ("set aside: processing was started 3 times without finishing (the process "
              "died each time)")


def set_aside(server: Server, raw: bytes, envelope_from: str) -> int:
    """A mail as the worker leaves it after it was started three times (the worker's
    own test shows it getting there)."""
    inbound_id, _ = enqueue(server.sessions, raw, server.clock, envelope_from)
    with server.sessions.begin() as session:
        row = session.get(Inbound, inbound_id)
        row.status, row.attempts = "failed", 3
        row.error = f"Traceback (most recent call last):\n  ...\n{QUARANTINE}\n"
    return inbound_id


def test_queue_list_shows_mail_set_aside_with_its_reason_on_one_line_within_78_columns(admin_cli, tmp_path):
    server = Server(tmp_path, database={"url": admin_cli.url})
    hostile = b"From: \x1b[2Jmallory@example.org\nMessage-ID: <" + b"x" * 300 + b"@example.org>\n\nhi\n"
    inbound_id = set_aside(server, hostile, "mallory@example.org\x1b[2J")
    code, out, err = admin_cli("queue", "list")
    assert (code, err) == (0, "")
    lines = out.split("\n")
    assert lines[0].startswith(f"in:{inbound_id}  from mallory@example.org\\x1b[2J  <xxx")
    assert lines[1] == "  " + QUARANTINE[:73] + "..."
    assert lines[2:] == ["1 failed mails.", ""]
    assert all(len(line) <= 78 and "\x1b" not in line for line in lines)


def test_queue_retry_gives_a_mail_set_aside_three_more_tries(admin_cli, tmp_path):
    server = Server(tmp_path, database={"url": admin_cli.url})
    inbound_id = set_aside(server, b"From: a@example.org\nSubject: list\n\n", "a@example.org")
    assert admin_cli("queue", "retry", f"in:{inbound_id}") == (0, f"in:{inbound_id} queued again\n", "")
    with server.sessions() as session:
        row = session.get(Inbound, inbound_id)
        assert row.status == "queued"
        assert row.attempts == 0, "queue retry must give a mail set aside three more tries"
