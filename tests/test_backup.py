"""docs/deployment.md, backups: each backup command the guide gives (SQLite's online
backup; pg_dump and pg_restore), run while `serve` runs, makes a database that is a
working server: the game goes on from it exactly where the backup left it."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from sqlalchemy import make_url

from conftest import POSTGRESQL, Databases, deployment_block
from mailgen import game_mails
from test_smtp import RunningServer


def game_to_move_2(tmp_path, url: str, backup) -> list:
    """A Wari game to its move #2 through a `serve` on `url`; `backup()` while it runs;
    then move #3, after the backup. The replies to move #3."""
    mails = game_mails("wari", seed=7)  # two sign-ups, the challenge, then moves guarded by #N
    live = RunningServer(tmp_path / "live", url=url)
    try:
        for message in mails[:5]:
            live.send(message)
        live.replies(8)
        backup()
        live.send(mails[5])
        return live.replies(10)[8:]
    finally:
        live.stop()


def goes_on(tmp_path, url: str, after_backup: list) -> None:
    """Move #3 sent to a server on the restored database is played as it was on the live
    one, which it is only if the copy holds moves #1 and #2 (the #N guard)."""
    restored = RunningServer(tmp_path / "restored", url=url)
    try:
        restored.send(game_mails("wari", seed=7)[5])
        replies = restored.replies(2)
    finally:
        restored.stop()
    assert [(r["To"], r["Subject"]) for r in replies] == [(r["To"], r["Subject"]) for r in after_backup]
    assert [r["Subject"] for r in replies] == ["Wari Board 101 bob", "Wari Board 101 bob"]


def run(command: str) -> None:
    done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("tool, marker", [("sqlite3", ".backup '"), ("python3", ".backup(sqlite3.connect(")])
def test_a_sqlite_backup_taken_while_serve_runs_is_a_working_server(tmp_path, tool, marker):
    if shutil.which(tool) is None:
        pytest.skip(f"no {tool} on this machine")
    backup = tmp_path / "backup.db"
    command = deployment_block(marker, **{"/srv/pbmserv/var/pbmserv.db": str(tmp_path / "live" / "serve.db"),
                                          "/backup/pbmserv-$(date +%F).db": str(backup)})
    after_backup = game_to_move_2(tmp_path, f"sqlite:///{tmp_path / 'live' / 'serve.db'}", lambda: run(command))
    goes_on(tmp_path, f"sqlite:///{backup}", after_backup)


@pytest.mark.skipif(not POSTGRESQL, reason="no PostgreSQL: set TEST_DATABASE_URL to run this test")
def test_a_pg_dump_taken_while_serve_runs_restores_to_a_working_server(tmp_path):
    if shutil.which("pg_dump") is None or shutil.which("pg_restore") is None:
        pytest.skip("no pg_dump or pg_restore on this machine")
    databases = Databases("postgresql")
    try:
        live, restored = databases.new(), databases.new(empty=True)
        libpq = {name: make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
                 for name, url in (("live", live), ("restored", restored))}
        dump = deployment_block("pg_dump ", **{
            "postgresql://pbmserv:SECRET@db.example.org/pbmserv": libpq["live"],
            "/backup/pbmserv-$(date +%F).dump": str(tmp_path / "pbmserv.dump")})
        restore = deployment_block("pg_restore ", **{
            "postgresql://pbmserv:SECRET@db.example.org/pbmserv_restored": libpq["restored"],
            "/backup/pbmserv-2026-11-29.dump": str(tmp_path / "pbmserv.dump")})
        after_backup = game_to_move_2(tmp_path, live, lambda: run(dump))
        run(restore)
        goes_on(tmp_path, restored, after_backup)
    finally:
        databases.drop_all()
