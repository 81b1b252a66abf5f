"""`pbmserv serve`: the SMTP listener, the worker, the scheduler, the robots and the
sender, each an asyncio task of a `Server`.

The listener only stores mail (in its spool, which the worker's side moves into the
inbound queue in batches) and wakes the worker; the other roles do their blocking
database and network work in threads, one batch at a time. Mail stored by another
process (`pbmserv deliver`) is noticed by a light poll. A process may take only some
of these roles (`--role`), with other processes on the same database taking the rest;
`serve` itself runs the listener, the roles that play and the sender in three
processes (`serve`, below), so that a `250` never waits for the worker's Python, nor
the worker for the sender's.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from datetime import datetime, timedelta, timezone

from sqlalchemy.orm import Session, sessionmaker

from .config import Config
from .mail.outbound import deliver_queued, make_transport
from .mail.smtp import InboundHandler, smtp_factory
from .robots.turns import play_robots
from .scheduler import due_and_robots, earliest_due, keep_alive, run_due
from .store.queue import enqueue
from .store.db import in_memory_sqlite
from .store.spool import BATCH as SPOOL_BATCH, Spool, spool_path
from .worker import Worker

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0  # how soon mail stored by another process is noticed
RETRY_SECONDS = 30.0  # how often deferred replies are looked at again
DRAIN_SECONDS = 30.0  # how long shutdown waits for a transaction in hand
# At most one delivery pass this often: under load a pass takes a batch instead of the
# replies of one mail (on PostgreSQL the worker wakes the sender after every mail).
SEND_GAP_SECONDS = 0.05
WORKER_NICENESS = 10  # the worker's process yields the CPU to the listener's: a 250 is awaited, a board mail is not


def utcnow() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


async def woken(event: asyncio.Event, timeout: float) -> None:
    """Wait until `event` is set or `timeout` passes, and reset it for the next wait."""
    try:
        await asyncio.wait_for(event.wait(), timeout)
    except TimeoutError:
        pass
    event.clear()


ROLES = ("smtp", "worker", "sender", "scheduler", "robots")


class Server:
    """All five roles by default; a process may take some of them, with other processes
    on the same database taking the others (`pbmserv serve --role`)."""

    def __init__(self, config: Config, sessions: sessionmaker[Session], transport=None,
                 roles: tuple[str, ...] = ROLES):
        self.roles = roles
        self.config = config
        self.spooled = asyncio.Event()
        self.sessions = sessions
        self.transport = transport or make_transport(config)
        self.worker = Worker(sessions, config)
        path = spool_path(config.smtp.spool, config.database.url) if {"smtp", "worker"} & set(roles) else None
        self.spool = Spool(path, config.database.url, config.database.busy_timeout) if path else None
        self.handler = InboundHandler(self.spool.keep if self.spool else self.enqueue, config.server.address,
                                      self.mail_stored,
                                      max_recipients=config.smtp.max_recipients)
        self.work = asyncio.Event()
        self.send = asyncio.Event()
        self.replies_queued = self.send.set  # or, with the sender in another process, a byte to it
        self.schedule = asyncio.Event()
        self.robots = asyncio.Event()
        self.stopping = asyncio.Event()
        self.sleeps_until: datetime | None = None  # when the scheduler wakes by itself; None while it runs
        self.port: int | None = None  # the bound port, once listening

    def mail_stored(self) -> None:
        """The spool's mover moves the mail and wakes the worker; without a spool
        (PostgreSQL) the worker reads the queue itself."""
        (self.spooled if self.spool is not None else self.work).set()

    def woken(self) -> None:
        """The process before this one stored mail (the listener) or queued replies (the
        players)."""
        if "worker" in self.roles:
            self.mail_stored()
        if "sender" in self.roles:
            self.send.set()

    async def enqueue(self, raw: bytes, received_at: datetime, envelope_from: str | None) -> bool:
        """Store a mail straight into the inbound queue (no spool: PostgreSQL)."""
        return (await asyncio.to_thread(enqueue, self.sessions, raw, received_at, envelope_from))[1]

    def stop(self) -> None:
        """Begin a clean shutdown (SIGTERM, SIGINT, the pipe from the process before
        closing); said once, however many of them come."""
        if self.stopping.is_set():
            return
        log.info("shutting down (%s)", ", ".join(self.roles))
        self.handler.stopping = True
        self.stopping.set()
        self.work.set()

    async def run(self, ready: asyncio.Event | None = None, install_signals: bool = True) -> None:
        loop = asyncio.get_running_loop()
        if install_signals:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self.stop)
        smtp = self.config.smtp
        listener = None
        if "smtp" in self.roles:
            listener = await loop.create_server(
                smtp_factory(self.handler, self.config.domain, smtp.max_message_size, smtp.protocol),
                smtp.host, smtp.port)
            self.port = listener.sockets[0].getsockname()[1]
            log.info("listening on %s:%s for %s", smtp.host, self.port, self.config.server.address)
        if ready is not None:
            ready.set()
        self.work.set()  # mail and replies left by a previous run go out at once
        self.send.set()
        self.spooled.set()
        tasks = {*self.roles, *(["spool"] if "worker" in self.roles else [])}  # the worker's side moves the spool
        loops = {role: asyncio.create_task(run()) for role, run in
                 (("spool", self.spool_loop), ("worker", self.work_loop), ("scheduler", self.schedule_loop), ("robots", self.robots_loop),
                  ("sender", self.send_loop))
                 if role in tasks}
        await self.stopping.wait()
        if listener is not None:
            listener.close()
            await self.drain()
        for role, event in (("spool", self.spooled), ("worker", None), ("scheduler", self.schedule), ("robots", self.robots),
                            ("sender", self.send)):
            if role in loops:  # in this order: what the worker queues last still goes out
                if event is not None:
                    event.set()
                await loops[role]
        if "sender" in loops:
            await self.deliver()  # whatever the worker queued while the sender was busy
        if self.spool is not None:
            self.spool.close()

    async def drain(self) -> None:
        """Let every transaction in hand finish (its 250 is sent), then hang up."""
        deadline = asyncio.get_running_loop().time() + DRAIN_SECONDS
        while not self.handler.idle() and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        for connection in list(self.handler.connections):
            if connection.transport is not None:
                connection.transport.close()

    async def spool_loop(self) -> None:
        """The worker's side: move spooled mail into the inbound queue as it comes (and
        what a previous run left), a batch at a time, waking the worker after each; the
        last pass runs once the listener is closed."""
        if self.spool is None:
            return
        while True:
            await woken(self.spooled, POLL_SECONDS)
            moved = SPOOL_BATCH
            while moved == SPOOL_BATCH:  # a batch not full: the spool held no more (new mail wakes us)
                try:
                    moved = await asyncio.to_thread(self.spool.move, self.sessions)
                except Exception:  # noqa: BLE001 - e.g. the database is locked: the mail stays spooled
                    log.exception("moving spooled mail failed; trying again")
                    moved = 0
                if moved:
                    self.work.set()
            if self.stopping.is_set():
                try:
                    await asyncio.to_thread(self.spool.forget_moved)
                except Exception:  # noqa: BLE001 - moved again at the next start, and stored once
                    log.exception("deleting moved mail from the spool failed")
                return

    async def work_loop(self) -> None:
        """Process stored mail as soon as it arrives; stop after the mail in hand."""
        loop = asyncio.get_running_loop()
        while True:
            await woken(self.work, POLL_SECONDS)
            try:
                processed = await asyncio.to_thread(self.worker.run_pending, self.stopping.is_set,
                                                    lambda: loop.call_soon_threadsafe(self.replies_queued))
            except Exception:  # noqa: BLE001 - e.g. the database is locked: the mail stays queued
                log.exception("reading the queue failed; trying again")
                processed = 0
            if processed:
                await self.wake_for_played()
            if self.stopping.is_set():
                return

    async def wake_for_played(self) -> None:
        """After mail was played: wake the scheduler if a deadline, digest or expiry now
        falls due before it would wake by itself, and the robots if a board waits for
        one. One read, where waking both after every batch cost a write turn each and
        1.1-2.9 ms of CPU (their passes find nothing to do after most moves); if the
        read fails, both are woken. Neither in this process: nothing to read."""
        if not {"scheduler", "robots"} & set(self.roles):
            return
        try:
            due, robots_wait = await asyncio.to_thread(due_and_robots, self.sessions)
        except Exception:  # noqa: BLE001 - e.g. the database is locked: they look for themselves
            log.exception("reading the due moments failed; waking the scheduler and the robots")
            due, robots_wait = utcnow(), True
        if self.sleeps_until is None or (due is not None and due < self.sleeps_until):
            self.schedule.set()
        if robots_wait:
            self.robots.set()

    async def schedule_loop(self) -> None:
        """Fire deadlines as they fall due: sleep until the earliest one (or a change),
        and note every RETRY_SECONDS that the server is alive (a write: not on every
        wake-up, which a played mail may cause: `wake_for_played`)."""
        clock, noted = asyncio.get_running_loop().time, None
        while not self.stopping.is_set():
            try:
                if noted is None or clock() - noted >= RETRY_SECONDS:
                    await asyncio.to_thread(keep_alive, self.sessions, self.config, utcnow())
                    noted = clock()
                fired = await asyncio.to_thread(run_due, self.sessions, self.config, utcnow())
                due = await asyncio.to_thread(earliest_due, self.sessions)
            except Exception:  # noqa: BLE001 - e.g. a move raced the deadline; try again soon
                log.exception("running deadlines failed; trying again")
                fired, due = 0, None
            if fired:
                self.replies_queued()
                self.robots.set()
            wait = RETRY_SECONDS if due is None else min(RETRY_SECONDS, max(0.0, (due - utcnow()).total_seconds()))
            self.sleeps_until = utcnow() + timedelta(seconds=wait)
            await woken(self.schedule, wait + 0.01)
            self.sleeps_until = None

    async def robots_loop(self) -> None:
        """Play the robots' moves as their turns come (`robots/turns.py`), in a thread,
        so that SMTP and the other roles go on while a robot thinks; boards changed by
        another process are noticed by a light poll."""
        while not self.stopping.is_set():
            try:
                played = await asyncio.to_thread(play_robots, self.sessions, self.config, utcnow(),
                                                 self.stopping.is_set)
            except Exception:  # noqa: BLE001 - e.g. the database is busy: the boards still wait
                log.exception("playing the robots' moves failed; trying again")
                played = 0
            if played:
                self.replies_queued()
                self.schedule.set()
            await woken(self.robots, POLL_SECONDS)

    async def send_loop(self) -> None:
        """Deliver replies as soon as they are queued; retry deferred ones now and then.
        Replies queued by another process (a worker, a scheduler or robots apart) are
        noticed by a light poll."""
        apart = not {"worker", "scheduler", "robots"} <= set(self.roles)
        clock, last = asyncio.get_running_loop().time, -SEND_GAP_SECONDS
        while True:
            await woken(self.send, POLL_SECONDS if apart else RETRY_SECONDS)
            if not self.stopping.is_set() and clock() - last < SEND_GAP_SECONDS:
                await asyncio.sleep(SEND_GAP_SECONDS - (clock() - last))  # the replies queued meanwhile go too
            last = clock()
            await self.deliver()
            if self.stopping.is_set():
                return

    async def deliver(self) -> None:
        try:
            await asyncio.to_thread(deliver_queued, self.sessions, self.transport, utcnow())
        except Exception:  # noqa: BLE001 - the replies stay queued for the next pass
            log.exception("delivering replies failed; they stay queued")


PLAYING = ("worker", "scheduler", "robots")  # the roles that play mail and queue replies


def serve(config: Config, sessions: sessionmaker[Session], roles: tuple[str, ...] = ROLES) -> int:
    """Run `roles` until SIGTERM or SIGINT; the exit status. Where the system can fork,
    the listener, the roles that play (`PLAYING`) and the sender each run in a process
    of their own: in one they shared an interpreter lock, and acceptance ran at the
    worker's pace and the worker at the sender's.

    Each process is woken through a pipe by the one before it: the players by the
    listener for every stored mail, the sender by the players for every reply
    queued. Each stops when the pipe from the one before it closes (a shutdown, or
    that process's death), after its work in hand, so the sender's last pass comes
    after the worker's last mail. The listener stops if another process ends."""
    playing = tuple(role for role in roles if role in PLAYING)
    sending = ("sender",) if "sender" in roles else ()
    engine = sessions.kw["bind"]
    if "smtp" not in roles or not (playing or sending) or not hasattr(os, "fork") or in_memory_sqlite(engine.url):
        asyncio.run(Server(config, sessions, roles=roles).run())
        return 0
    engine.dispose()  # no connection crosses a fork
    parent = os.getpid()
    to_sender = os.pipe() if sending else None
    to_players = os.pipe() if playing else None
    pipes = [end for pipe in (to_sender, to_players) if pipe for end in pipe]
    sides = {}  # name: pid
    if sending:  # it stops on its pipe's closing only: a Ctrl-C must not stop it before the worker's last replies
        sides["sender"] = start_side(config, sessions, sending, to_sender[0], None, parent, pipes, signals=False)
    if playing:
        sides[playing[0]] = start_side(config, sessions, playing, to_players[0], to_sender[1] if to_sender else None,
                                       parent, pipes)
    wake = (to_players or to_sender)[1]  # the first process after the listener's
    for end in pipes:
        if end != wake:
            os.close(end)  # the players' process holds the sender's pipe: its end closes with them
    os.set_blocking(wake, False)
    try:
        asyncio.run(_listening_beside(Server(config, sessions, roles=("smtp",)), wake, sides))
    finally:
        os.close(wake)  # the next process finishes its work in hand and stops, and then the one after it
        codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in sides.values()]
    return 0 if not any(codes) else 1


