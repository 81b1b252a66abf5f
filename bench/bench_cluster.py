"""Several `pbmserv serve` processes on one PostgreSQL database (issue 11): the same
end-to-end load as bench_smtp.py's 8 connections, spread over 1, 2 and 3 processes on
PostgreSQL, against one process on SQLite measured in the same run.

    TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:5433/postgres \\
        .venv/bin/python bench/run.py cluster
    .venv/bin/python bench/run.py --quick cluster

Legal Super-Wari moves go over SMTP from 8 concurrent connections, given to the
processes' ports round-robin; a move is done when both players' board mails are in the
Maildir all the processes write to. Each case has a database of its own (a SQLite
file; a PostgreSQL database created for it and dropped after). Its boards are set up
(sign-ups, challenges) and one move a board is played through every port (a warm-up)
before the clock starts. The first process runs alone during the set-up, so that it
migrates the new database and numbers the boards in order; the others start after it.
The full run measures each case twice, in the order A B C D D C B A, and keeps the
faster of the two: the machine is shared. Without TEST_DATABASE_URL only the SQLite
case runs.

Every process takes mail from the one queue, whichever port it came in by. Each
connection owns its boards and sends one move of each in turn, so a board's next move
comes several mails after its last one, and the workers, which take mail in arrival
order, have played the one before they reach the other. (Were two moves of a board
taken at once, the second would get an error reply: any error reply fails the run.)
CPU seconds of the serve processes, of the case's PostgreSQL backends, of this process
(the clients) and of the whole machine over the timed phase are read from /proc, to
show where the time goes and how much other work ran beside.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import common
from common import TICK, Result, cpu_seconds

from bench_smtp import (CONNECTIONS, Board, count_new, error_subjects, interleave, send_all, send_parallel,
                        start_serve, stop_process, wait_count, wait_listening)

POSTGRESQL = os.environ.get("TEST_DATABASE_URL", "")  # e.g. postgresql+psycopg://postgres@127.0.0.1:5433/postgres
CASES = [("sqlite", 1), ("postgresql", 1), ("postgresql", 2), ("postgresql", 3)]
TITLES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}


# --- PostgreSQL databases (as tests/conftest.py's Databases makes them) -----------------

def admin_engine():
    from sqlalchemy import create_engine
    return create_engine(POSTGRESQL, isolation_level="AUTOCOMMIT")


def create_database(tag: str) -> tuple[str, str]:
    """A new, empty database on the TEST_DATABASE_URL server: (its name, its URL)."""
    from sqlalchemy import make_url, text
    name = f"pbmserv_bench_{os.getpid()}_{tag}_{os.urandom(3).hex()}"
    admin = admin_engine()
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return name, make_url(POSTGRESQL).set(database=name).render_as_string(hide_password=False)


def drop_database(name: str) -> None:
    from sqlalchemy import text
    admin = admin_engine()
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def postgresql_setting(name: str) -> str:
    from sqlalchemy import text
    admin = admin_engine()
    with admin.connect() as connection:
        value = connection.execute(text(f"SHOW {name}")).scalar()
    admin.dispose()
    return value


def backend_pids(database: str) -> list[int]:
    """The server processes of the connections to `database` (one a pooled connection)."""
    from sqlalchemy import text
    admin = admin_engine()
    with admin.connect() as connection:
        pids = list(connection.execute(text("SELECT pid FROM pg_stat_activity WHERE datname = :name"),
                                       {"name": database}).scalars())
    admin.dispose()
    return pids


# --- CPU time from /proc -----------------------------------------------------------------

def machine_seconds() -> tuple[float, float]:
    """CPU seconds of the whole machine so far, all cores: (busy, total); zeros if
    /proc/stat cannot be read."""
    try:
        ticks = [int(field) for field in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except (OSError, ValueError, IndexError):
        return 0.0, 0.0
    idle = ticks[3] + ticks[4]  # idle, iowait
    return (sum(ticks) - idle) / TICK, sum(ticks) / TICK


class CpuMeter:
    """CPU seconds spent between `start()` and `stop()` by the serve processes, by the
    PostgreSQL backends of one database, by this process, and by the whole machine
    (`busy` of `available`: all cores; what is not ours is other work beside the run)."""

    def __init__(self, serve_pids: list[int], database: str | None):
        self.serve_pids, self.database = serve_pids, database

    def _postgres(self) -> dict[int, float]:
        return {pid: cpu_seconds(pid) for pid in backend_pids(self.database)} if self.database else {}

    def start(self) -> None:
        self.serve0 = sum(cpu_seconds(pid) for pid in self.serve_pids)
        self.postgres0 = self._postgres()
        self.client0 = time.process_time()
        self.machine0 = machine_seconds()

    def stop(self) -> None:
        self.client = time.process_time() - self.client0
        busy, available = machine_seconds()
        self.busy, self.available = busy - self.machine0[0], available - self.machine0[1]
        self.serve = sum(cpu_seconds(pid) for pid in self.serve_pids) - self.serve0
        self.postgres = sum(seconds - self.postgres0.get(pid, 0.0) for pid, seconds in self._postgres().items())


# --- one case ----------------------------------------------------------------------------

@dataclass
class Measured:
    moves: int
    played: int
    errors: int
    seconds: float  # from the first mail to the last board mail in the Maildir
    accepted: float  # from the first mail to the last 250
    cpu: CpuMeter

    @property
    def moves_per_second(self) -> float:
        return self.moves / self.seconds


def send_spread(ports: list[int], streams: list[list[tuple[str, bytes]]]) -> tuple[float, float]:
    """Stream i over a connection to ports[i % len(ports)]: one `send_parallel` a port,
    all at once; the earliest start and the last 250 of them all."""
    groups = [(port, streams[i::len(ports)]) for i, port in enumerate(ports)]
    times: list[tuple[float, float]] = []
    errors: list[BaseException] = []

    def work(port, group):
        try:
            times.append(send_parallel(port, group))
        except BaseException as error:  # noqa: BLE001 - re-raised below
            errors.append(error)

    threads = [threading.Thread(target=work, args=group) for group in groups if group[1]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return min(start for start, _ in times), max(end for _, end in times)


def measure(backend: str, processes: int, per_connection: int, warm: int, timed: int) -> Measured:
    boards = [Board(index, warm + timed) for index in range(CONNECTIONS * per_connection)]
    owned = [boards[c * per_connection:(c + 1) * per_connection] for c in range(CONNECTIONS)]
    warm_streams = [interleave([board.take(warm) for board in mine]) for mine in owned]
    timed_streams = [interleave([board.take(timed) for board in mine]) for mine in owned]
    n = len(boards) * timed
    timeout = 60 + n * 1.0

    database = url = None
    if backend == "postgresql":
        database, url = create_database(f"x{processes}")
    try:
        scratch = common.scratch("bench-cluster-")  # a new one for each case, removed at the end
        maildir = scratch / "outbox"
        started: list[tuple] = []  # (process, port), stopped before the folder goes

        def start(index: int) -> tuple:
            folder = scratch / f"serve{index}"
            folder.mkdir()
            proc, port, _maildir, log = start_serve(folder, url=url, maildir=maildir)
            started.append((proc, port))
            wait_listening(proc, port, f"pbmserv serve #{index + 1}", log)
            return proc, port, log

        try:
            first, first_port, first_log = start(0)  # alone: it migrates and numbers the boards
            send_all(first_port, [mail for board in boards for mail in board.setup_mails()])
            expected = 4 * len(boards)  # 2 sign-up replies and 2 challenge mails a board
            wait_count(maildir, expected, timeout, first, first_log)
            for index in range(1, processes):
                start(index)
            ports = [port for _proc, port in started]

            send_spread(ports, warm_streams)
            expected += 2 * len(boards) * warm
            wait_count(maildir, expected, timeout, first, first_log)

            cpu = CpuMeter([proc.pid for proc, _port in started], database)
            cpu.start()
            start_time, accepted = send_spread(ports, timed_streams)
            before = expected
            expected += 2 * n
            done = wait_count(maildir, expected, timeout, first, first_log)
            cpu.stop()

            time.sleep(0.2)  # anything beyond the expected replies would be a surprise
            replies = count_new(maildir)
            errors = error_subjects(maildir)
            dead = [index + 1 for index, (proc, _port) in enumerate(started) if proc.poll() is not None]
            if replies != expected or errors or dead:
                raise RuntimeError(f"{backend} x{processes}: {replies} replies where {expected} were expected, "
                                   f"{len(errors)} errors (e.g. {errors[:3]}), serve processes exited: {dead}")
        finally:
            for proc, port in reversed(started):
                stop_process(proc, port)
    finally:
        if database:
            drop_database(database)
    return Measured(n, (replies - before) // 2, len(errors), done - start_time, accepted - start_time, cpu)


# --- the benchmark -----------------------------------------------------------------------

def run(quick: bool) -> list[Result]:
    per_connection = 4 if quick else 6  # boards each connection owns
    warm = 1  # moves a board, untimed
    # Moves a board, timed. Two moves of one board queued at once may be taken by two
    # workers and played out of order (an error reply, which fails the run); a board's
    # moves are far apart in the queue, but the smoke run in the tests takes no chance.
    timed = 1 if quick else 12
    cases = CASES if POSTGRESQL else CASES[:1]
    if not POSTGRESQL:
        print("   (PostgreSQL cases skipped: set TEST_DATABASE_URL to a PostgreSQL server to run them)", flush=True)
    rounds = 1 if quick else 2  # in A B C D D C B A order; the best of each case counts
    fsync = postgresql_setting("fsync") if POSTGRESQL else ""
    runs: dict[tuple[str, int], list[Measured]] = {case: [] for case in cases}
    for round_ in range(rounds):
        for case in cases if round_ % 2 == 0 else cases[::-1]:
            runs[case].append(measure(*case, per_connection, warm, timed))
    measured = {case: max(found, key=lambda m: m.moves_per_second) for case, found in runs.items()}

    baseline = measured[CASES[0]].moves_per_second
    results = []
    for (backend, processes), m in measured.items():
        best = ""
        if rounds > 1:
            each = ", ".join(f"{found.moves_per_second:.1f}" for found in runs[backend, processes])
            best = f"; best of {rounds} runs ({each} moves/s), the figures below are the best's"
        name = (f"cluster: serve x{processes} on {TITLES[backend]}" +
                (" (baseline)" if (backend, processes) == CASES[0] else " vs x1 on SQLite"))
        cpu = f"serve {m.cpu.serve:.1f} s"
        if backend == "postgresql":
            cpu += f", postgres {m.cpu.postgres:.1f} s"
        cpu += f", clients {m.cpu.client:.1f} s"
        if m.cpu.available:
            others = max(0.0, m.cpu.busy - m.cpu.serve - m.cpu.postgres - m.cpu.client)
            cpu += f"; {os.cpu_count()} cores {m.cpu.busy / m.cpu.available:.0%} busy, other work {others:.1f} s"
        note = (f"{m.played}/{m.moves} moves played, {m.errors} error replies, on {CONNECTIONS * per_connection} "
                f"boards over {CONNECTIONS} connections; last 250 at {m.accepted:.1f} s, last board mail at "
                f"{m.seconds:.1f} s{best}; CPU {cpu}"
                + (f"; postgres fsync={fsync}" if backend == "postgresql" else "; SQLite synchronous=FULL"))
        results.append(Result(name, m.moves_per_second, baseline, "moves/s", note=note))
    return results
