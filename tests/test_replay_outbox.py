"""`pbmserv replay` into an outbox that holds an earlier run's replies: a tester must
never read stale results as this run's."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbmserv.cli import main
from conftest import maildir_messages
from mailgen import game_mails, mail, write_mbox


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("PBMSERV_SERVER_SEED", "PBMSERV_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)


def signups(path: Path, *names: str) -> Path:
    date = game_mails()[0]["Date"].datetime
    return write_mbox(path, [mail(f"{name}@example.org", f"signup {name} {name}-secret", "", date, number)
                             for number, name in enumerate(names, start=1)])


def files(outbox: Path) -> list[str]:
    return sorted(str(path.relative_to(outbox)) for path in outbox.rglob("*") if path.is_file())


def test_a_second_run_into_a_used_outbox_is_refused_and_changes_nothing(tmp_path, capsys):
    """Without --overwrite the earlier replies would be reported as this run's."""
    assert main(["replay", str(signups(tmp_path / "a.mbox", "alice", "bob")), "--outbox", "out"]) == 0
    before = files(tmp_path / "out")
    capsys.readouterr()
    assert main(["replay", str(signups(tmp_path / "b.mbox", "carol")), "--outbox", "out"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("pbmserv replay: the outbox out holds 2 files of an earlier run; add --overwrite "
                            "to empty it first, or name an empty folder with --outbox\n")
    assert files(tmp_path / "out") == before


def test_overwrite_empties_the_maildir_and_counts_only_this_run(tmp_path, capsys):
    assert main(["replay", str(signups(tmp_path / "a.mbox", "alice", "bob")), "--outbox", "out"]) == 0
    (tmp_path / "out" / "cur" / "read:2,S").write_text("a reply the tester had read")
    (tmp_path / "out" / "tmp" / "half").write_text("")
    capsys.readouterr()
    assert main(["replay", str(signups(tmp_path / "b.mbox", "carol")), "--outbox", "out", "--overwrite"]) == 0
    assert "1 replies written to out/new/" in capsys.readouterr().out
    assert [m["To"] for m in maildir_messages(tmp_path / "out")] == ["carol@example.org"]
    assert [name.split("/")[0] for name in files(tmp_path / "out")] == ["new"]


@pytest.mark.parametrize("other", ["notes.txt", "new/sub/file", "archive/old"])
def test_overwrite_never_deletes_what_is_not_a_maildir_file(tmp_path, capsys, other):
    """The folder named may be the wrong one: nothing but Maildir files is removed."""
    assert main(["replay", str(signups(tmp_path / "a.mbox", "alice")), "--outbox", "out"]) == 0
    (tmp_path / "out" / other).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "out" / other).write_text("keep me")
    before = files(tmp_path / "out")
    capsys.readouterr()
    assert main(["replay", str(signups(tmp_path / "b.mbox", "bob")), "--outbox", "out", "--overwrite"]) == 2
    shown = other.split("/")[0] if other != "new/sub/file" else "new/sub"
    assert capsys.readouterr().err == (f"pbmserv replay: the outbox out holds {shown}, which is not a file of a "
                                       f"Maildir; name an empty folder with --outbox\n")
    assert files(tmp_path / "out") == before


def test_an_outbox_that_is_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "out").write_text("")
    assert main(["replay", str(signups(tmp_path / "a.mbox", "alice")), "--outbox", "out"]) == 2
    assert capsys.readouterr().err == ("pbmserv replay: the outbox out is not a folder; "
                                       "name a folder with --outbox\n")


def test_an_empty_maildir_is_used_without_asking(tmp_path, capsys):
    for part in ("new", "cur", "tmp"):
        (tmp_path / "out" / part).mkdir(parents=True)
    assert main(["replay", str(signups(tmp_path / "a.mbox", "alice")), "--outbox", "out"]) == 0
    assert "1 replies written to out/new/" in capsys.readouterr().out


def test_the_default_outbox_is_emptied_at_each_run(tmp_path, capsys):
    """The README's example runs replay twice into var/replay-outbox: no flag needed."""
    assert main(["replay", str(signups(tmp_path / "a.mbox", "alice", "bob"))]) == 0
    capsys.readouterr()
    assert main(["replay", str(signups(tmp_path / "b.mbox", "carol"))]) == 0
    assert "1 replies written to var/replay-outbox/new/" in capsys.readouterr().out
    assert [m["To"] for m in maildir_messages(tmp_path / "var" / "replay-outbox")] == ["carol@example.org"]


def test_the_same_mailbox_twice_with_overwrite_reports_every_reply(tmp_path, capsys):
    """Replies are named by Message-ID: a rerun writes the same names, and must say so."""
    box = signups(tmp_path / "a.mbox", "alice", "bob")
    assert main(["replay", str(box), "--outbox", "out"]) == 0
    first = capsys.readouterr().out
    assert main(["replay", str(box), "--outbox", "out", "--overwrite"]) == 0
    assert "2 replies written to out/new/" in first and "2 replies written to out/new/" in capsys.readouterr().out
