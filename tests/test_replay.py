"""`pbmserv replay` and `migrate` end to end: whole games by mail, repeatable replies,
duplicates, loop rules, and clear failures."""

from __future__ import annotations

import io

import mailbox
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select
from sqlalchemy.orm import Session

from pbmserv.cli import main
from pbmserv.store.models import GameRecord
from conftest import maildir_messages, plain
from mailgen import game_mails, mail, write_mbox
from pbmserv.games import get_game

ROOT = Path(__file__).parent.parent


def replies(outbox: Path) -> list[tuple[str, str, str]]:
    """(To, Subject, body) of every reply, in the order the server wrote them."""
    return [(m["To"], m["Subject"], plain(m)) for m in maildir_messages(outbox)]


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("PBMSERV_SERVER_SEED", "PBMSERV_DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PBMSERV_SECURITY_PASSWORD_COST", "fast")  # for --db; replay's own db is fast anyway


@pytest.mark.parametrize("game, params", [("superwari", ""), ("wari", ""), ("superwari", "-pits=5 -stones=2"),
                                          ("survival", ""), ("serpent", "-size=4")])
@pytest.mark.parametrize("seed", [1, 2])
def test_a_whole_game_by_mail(tmp_path, capsys, game, params, seed):
    mails = game_mails(game, seed=seed, params=params)
    box = write_mbox(tmp_path / "game.mbox", mails)
    assert main(["replay", str(box), "--outbox", "out"]) == 0
    out = capsys.readouterr().out
    count = len(mailbox.mbox(str(box)))
    assert f"Replayed {count} mails: {count} answered, 0 ignored (loop rules), 0 duplicates, 0 failed." in out
    sent = replies(tmp_path / "out")
    assert "replies written to out/new/" in out and f"{len(sent)} replies" in out
    assert not [subject for _to, subject, _body in sent if "rror" in subject]
    over = f"{get_game(game).title} Board 101"  # a board that is over names no player to move
    final = [(subject, body) for _to, subject, body in sent if subject in (over, over + " **")]
    # the last move to both players, then the `show`; mailgen's reply-style moves say
    # "Your turn.", a real comment, so their board mails are marked
    last_move = mails[-2]
    marked = " **" if "Your turn." in plain(last_move) else ""
    assert [subject for subject, _body in final] == [over + marked, over + marked, over]
    assert re.search(r"^(Game won by (alice|bob)\.|Game was a tie\.)$", final[-1][1], re.MULTILINE)


def test_replaying_the_same_mailbox_twice_gives_identical_replies(tmp_path):
    box = write_mbox(tmp_path / "game.mbox", game_mails("superwari", seed=3))
    assert main(["replay", str(box), "--outbox", "first"]) == 0
    assert main(["replay", str(box), "--outbox", "second"]) == 0
    first, second = replies(tmp_path / "first"), replies(tmp_path / "second")
    assert len(first) > 20 and first == second


