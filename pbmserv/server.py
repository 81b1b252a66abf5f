"""`pbmserv serve`: the SMTP listener, the worker, the scheduler, the robots and the
sender, each an asyncio task of a `Server`.

The listener only stores mail (in its spool, which the worker's side moves into the
inbound queue in batches) and wakes the worker; the other roles do their blocking
database and network work in threads, one batch at a time. Mail stored by another
process (`pbmserv deliver`) is noticed by a light poll. A process may take only some
of these roles (`--role`), with other processes on the same database taking the rest;
`serve` itself runs the listener in a process of its own beside the other roles
(`serve`, below), so that a `250` never waits for the worker's Python.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from datetime import datetime, timezone

from sqlalchemy.orm import Session, sessionmaker

from .config import Config
from .mail.outbound import deliver_queued, make_transport
from .mail.smtp import InboundHandler, smtp_factory
from .robots.turns import play_robots
from .scheduler import earliest_due, keep_alive, run_due
from .store.queue import enqueue
from .store.db import in_memory_sqlite
from .store.spool import Spool, spool_path
from .worker import Worker

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0  # how soon mail stored by another process is noticed
RETRY_SECONDS = 30.0  # how often deferred replies are looked at again
DRAIN_SECONDS = 30.0  # how long shutdown waits for a transaction in hand
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
                                      self.spooled.set if self.spool else self.wake_worker,
                                      max_recipients=config.smtp.max_recipients)
        self.work = asyncio.Event()
        self.send = asyncio.Event()
        self.schedule = asyncio.Event()
        self.robots = asyncio.Event()
        self.stopping = asyncio.Event()
        self.port: int | None = None  # the bound port, once listening

    def wake_worker(self) -> None:
        self.work.set()

    async def enqueue(self, raw: bytes, received_at: datetime, envelope_from: str | None) -> bool:
        """Store a mail straight into the inbound queue (no spool: PostgreSQL)."""
        return (await asyncio.to_thread(enqueue, self.sessions, raw, received_at, envelope_from))[1]

    def stop(self) -> None:
        """Begin a clean shutdown (SIGTERM, SIGINT)."""
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
            moved = True
            while moved:
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
        while True:
            await woken(self.work, POLL_SECONDS)
            try:
                processed = await asyncio.to_thread(self.worker.run_pending, self.stopping.is_set)
            except Exception:  # noqa: BLE001 - e.g. the database is locked: the mail stays queued
                log.exception("reading the queue failed; trying again")
                processed = 0
            if processed:
                self.send.set()
                self.schedule.set()  # the mail may have started or ended deadlines
                self.robots.set()  # or given a robot its turn
            if self.stopping.is_set():
                return

    async def schedule_loop(self) -> None:
        """Fire deadlines as they fall due: sleep until the earliest one (or a change),
        and note every RETRY_SECONDS that the server is alive (a write: not on every
        wake-up, which every played mail causes)."""
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
                self.send.set()
                self.robots.set()
            wait = RETRY_SECONDS if due is None else max(0.0, (due - utcnow()).total_seconds())
            await woken(self.schedule, min(wait, RETRY_SECONDS) + 0.01)

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
                self.send.set()
                self.schedule.set()
            await woken(self.robots, POLL_SECONDS)

    async def send_loop(self) -> None:
        """Deliver replies as soon as they are queued; retry deferred ones now and then.
        Replies queued by another process (a worker, a scheduler or robots apart) are
        noticed by a light poll."""
        apart = not {"worker", "scheduler", "robots"} <= set(self.roles)
        while True:
            await woken(self.send, POLL_SECONDS if apart else RETRY_SECONDS)
            await self.deliver()
            if self.stopping.is_set():
                return

    async def deliver(self) -> None:
        try:
            await asyncio.to_thread(deliver_queued, self.sessions, self.transport, utcnow())
        except Exception:  # noqa: BLE001 - the replies stay queued for the next pass
            log.exception("delivering replies failed; they stay queued")


def serve(config: Config, sessions: sessionmaker[Session], roles: tuple[str, ...] = ROLES) -> int:
    """Run `roles` until SIGTERM or SIGINT; the exit status. The listener and the other
    roles, when asked together, run in two processes (where the system can fork): in
    one they shared an interpreter lock, and acceptance ran at the worker's pace. The
    listener wakes the other process through a pipe for every stored mail; its end of
    the pipe closing (a shutdown, or the listener's death) stops that process too, and
    the listener stops if the other process ends."""
    rest = tuple(role for role in roles if role != "smtp")
    engine = sessions.kw["bind"]
    if "smtp" not in roles or not rest or not hasattr(os, "fork") or in_memory_sqlite(engine.url):
        asyncio.run(Server(config, sessions, roles=roles).run())
        return 0
    engine.dispose()  # no connection crosses the fork
    wake_read, wake_write = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the worker's side, once the listener listens (its first byte)
        os.close(wake_write)
        code = 1
        try:
            for sig in (signal.SIGTERM, signal.SIGINT):  # until `Server.run` takes them: the listener
                signal.signal(sig, signal.SIG_IGN)  # has them too, and its pipe's end closing stops us
            die_with_parent(parent)
            if not os.read(wake_read, 1):  # it never did: its error is the only one said
                os._exit(0)
            os.nice(WORKER_NICENESS)
            server = Server(config, sessions, roles=rest)
            asyncio.run(_woken_by_listener(server, wake_read))
            code = 0
        except BaseException:  # noqa: BLE001 - said before the process ends
            log.exception("the worker's process failed")
        finally:
            logging.shutdown()
            os._exit(code)
    os.close(wake_read)
    os.set_blocking(wake_write, False)
    try:
        asyncio.run(_listening_beside(Server(config, sessions, roles=("smtp",)), wake_write, pid))
    finally:
        os.close(wake_write)  # the other side finishes its mail in hand and stops
        _, status = os.waitpid(pid, 0)
    return 0 if os.waitstatus_to_exitcode(status) == 0 else 1


async def _listening_beside(server: Server, wake_write: int, pid: int) -> None:
    def wake() -> None:
        try:
            os.write(wake_write, b"\0")
        except (BlockingIOError, BrokenPipeError):  # a full pipe wakes it all the same
            pass

    def gone() -> None:
        loop.remove_reader(watch)
        if not server.stopping.is_set():  # not a signal that came to both (Ctrl-C)
            log.error("the worker's process (pid %s) ended; the listener stops too", pid)
            server.stop()

    loop = asyncio.get_running_loop()
    server.handler.on_stored = wake
    listening = asyncio.Event()

    async def announce() -> None:  # the first byte lets the worker's side begin
        await listening.wait()
        wake()

    announcing = loop.create_task(announce())
    watch = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None  # elsewhere a dead worker is seen at the end
    if watch is not None:
        loop.add_reader(watch, gone)
    try:
        await server.run(listening)
    finally:
        announcing.cancel()
        if watch is not None:
            loop.remove_reader(watch)
            os.close(watch)


async def _woken_by_listener(server: Server, wake_read: int) -> None:
    def woken() -> None:
        if os.read(wake_read, 4096):
            server.spooled.set()
        else:  # the listener has closed its end: it stopped, or it died
            loop.remove_reader(wake_read)
            server.stop()

    loop = asyncio.get_running_loop()
    loop.add_reader(wake_read, woken)
    await server.run()


def die_with_parent(parent: int) -> None:
    """Have the kernel kill this process when its parent dies (Linux): a listener
    killed with SIGKILL takes its worker with it, as when both were one process."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the call
        os._exit(1)
