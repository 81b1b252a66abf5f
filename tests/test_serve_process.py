"""`pbmserv serve`, `deliver` and `send` as real processes on 127.0.0.1: a SIGTERM never
loses an acknowledged mail, a storage failure is a 451 (never a 5xx), `deliver` exits
75 whenever the MTA must retry, and the command line fails with one clear line.

Every network conversation stays on 127.0.0.1 on a port found by binding port 0; every
wait is bounded; every process started here is killed in a `finally` or a teardown.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import email.utils
import os
import re
import signal
import smtplib
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbmserv.config import load_config
from pbmserv.server import Server, stopped_cleanly
from pbmserv.store.db import open_database
from pbmserv.store.queue import enqueue
from pbmserv.worker import Worker

HOST = "127.0.0.1"
SERVER_ADDRESS = "pbmserv@localhost"
STARTUP_SECONDS = 20.0  # bounded waits are generous: the machine may be busy
EXIT_SECONDS = 5.0  # a SIGTERM'd server with nothing in hand must be gone by then


# --- helpers --------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def db_path(tmp: Path) -> Path:
    return tmp / "var" / "pbmserv.db"


def outbox(tmp: Path) -> Path:
    return tmp / "var" / "outbox"


def base_env(tmp: Path, port: int | None = None, **extra: str) -> dict[str, str]:
    """A clean environment (no PBMSERV_* of the caller's leaks in), PATH kept."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PBMSERV_SECURITY_PASSWORD_COST": "fast",
        "PBMSERV_SECURITY_TRUST_FROM": "true",  # a closed set-up; tests of confirmation say false
        "PBMSERV_SERVER_SEED": "test",
        "PBMSERV_DATABASE_URL": f"sqlite:///{db_path(tmp)}",
        "PBMSERV_OUTBOUND_MAILDIR": str(outbox(tmp)),
    }
    if port is not None:
        env["PBMSERV_SMTP_PORT"] = str(port)
    env.update(extra)
    return env


def signup_mail(number: int, tag: str) -> tuple[str, str, bytes]:
    """(sender, Message-ID, raw) of `signup userNN userNN-pw` from userNN's own address."""
    sender = f"user{number:02d}@example.org"
    message_id = f"<{tag}-{number:02d}@example.org>"
    message = EmailMessage()
    message["From"] = sender
    message["To"] = SERVER_ADDRESS
    message["Subject"] = f"signup user{number:02d} user{number:02d}-pw"
    message["Date"] = email.utils.format_datetime(datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc))
    message["Message-ID"] = message_id
    message.set_content("")
    return sender, message_id, message.as_bytes()


def maildir_replies(tmp: Path) -> list[EmailMessage]:
    new = outbox(tmp) / "new"
    if not new.is_dir():
        return []
    return [email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
            for path in sorted(new.iterdir()) if path.is_file()]


def spooled(tmp: Path) -> int:
    """Mail accepted but not yet moved from the listener's spool to the inbound queue."""
    path = tmp / "var" / "pbmserv-spool.db"
    if not path.exists():
        return 0
    connection = sqlite3.connect(path, timeout=5)
    try:
        return connection.execute("SELECT count(*) FROM spool").fetchone()[0]
    except sqlite3.OperationalError:  # no table yet
        return 0
    finally:
        connection.close()


def table_statuses(tmp: Path, table: str) -> list[tuple[str, str]]:
    """(message_id, status) of every row, read with plain sqlite3 (WAL: readers never block)."""
    path = db_path(tmp)
    if not path.exists():
        return []
    connection = sqlite3.connect(path, timeout=5)
    try:
        return connection.execute(f"SELECT message_id, status FROM {table} ORDER BY id").fetchall()
    except sqlite3.OperationalError:  # no schema yet
        return []
    finally:
        connection.close()


def one_line(text: str) -> bool:
    return text.count("\n") == 1 and text.endswith("\n")


