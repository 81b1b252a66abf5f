"""End-to-end throughput of `pbmserv serve`: legal moves sent over SMTP, each counted
done once both players' board mails are in the Maildir outbox, against a bare aiosmtpd
`Sink` (a `Controller` with `aiosmtpd.handlers.Sink`) receiving the same mails the same
way; also the acceptance rate alone (until the last 250), and both again with 8
concurrent connections. Last, one move at a time, as players send them: each sent a
pause after the one before has both its board mails, for the latency a player sees and
the CPU a move costs when nothing waits beside it (no group shares its transaction, no
batch its delivery), against the Sink's 250 to one mail at a time.

    .venv/bin/python bench/run.py smtp
    .venv/bin/python bench/run.py --quick smtp

Both servers run in processes of their own (`python -m pbmserv serve --config ...` and
a small script around `Controller(Sink())`), so the client threads of this process
share no interpreter lock with either. `serve` uses the "fast" password cost: its
sign-ups are not timed, but a move checks a password, and argon2's real cost would
dominate. Moves are computed by playing each board's engine locally, as
tests/mailgen.py does; every connection owns its boards, so concurrent connections
never send conflicting moves.
"""

from __future__ import annotations

import email.utils
import os
import signal
import smtplib
import socket
import subprocess
import sys
import threading
import time
from statistics import median
from datetime import datetime, timezone
from email.message import EmailMessage
from email.parser import BytesHeaderParser
from email import policy
from pathlib import Path

import common
from common import Result, cpu_by_process, cpu_seconds

from pbmserv.games import get_game

HOST = "127.0.0.1"
SERVER = "pbmserv@localhost"
GAME = "superwari"
CONNECTIONS = 8
STARTUP_SECONDS = 30.0
PAUSE_SECONDS = 0.1  # between the moves sent one at a time: more than the sender's gap between passes
ONE_AT_A_TIME = 2  # moves of each board sent one at a time, after the timed phases
SINK_SCRIPT = """
import sys
from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Sink
controller = Controller(Sink(), hostname=sys.argv[1], port=int(sys.argv[2]), server_hostname="localhost")
controller.start()
print("ready", flush=True)
sys.stdin.read()  # until the benchmark closes our stdin
controller.stop()
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def wait_listening(proc: subprocess.Popen, port: int, what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}: {log.read_text() if log else ''}")
        try:
            with socket.create_connection((HOST, port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port} within {STARTUP_SECONDS:.0f} s")


def stop_process(proc: subprocess.Popen, port: int) -> None:
    """SIGTERM (or closed stdin), then kill if need be; then check nothing listens."""
    if proc.poll() is None:
        if proc.stdin is not None:
            proc.stdin.close()
        else:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    try:
        with socket.create_connection((HOST, port), timeout=1):
            raise RuntimeError(f"port {port} is still listening after its server stopped")
    except OSError:
        pass


# --- the mails ---------------------------------------------------------------------------

def command_mail(userid: str, subject: str, message_id: str) -> bytes:
    message = EmailMessage()
    message["From"] = f"{userid.title()} <{userid}@example.org>"
    message["To"] = SERVER
    message["Subject"] = subject
    message["Date"] = email.utils.format_datetime(datetime.now(timezone.utc))
    message["Message-ID"] = f"<{message_id}@example.org>"
    message.set_content("")
    return message.as_bytes()


class Board:
    """One Super-Wari board: its two players and its game's moves, played locally."""

    def __init__(self, index: int, moves_needed: int):
        self.index = index
        self.number = 101 + index  # challenges go in one by one, in index order
        self.userids = [f"s{index}a", f"s{index}b"]
        self.moves = common.seeded_game(get_game(GAME), moves_needed + 1, index * 1000)
        self.next = 0

    def setup_mails(self) -> list[tuple[str, bytes]]:
        a, b = self.userids
        return [(a, command_mail(a, f"signup {a} {a}-secret", f"s{self.index}-signup-a")),
                (b, command_mail(b, f"signup {b} {b}-secret", f"s{self.index}-signup-b")),
                (a, command_mail(a, f"{GAME} challenge {a} {a}-secret {b}", f"s{self.index}-challenge"))]

    def take(self, count: int) -> list[tuple[str, bytes]]:
        """The next `count` moves of this board as mails."""
        mails = []
        for _ in range(count):
            seat, move = self.moves[self.next]
            self.next += 1
            userid = self.userids[seat]
            mails.append((userid, command_mail(
                userid, f"{GAME} move {self.number} {userid} {userid}-secret {move}", f"s{self.index}-m{self.next}")))
        return mails