def start_side(config: Config, sessions: sessionmaker[Session], roles: tuple[str, ...], woken_by: int,
               wakes: int | None, parent: int, pipes: list[int], signals: bool = True) -> int:
    """Fork the process of `roles`, at a lower priority (a `250` is awaited, a board
    mail is not), named for its first role; its pid. It begins once the process before
    it writes its first byte to `woken_by` (the listener listens: if the port was
    taken, its error is the only one said), and then writes one to `wakes` itself."""
    pid = os.fork()
    if pid:
        return pid
    for end in pipes:
        if end not in (woken_by, wakes):
            os.close(end)
    code = 1
    try:
        for sig in (signal.SIGTERM, signal.SIGINT):  # until `Server.run` takes them: the listener
            signal.signal(sig, signal.SIG_IGN)  # has them too, and its pipe's end closing stops us
        die_with_parent(parent, f"pbmserv {roles[0]}")
        if not os.read(woken_by, 1):  # the process before never began
            os._exit(0)
        os.nice(WORKER_NICENESS)
        server = Server(config, sessions, roles=roles)
        if wakes is not None:
            os.set_blocking(wakes, False)
            server.replies_queued = lambda: poke(wakes)
            poke(wakes)
        asyncio.run(_woken_by(server, woken_by, signals))
        code = 0
    except BaseException:  # noqa: BLE001 - said before the process ends
        log.exception("the %s's process failed", roles[0])
    finally:
        logging.shutdown()
        os._exit(code)