class ServeProcess:
    """`python -m pbmserv serve` in `cwd`, its output in files (a full pipe must never
    stall the server), killed by `close()` if it is still running."""

    def __init__(self, cwd: Path, env: dict[str, str], name: str, *args: str):
        self.cwd = cwd
        self.out_path = cwd / f"{name}.stdout"
        self.err_path = cwd / f"{name}.stderr"
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "pbmserv", "serve", *args], cwd=cwd, env=env,
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=err)

    @property
    def stderr(self) -> str:
        return self.err_path.read_text(errors="replace")

    @property
    def stdout(self) -> str:
        return self.out_path.read_text(errors="replace")

    def wait_listening(self, port: int, timeout: float = STARTUP_SECONDS) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"serve exited with {self.proc.returncode}: {self.stderr}"
            try:
                with socket.create_connection((HOST, port), timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"serve did not listen on {port} within {timeout}s: {self.stderr}")

    def terminate(self, timeout: float = EXIT_SECONDS) -> tuple[int | None, float]:
        """SIGTERM; (exit code or None if still running after `timeout`, seconds taken)."""
        started = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            code = None
        return code, time.monotonic() - started

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def run_cli(args: list[str], env: dict[str, str], cwd: Path, stdin: bytes = b"",
            timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pbmserv", *args], input=stdin, capture_output=True,
                          env=env, cwd=cwd, timeout=timeout)