def interleave(per_board: list[list[tuple[str, bytes]]]) -> list[tuple[str, bytes]]:
    """Round-robin over the boards: move 1 of every board, then move 2, ..."""
    return [mail for round_ in zip(*per_board) for mail in round_]


# --- the clients -------------------------------------------------------------------------

def send_all(port: int, mails: list[tuple[str, bytes]]) -> tuple[float, float]:
    """Send over one connection; the perf_counter times of the start (the connection
    open and greeted) and of the last 250."""
    with smtplib.SMTP(HOST, port, local_hostname="localhost", timeout=60) as client:
        start = time.perf_counter()
        for userid, raw in mails:
            client.sendmail(f"{userid}@example.org", [SERVER], raw)  # raises unless 250
        return start, time.perf_counter()


def send_parallel(port: int, streams: list[list[tuple[str, bytes]]]) -> tuple[float, float]:
    """One thread and connection per stream, all open before the clock starts; the
    perf_counter times of the start and of the last 250 of them all."""
    ends: list[float] = []
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(streams) + 1)

    def work(mails):
        try:
            with smtplib.SMTP(HOST, port, local_hostname="localhost", timeout=60) as client:
                barrier.wait()
                for userid, raw in mails:
                    client.sendmail(f"{userid}@example.org", [SERVER], raw)
                ends.append(time.perf_counter())
        except BaseException as error:  # noqa: BLE001 - re-raised below
            errors.append(error)
            barrier.abort()

    threads = [threading.Thread(target=work, args=(mails,)) for mails in streams]
    for thread in threads:
        thread.start()
    barrier.wait()  # every connection is open and greeted: start the clock together
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return start, max(ends)


def send_each(port: int, mails: list[tuple[str, bytes]], done=lambda: None) -> list[float]:
    """Send over one connection, each PAUSE_SECONDS after `done()` returned for the one
    before; the seconds from each mail's start to the end of its `done()`."""
    spans = []
    with smtplib.SMTP(HOST, port, local_hostname="localhost", timeout=60) as client:
        for userid, raw in mails:
            time.sleep(PAUSE_SECONDS)
            start = time.perf_counter()
            client.sendmail(f"{userid}@example.org", [SERVER], raw)
            done()
            spans.append(time.perf_counter() - start)
    return spans


def count_new(maildir: Path) -> int:
    try:
        return len(os.listdir(maildir / "new"))
    except FileNotFoundError:
        return 0


def wait_count(maildir: Path, count: int, timeout: float, serve: subprocess.Popen, log: Path) -> float:
    """Poll the Maildir until `count` replies are in new/; the perf_counter time then."""
    deadline = time.monotonic() + timeout
    while True:
        if count_new(maildir) >= count:
            return time.perf_counter()
        if serve.poll() is not None:
            raise RuntimeError(f"pbmserv serve exited with {serve.returncode}: {log.read_text()[-2000:]}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {count_new(maildir)} of {count} replies within {timeout:.0f} s: "
                               f"{log.read_text()[-2000:]}")
        time.sleep(0.005)


def error_subjects(maildir: Path) -> list[str]:
    parser = BytesHeaderParser(policy=policy.default)
    subjects = [str(parser.parsebytes(path.read_bytes())["Subject"]) for path in (maildir / "new").iterdir()]
    return [subject for subject in subjects if "error" in subject.lower()]