def poke(pipe: int) -> None:
    """One byte down `pipe` to wake the process at its other end."""
    try:
        os.write(pipe, b"\0")
    except (BlockingIOError, BrokenPipeError):  # a full pipe wakes it all the same; a closed one is gone
        pass


async def _listening_beside(server: Server, wake: int, sides: dict[str, int]) -> None:
    def gone(name: str, pid: int, watch: int) -> None:
        loop.remove_reader(watch)
        if not server.stopping.is_set():  # not a signal that came to all (Ctrl-C)
            if name == "sender" and len(sides) == 2 and stopped_cleanly(watch):
                # it stops cleanly only when the players' process closes its pipe: that
                # one ended first, though its own end may be seen a moment later
                name = next(other for other in sides if other != "sender")
                pid = sides[name]
            log.error("the %s's process (pid %s) ended; the listener stops too", name, pid)
            server.stop()

    loop = asyncio.get_running_loop()
    server.handler.on_stored = lambda: poke(wake)
    listening = asyncio.Event()

    async def announce() -> None:  # the first byte lets the others begin
        await listening.wait()
        poke(wake)

    announcing = loop.create_task(announce())
    watches = {}  # pidfd: (name, pid); without pidfds a dead process is seen at the end
    if hasattr(os, "pidfd_open"):
        watches = {os.pidfd_open(pid): (name, pid) for name, pid in sides.items()}
    for watch, (name, pid) in watches.items():
        loop.add_reader(watch, gone, name, pid, watch)
    try:
        await server.run(listening)
    finally:
        announcing.cancel()
        for watch in watches:
            loop.remove_reader(watch)
            os.close(watch)


def stopped_cleanly(pidfd: int) -> bool:
    """Whether the ended process of `pidfd` exited with 0, peeked at without reaping it."""
    try:
        ended = os.waitid(os.P_PIDFD, pidfd, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except (OSError, AttributeError):
        return False
    return ended is not None and ended.si_code == os.CLD_EXITED and ended.si_status == 0


async def _woken_by(server: Server, pipe: int, signals: bool) -> None:
    """Run `server`, woken by each byte down `pipe` (mail stored, or replies queued),
    stopped by its closing."""
    def woken() -> None:
        if os.read(pipe, 4096):
            server.woken()
        else:  # the process before has closed its end: it stopped, or it died
            loop.remove_reader(pipe)
            server.stop()

    loop = asyncio.get_running_loop()
    loop.add_reader(pipe, woken)
    await server.run(install_signals=signals)


def die_with_parent(parent: int, name: str) -> None:
    """Have the kernel kill this process when its parent dies (Linux): a listener
    killed with SIGKILL takes the others with it, as when all were one process. The
    process is named `name` too, as `ps` and `top` show it."""
    try:
        import ctypes
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        prctl(15, name.encode()[:15])  # PR_SET_NAME
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the call
        os._exit(1)
