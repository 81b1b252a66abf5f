"""A real Postfix (Debian's package) in front of pbmserv, configured with the lines of
docs/deployment.md section 2: the `lmtp` transport to `serve` with `[smtp] protocol =
"lmtp"`, and the `pipe` service running `pbmserv deliver` (flags=DORq). Mail goes in
at Postfix's smtpd on loopback and must come out as pbmserv's replies (or stored rows).

Each test runs a private Postfix instance inside a temporary directory (`Postfix`
below); the system's own instance is never started or touched. Needs root (Postfix's
master runs as root and its pipe switches to an unprivileged user); skipped without
Postfix or root (.ci/postfix installs it in CI).
"""

from __future__ import annotations

import functools
import json
import os
import pwd
import re
import shutil
import smtplib
import subprocess
import sys
import sysconfig
import tempfile
import time
import warnings
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from sqlalchemy import select

from conftest import deployment_block, maildir_messages, plain
from mailgen import game_mails, mail

POSTFIX = shutil.which("postfix") or shutil.which("postfix", path="/usr/sbin:/usr/local/sbin")
if POSTFIX is None:
    pytest.skip("Postfix is not installed (Debian: apt-get install postfix; .ci/postfix does it in CI)",
                allow_module_level=True)
if os.geteuid() != 0:
    pytest.skip("a private Postfix instance needs root (its master, and the pipe's switch to another user)",
                allow_module_level=True)

from pbmserv.store.db import open_database  # noqa: E402
from pbmserv.store.models import Inbound  # noqa: E402
from test_smtp import RunningServer, free_port, read_maildir  # noqa: E402

DOMAIN = "games.test"
ADDRESS = f"pbmserv@{DOMAIN}"
ALICE, BOB = "alice@example.org", "bob@example.org"
REPLY_ADDRESS = re.compile(rf"pbmserv\+1-1-[a-z2-7]{{20}}@{re.escape(DOMAIN)}")
WAIT = 60  # seconds: generous, every wait below ends as soon as its condition holds
PIPE_USER = "nobody"  # pipe(8) refuses root and the mail_owner; any unprivileged user would do
CLIENT = "client.test"  # the HELO name of this test's SMTP client, seen in Postfix's Received:


def documented(*markers: str, **replacements: str) -> str:
    """A block of docs/deployment.md for this test's Postfix: its domain, and `replacements`."""
    return deployment_block(*markers, **{"games.example.org": DOMAIN, **replacements})


def main_cf(block: str) -> tuple[dict[str, str], str]:
    """A documented block as (its main.cf settings, the transport table that follows
    its `# /etc/postfix/transport` line, if any)."""
    settings, _, table = block.partition("# ")
    return (dict(line.split(" = ", 1) for line in settings.splitlines() if line.strip()),
            table.partition("\n")[2])


def at_least(count: int, items: list) -> list | None:
    return items if len(items) >= count else None


