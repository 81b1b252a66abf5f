"""docs/deployment.md §3, backups: each SQLite backup command the guide gives, run while
`serve` runs, makes a database that is a working server: the game goes on from it
exactly where the backup left it."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import deployment_block
from mailgen import game_mails
from test_smtp import RunningServer


@pytest.mark.parametrize("tool, marker", [("sqlite3", ".backup '"), ("python3", ".backup(sqlite3.connect(")])
def test_a_backup_taken_while_serve_runs_is_a_working_server(tmp_path, tool, marker):
    if shutil.which(tool) is None:
        pytest.skip(f"no {tool} on this machine")
    mails = game_mails("wari", seed=7)  # two sign-ups, the challenge, then moves guarded by #N
    backup = tmp_path / "backup.db"
    live = RunningServer(tmp_path / "live")
    try:
        for message in mails[:5]:  # up to move #2
            live.send(message)
        live.replies(8)
        command = deployment_block(marker, **{
            "/srv/pbmserv/var/pbmserv.db": str(tmp_path / "live" / "serve.db"),
            "/backup/pbmserv-$(date +%F).db": str(backup)})
        done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        live.send(mails[5])  # move #3, after the backup
        after_backup = live.replies(10)[8:]
    finally:
        live.stop()
    restored = RunningServer(tmp_path / "restored", url=f"sqlite:///{backup}")
    try:
        restored.send(mails[5])  # accepted as move #3 only if the backup holds moves #1 and #2
        replies = restored.replies(2)
    finally:
        restored.stop()
    assert [(r["To"], r["Subject"]) for r in replies] == [(r["To"], r["Subject"]) for r in after_backup]
    assert [r["Subject"] for r in replies] == ["Wari Board 101 bob", "Wari Board 101 bob"]
