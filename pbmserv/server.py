"""`pbmserv serve`: the SMTP listener, the worker, the scheduler and the sender in one
asyncio loop.

The listener only stores mail (in its spool, moved into the inbound queue in batches)
and wakes the worker; the worker, the scheduler and the
sender do their blocking database and network work in threads, one batch at a time, so
the loop stays free to answer SMTP. Mail stored by another process (`pbmserv deliver`)
is noticed by a light poll. A process may take only some of these roles (`--role`),
with other processes on the same database taking the rest.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from datetime import datetime, timezone

from sqlalchemy.orm import Session, sessionmaker

from .config import Config
from .mail.outbound import deliver_queued, make_transport
from .mail.smtp import InboundHandler, smtp_factory
from .robots.turns import play_robots
from .scheduler import earliest_due, keep_alive, run_due
from .store.queue import enqueue
from .store.spool import Spool, spool_path
from .worker import Worker

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0  # how soon mail stored by another process is noticed
RETRY_SECONDS = 30.0  # how often deferred replies are looked at again
DRAIN_SECONDS = 30.0  # how long shutdown waits for a transaction in hand


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
        path = spool_path(config.smtp.spool, config.database.url) if "smtp" in roles else None
        self.spool = Spool(path, config.database.url, config.database.busy_timeout) if path else None
        self.handler = InboundHandler(self.spool.store if self.spool else self.enqueue, config.server.address,
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

    def enqueue(self, raw: bytes, received_at: datetime, envelope_from: str | None) -> bool:
        """Store a mail straight into the inbound queue (no spool: PostgreSQL)."""
        return enqueue(self.sessions, raw, received_at, envelope_from)[1]

    def stop(self) -> None:
        """Begin a clean shutdown (SIGTERM, SIGINT)."""
        log.info("shutting down")
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
        loops = {role: asyncio.create_task(run()) for role, run in
                 (("smtp", self.spool_loop), ("worker", self.work_loop), ("scheduler", self.schedule_loop), ("robots", self.robots_loop),
                  ("sender", self.send_loop))
                 if role in self.roles}
        await self.stopping.wait()
        if listener is not None:
            listener.close()
            await self.drain()
        for role, event in (("smtp", self.spooled), ("worker", None), ("scheduler", self.schedule), ("robots", self.robots),
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
        """Move spooled mail into the inbound queue as it comes (and what a previous run
        left), a batch at a time, waking the worker after each; the last pass runs once
        the listener is closed."""
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