def wait_for(condition, timeout: float, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


class InProcessServer:
    """`pbmserv.server.Server` on its own asyncio loop in a thread, on a free port."""

    def __init__(self, tmp: Path, transport: str = "memory", transport_object=None, **sections: dict):
        overrides = {"database": {"url": f"sqlite:///{db_path(tmp)}"}, "smtp": {"host": HOST, "port": 0},
                     "security": {"password_cost": "fast"}, "server": {"seed": "test"},
                     "outbound": {"transport": transport, "maildir": str(outbox(tmp))}}
        for section, keys in sections.items():
            overrides.setdefault(section, {}).update(keys)
        self.config = load_config(environ={}).with_overrides(**overrides)
        self.sessions = open_database(self.config.database.url, self.config.database.busy_timeout)
        self.server = Server(self.config, self.sessions, transport_object)
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread = threading.Thread(target=self._run, name="pbmserv-in-process", daemon=True)

    def _run(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            ready = asyncio.Event()
            running = asyncio.create_task(self.server.run(ready=ready, install_signals=False))
            waiting = asyncio.create_task(ready.wait())
            await asyncio.wait({running, waiting}, return_when=asyncio.FIRST_COMPLETED)
            waiting.cancel()
            self.ready.set()
            await running

        try:
            asyncio.run(main())
        except BaseException as error:  # noqa: BLE001 - reported to the test thread
            self.error = error
            self.ready.set()

    def start(self) -> "InProcessServer":
        self.thread.start()
        assert self.ready.wait(STARTUP_SECONDS), "the in-process server did not start"
        assert self.error is None, self.error
        self.port = self.server.port
        return self

    @property
    def delivered(self) -> list[tuple[list[str], bytes]]:
        return list(self.server.transport.delivered)

    def stop(self) -> None:
        if self.thread.is_alive() and self.loop is not None:
            self.loop.call_soon_threadsafe(self.server.stop)
            self.thread.join(15)
        assert not self.thread.is_alive(), "the in-process server did not stop"
        self.sessions.kw["bind"].dispose()


@pytest.fixture
def in_process(tmp_path):
    servers: list[InProcessServer] = []

    def start(**kwargs) -> InProcessServer:
        server = InProcessServer(tmp_path, **kwargs).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def smtp_send(port: int, sender: str, raw: bytes) -> tuple[int, bytes]:
    """One mail in one connection; the code and text of the answer to DATA."""
    with smtplib.SMTP(HOST, port, timeout=10, local_hostname="localhost") as client:
        client.ehlo()
        code, text = client.mail(sender)
        assert code == 250, (code, text)
        code, text = client.rcpt(SERVER_ADDRESS)
        assert code == 250, (code, text)
        return client.data(raw)


# --- 1. SIGTERM loses nothing ---------------------------------------------------------

MAILS = 60


def batches() -> list[list[int]]:
    """One connection per mail, and every fifth connection carries three mails."""
    plan, number, connection = [], 0, 0
    while number < MAILS:
        size = 3 if connection % 5 == 4 else 1
        plan.append(list(range(number, min(number + size, MAILS))))
        number += size
        connection += 1
    return plan


class Stream:
    """The client side: streams the mails, one outcome a mail:
    'ack' (250 seen), 'failed' (tried, no 250 seen: may or may not be stored) or
    'unsent' (never handed over: must not be stored)."""

    def __init__(self, port: int, mails: list[tuple[str, str, bytes]], signal_after: int):
        self.port = port
        self.mails = mails
        self.outcome = ["unsent"] * len(mails)
        self.acked = 0
        self.reached = threading.Event()
        self.signal_after = signal_after
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="smtp-stream", daemon=True)

    def _run(self) -> None:
        try:
            deadline = time.monotonic() + 60
            for batch in batches():
                if time.monotonic() > deadline:
                    break
                self._connection(batch)
        except BaseException as error:  # noqa: BLE001 - reported to the test thread
            self.error = error
        finally:
            self.reached.set()

    def _connection(self, batch: list[int]) -> None:
        try:
            client = smtplib.SMTP(HOST, self.port, timeout=5, local_hostname="localhost")
        except OSError:
            return  # refused: nothing of this batch was handed over
        try:
            for number in batch:
                sender, _message_id, raw = self.mails[number]
                self.outcome[number] = "failed"
                try:
                    client.sendmail(sender, [SERVER_ADDRESS], raw)
                except (smtplib.SMTPException, OSError):
                    return
                self.outcome[number] = "ack"
                self.acked += 1
                if self.acked >= self.signal_after:
                    self.reached.set()
        finally:
            try:
                client.quit()
            except (smtplib.SMTPException, OSError):
                client.close()


# After the 1st mail (one-mail connections), and after the 19th and the 40th, each the
# first of a three-mail connection: the signal comes with that connection still open.
@pytest.mark.parametrize("signal_after", [1, 19, 40])
def test_sigterm_loses_no_acknowledged_mail_and_answers_each_once(tmp_path, signal_after):
    port = free_port()
    env = base_env(tmp_path, port)
    mails = [signup_mail(number, f"term{signal_after}") for number in range(MAILS)]
    stream = Stream(port, mails, signal_after)

    first = ServeProcess(tmp_path, env, "first")
    try:
        first.wait_listening(port)
        stream.thread.start()
        assert stream.reached.wait(30), "the client stalled before the signal"
        code, took = first.terminate(EXIT_SECONDS)
        assert code == 0, f"serve did not exit 0 within {EXIT_SECONDS}s of SIGTERM (code {code}): {first.stderr}"
        stream.thread.join(60)
        assert not stream.thread.is_alive(), "the client did not finish"
        assert stream.error is None, stream.error
    finally:
        first.close()
    acked = {mails[n][1] for n, state in enumerate(stream.outcome) if state == "ack"}
    assert len(acked) >= signal_after

    second = ServeProcess(tmp_path, env, "second")
    try:
        second.wait_listening(port)
        # One more mail wakes the worker and so the sender: replies the first run left
        # queued then go out at once instead of after RETRY_SECONDS (that delay has its
        # own test below, as have the replies a shutdown leaves queued).
        nudge_sender, nudge_id, nudge = signup_mail(99, f"nudge{signal_after}")
        assert smtp_send(port, nudge_sender, nudge)[0] == 250

        def everything_answered() -> bool:
            if spooled(tmp_path):  # read first: the spool's mail is in the inbound queue before it leaves
                return False
            answered = {reply["In-Reply-To"] for reply in maildir_replies(tmp_path)}
            pending = [s for table in ("inbound", "outbound") for _id, s in table_statuses(tmp_path, table)
                       if s == "queued"]
            return acked <= answered and not pending

        assert wait_for(everything_answered, 20), (
            f"not every acknowledged mail was answered after the restart: {second.stderr[-2000:]}")
        code, took = second.terminate(EXIT_SECONDS)
        assert code == 0, f"serve did not exit 0 within {EXIT_SECONDS}s of SIGTERM (code {code}): {second.stderr}"
    finally:
        second.close()

    inbound = table_statuses(tmp_path, "inbound")
    stored = [message_id for message_id, _status in inbound]
    assert len(stored) == len(set(stored)), "a mail was stored twice"
    assert not [row for row in inbound if row[1] in ("queued", "failed")], inbound
    assert {status for _id, status in inbound} <= {"done"}, inbound
    assert not [row for row in table_statuses(tmp_path, "outbound") if row[1] != "sent"]

    mails.append((nudge_sender, nudge_id, nudge))
    by_id = {message_id: (number, state) for number, ((_s, message_id, _r), state)
             in enumerate(zip(mails, stream.outcome + ["ack"]))}
    assert set(stored) <= {message_id for message_id, (_n, state) in by_id.items() if state != "unsent"}, \
        "a mail the client never handed over was stored"
    assert acked <= set(stored), "an acknowledged mail was lost"

    replies = maildir_replies(tmp_path)
    counts: dict[str, int] = {}
    for reply in replies:
        in_reply_to = reply["In-Reply-To"]
        assert in_reply_to in by_id, f"a reply to an unknown mail: {in_reply_to}"
        sender = mails[by_id[in_reply_to][0]][0]
        assert str(reply["To"]) == sender and str(reply["Subject"]) == "pbmserv signup"
        counts[in_reply_to] = counts.get(in_reply_to, 0) + 1
    assert all(count == 1 for count in counts.values()), {k: v for k, v in counts.items() if v != 1}
    assert set(counts) == set(stored), "every stored mail has exactly one reply, and no other mail has one"


def test_sigterm_waits_for_the_transaction_in_hand(tmp_path):
    """A client between MAIL and DATA when the signal comes still gets its 250, and the
    mail is answered after a restart; a new MAIL meanwhile is a 421, never a 5xx."""
    port = free_port()
    env = base_env(tmp_path, port)
    sender, message_id, raw = signup_mail(1, "inhand")
    first = ServeProcess(tmp_path, env, "first")
    try:
        first.wait_listening(port)
        with smtplib.SMTP(HOST, port, timeout=10, local_hostname="localhost") as client, \
                smtplib.SMTP(HOST, port, timeout=10, local_hostname="localhost") as idle:
            client.ehlo()
            idle.ehlo()
            assert client.mail(sender)[0] == 250
            assert client.rcpt(SERVER_ADDRESS)[0] == 250
            first.proc.send_signal(signal.SIGTERM)
            time.sleep(0.5)
            assert first.proc.poll() is None, "serve quit with a transaction in hand"
            code, text = idle.mail("late@example.org")
            assert code == 421, (code, text)
            code, text = client.data(raw)
            assert code == 250, (code, text)
        first.proc.wait(EXIT_SECONDS)
        assert first.proc.returncode == 0, first.stderr
    finally:
        first.close()
    assert [row[0] for row in table_statuses(tmp_path, "inbound")] == [message_id]

    second = ServeProcess(tmp_path, env, "second")
    try:
        second.wait_listening(port)
        assert wait_for(lambda: len(maildir_replies(tmp_path)) >= 1, 15), second.stderr
        code, _took = second.terminate()
        assert code == 0, second.stderr
    finally:
        second.close()
    assert [r["In-Reply-To"] for r in maildir_replies(tmp_path)] == [message_id]


def children(pid: int) -> list[int]:
    """The live child processes of `pid` (Linux's /proc)."""
    return [int(child) for task in Path(f"/proc/{pid}/task").iterdir()
            for child in (task / "children").read_text().split()]


def gone(pid: int) -> bool:
    """True once `pid` has exited (a zombie counts: only its parent's wait remains)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except OSError:
        return True


needs_proc = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")


def serve_and_sides(tmp: Path, name: str) -> tuple[ServeProcess, int, dict[str, int]]:
    """`serve` started and listening: (it, its port, the pids of its other processes
    by the name each gave itself: {"worker": pid, "sender": pid})."""
    port = free_port()
    serve = ServeProcess(tmp, base_env(tmp, port), name)
    try:
        serve.wait_listening(port)
        assert wait_for(lambda: len(children(serve.proc.pid)) == 2, 10), serve.stderr
        sides = {Path(f"/proc/{pid}/comm").read_text().strip(): pid for pid in children(serve.proc.pid)}
        assert set(sides) == {"pbmserv worker", "pbmserv sender"}, sides
    except BaseException:
        serve.close()
        raise
    return serve, port, {name.removeprefix("pbmserv "): pid for name, pid in sides.items()}


@needs_proc
def test_serve_listens_plays_and_sends_in_three_processes(tmp_path):
    """The listener, the worker and the sender are three processes (one interpreter
    lock each), the other two the listener's children and lower in priority; a
    SIGTERM to the listener stops all three, and the mail in between is answered."""
    serve, port, sides = serve_and_sides(tmp_path, "three")
    try:
        niced = os.getpriority(os.PRIO_PROCESS, serve.proc.pid) + 10
        assert wait_for(lambda: all(os.getpriority(os.PRIO_PROCESS, pid) == niced for pid in sides.values()), 10)
        sender, message_id, raw = signup_mail(1, "apart")
        assert smtp_send(port, sender, raw) == (250, b"2.0.0 Stored")
        assert wait_for(lambda: len(maildir_replies(tmp_path)) == 1, 15), serve.stderr
        code, _took = serve.terminate()
        assert code == 0, serve.stderr
        assert all(gone(pid) for pid in sides.values())
    finally:
        serve.close()
    assert [r["In-Reply-To"] for r in maildir_replies(tmp_path)] == [message_id]


@needs_proc
def test_a_listener_killed_takes_the_others_with_it(tmp_path):
    """kill -9 of the listener leaves no worker or sender behind to race the next server."""
    serve, _port, sides = serve_and_sides(tmp_path, "killed")
    try:
        serve.proc.kill()
        serve.proc.wait(EXIT_SECONDS)
        assert wait_for(lambda: all(gone(pid) for pid in sides.values()), EXIT_SECONDS), "a process outlived its listener"
    finally:
        serve.close()


@needs_proc
def test_ctrl_c_stops_every_process_cleanly_and_the_sender_last(tmp_path):
    """A terminal's Ctrl-C (or systemd's SIGTERM to the whole group) reaches every
    process at once. The sender does not stop on it, but after the worker, whose last
    replies it still sends: alone it goes on sending. All stop, exit 0, and no error
    is said."""
    serve, port, sides = serve_and_sides(tmp_path, "interrupted")
    try:
        os.kill(sides["sender"], signal.SIGINT)
        sender, message_id, raw = signup_mail(1, "after-ctrl-c")
        assert smtp_send(port, sender, raw) == (250, b"2.0.0 Stored")
        assert wait_for(lambda: len(maildir_replies(tmp_path)) == 1, 15), serve.stderr
        for pid in (sides["worker"], sides["sender"], serve.proc.pid):
            os.kill(pid, signal.SIGINT)
        assert serve.proc.wait(EXIT_SECONDS) == 0, serve.stderr
        assert all(gone(pid) for pid in sides.values())
    finally:
        serve.close()
    assert "ERROR" not in serve.stderr and "Traceback" not in serve.stderr, serve.stderr
    assert [r["In-Reply-To"] for r in maildir_replies(tmp_path)] == [message_id]


@needs_proc
@pytest.mark.parametrize("side", ["worker", "sender"])
def test_the_listener_stops_when_another_process_dies(tmp_path, side):
    """A worker or a sender that dies is said, and the listener stops with exit 1 (its
    supervisor starts all again) rather than take mail nobody plays or answers; the
    third process stops with it."""
    serve, _port, sides = serve_and_sides(tmp_path, f"orphan-{side}")
    try:
        os.kill(sides[side], signal.SIGKILL)
        assert serve.proc.wait(EXIT_SECONDS) == 1, serve.stderr
        assert all(gone(pid) for pid in sides.values())
    finally:
        serve.close()
    assert re.search(rf"ERROR pbmserv.server: the {side}'s process \(pid {sides[side]}\) ended; the listener stops too",
                     serve.stderr), serve.stderr


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs pidfds")
@pytest.mark.parametrize(("ending", "clean"), [("exit 0", True), ("exit 3", False), ("SIGKILL", False)])
def test_a_clean_exit_is_told_from_a_death_without_reaping_the_process(ending, clean):
    """The sender exits 0 only after the worker's end of its pipe closes, so a sender
    seen ended cleanly means the worker died first: the listener names the worker,
    whichever pidfd it saw first. The peek leaves the child for the final waitpid."""
    pid = os.fork()
    if pid == 0:
        if ending == "SIGKILL":
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(int(ending.split()[1]))
    watch = os.pidfd_open(pid)
    try:
        os.waitid(os.P_PIDFD, watch, os.WEXITED | os.WNOWAIT)  # until it has ended
        assert stopped_cleanly(watch) is clean
        assert stopped_cleanly(watch) is clean  # asked twice: still not reaped
    finally:
        os.close(watch)
    status = os.waitpid(pid, 0)[1]
    assert os.waitstatus_to_exitcode(status) == {"exit 0": 0, "exit 3": 3, "SIGKILL": -signal.SIGKILL}[ending]


def test_replies_left_queued_by_a_previous_run_go_out_soon_after_a_restart(tmp_path):
    """A shutdown can leave replies queued (the sender's last pass may start before the
    worker's last commit); restarting resumes that queue without waiting for new mail."""
    port = free_port()
    env = base_env(tmp_path, port)
    config = load_config(environ={}).with_overrides(
        database={"url": env["PBMSERV_DATABASE_URL"]}, security={"password_cost": "fast"},
        server={"seed": "test"})
    sessions = open_database(config.database.url)
    sender, message_id, raw = signup_mail(7, "leftover")
    enqueue(sessions, raw, datetime(2026, 11, 1, 12, 0), sender)
    assert Worker(sessions, config).run_pending() == 1  # processed, reply queued, not delivered
    sessions.kw["bind"].dispose()
    assert table_statuses(tmp_path, "outbound")[0][1] == "queued"

    serve = ServeProcess(tmp_path, env, "serve")
    try:
        serve.wait_listening(port)
        answered = wait_for(lambda: len(maildir_replies(tmp_path)) >= 1, 5)
        code, _took = serve.terminate()
        assert code == 0, serve.stderr
    finally:
        serve.close()
    assert answered, "the queued reply was not delivered within 5 s of the restart"
    assert [r["In-Reply-To"] for r in maildir_replies(tmp_path)] == [message_id]


class GatedTransport:
    """A memory transport whose first delivery waits for the test's go-ahead."""

    batch = 1
    server_address = "pbmserv@localhost"

    def __init__(self) -> None:
        self.delivered: list[tuple[list[str], bytes]] = []
        self.entered = threading.Event()
        self.gate = threading.Event()

    def deliver(self, recipients: list[str], raw: bytes, message_id: str, sender: str) -> None:
        if not self.entered.is_set():
            self.entered.set()
            assert self.gate.wait(20), "the test never opened the gate"
        self.delivered.append((recipients, raw))


def test_a_clean_shutdown_delivers_every_reply_the_worker_queued(tmp_path, in_process):
    """The worker processes mail B while the sender is busy delivering A's reply; then
    the server is stopped. Its last pass must still deliver B's reply."""
    transport = GatedTransport()
    server = in_process(transport_object=transport)
    try:
        sender_a, _id_a, raw_a = signup_mail(10, "pass")
        assert smtp_send(server.port, sender_a, raw_a)[0] == 250
        assert transport.entered.wait(10), "the sender never started on A's reply"
        sender_b, _id_b, raw_b = signup_mail(11, "pass")
        assert smtp_send(server.port, sender_b, raw_b)[0] == 250
        assert wait_for(lambda: len(table_statuses(tmp_path, "outbound")) == 2, 10), "B was not processed"
        server.loop.call_soon_threadsafe(server.server.stop)
        time.sleep(0.3)  # the stop is under way while A's delivery is still in hand
    finally:
        transport.gate.set()
    server.thread.join(15)
    assert not server.thread.is_alive()
    assert [status for _id, status in table_statuses(tmp_path, "outbound")] == ["sent", "sent"]
    assert sorted(recipients for recipients, _raw in transport.delivered) == [[sender_a], [sender_b]]


# --- 2. 451 when the mail cannot be stored ---------------------------------------------

def locked(path: Path) -> sqlite3.Connection:
    """A connection holding `path`'s write lock, as a long writer elsewhere would."""
    lock = sqlite3.connect(path, isolation_level=None, timeout=5)
    lock.execute("BEGIN EXCLUSIVE")
    return lock


def test_a_locked_spool_is_a_451_and_the_mail_is_accepted_once_it_is_free(tmp_path, in_process):
    server = in_process(database={"busy_timeout": 1})
    sender, message_id, raw = signup_mail(3, "locked")
    lock = locked(tmp_path / "var" / "pbmserv-spool.db")
    try:
        with pytest.raises(smtplib.SMTPDataError) as refused:
            with smtplib.SMTP(HOST, server.port, timeout=20, local_hostname="localhost") as client:
                client.sendmail(sender, [SERVER_ADDRESS], raw)
        assert refused.value.smtp_code == 451, refused.value
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert table_statuses(tmp_path, "inbound") == []

    code, text = smtp_send(server.port, sender, raw)
    assert code == 250, (code, text)
    assert wait_for(lambda: len(server.delivered) >= 1, 10), "no reply after the mail was accepted"
    code, text = smtp_send(server.port, sender, raw)  # the MTA retries once more: still one
    assert code == 250 and b"Already stored" in text, (code, text)
    time.sleep(1.2)  # a worker poll later
    assert len(server.delivered) == 1
    recipients, reply = server.delivered[0]
    parsed = email.message_from_bytes(reply, policy=email.policy.default)
    assert recipients == [sender] and parsed["In-Reply-To"] == message_id
    assert table_statuses(tmp_path, "inbound") == [(message_id, "done")]


def test_a_locked_game_database_does_not_hold_up_acceptance(tmp_path, in_process):
    """The worker's lock on the game database (here held by a test) never makes the
    listener wait: mail is answered 250 from the spool at once, twice sent is still
    one, and it is played as soon as the lock is gone."""
    server = in_process(database={"busy_timeout": 1})
    sender, message_id, raw = signup_mail(3, "locked")
    smtp_send(server.port, *signup_mail(2, "first")[::2])  # the schema and the spool exist
    assert wait_for(lambda: len(server.delivered) == 1, 10)
    lock = locked(db_path(tmp_path))
    try:
        started = time.monotonic()
        assert smtp_send(server.port, sender, raw) == (250, b"2.0.0 Stored")
        assert smtp_send(server.port, sender, raw) == (250, b"2.0.0 Already stored")
        assert time.monotonic() - started < 1.0  # far less than the game database's busy timeout
        time.sleep(1.5)
        assert len(server.delivered) == 1
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert wait_for(lambda: len(server.delivered) == 2, 10), "the spooled mail was not played"
    time.sleep(1.2)
    assert [status for key, status in table_statuses(tmp_path, "inbound") if key == message_id] == ["done"]
    assert len(server.delivered) == 2


def test_an_exception_while_storing_is_a_451_never_a_500(tmp_path, in_process, monkeypatch):
    server = in_process()

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(server.server.handler, "keep", broken)
    sender, message_id, raw = signup_mail(4, "broken")
    code, text = smtp_send(server.port, sender, raw)
    assert code == 451, (code, text)
    monkeypatch.undo()
    code, text = smtp_send(server.port, sender, raw)
    assert code == 250, (code, text)
    assert wait_for(lambda: len(server.delivered) == 1, 10)
    assert table_statuses(tmp_path, "inbound") == [(message_id, "done")]


def test_an_exception_elsewhere_in_the_smtp_session_is_a_451_never_a_500(tmp_path, in_process, monkeypatch):
    server = in_process()

    def broken(*args, **kwargs):
        raise RuntimeError("address parser exploded")

    monkeypatch.setattr("pbmserv.mail.smtp.split_address", broken)
    with smtplib.SMTP(HOST, server.port, timeout=10, local_hostname="localhost") as client:
        client.ehlo()
        assert client.mail("someone@example.org")[0] == 250
        code, text = client.rcpt(SERVER_ADDRESS)
    assert code == 451, (code, text)


# --- 3. pbmserv deliver ----------------------------------------------------------------

def test_deliver_stores_once_and_exits_0(tmp_path):
    env = base_env(tmp_path)
    sender, message_id, raw = signup_mail(5, "deliver")
    for _attempt in range(2):
        done = run_cli(["deliver", "--sender", sender], env, tmp_path, raw)
        assert done.returncode == 0, done.stderr
        assert done.stderr == b""
        assert table_statuses(tmp_path, "inbound") == [(message_id, "queued")]
    assert maildir_replies(tmp_path) == []  # storing is all `deliver` does without --process


def test_deliver_process_answers_at_once(tmp_path):
    env = base_env(tmp_path)
    sender, message_id, raw = signup_mail(6, "process")
    done = run_cli(["deliver", "--process"], env, tmp_path, raw)
    assert done.returncode == 0, done.stderr
    replies = maildir_replies(tmp_path)
    assert [(str(r["To"]), str(r["Subject"]), r["In-Reply-To"]) for r in replies] == \
        [(sender, "pbmserv signup", message_id)]
    assert table_statuses(tmp_path, "inbound") == [(message_id, "done")]
    assert table_statuses(tmp_path, "outbound")[0][1] == "sent"


def test_deliver_with_an_unusable_database_exits_75_with_one_line(tmp_path):
    (tmp_path / "file.txt").write_text("a file where a folder should be\n")
    env = base_env(tmp_path, PBMSERV_DATABASE_URL=f"sqlite:///{tmp_path / 'file.txt' / 'db.sqlite'}")
    _sender, _message_id, raw = signup_mail(8, "nodb")
    done = run_cli(["deliver"], env, tmp_path, raw)
    assert done.returncode == 75, (done.returncode, done.stderr)
    err = done.stderr.decode()
    assert one_line(err) and err.startswith("pbmserv"), err
    assert done.stdout == b""


@pytest.mark.parametrize("problem", ["not toml", "unknown key", "missing file", "bad environment"])
def test_deliver_with_a_bad_configuration_exits_75(tmp_path, problem):
    config = tmp_path / "pbmserv.toml"
    env = base_env(tmp_path)
    if problem == "not toml":
        config.write_text("[server\naddress = \n")
    elif problem == "unknown key":
        config.write_text("[smtp]\nbogus = 1\n")
    elif problem == "bad environment":
        config.write_text("")
        env["PBMSERV_SMTP_PORT"] = "many"
    _sender, _message_id, raw = signup_mail(9, "badconfig")
    done = run_cli(["deliver", "--config", str(config)], env, tmp_path, raw)
    assert done.returncode == 75, (done.returncode, done.stderr)
    err = done.stderr.decode()
    assert one_line(err) and err.startswith("pbmserv: "), err
    assert table_statuses(tmp_path, "inbound") == []


def test_deliver_usage_error_exits_2(tmp_path):
    done = run_cli(["deliver", "--no-such-option"], base_env(tmp_path), tmp_path, b"")
    assert done.returncode == 2, (done.returncode, done.stderr)
    err = done.stderr.decode()
    assert one_line(err) and "--no-such-option" in err, err
    assert not db_path(tmp_path).exists() or table_statuses(tmp_path, "inbound") == []


# --- 4. pbmserv send -------------------------------------------------------------------

def test_send_hands_the_mail_to_the_running_server(tmp_path, in_process):
    server = in_process()
    env = base_env(tmp_path, server.port)
    done = subprocess.run([sys.executable, "-m", "pbmserv", "send", "--from", "alice@example.org",
                           "signup alice alice-pw"], stdin=subprocess.DEVNULL, capture_output=True,
                          env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode()
    assert re.fullmatch(rf"Sent <[^<>\s]+> to pbmserv@localhost through 127\.0\.0\.1:{server.port}\.\n", out), out
    message_id = out.split()[1]
    assert wait_for(lambda: len(server.delivered) >= 1, 10), "no reply to the sent mail"
    recipients, reply = server.delivered[0]
    parsed = email.message_from_bytes(reply, policy=email.policy.default)
    assert recipients == ["alice@example.org"]
    assert str(parsed["Subject"]) == "pbmserv confirm" and parsed["In-Reply-To"] == message_id


def test_send_reply_answers_a_confirmation_mail_as_a_mail_client_would(tmp_path, in_process):
    """The README's quick start: the signup is answered by a confirmation mail alone, and
    `send --reply FILE` (to its Reply-To, from its To) confirms the address."""
    server = in_process()
    env = base_env(tmp_path, server.port)
    send = [sys.executable, "-m", "pbmserv", "send"]
    subprocess.run([*send, "--from", "alice@example.org", "signup alice alice-pw"], stdin=subprocess.DEVNULL,
                   env=env, cwd=tmp_path, timeout=60, check=True, capture_output=True)
    assert wait_for(lambda: len(server.delivered) >= 1, 10)
    confirmation = tmp_path / "confirmation.eml"
    confirmation.write_bytes(server.delivered[0][1])
    done = subprocess.run([*send, "--reply", str(confirmation)], stdin=subprocess.DEVNULL, capture_output=True,
                          env=env, cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(r"Sent <[^<>\s]+> to pbmserv\+c-1-[a-z2-7]{20}@localhost through .*\n", done.stdout.decode())
    assert wait_for(lambda: len(server.delivered) >= 2, 10), "no answer to the reply"
    recipients, reply = server.delivered[1]
    parsed = email.message_from_bytes(reply, policy=email.policy.default)
    assert (recipients, str(parsed["Subject"])) == (["alice@example.org"], "pbmserv confirm")
    assert parsed.get_content().startswith("alice@example.org now receives the mail of alice.\n")


def test_send_with_no_server_listening_exits_1_with_one_line(tmp_path):
    port = free_port()  # bound then released: nothing listens there
    done = subprocess.run([sys.executable, "-m", "pbmserv", "send", "--from", "alice@example.org",
                           "signup alice alice-pw"], stdin=subprocess.DEVNULL, capture_output=True,
                          env=base_env(tmp_path, port), cwd=tmp_path, timeout=60)
    assert done.returncode == 1, (done.returncode, done.stderr)
    err = done.stderr.decode()
    assert one_line(err) and err.startswith(f"pbmserv: cannot send to 127.0.0.1:{port}"), err
    assert done.stdout == b""


# --- 5. the port is taken --------------------------------------------------------------

def test_serve_on_a_port_in_use_exits_1_with_one_line(tmp_path):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind((HOST, 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        serve = ServeProcess(tmp_path, base_env(tmp_path, port), "taken")
        try:
            code = serve.proc.wait(STARTUP_SECONDS)
        finally:
            serve.close()
    assert code == 1, (code, serve.stderr)
    err = serve.stderr
    assert one_line(err) and err.startswith(f"pbmserv: cannot listen on 127.0.0.1:{port}"), err