class Postfix:
    """A private Postfix instance wholly inside one temporary directory: its own
    config_directory (`postfix -c DIR`), queue and data directories, an smtpd on a
    free loopback port, a log file. Nothing is read from or written to /etc/postfix or
    the system's queue, so a system Postfix (running or not) and other test runs are
    not disturbed. `start` writes main.cf and master.cf from a base that makes the
    instance self-contained, plus the lines of the configuration under test."""

    BASE = {
        "compatibility_level": "3.6",
        "mail_owner": "postfix",
        "myhostname": f"mx.{DOMAIN}",
        "mydomain": DOMAIN,
        "myorigin": "$myhostname",
        "mydestination": "",  # no local delivery: only what the test routes is accepted
        "inet_interfaces": "127.0.0.1",
        "inet_protocols": "ipv4",
        "mynetworks": "127.0.0.0/8",
        "relayhost": "",
        "alias_maps": "",
        "alias_database": "",
        "local_recipient_maps": "",
        "smtpd_peername_lookup": "no",  # no DNS at all: loopback only
        "smtp_dns_support_level": "disabled",
        "lmtp_dns_support_level": "disabled",
        "smtp_host_lookup": "native",
        "lmtp_host_lookup": "native",
        # nothing leaves the machine: mail for the outside (replies, bounces) stays queued
        "defer_transports": "smtp",
        # deferred mail waits 5 s, not 5 minutes, before a retry (the tests flush the
        # queue instead). Not 1 s: a file that cools down for less than a second may be
        # moved back into the active queue while its delivery agent still holds its lock;
        # the queue manager then skips it ("still being delivered") and loses track of it.
        "queue_run_delay": "1s",
        "minimal_backoff_time": "5s",
        "maximal_backoff_time": "5s",
    }
    SERVICES = """\
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
proxywrite unix -       -       n       -       1       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
lmtp      unix  -       -       n       -       -       lmtp
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
"""  # Debian's master.cf without chroot (a chroot would need copies of /etc in the queue)

    def __init__(self) -> None:
        # not pytest's tmp_path: that sits under a 0700 folder the pipe's user cannot pass
        self.root = Path(tempfile.mkdtemp(prefix="pbmserv-postfix-"))
        self.root.chmod(0o755)
        self.etc = self.root / "etc"
        self.etc.mkdir()
        (self.root / "queue").mkdir()  # Postfix fills it (and data/) with its own folders
        self.log_file = self.root / "maillog"
        self.port = 0
        self.started = False
        self.bin = Path(POSTFIX).parent

    def command(self, name: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run([str(self.bin / name), "-c", str(self.etc), *args],
                                capture_output=True, text=True, timeout=30)
        if check and result.returncode != 0:
            raise AssertionError(f"{name} {' '.join(args)} failed: {result.stdout}{result.stderr}\n{self.log()}")
        return result

    def start(self, main: dict[str, str], services: str = "", tables: dict[str, str] | None = None) -> Postfix:
        """Start with the base settings plus `main` (main.cf), `services` (master.cf
        lines) and `tables` (file name: text, each `postmap`ped into a hash: table in
        the config directory)."""
        for _attempt in range(3):  # the free port may be taken between looking and binding
            self.port = free_port()
            settings = {**self.BASE,
                        "queue_directory": str(self.root / "queue"), "data_directory": str(self.root / "data"),
                        # Postfix 3.7 logs to a file through postlogd; it must lie under a prefix
                        "maillog_file": str(self.log_file), "maillog_file_prefixes": str(self.root),
                        **main}
            self.write("main.cf", "".join(f"{key} = {value}\n" for key, value in settings.items()))
            self.write("master.cf", f"127.0.0.1:{self.port} inet n - n - - smtpd\n" + self.SERVICES + services)
            for name, text in (tables or {}).items():
                self.write(name, text)
                self.command("postmap", f"hash:{self.etc / name}")
            started = self.command("postfix", "start", check=False)  # master -w: 0 once it listens
            if started.returncode == 0:
                self.started = True
                return self
            if "Address already in use" not in self.log():
                break
        raise AssertionError(f"postfix start failed: {started.stdout}{started.stderr}\n{self.log()}")

    def write(self, name: str, text: str) -> None:
        """A configuration file, dated a few seconds back: Postfix waits (up to some
        seconds) while a file it reads is younger than a second, taking it for one
        being edited."""
        path = self.etc / name
        path.write_text(text)
        past = time.time() - 5
        os.utime(path, (past, past))

    def send(self, message: EmailMessage | bytes, recipients: list[str], sender: str | None = None) -> None:
        with smtplib.SMTP("127.0.0.1", self.port, local_hostname=CLIENT, timeout=30) as client:
            if isinstance(message, bytes):
                refused = client.sendmail(sender or "", recipients, message)
            else:
                refused = client.send_message(message, from_addr=sender, to_addrs=recipients)
        assert refused == {}

    def queue(self) -> list[dict]:
        """The mail Postfix holds: `postqueue -j`, one JSON object per message."""
        return [json.loads(line) for line in self.command("postqueue", "-j").stdout.splitlines() if line]

    def flush(self) -> None:
        """Retry the deferred mail now (needs the pickup service)."""
        self.command("postqueue", "-f")

    def log(self) -> str:
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else "(no log)"

    def wait_for(self, condition, what: str, timeout: float = WAIT):
        """Poll `condition` until it returns something true; on timeout, fail with the
        end of Postfix's log, where the reason (a bounce, a pipe error) is written."""
        deadline = time.monotonic() + timeout
        while True:
            result = condition()
            if result:
                return result
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; Postfix log:\n{self.log()[-5000:]}")
            time.sleep(0.05)

    def replies(self, maildir: Path, count: int) -> list:
        """Wait until at least `count` replies are in the Maildir; all of them, in order."""
        return self.wait_for(lambda: at_least(count, maildir_messages(maildir)), f"{count} replies in {maildir}")

    def stop(self) -> None:
        """`postfix stop`, then make sure the master is gone (`postfix status` fails
        once its lock is free) before the directory is removed."""
        if self.started:
            self.command("postfix", "stop", check=False)
            deadline = time.monotonic() + 10
            while self.command("postfix", "status", check=False).returncode == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            self.started = False
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def postfix():
    instance = Postfix()
    yield instance
    instance.stop()


def lmtp_main(port: int) -> dict[str, str]:
    """docs/deployment.md §2, LMTP, "for a domain of its own"."""
    settings, _ = main_cf(documented("virtual_transport = lmtp:inet:127.0.0.1:2525",
                                     **{"127.0.0.1:2525": f"127.0.0.1:{port}"}))
    assert settings["virtual_mailbox_domains"] == DOMAIN
    return settings


def readdressed(message: EmailMessage, to: str = ADDRESS) -> EmailMessage:
    message.replace_header("To", to)
    return message


def superwari_game(postfix: Postfix, maildir: Path) -> str:
    """Sign-ups, a challenge and alice's first move through Postfix, each sent once the
    one before is answered (Postfix may deliver queued mail in any order); bob's reply
    address."""
    for message, answered in zip(game_mails("superwari", seed=3)[:4], (1, 2, 4, 6)):
        postfix.send(readdressed(message), [ADDRESS])
        replies = postfix.replies(maildir, answered)
    assert [(r["To"], r["Subject"]) for r in replies] == [
        (ALICE, "pbmserv signup"), (BOB, "pbmserv signup"),
        (ALICE, "New Super-Wari Board 101 alice **"), (BOB, "New Super-Wari Board 101 alice **"),
        (ALICE, "Super-Wari Board 101 bob"), (BOB, "Super-Wari Board 101 bob")]
    assert REPLY_ADDRESS.fullmatch(replies[-1]["Reply-To"])
    return replies[-1]["Reply-To"]


def bobs_blind_copy() -> EmailMessage:
    """Bob's move, written to alice: his reply address is only in the envelope (a Bcc),
    so pbmserv sees it only in the header the delivery adds (X-Original-To and
    Delivered-To)."""
    date = game_mails("superwari", seed=3)[3]["Date"].datetime + timedelta(hours=1)
    message = mail(BOB, "Re: Super-Wari Board 101 bob", "a\nMy turn.\n", date, 100)
    message.replace_header("To", ALICE)
    return message


AFTER_BOBS_MOVE = [(ALICE, "Super-Wari Board 101 alice **"), (BOB, "Super-Wari Board 101 alice **")]


def received(newline: str, recipient: str | None) -> str:
    """A pattern of the Received: line Postfix's smtpd adds ("for" only when the mail
    has one recipient)."""
    return (rf"Received: from client\.test \(unknown \[127\.0\.0\.1\]\){newline}\tby mx\.games\.test \(Postfix\) "
            rf"with ESMTP id [0-9A-F]+" + (rf"{newline}\tfor <{re.escape(recipient)}>; " if recipient else ";"))


def help_mail(number: int, to: str = ADDRESS) -> bytes:
    return (f"From: {ALICE}\r\nTo: {to}\r\nSubject: help\r\nMessage-ID: <help-{number}@example.org>\r\n"
            f"Date: Sun, 1 Nov 2026 09:00:00 +0000\r\n\r\nhelp\r\n").encode()


# --- LMTP ---------------------------------------------------------------------------------


def test_a_game_and_a_blind_copy_to_a_reply_address_over_lmtp_through_postfix(postfix, tmp_path):
    running = RunningServer(tmp_path, smtp={"protocol": "lmtp"}, server={"address": ADDRESS})
    try:
        postfix.start(lmtp_main(running.server.port))
        address = superwari_game(postfix, running.maildir)
        postfix.send(bobs_blind_copy(), [address])
        replies = postfix.replies(running.maildir, 8)
        assert [(r["To"], r["Subject"]) for r in replies[6:]] == AFTER_BOBS_MOVE
        assert "bob writes:\nMy turn.\n" in plain(replies[-1])
        with running.sessions() as session:
            raw = session.scalars(select(Inbound.raw).order_by(Inbound.id)).all()
        assert len(raw) == 5
        assert re.match("X-Original-To: pbmserv@games\\.test\r\n" + received("\r\n", ADDRESS), raw[0].decode())
        assert re.match(f"X-Original-To: {re.escape(address)}\r\n" + received("\r\n", address), raw[4].decode())
        postfix.wait_for(lambda: postfix.queue() == [], "Postfix's queue to empty")
    finally:
        running.stop()


def test_a_mail_for_two_addresses_is_stored_once_over_lmtp_with_a_transport_map(postfix, tmp_path):
    """The doc's other LMTP set-up ("one address among others": transport_maps), and
    Postfix handing two recipients over in one LMTP transaction."""
    running = RunningServer(tmp_path, smtp={"protocol": "lmtp"}, server={"address": ADDRESS})
    try:
        settings, table = main_cf(documented("transport_maps", "lmtp:inet:", **{
            "127.0.0.1:2525": f"127.0.0.1:{running.server.port}", "/etc/postfix/": f"{postfix.etc}/"}))
        # the doc's domain is one Postfix already receives for; here it must be named
        postfix.start({**settings, "virtual_mailbox_domains": DOMAIN}, tables={"transport": table})
        postfix.send(help_mail(1), [ADDRESS, "pbmserv+tag@games.test"], sender=ALICE)
        assert [r["Subject"] for r in postfix.replies(running.maildir, 1)] == ["pbmserv help"]
        with running.sessions() as session:
            raw = session.scalars(select(Inbound.raw)).all()
        assert len(raw) == 1
        # Postfix's queue manager sorts the recipients: "+" before "@"
        assert raw[0].startswith(
            b"X-Original-To: pbmserv+tag@games.test\r\nX-Original-To: pbmserv@games.test\r\nReceived: ")
        postfix.wait_for(lambda: postfix.log().count("status=sent (250 2.0.0 Stored)") == 2,
                         "Postfix to log both recipients delivered")
    finally:
        running.stop()


def test_replies_go_out_through_postfix(postfix, tmp_path):
    """`[outbound] transport = "smtp"` with Postfix's smtpd as the relay: the reply is
    in Postfix's queue, for the player (held there: nothing leaves this machine)."""
    lmtp_port = free_port()
    postfix.start(lmtp_main(lmtp_port))
    running = RunningServer(tmp_path, smtp={"protocol": "lmtp", "port": lmtp_port}, server={"address": ADDRESS},
                            outbound={"transport": "smtp", "relay_host": "127.0.0.1", "relay_port": postfix.port})
    try:
        postfix.send(help_mail(2), [ADDRESS], sender=ALICE)
        held = postfix.wait_for(lambda: [m for m in postfix.queue() if m["queue_name"] == "deferred"],
                                "the reply in Postfix's deferred queue")
        assert [[(r["address"], r["delay_reason"]) for r in m["recipients"]] for m in held] == [
            [(ALICE, "deferred transport")]]
        assert re.fullmatch(rf"pbmserv\+b-\d+-[a-z2-7]{{20}}@{DOMAIN}", held[0]["sender"])  # its own bounce address
        headers = postfix.command("postcat", "-h", "-q", held[0]["queue_id"]).stdout
        assert "\nSubject: pbmserv help\n" in headers and f"\nFrom: {ADDRESS}\n" in headers
        assert read_maildir(running.maildir) == []
    finally:
        running.stop()


def test_postfix_keeps_the_mail_while_pbmserv_is_stopped(postfix, tmp_path):
    """Nothing listens on the LMTP port: Postfix defers the mail (no bounce) and hands
    it over once pbmserv runs."""
    port = free_port()
    postfix.start(lmtp_main(port))
    postfix.send(help_mail(3), [ADDRESS], sender=ALICE)
    deferred = postfix.wait_for(lambda: [m for m in postfix.queue() if m["queue_name"] == "deferred"],
                                "the mail to be deferred")
    assert [[(r["address"], r["delay_reason"]) for r in m["recipients"]] for m in deferred] == [
        [(ADDRESS, f"connect to 127.0.0.1[127.0.0.1]:{port}: Connection refused")]]
    running = RunningServer(tmp_path, smtp={"protocol": "lmtp", "port": port}, server={"address": ADDRESS})
    try:
        postfix.flush()
        assert [r["Subject"] for r in postfix.replies(running.maildir, 1)] == ["pbmserv help"]
        postfix.wait_for(lambda: postfix.queue() == [], "Postfix's queue to empty")
        assert "status=bounced" not in postfix.log()
    finally:
        running.stop()


def test_postfix_passes_over_a_stopped_server_of_several_on_one_database(postfix, tmp_path, serve_url):
    """docs/deployment.md, several servers: two LMTP next-hops, two servers on one
    database (and one Maildir); while the first is stopped the second takes the mail."""
    servers = [RunningServer(tmp_path, url=serve_url, smtp={"protocol": "lmtp"}, server={"address": ADDRESS})
               for _ in range(2)]
    try:
        first, second = (f"[127.0.0.1]:{server.server.port}" for server in servers)
        settings, _ = main_cf(documented("virtual_transport = lmtp:[10.0.0.2]:2525, ",
                                         **{"[10.0.0.2]:2525": first, "[10.0.0.3]:2525": second}))
        postfix.start(settings)
        postfix.send(help_mail(1), [ADDRESS], sender=ALICE)
        postfix.replies(servers[0].maildir, 1)
        servers[0].stop()
        postfix.send(help_mail(2), [ADDRESS], sender=ALICE)
        assert [r["Subject"] for r in postfix.replies(servers[1].maildir, 2)] == ["pbmserv help"] * 2
        postfix.wait_for(lambda: postfix.queue() == [], "Postfix's queue to empty")
        delivered = re.findall(r"to=<pbmserv@games\.test>, relay=127\.0\.0\.1\[127\.0\.0\.1\]:(\d+)", postfix.log())
        assert delivered == [str(servers[0].server.port), str(servers[1].server.port)]
        with servers[1].sessions() as session:
            assert session.scalars(select(Inbound.status)).all() == ["done", "done"]
    finally:
        for server in servers:
            if server.thread.is_alive():
                server.stop()


# --- the pipe -----------------------------------------------------------------------------


def as_pipe_user(args: list[str]) -> subprocess.CompletedProcess:
    """Run a command with the pipe user's identity only, as pipe(8) runs it."""
    user = pwd.getpwnam(PIPE_USER)
    return subprocess.run(args, user=user.pw_uid, group=user.pw_gid, extra_groups=[], cwd="/",
                          env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=60)


SCRIPT = Path(sys.executable).parent / "pbmserv"  # the venv's console script
SYSTEM_PYTHON = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
SITE_PACKAGES = sysconfig.get_paths()["purelib"]  # the venv's, with pbmserv's editable install


def runs_as_pipe_user(args: list[str]) -> str | None:
    """None if the command exits 0 as the pipe user, else why not."""
    try:
        result = as_pipe_user(args)
    except OSError as error:  # exec failed: the file or its interpreter is out of reach
        return error.strerror
    return None if result.returncode == 0 else (result.stderr.strip().splitlines() or [str(result.returncode)])[-1]


@functools.cache
def pipe_launch() -> tuple[str, str]:
    """How the pipe runs pbmserv: ("script", "") if the pipe user can run the venv's
    console script; else ("launcher", why not) if it can import pbmserv with the
    system's Python of the same version (the venv's interpreter may lie in a folder
    closed to it, e.g. a pyenv Python under a 0700 /root); else ("skip", why)."""
    why = runs_as_pipe_user([str(SCRIPT), "--help"])
    if why is None:
        return "script", ""
    why = f"{PIPE_USER} cannot run {SCRIPT} ({why})"
    if not SYSTEM_PYTHON.exists():
        return "skip", f"{why}, and there is no {SYSTEM_PYTHON}"
    failed = runs_as_pipe_user([str(SYSTEM_PYTHON), "-IS", "-c",
                                f"import site; site.addsitedir({SITE_PACKAGES!r}); import pbmserv.cli"])
    if failed is not None:
        return "skip", f"{why}, nor import pbmserv with {SYSTEM_PYTHON} ({failed})"
    return "launcher", why


def pipe_command(folder: Path) -> Path:
    """The `pbmserv` the pipe runs: the venv's console script or, if the pipe user
    cannot run it, the same entry point in a launcher for the system's Python with the
    venv's packages (with a warning, so that it is seen); skips if neither can run."""
    how, why = pipe_launch()
    if how == "script":
        return SCRIPT
    if how == "skip":
        pytest.skip(f"the pipe cannot run pbmserv: {why}")
    (folder / "bin").mkdir(mode=0o755, exist_ok=True)
    launcher = folder / "bin" / "pbmserv"
    launcher.write_text(f"#!{SYSTEM_PYTHON} -IS\n"
                        "# pbmserv's console script, for a user who cannot run the venv's interpreter\n"
                        f"import site, sys\nsite.addsitedir({SITE_PACKAGES!r})\n"
                        "from pbmserv.cli import main\nsys.exit(main())\n")
    launcher.chmod(0o755)
    warnings.warn(f"the pipe runs pbmserv through a launcher for {SYSTEM_PYTHON} with the venv's packages: {why}")
    return launcher


class Pipe:
    """pbmserv's side of the pipe: a folder the pipe user owns for the SQLite database
    and the outbox, a configuration file, the database migrated by that user (as
    `pbmserv migrate` is run before the first mail), and the master.cf service."""

    def __init__(self, postfix: Postfix, process: bool = False, writable: bool = True):
        self.folder = postfix.root / "var"
        self.folder.mkdir(mode=0o755)
        self.url = f"sqlite:///{self.folder / 'pipe.db'}"
        self.outbox = self.folder / "outbox"
        self.config = postfix.root / "pbmserv.toml"
        self.config.write_text(f'[server]\naddress = "{ADDRESS}"\nseed = "test"\n\n'
                               f'[database]\nurl = "{self.url}"\n\n'
                               f'[outbound]\ntransport = "maildir"\nmaildir = "{self.outbox}"\n\n'
                               '[security]\npassword_cost = "fast"\ntrust_from = true\n')  # a closed set-up
        self.config.chmod(0o644)
        self.command = pipe_command(postfix.root)
        self.user = pwd.getpwnam(PIPE_USER)
        if writable:
            self.allow()
        # docs/deployment.md §2, with this test's user, paths and domain
        self.service = documented("flags=DORq", **{
            "user=pbmserv": f"user={PIPE_USER}", "/srv/pbmserv/.venv/bin/pbmserv": str(self.command),
            "/etc/pbmserv.toml": str(self.config) + (" --process" if process else "")})
        settings, table = main_cf(documented("pbmserv_destination_recipient_limit", **{
            "/etc/postfix/": f"{postfix.etc}/"}))
        self.main = {**settings, "virtual_mailbox_domains": DOMAIN}
        self.tables = {"transport": table}

    def allow(self) -> None:
        """Give the folder to the pipe user and create the database as that user."""
        os.chown(self.folder, self.user.pw_uid, self.user.pw_gid)
        migrated = as_pipe_user([str(self.command), "migrate", "--config", str(self.config)])
        assert migrated.returncode == 0, migrated.stderr

    def rows(self, sessions) -> list[Inbound]:
        with sessions() as session:
            return list(session.scalars(select(Inbound).order_by(Inbound.id)))


def test_the_documented_pipe_stores_mail_for_the_address_and_its_plus_addresses(postfix):
    pipe = Pipe(postfix)
    postfix.start(pipe.main, pipe.service, pipe.tables)
    sessions = open_database(pipe.url)
    postfix.send(help_mail(1), [ADDRESS], sender=ALICE)
    postfix.send(help_mail(2, to="pbmserv+tag@games.test"), ["pbmserv+tag@games.test"], sender=ALICE)
    postfix.send(help_mail(3), ["pbmserv+one@games.test", "pbmserv+two@games.test"], sender=ALICE)
    postfix.send(help_mail(4), [ADDRESS], sender="")  # a bounce: the null sender
    postfix.wait_for(lambda: at_least(4, pipe.rows(sessions)), "4 stored mails")
    postfix.wait_for(lambda: postfix.queue() == [], "Postfix's queue to empty")
    rows = {row.message_id: row for row in pipe.rows(sessions)}
    assert sorted(rows) == [f"<help-{n}@example.org>" for n in (1, 2, 3, 4)]
    assert {row.status for row in rows.values()} == {"queued"}  # stored; nobody plays them here

    def stored(number: int, sender: str, rcpt: str, only_recipient: bool = True) -> bool:
        row = rows[f"<help-{number}@example.org>"]
        prefix = (f"Return-Path: <{sender}>\nX-Original-To: {re.escape(rcpt)}\nDelivered-To: {re.escape(rcpt)}\n"
                  + received("\n", rcpt if only_recipient else None))
        return row.envelope_from == sender and bool(re.match(prefix, row.raw.decode()))

    assert stored(1, ALICE, ADDRESS)
    assert stored(2, ALICE, "pbmserv+tag@games.test")
    # one pipe run per recipient (the limit of 1); the second finds the mail stored already
    assert stored(3, ALICE, "pbmserv+one@games.test", False) or stored(3, ALICE, "pbmserv+two@games.test", False)
    # pipe(8) writes the null sender as MAILER-DAEMON, in ${sender} and in Return-Path:
    assert stored(4, "MAILER-DAEMON", ADDRESS)
    assert postfix.log().count("status=sent (delivered via pbmserv service)") == 5


def test_without_the_recipient_limit_the_pipe_defers_a_mail_for_two_addresses(postfix):
    """Why the doc's pipe set-up has `pbmserv_destination_recipient_limit = 1`."""
    pipe = Pipe(postfix)
    del pipe.main["pbmserv_destination_recipient_limit"]
    postfix.start(pipe.main, pipe.service, pipe.tables)
    postfix.send(help_mail(1), [ADDRESS, "pbmserv+tag@games.test"], sender=ALICE)
    deferred = postfix.wait_for(lambda: [m for m in postfix.queue() if m["queue_name"] == "deferred"],
                                "the mail to be deferred")
    assert [sorted((r["address"], r["delay_reason"]) for r in m["recipients"]) for m in deferred] == [
        [("pbmserv+tag@games.test", "mail system configuration error"),
         (ADDRESS, "mail system configuration error")]]
    assert "warning: pipe flag `D' requires pbmserv_destination_recipient_limit = 1" in postfix.log()


def test_a_game_and_a_blind_copy_to_a_reply_address_through_the_pipe_with_process(postfix):
    """`deliver --process` plays each mail as it is stored; bob's move reaches the game
    through the Delivered-To/X-Original-To headers of flags D and O only."""
    pipe = Pipe(postfix, process=True)
    postfix.start(pipe.main, pipe.service, pipe.tables)
    address = superwari_game(postfix, pipe.outbox)
    postfix.send(bobs_blind_copy(), [address])
    replies = postfix.replies(pipe.outbox, 8)
    assert [(r["To"], r["Subject"]) for r in replies[6:]] == AFTER_BOBS_MOVE
    assert "bob writes:\nMy turn.\n" in plain(replies[-1])
    postfix.send(help_mail(9), [ADDRESS], sender="")  # a bounce is stored, and not answered
    sessions = open_database(pipe.url)
    postfix.wait_for(lambda: at_least(6, pipe.rows(sessions)), "the bounce to be stored")
    postfix.wait_for(lambda: postfix.queue() == [], "Postfix's queue to empty")  # every deliver has exited
    assert [(row.status, row.envelope_from) for row in pipe.rows(sessions)] == [
        ("done", ALICE), ("done", BOB), ("done", ALICE), ("done", ALICE), ("done", BOB), ("ignored", "MAILER-DAEMON")]
    assert len(maildir_messages(pipe.outbox)) == 8


def test_postfix_keeps_the_mail_while_deliver_cannot_store_it(postfix):
    """The database folder is not the pipe user's: `deliver` exits 75, Postfix defers
    the mail (no bounce) and delivers it once the folder is writable."""
    pipe = Pipe(postfix, writable=False)
    postfix.start(pipe.main, pipe.service, pipe.tables)
    postfix.send(help_mail(1), [ADDRESS], sender=ALICE)
    deferred = postfix.wait_for(lambda: [m for m in postfix.queue() if m["queue_name"] == "deferred"],
                                "the mail to be deferred")
    [[recipient]] = [m["recipients"] for m in deferred]
    assert recipient["address"] == ADDRESS
    assert recipient["delay_reason"] == (  # dsn=4.3.0: deliver's exit status 75, and its one line
        f"temporary failure. Command output: pbmserv deliver: could not store the message: cannot open "
        f"database {pipe.url}: OperationalError: (sqlite3.OperationalError) unable to open database file")
    pipe.allow()
    postfix.flush()
    sessions = open_database(pipe.url)
    rows = postfix.wait_for(lambda: pipe.rows(sessions), "the mail to be stored")
    assert [(row.message_id, row.status) for row in rows] == [("<help-1@example.org>", "queued")]
    postfix.wait_for(lambda: postfix.queue() == [], "Postfix's queue to empty")
    assert "status=bounced" not in postfix.log()