# --- the two servers ---------------------------------------------------------------------

def start_serve(scratch: Path, url: str | None = None,
                maildir: Path | None = None) -> tuple[subprocess.Popen, int, Path, Path]:
    """`pbmserv serve` on a free port, its config and log in `scratch`; by default on a
    SQLite file there and writing to scratch/outbox, or on database `url` and writing
    to `maildir` (several processes may share both: bench_cluster.py)."""
    port = free_port()
    maildir = maildir or scratch / "outbox"
    url = url or f"sqlite:///{scratch / 'serve.db'}"
    config = scratch / "bench.toml"
    config.write_text(f"""
[server]
seed = "bench"
[smtp]
host = "{HOST}"
port = {port}
[database]
url = "{url}"
[outbound]
transport = "maildir"
maildir = "{maildir}"
[security]
password_cost = "fast"
trust_from = true              # a closed set-up: the generated addresses are taken at their word
""")
    env = {key: value for key, value in os.environ.items() if not key.startswith("PBMSERV_")}
    env["PYTHONPATH"] = str(common.ROOT)
    log = scratch / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "pbmserv", "serve", "--config", str(config)],
                                cwd=scratch, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    return proc, port, maildir, log


def start_sink() -> tuple[subprocess.Popen, int]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-c", SINK_SCRIPT, HOST, str(port)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return proc, port


