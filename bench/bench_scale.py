"""Scale: with 100,000 stored games, `show` and `move` answer within 2x of the same with
1,000 games, so does a move on a board of 10,000 logged actions against one on a new
board, and `serve` (its listener and worker processes) stays under 150 MB resident.

    .venv/bin/python bench/run.py scale          # 1,000 and 100,000 games (about 35 s, most of
                                                 # it building the 100,000-game database)
    .venv/bin/python bench/run.py --quick scale  # 100 and 2,000 games: a few seconds

The databases. Two SQLite files (in /dev/shm where there is one, so that the disk's
syncs do not drown what is measured) hold N1 = 1,000 and N2 = 100,000 Super-Wari boards
(quick: 100 and 2,000), numbered from 101. They are built fast, not by mail: two users
sign up by mail through the real worker, `pbmserv.play.start_game` makes two template
boards between them (one at its start, one played to its end by seeded random moves
through `record_action`, so its whole move log is stored), and then plain SQLite bulk
inserts copy the templates' stored rows (users, addresses, games, seats, moves) with new
ids, board numbers, seeds and players. One board in ten is running at its start, the
others are finished with their full move log (82 moves each: the `moves` table holds
7.4 million rows at N2). There are N/50 users, so every user has about a
hundred boards in both databases; every user's password is the same. The mail tables
hold only this benchmark's mail: on a real server they would hold every mail ever
exchanged, but the worker reaches them only through indexed look-ups.

Latency. The same commands go to both databases, alternately, through the real code
path: the mail is stored (`enqueue`), the worker runs (`Worker.run_pending`) and the
replies are handed to a memory transport (`deliver_queued`); that whole time is one
sample. `superwari show BOARD` and then `superwari move BOARD USERID PASSWORD c` (by the
player to move) go to running boards at their start, spread over the whole range of
board numbers, each board moved on once. The value is the median on N2, the baseline
the median on N1, and the goal is a ratio of at most 2. Passwords are hashed at the
"fast" cost ([security] password_cost): at the "standard" cost the Argon2 check alone
(tens of milliseconds, the same in both databases) would dominate every move and hide
what the database size does.

A long history. A board mail must not cost more the longer its board's log: two
running boards of the N1 database play the same seeded game from their start, a move on
each in turn, the same way. One of them was first given a log of 10,000 actions (quick:
1,000) that leaves it at its start: seat 0's first move and the undo taking it back,
again and again (bulk-inserted, but for the last pair, played by `record_action`). The
value is the median move on it, the baseline the median on the new one; goal at most 2x.
Its first move reads the whole log and is not timed; the later ones use the log kept
in memory, where all but the last few rows are taken back, the worst shape for finding
the recent moves' rows.

Memory. `pbmserv serve` runs as a subprocess on the N2 database (configuration in a
TOML file: a free port on 127.0.0.1, replies to a Maildir), is sent a `show` and a
`move` over SMTP, and once their replies are in the Maildir its resident memory is
read from /proc: the proportional set sizes (Pss) of its two processes, the listener
and the worker, summed. The baseline is that of a bare Python process that has
imported `pbmserv.server`, so the ratio says how much the running server adds. Goal:
under 150 MB.
"""

from __future__ import annotations

import email
import email.policy
import email.utils
import os
import random
import shutil
import signal
import smtplib
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from pathlib import Path

import common
from common import Result

from pbmserv.clocks import setting_seconds
from pbmserv.config import Config, load_config
from pbmserv.games import get_game
from pbmserv.mail.outbound import MemoryTransport, deliver_queued
from pbmserv.play import UNDO, current_state, record_action, start_game
from pbmserv.store.db import open_database
from pbmserv.store.models import Inbound
from pbmserv.store.queue import enqueue
from pbmserv.store.repo import find_game, find_user
from pbmserv.worker import Worker

SERVER = "pbmserv@localhost"
PASSWORD = "bench-pw"
SEED = "bench"
GAMES_PER_USER = 50  # users = games / 50: two seats a game, so about 100 boards each
RUNNING_EVERY = 10  # one board in ten is running (at its start); the others are finished
FIRST_BOARD = 101
LATENCY_GOAL = 2.0
RSS_GOAL_MB = 150.0
HOST = "127.0.0.1"
WAIT_SECONDS = 60.0  # bounded waits for the server process: the machine may be busy


