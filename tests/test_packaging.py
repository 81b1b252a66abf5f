"""The built package carries its templates and migrations, and works from them alone."""

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_the_wheel_ships_templates_and_migrations_and_runs_without_the_checkout(tmp_path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "-q", "-w", str(tmp_path / "dist"), str(ROOT)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("pbmserv-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for expected in ("pbmserv/templates/board.txt", "pbmserv/templates/games/superwari.txt",
                     "pbmserv/migrations/env.py", "pbmserv/migrations/versions/0001_initial_schema.py"):
        assert expected in names
    zipfile.ZipFile(wheel).extractall(tmp_path / "site")
    mailbox = ROOT / "examples" / "superwari-game.mbox"
    ran = subprocess.run([sys.executable, "-c", "import sys; from pbmserv.cli import main; sys.exit(main())",
                          "replay", str(mailbox), "--outbox", "out"],
                         capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"})
    assert ran.returncode == 0, ran.stderr
    assert "0 failed" in ran.stdout
    probe = subprocess.run([sys.executable, "-c", "from pbmserv.resources import resource_dir; print(resource_dir('templates'))"],
                           capture_output=True, text=True, cwd=tmp_path, env={"PYTHONPATH": str(tmp_path / "site")})
    assert probe.stdout.strip() == str(tmp_path / "site" / "pbmserv" / "templates")