def median_span(send, repeat: int) -> float:
    """Median seconds from start to last 250 of `send()` over `repeat` runs."""
    spans = sorted(end - start for start, end in (send() for _ in range(repeat)))
    return spans[len(spans) // 2]


# --- the benchmark -----------------------------------------------------------------------

def run(quick: bool) -> list[Result]:
    per_connection = 1 if quick else 4  # boards each connection owns
    moves_per_board = 3 if quick else 15  # in each timed phase
    boards = [Board(index, 2 * moves_per_board + ONE_AT_A_TIME) for index in range(CONNECTIONS * per_connection)]
    n = len(boards) * moves_per_board
    # phase 1 (one connection): round-robin over every board; phase 2: each connection its own boards
    single = interleave([board.take(moves_per_board) for board in boards])
    owned = [boards[c * per_connection:(c + 1) * per_connection] for c in range(CONNECTIONS)]
    streams = [interleave([board.take(moves_per_board) for board in mine]) for mine in owned]
    one_by_one = interleave([board.take(ONE_AT_A_TIME) for board in boards])  # phase 3
    timeout = 60 + n * 1.0

    scratch = common.scratch("bench-smtp-")  # removed at the end: see `common.scratch`
    serve, port, maildir, log = start_serve(scratch)
    try:
        wait_listening(serve, port, "pbmserv serve", log)
        setup = [mail for board in boards for mail in board.setup_mails()]
        send_all(port, setup)  # not timed: 2 sign-up replies and 2 challenge mails a board
        expected = 4 * len(boards)
        wait_count(maildir, expected, timeout, serve, log)

        cpu = cpu_by_process(serve.pid, "pbmserv listener")
        start, accepted = send_all(port, single)
        expected += 2 * n
        done = wait_count(maildir, expected, timeout, serve, log)
        e2e_1, accept_1 = done - start, accepted - start
        by_process = {name: tuple((now - then) / n for now, then in zip(seconds, cpu.get(name, (0, 0))))
                      for name, seconds in cpu_by_process(serve.pid, "pbmserv listener").items()}  # (user, system)
        serve_cpu = sum(user + system for user, system in by_process.values())

        start, accepted = send_parallel(port, streams)
        expected += 2 * n
        done = wait_count(maildir, expected, timeout, serve, log)
        e2e_8, accept_8 = done - start, accepted - start

        cpu = cpu_by_process(serve.pid, "pbmserv listener")
        replied = [expected]

        def both_board_mails() -> None:
            replied[0] += 2
            wait_count(maildir, replied[0], timeout, serve, log)
        latencies = send_each(port, one_by_one, both_board_mails)
        expected = replied[0]
        alone_by_process = {name: sum(now - then for now, then in zip(seconds, cpu.get(name, (0, 0)))) / len(one_by_one)
                            for name, seconds in cpu_by_process(serve.pid, "pbmserv listener").items()}

        time.sleep(0.2)  # anything beyond the expected replies would be a surprise
        replies = count_new(maildir)
        errors = error_subjects(maildir)
        if replies != expected or errors:
            raise RuntimeError(f"{replies} replies where {expected} were expected, {len(errors)} errors "
                               f"(e.g. {errors[:3]}): the moves do not fit the server's boards")
    finally:
        stop_process(serve, port)

    sink, sink_port = start_sink()
    try:
        wait_listening(sink, sink_port, "aiosmtpd Sink")
        repeat = 3
        cpu = cpu_seconds(sink.pid)
        sink_1 = median_span(lambda: send_all(sink_port, single), repeat)
        sink_cpu = (cpu_seconds(sink.pid) - cpu) / (repeat * n)
        sink_8 = median_span(lambda: send_parallel(sink_port, streams), repeat)
        sink_each = send_each(sink_port, one_by_one)
    finally:
        stop_process(sink, sink_port)

    note = (f"{n} Super-Wari moves on {len(boards)} boards, 2 board mails each; serve with "
            f"password_cost=fast; Sink median of {repeat}")
    results = []
    for label, e2e, accept, sink_seconds, e2e_goal in (("1 connection", e2e_1, accept_1, sink_1, 0.3),
                                                       (f"{CONNECTIONS} connections", e2e_8, accept_8, sink_8, 0.5)):
        sink_pace = n / sink_seconds
        results.append(Result(f"smtp: end to end, {label}, vs Sink", n / e2e, sink_pace, "moves/s",
                              goal=f"ratio >= {e2e_goal}", met=n / e2e >= e2e_goal * sink_pace,
                              note=f"{note}; {2 * n / e2e:,.0f} board mails/s"))
        results.append(Result(f"smtp: acceptance (last 250), {label}, vs Sink", n / accept, sink_pace,
                              "moves/s", goal="ratio >= 0.6", met=n / accept >= 0.6 * sink_pace, note=note))
    results.append(Result("smtp: serve CPU a move, 1 connection, vs Sink a mail", serve_cpu * 1000, sink_cpu * 1000,
                          "ms", goal="serve <= 2 ms", met=serve_cpu <= 0.002,
                          note="user + system CPU of the serve processes over the timed phase, from /proc; "
                               "a move's, in ms (of it in the kernel): " + ", ".join(
                                   f"{name} {(user + system) * 1000:.2f} ({system * 1000:.2f})"
                                   for name, (user, system) in sorted(by_process.items(),
                                                                      key=lambda item: -sum(item[1])))))
    alone = (f"{len(one_by_one)} moves, {ONE_AT_A_TIME} of each board, each sent {PAUSE_SECONDS * 1000:.0f} ms "
             f"after the one before was answered")
    results.append(Result("smtp: one move at a time, its board mails vs the Sink's 250", 1 / median(latencies),
                          1 / median(sink_each), "moves/s",
                          note=f"{alone}; median latency {median(latencies) * 1000:.1f} ms against "
                               f"{median(sink_each) * 1000:.2f} ms"))
    results.append(Result("smtp: serve CPU a move, one at a time, vs Sink a mail",
                          sum(alone_by_process.values()) * 1000, sink_cpu * 1000, "ms",
                          note=f"{alone}; the serve processes, from /proc, pauses included (the Sink's: a mail "
                               f"of the first phase): " + ", ".join(
                                   f"{name} {seconds * 1000:.2f}" for name, seconds in
                                   sorted(alone_by_process.items(), key=lambda item: -item[1]))))
    return results