def test_a_replay_tunes_the_cycle_collector_once(tmp_path):
    """In a fresh interpreter: replay freezes what it has loaded out of the collector's
    passes and collects the youngest generation less often (`settle_collector`); a
    second call changes nothing."""
    box = write_mbox(tmp_path / "game.mbox", game_mails("superwari", seed=3))
    script = (
        "import gc, sys\n"
        "from pbmserv.cli import YOUNGEST_COLLECTED_AT, main, settle_collector\n"
        "before = gc.get_threshold()[0]\n"
        "assert main(['replay', sys.argv[1], '--outbox', sys.argv[2]]) == 0\n"
        "frozen = gc.get_freeze_count()\n"
        "made_since = [[i] for i in range(1000)]\n"
        "settle_collector()\n"
        "print(before, gc.get_threshold()[0] == YOUNGEST_COLLECTED_AT, frozen > 10_000,"
        " gc.get_freeze_count() == frozen)\n")
    done = subprocess.run([sys.executable, "-c", script, str(box), str(tmp_path / "outbox")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-4:] == ["700", "True", "True", "True"]


def test_maildir_and_mbox_are_merged_in_date_order(tmp_path, capsys):
    mails = game_mails("wari", seed=4)
    write_mbox(tmp_path / "odd.mbox", mails[1::2])
    folder = mailbox.Maildir(str(tmp_path / "even"), create=True)
    for message in mails[0::2]:
        folder.add(message)
    assert main(["replay", str(tmp_path / "odd.mbox"), str(tmp_path / "even"), "--outbox", "out"]) == 0
    assert f"{len(mails)} answered" in capsys.readouterr().out
    assert re.search(r"^(Game won by|Game was a tie)", replies(tmp_path / "out")[-1][2], re.MULTILINE)


def test_duplicates_and_auto_replies_are_not_answered(tmp_path, capsys):
    signup = mail("alice@example.org", "signup alice alice-secret", "", game_mails()[0]["Date"].datetime, 1)
    vacation = mail("bob@example.org", "Out of office: signup bob x", "I am away.",
                    game_mails()[1]["Date"].datetime, 2, Auto_Submitted="auto-replied")
    box = write_mbox(tmp_path / "mixed.mbox", [signup, signup, vacation])
    assert main(["replay", str(box), "--outbox", "out"]) == 0
    assert ("Replayed 3 mails: 1 answered, 1 ignored (loop rules), 1 duplicates, 0 failed."
            in capsys.readouterr().out)
    assert [(to, subject) for to, subject, _ in replies(tmp_path / "out")] == [
        ("alice@example.org", "pbmserv signup")]


def test_db_option_keeps_the_database(tmp_path, serve_url):
    box = write_mbox(tmp_path / "game.mbox", game_mails("wari", seed=5))
    url = serve_url
    assert main(["replay", str(box), "--db", url, "--outbox", "out"]) == 0
    with Session(create_engine(url)) as session:
        record = session.scalar(select(GameRecord))
        assert (record.game_type, record.board, record.status) == ("wari", 101, "finished")


def test_the_bundled_example_plays_a_whole_game(tmp_path):
    assert main(["replay", str(ROOT / "examples" / "superwari-game.mbox"), "--outbox", "out"]) == 0
    assert re.search(r"^Game won by (alice|bob)\.$|^Game was a tie\.$", replies(tmp_path / "out")[-1][2],
                     re.MULTILINE)


@pytest.mark.parametrize("argv, code, message", [
    (["replay"], 2, "pbmserv replay: the following arguments are required: mailbox (see pbmserv replay --help)"),
    (["replay", "absent.mbox"], 1, "pbmserv: absent.mbox: no such file or directory"),
    (["nosuch"], 2, "pbmserv: argument COMMAND: invalid choice: 'nosuch'"),
    (["replay", "--db", "nonsense", "x.mbox"], 1, "pbmserv: "),
])
def test_bad_arguments_give_one_line_and_a_non_zero_exit(tmp_path, capsys, argv, code, message):
    (tmp_path / "x.mbox").write_text("")
    assert main(argv) == code
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_an_unreachable_database_is_one_clear_line(tmp_path, capsys):
    (tmp_path / "blocker").write_text("a file where a folder should be")
    box = write_mbox(tmp_path / "game.mbox", game_mails()[:1])
    assert main(["replay", str(box), "--db", f"sqlite:///{tmp_path / 'blocker' / 'x.db'}"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("pbmserv: ") and err.count("\n") == 1


def test_migrate_and_module_entry_point(tmp_path):
    env = {"PBMSERV_DATABASE_URL": f"sqlite:///{tmp_path / 'm.db'}", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "pbmserv", "migrate"], capture_output=True, text=True,
                          env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"Database sqlite:///{tmp_path / 'm.db'} is up to date.\n"
    helped = subprocess.run([sys.executable, "-m", "pbmserv", "replay", "--help"], capture_output=True,
                            text=True, cwd=ROOT)
    assert helped.returncode == 0 and "--outbox DIR" in helped.stdout


@pytest.mark.parametrize("players", [3, 7])
def test_survive_played_to_the_end_by_its_deadlines_in_replay(tmp_path, capsys, players):
    """Sign-ups, a challenge, and one mail 60 days later: every phase deadline and
    response window in between fires in order at its own time, and the game ends."""
    start = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)
    names = [f"p{number}" for number in range(players)]
    mails = [mail(f"{name}@example.org", f"signup {name} {name}-secret", "", start, number)
             for number, name in enumerate(names, start=1)]
    mails.append(mail("p0@example.org", f"survive challenge p0 p0-secret {' '.join(names[1:])} -deadline=1d",
                      "", start + timedelta(minutes=5), 90))
    mails.append(mail("p1@example.org", "survive show 101", "", start + timedelta(days=60), 91))
    assert main(["replay", str(write_mbox(tmp_path / "survive.mbox", mails)), "--outbox", "out"]) == 0
    sent = replies(tmp_path / "out")
    deadlines = [body for _to, _subject, body in sent if "Deadline passed: " in body]
    assert len(deadlines) >= 2 * players  # each deadline's board goes to every player
    final = sent[-1][2]
    assert sent[-1][1] == "Survive Board 101"
    assert re.search(r"^(Game won by p\d\.|Game over: nobody won\.)$", final, re.MULTILINE)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_long_replay_shows_its_progress_on_a_terminal(monkeypatch):
    from pbmserv import cli
    ticks = iter(range(0, 10_000))
    monkeypatch.setattr(cli.time, "monotonic", lambda: next(ticks) * 0.3)
    screen = Terminal()
    progress = cli.Progress(600, screen)
    for _ in range(4):  # 0.3 s apart: shown at most every half second
        progress.step()
    progress.done()
    assert screen.getvalue().split("\r")[1:3] == ["Replayed 2 of 600 mails (3/s) ", "Replayed 4 of 600 mails (3/s) "]
    assert screen.getvalue().endswith("\r" + " " * 60 + "\r")
    quiet = io.StringIO()  # not a terminal: a log or a pipe gets nothing
    progress = cli.Progress(600, quiet)
    progress.step()
    assert quiet.getvalue() == ""