def scratch_dir() -> Path:
    """A temporary directory, memory-backed where there is /dev/shm."""
    fast = "/dev/shm" if os.path.isdir("/dev/shm") else None
    return Path(tempfile.mkdtemp(prefix="pbmserv-bench-scale-", dir=fast))


def userid(number: int) -> str:
    return f"u{number:06d}"


def address(number: int) -> str:
    return f"{userid(number)}@example.org"


def make_config(url: str) -> Config:
    return load_config(environ={}).with_overrides(
        database={"url": url}, security={"password_cost": "fast", "trust_from": True},  # a closed set-up
        server={"seed": SEED}, outbound={"transport": "memory"})


def make_mail(sender: str, subject: str, date: datetime, message_id: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = SERVER
    message["Subject"] = subject
    message["Date"] = email.utils.format_datetime(date.replace(tzinfo=timezone.utc))
    message["Message-ID"] = message_id
    message.set_content("")
    return message


class Mailer:
    """One database's server in this process: mails go through `enqueue`, the worker
    and `deliver_queued`, as `pbmserv serve` handles them (minus SMTP)."""

    def __init__(self, path: Path, now: datetime):
        self.path = path
        self.config = make_config(f"sqlite:///{path}")
        self.sessions = open_database(self.config.database.url)
        self.worker = Worker(self.sessions, self.config)
        self.transport = MemoryTransport()
        self.clock = now
        self.count = 0

    def send(self, sender: str, subject: str) -> tuple[float, list[str]]:
        """(seconds from storing the mail to its replies delivered, their subjects)."""
        self.count += 1
        self.clock += timedelta(seconds=30)
        raw = make_mail(sender, subject, self.clock, f"<bench{self.count}@example.org>").as_bytes()
        before = len(self.transport.delivered)
        start = time.perf_counter()
        inbound_id, _new = enqueue(self.sessions, raw, self.clock)
        self.worker.run_pending()
        deliver_queued(self.sessions, self.transport, self.clock)
        seconds = time.perf_counter() - start
        with self.sessions() as session:
            row = session.get(Inbound, inbound_id)
            if row.status != "done":
                raise RuntimeError(f"{subject!r} on {self.path.name}: {row.status}: {row.error}")
        subjects = [email.message_from_bytes(raw, policy=email.policy.default)["Subject"]
                    for _to, raw in self.transport.delivered[before:]]
        return seconds, subjects

    def expect(self, sender: str, subject: str, replies: int) -> float:
        """Send; check that `replies` mails came back and none is an error."""
        seconds, subjects = self.send(sender, subject)
        if len(subjects) != replies or any("error" in s.lower() for s in subjects):
            raise RuntimeError(f"{subject!r} on {self.path.name} was answered with {subjects}")
        return seconds

    def close(self) -> None:
        self.sessions.kw["bind"].dispose()


# --- building a database ------------------------------------------------------------------

def make_templates(mailer: Mailer, now: datetime) -> None:
    """Two users by mail; board 101 at its start and board 102 played to its end."""
    for number in (0, 1):
        mailer.expect(address(number), f"signup {userid(number)} {PASSWORD}", 1)
    game = get_game("superwari")
    config = mailer.config
    params = {p.name: p.default for p in game.params}
    nag, forfeit = setting_seconds(config.games.nag_time), setting_seconds(config.games.forfeit_time)
    rng = random.Random(SEED)
    with mailer.sessions.begin() as session:
        users = [find_user(session, userid(0)), find_user(session, userid(1))]
        start_game(session, config, game, users, params, now, nag, forfeit)  # board 101: running
        record, state = start_game(session, config, game, users, params, now, nag, forfeit)  # 102: finished
        while game.result(state) is None:
            seat = min(game.to_act(state))
            move = rng.choice(game.legal_moves(state, seat))
            state = record_action(session, record, state, seat, "move", move, "", now, None)


def rows(connection: sqlite3.Connection, query: str, *args) -> tuple[list[str], list[tuple]]:
    cursor = connection.execute(query, args)
    return [d[0] for d in cursor.description], cursor.fetchall()


def players(index: int, users: int) -> tuple[int, int]:
    """The users (by number) in seats 0 and 1 of the `index`-th board copied."""
    first = index % users
    second = (first + 1 + (index // users) % (users - 1)) % users
    return first, second


def copy_templates(path: Path, games: int, users: int, chunk: int = 5000) -> None:
    """Bulk-copy the template rows up to `users` users and `games` boards."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA synchronous=OFF")  # this build only: what is measured keeps the server's own
        user_cols, (user_row,) = rows(connection, "SELECT * FROM users WHERE userid_key = ?", userid(0))
        addr_cols, (addr_row,) = rows(connection, "SELECT * FROM addresses WHERE user_id = ?",
                                      user_row[user_cols.index("id")])
        game_cols, templates = rows(connection, "SELECT * FROM games ORDER BY board")
        running, finished = templates  # boards 101 and 102
        seat_cols, _ = rows(connection, "SELECT * FROM seats LIMIT 0")
        assert seat_cols == ["id", "game_id", "seat", "user_id"], seat_cols
        move_cols, log = rows(connection, "SELECT * FROM moves WHERE game_id = ? ORDER BY number",
                              finished[game_cols.index("id")])
        (next_user,), = connection.execute("SELECT max(id) + 1 FROM users").fetchall()
        (next_addr,), = connection.execute("SELECT max(id) + 1 FROM addresses").fetchall()
        (next_game,), = connection.execute("SELECT max(id) + 1 FROM games").fetchall()
        (next_seat,), = connection.execute("SELECT max(id) + 1 FROM seats").fetchall()
        (next_move,), = connection.execute("SELECT max(id) + 1 FROM moves").fetchall()
        user_ids = {n: connection.execute("SELECT id FROM users WHERE userid_key = ?", (userid(n),)).fetchone()[0]
                    for n in (0, 1)}  # the two who signed up by mail

        def insert(table: str, columns: list[str], values) -> None:
            marks = ", ".join("?" * len(columns))
            connection.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", values)

        def user_copy(n: int, new_id: int) -> tuple:
            row = dict(zip(user_cols, user_row), id=new_id, userid=userid(n), userid_key=userid(n))
            return tuple(row[c] for c in user_cols)

        def addr_copy(n: int, new_id: int, user_id: int) -> tuple:
            row = dict(zip(addr_cols, addr_row), id=new_id, user_id=user_id, address=address(n),
                       address_key=address(n))
            return tuple(row[c] for c in addr_cols)

        connection.execute("BEGIN")
        new_users = range(2, users)
        insert("users", user_cols, (user_copy(n, next_user + i) for i, n in enumerate(new_users)))
        insert("addresses", addr_cols,
               (addr_copy(n, next_addr + i, next_user + i) for i, n in enumerate(new_users)))
        user_ids.update({n: next_user + i for i, n in enumerate(new_users)})
        connection.execute("COMMIT")

        move_id, move_game = move_cols.index("id"), move_cols.index("game_id")
        for low in range(FIRST_BOARD + 2, FIRST_BOARD + games, chunk):
            boards = range(low, min(low + chunk, FIRST_BOARD + games))
            game_rows, seat_rows, move_rows = [], [], []
            for board in boards:
                index = board - FIRST_BOARD
                template = running if index % RUNNING_EVERY == 0 else finished
                game_id = next_game + index - 2
                row = dict(zip(game_cols, template), id=game_id, board=board, seed=f"{SEED}:superwari:{board}")
                game_rows.append(tuple(row[c] for c in game_cols))
                for seat, user in enumerate(players(index, users)):
                    seat_rows.append((next_seat, game_id, seat, user_ids[user]))
                    next_seat += 1
                if template is finished:
                    for move in log:
                        copied = list(move)
                        copied[move_id], copied[move_game] = next_move, game_id
                        move_rows.append(tuple(copied))
                        next_move += 1
            connection.execute("BEGIN")
            insert("games", game_cols, game_rows)
            insert("seats", seat_cols, seat_rows)
            insert("moves", move_cols, move_rows)
            connection.execute("COMMIT")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()


def build_database(directory: Path, games: int, now: datetime) -> tuple[Mailer, float, int]:
    """A database of `games` Super-Wari boards, open in a Mailer; (it, seconds to build,
    moves stored)."""
    start = time.perf_counter()
    path = directory / f"games-{games}.db"
    mailer = Mailer(path, now)
    make_templates(mailer, now)
    copy_templates(path, games, max(4, games // GAMES_PER_USER))
    connection = sqlite3.connect(path)
    try:
        (count,), = connection.execute("SELECT count(*) FROM games").fetchall()
        (moves,), = connection.execute("SELECT count(*) FROM moves").fetchall()
    finally:
        connection.close()
    assert count == games, (count, games)
    last = FIRST_BOARD + games - 1  # a copy, shown through the worker: the copied rows make a board
    mailer.expect(address(0), f"superwari show {last}", 1)
    return mailer, time.perf_counter() - start, moves


def sample_boards(mailer: Mailer, games: int, count: int) -> list[tuple[int, str]]:
    """(board, userid of seat 0) of `count` running boards spread over the whole range."""
    running = list(range(FIRST_BOARD, FIRST_BOARD + games, RUNNING_EVERY))
    if len(running) < count:
        raise ValueError(f"{games} games hold only {len(running)} running boards, not {count}")
    picked = [running[(k * len(running)) // count + (len(running) // count) // 2] for k in range(count)]
    connection = sqlite3.connect(mailer.path)
    try:
        return [(board, connection.execute(
            "SELECT u.userid FROM games g JOIN seats s ON s.game_id = g.id AND s.seat = 0 "
            "JOIN users u ON u.id = s.user_id WHERE g.game_type = 'superwari' AND g.board = ?",
            (board,)).fetchone()[0]) for board in picked]
    finally:
        connection.close()


@dataclass
class Latencies:
    show: list[float]
    move: list[float]


def measure_latency(mailers: list[Mailer], boards: list[list[tuple[int, str]]], warmup: int) -> list[Latencies]:
    """Each board is shown, then moved on, on each database in turn (alternating, so
    that the machine's load falls on both alike); the first `warmup` boards are not timed."""
    found = [Latencies([], []) for _ in mailers]
    for k in range(len(boards[0])):
        for mailer, picked, times in zip(mailers, boards, found):
            board, user = picked[k]
            seconds = mailer.expect(f"{user}@example.org", f"superwari show {board}", 1)
            if k >= warmup:
                times.show.append(seconds)
        for mailer, picked, times in zip(mailers, boards, found):
            board, user = picked[k]
            seconds = mailer.expect(f"{user}@example.org", f"superwari move {board} {user} {PASSWORD} c", 2)
            if k >= warmup:
                times.move.append(seconds)
    return found


# --- a long history ----------------------------------------------------------------------


def seat_users(mailer: Mailer, board: int) -> list[str]:
    """The userids of `board`'s seats, in seat order."""
    connection = sqlite3.connect(mailer.path)
    try:
        return [userid for userid, in connection.execute(
            "SELECT u.userid FROM games g JOIN seats s ON s.game_id = g.id JOIN users u ON u.id = s.user_id "
            "WHERE g.game_type = 'superwari' AND g.board = ? ORDER BY s.seat", (board,))]
    finally:
        connection.close()


def lengthen(mailer: Mailer, board: int, actions: int, now: datetime) -> None:
    """Give running `board`, at its start and never played, a log of `actions` (even)
    actions that leaves it at its start: seat 0's first move and the undo that took
    it back, again and again, as two players who keep taking a move back log them.
    All but the last pair are bulk-inserted (each row a copy of a stored one, with its
    number, seat, kind and move); the last pair is played by `record_action`, which
    reads the whole log and writes the board after it, as a move would."""
    game = get_game("superwari")
    first = common.seeded_game(game, 1, 0)[0][1]  # a legal first move of seat 0
    connection = sqlite3.connect(mailer.path, isolation_level=None)
    try:
        columns, (template,) = rows(connection, "SELECT * FROM moves ORDER BY id LIMIT 1")
        (game_id,), = connection.execute("SELECT id FROM games WHERE game_type = 'superwari' AND board = ?",
                                         (board,)).fetchall()
        (next_id,), = connection.execute("SELECT max(id) + 1 FROM moves").fetchall()

        def action(number: int) -> tuple:
            row = dict(zip(columns, template), id=next_id + number, game_id=game_id, number=number, seat=0,
                       kind="move" if number % 2 else UNDO, move=first if number % 2 else str(number - 1))
            return tuple(row[c] for c in columns)
        connection.execute("BEGIN")
        connection.executemany(f"INSERT INTO moves ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                               (action(number) for number in range(1, actions - 1)))
        connection.execute("COMMIT")
    finally:
        connection.close()
    with mailer.sessions.begin() as session:
        record = find_game(session, "superwari", board)
        state = record_action(session, record, current_state(record), 0, "move", first, "", now, None)
        record_action(session, record, state, 0, UNDO, str(actions - 1), "", now, None)


def measure_history(mailer: Mailer, boards: list[int], samples: int, warmup: int) -> list[list[float]]:
    """The seconds of each move of the same game played on each of `boards` (all at
    their start), a move on each in turn; the first `warmup` of each board untimed
    (its first reads its whole log)."""
    players = [seat_users(mailer, board) for board in boards]
    found: list[list[float]] = [[] for _ in boards]
    for k, (seat, move) in enumerate(common.seeded_game(get_game("superwari"), samples + warmup, 0)):
        for board, users, times in zip(boards, players, found):
            user = users[seat]
            seconds = mailer.expect(f"{user}@example.org", f"superwari move {board} {user} {PASSWORD} {move}", 2)
            if k >= warmup:
                times.append(seconds)
    return found


# --- memory of `serve` --------------------------------------------------------------------

def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def rss_mb(pid: int) -> tuple[float, float]:
    """(resident, peak) in MB (2**20 bytes) of a process and its children: `serve`'s
    listener and its worker. Resident is the sum of their proportional set sizes
    (Pss: a page the two share since the fork counts half in each), so what they
    share is counted once; the peak is the sum of each one's VmHWM, an upper bound."""
    resident = peak = 0.0
    for each in common.with_children(pid):
        for line in Path(f"/proc/{each}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                resident += int(line.split()[1]) / 1024  # kB
        for line in Path(f"/proc/{each}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                peak += int(line.split()[1]) / 1024
    return resident, peak


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(WAIT_SECONDS / 2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def bare_import_rss(directory: Path) -> float:
    """Resident MB of a Python process that imported pbmserv.server and sleeps."""
    code = "import pbmserv.server, sys, time; print('ready', flush=True); time.sleep(60)"
    process = subprocess.Popen([sys.executable, "-c", code], cwd=common.ROOT, env=clean_env(),
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
    try:
        if process.stdout.readline().strip() != "ready":
            raise RuntimeError("the bare import process did not start")
        return rss_mb(process.pid)[0]
    finally:
        stop(process)


def clean_env() -> dict[str, str]:
    """The caller's environment without PBMSERV_* settings; the package importable."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("PBMSERV_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(common.ROOT), env.get("PYTHONPATH", "")]))
    return env


def wait_for(condition, what: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if process.poll() is not None:
            raise RuntimeError(f"serve exited with {process.returncode} while waiting for {what}: "
                               f"{log.read_text(errors='replace')[-2000:]}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"serve: no {what} within {WAIT_SECONDS:.0f} s")
        time.sleep(0.05)


def listening(port: int) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=1):
            return True
    except OSError:
        return False


def serve_rss(directory: Path, database: Path, board: int, user: str) -> tuple[float, float, float]:
    """(resident MB, peak MB, seconds from the first mail sent to the last reply) of
    `pbmserv serve` on `database`, after a show and a move on `board`."""
    port = free_port()
    outbox = directory / "outbox"
    config = directory / "serve.toml"
    config.write_text(
        f'[server]\nseed = "{SEED}"\n'
        f'[smtp]\nhost = "{HOST}"\nport = {port}\n'
        f'[database]\nurl = "sqlite:///{database}"\n'
        f'[outbound]\ntransport = "maildir"\nmaildir = "{outbox}"\n'
        f'[security]\npassword_cost = "fast"\n')
    log = directory / "serve.log"
    with open(log, "wb") as output:
        process = subprocess.Popen([sys.executable, "-m", "pbmserv", "serve", "--config", str(config)],
                                   cwd=directory, env=clean_env(), stdin=subprocess.DEVNULL,
                                   stdout=output, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: listening(port), "listening socket", process, log)
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        sender = f"{user}@example.org"
        start = time.perf_counter()
        with smtplib.SMTP(HOST, port, local_hostname="localhost", timeout=30) as client:
            for number, subject in enumerate([f"superwari show {board}",
                                              f"superwari move {board} {user} {PASSWORD} c"]):
                client.send_message(make_mail(sender, subject, now, f"<serve{number}@example.org>"),
                                    to_addrs=[SERVER])

        def replies() -> list[Path]:
            new = outbox / "new"
            return list(new.iterdir()) if new.is_dir() else []

        wait_for(lambda: len(replies()) >= 3, "three replies", process, log)  # the show, two board mails
        seconds = time.perf_counter() - start
        subjects = [email.message_from_bytes(p.read_bytes(), policy=email.policy.default)["Subject"]
                    for p in replies()]
        if any("error" in s.lower() for s in subjects):
            raise RuntimeError(f"serve answered with errors: {subjects}")
        rss, peak = rss_mb(process.pid)
        return rss, peak, seconds
    finally:
        stop(process)


# --- the benchmark --------------------------------------------------------------------------

def run(quick: bool) -> list[Result]:
    small, large = (100, 2000) if quick else (1000, 100_000)
    history = 1000 if quick else 10_000  # actions logged on the long board
    samples, warmup = (5, 1) if quick else (31, 3)
    directory = scratch_dir()
    now = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)  # deadlines a week ahead
    mailers: list[Mailer] = []
    try:
        built = []
        for games in (small, large):
            mailer, seconds, moves = build_database(directory, games, now)
            mailers.append(mailer)
            built.append((seconds, moves))
        boards = [sample_boards(m, games, samples + warmup + 1) for m, games in zip(mailers, (small, large))]
        spare = boards[1].pop()  # a board of the large database left for `serve`
        for picked in boards[:1]:
            picked.pop()
        found = measure_latency(mailers, boards, warmup)
        taken = {board for board, _user in boards[0]}
        long_board, new_board = [board for board in range(FIRST_BOARD + RUNNING_EVERY, FIRST_BOARD + small,
                                                          RUNNING_EVERY) if board not in taken][:2]
        lengthen(mailers[0], long_board, history, now)
        long_times, new_times = measure_history(mailers[0], [long_board, new_board], samples, warmup)
        for mailer in mailers:
            mailer.close()
        mailers = []
        bare = bare_import_rss(directory)
        rss, peak, seconds = serve_rss(directory, directory / f"games-{large}.db", *spare)
    finally:
        for mailer in mailers:
            mailer.close()
        shutil.rmtree(directory, ignore_errors=True)

    where = (f"{large:,} vs {small:,} games ({built[1][1]:,} vs {built[0][1]:,} moves stored; built in "
             f"{built[1][0]:.1f} + {built[0][0]:.1f} s); median of {samples}; password_cost fast")
    results = []
    for command, big, little in (("show", found[1].show, found[0].show), ("move", found[1].move, found[0].move)):
        value, baseline = statistics.median(big), statistics.median(little)
        results.append(Result(f"scale: {command} latency, {large:,} vs {small:,} games", value * 1e3,
                              baseline * 1e3, "ms", goal=f"<= {LATENCY_GOAL:g}x",
                              met=value <= LATENCY_GOAL * baseline, note=where))
    value, baseline = statistics.median(long_times), statistics.median(new_times)
    results.append(Result(f"scale: move latency, a board of {history:,} logged actions vs a new one", value * 1e3,
                          baseline * 1e3, "ms", goal=f"<= {LATENCY_GOAL:g}x", met=value <= LATENCY_GOAL * baseline,
                          note=f"the same game's moves on boards {long_board} and {new_board} of the {small:,} games, "
                               f"in turn; median of {samples}; password_cost fast"))
    results.append(Result(f"scale: serve RSS on {large:,} games", rss, bare, "MB", goal=f"< {RSS_GOAL_MB:g} MB",
                          met=rss < RSS_GOAL_MB,
                          note=f"after a show and a move over SMTP (replies in {seconds:.2f} s); peak {peak:.1f} MB; "
                               "baseline: bare import of pbmserv.server"))
    return results


if __name__ == "__main__":
    common.report(run(quick=False))
