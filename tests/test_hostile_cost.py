"""Issue 16: no single mail may stop, slow or misuse the server. Mails of every hostile
shape, each close to 1 MB (`[smtp] max_message_size`), go through the real worker on a
SQLite file; each must cost under 2 s of CPU and 200 MB of memory, end `done` or
`ignored`, and cause at most a few replies.

The mails run in ONE child process (`python tests/test_hostile_cost.py`), so that its
peak resident memory (`ru_maxrss`) is the worker's and not pytest's; the child prints
one JSON line per shape. bench/bench_hostile.py measures the same shapes against a
typical move mail.
"""

from __future__ import annotations

import base64
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

SIZE = 1_000_000  # bytes a mail of each shape comes close to
CPU_LIMIT = 2.0  # seconds of process time per mail
MEMORY_LIMIT = 200 * 1024  # ru_maxrss growth in KiB (Linux counts it in KiB)
MAX_REPLIES = 3
SENDER = "alice@example.org"  # registered: errors quote the whole mail back to her


def _mail(headers: str, body: str | bytes) -> bytes:
    top = (f"From: Alice <{SENDER}>\r\nTo: pbmserv@localhost\r\n"
           "Date: Sun, 01 Nov 2026 12:30:00 +0000\r\n")
    if isinstance(body, str):
        body = body.encode()
    return (top + headers).encode() + b"\r\n" + body


def _lines(make, size: int | None = None) -> str:
    """`make(i)` for i = 0, 1, ... as lines, up to about `size` characters."""
    out, total, i, size = [], 0, 0, size or SIZE
    while total < size:
        line = make(i)
        out.append(line)
        total += len(line) + 2
        i += 1
    return "\r\n".join(out) + "\r\n"


def nested_blockquotes() -> bytes:
    return _mail("Subject: hi\r\nContent-Type: text/html\r\n",
                 _lines(lambda i: f"<blockquote>quote {i}<br>"))


def vacation_passwords() -> bytes:
    return _mail("Subject: my commands\r\n", _lines(lambda i: f"vacation u{i} p{i}w{i} 1"))


def deep_mime() -> bytes:
    depth = SIZE // 72
    heads = "".join(f"Content-Type: multipart/mixed; boundary=b{i}\r\n\r\n--b{i}\r\n" for i in range(1, depth))
    tails = "".join(f"\r\n--b{i}--\r\n" for i in reversed(range(1, depth)))
    return _mail("Subject: deep\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b0\r\n",
                 "--b0\r\n" + heads + "Content-Type: text/plain\r\n\r\nhelp\r\n" + tails + "--b0--\r\n")


def many_parts() -> bytes:
    part = "--b\r\nContent-Type: text/html\r\n\r\n<p>help</p>\r\n"
    count = max(20_000, SIZE // len(part))
    return _mail("Subject: parts\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n",
                 part * count + "--b--\r\n")


def command_lines() -> bytes:
    return _mail("Subject: moves\r\n",
                 _lines(lambda i: f"superwari mvoe {100 + i} alice pw{i} c #{i} " + "x" * 60))


def near_misses() -> bytes:
    """Every line a different near-miss of a game and a command word: each is looked up
    anew (no cache helps), and each is answered in the results."""
    return _mail("Subject: moves\r\n", _lines(lambda i: f"superwar{i:x} mo{i:x}e {i} alice pw c"))


def one_long_line() -> bytes:
    return _mail("Subject: one line\r\n", "superwari show 101 " + "word " * (SIZE // 5) + "\r\n")


def long_lines() -> bytes:
    return _mail("Subject: long lines\r\n",
                 _lines(lambda i: f"line {i} " + "abcdefghi " * 9, size=max(SIZE, 10_000 * 100)))


def huge_subject() -> bytes:
    folded = "\r\n ".join(f"superwari{i} help" for i in range(SIZE // 20))
    return _mail(f"Subject: {folded}\r\n", "help\r\n")


def many_recipients() -> bytes:
    to = ",\r\n ".join(f"player{i}@example.org" for i in range(16_500))
    cc = ",\r\n ".join(f"Some One <p{i}+x@example.net>" for i in range(16_500))
    return _mail(f"Subject: help\r\nCc: {cc}\r\nX-Original-To: {to}\r\n", "help\r\n")


def base64_body() -> bytes:
    text = _lines(lambda i: f"superwari show {i} legal", size=SIZE * 3 // 4)
    encoded = base64.encodebytes(text.encode()).decode().replace("\n", "\r\n")
    return _mail("Subject: b64\r\nContent-Type: text/plain; charset=utf-8\r\n"
                 "Content-Transfer-Encoding: base64\r\n", encoded)


def soft_broken_qp() -> bytes:
    return _mail("Subject: qp\r\nContent-Type: text/plain; charset=utf-8\r\n"
                 "Content-Transfer-Encoding: quoted-printable\r\n",
                 "help " + "=\r\nab" * (SIZE // 5) + "\r\n")


def malformed_html() -> bytes:
    return _mail("Subject: hi\r\nContent-Type: text/html\r\n",
                 "<p>help</p>" + "<a b='" * (SIZE // 12) + "<!--" * (SIZE // 8))


SHAPES = {f.__name__: f for f in (nested_blockquotes, vacation_passwords, deep_mime, many_parts, command_lines,
                                  near_misses, one_long_line, long_lines, huge_subject, many_recipients, base64_body,
                                  soft_broken_qp, malformed_html)}


def make_server(directory: Path):
    """A worker on a SQLite file, as tests/conftest.py's Server builds it, with alice
    signed up."""
    sys.path.insert(0, str(Path(__file__).parent))
    from conftest import Server

    server = Server(directory)
    server.signup("alice")
    return server


def process_one(server, raw: bytes) -> dict:
    """Store `raw`, run the worker on it; its CPU seconds, memory growth, outcome."""
    from sqlalchemy import func, select

    from pbmserv.store.models import Inbound, Outbound
    from pbmserv.store.queue import enqueue

    server.clock += timedelta(minutes=1)
    inbound_id, _new = enqueue(server.sessions, raw, server.clock)
    with server.sessions() as session:
        replies_before = session.scalar(select(func.count(Outbound.id)))
    memory = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.process_time()
    server.worker.run_pending()
    cpu = time.process_time() - start
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - memory
    with server.sessions() as session:
        row = session.get(Inbound, inbound_id)
        replies = session.scalar(select(func.count(Outbound.id))) - replies_before
        return {"cpu": cpu, "memory_kib": grown, "status": row.status, "replies": replies,
                "error": (row.error or "")[-300:]}


def main() -> None:
    """Child process: one JSON line per shape."""
    mails = {name: make() for name, make in SHAPES.items()}  # built before anything is measured
    with tempfile.TemporaryDirectory() as directory:
        server = make_server(Path(directory))
        for name, raw in mails.items():
            print(json.dumps({"shape": name, "size": len(raw), **process_one(server, raw)}), flush=True)


def test_every_hostile_shape_is_cheap():
    child = subprocess.run([sys.executable, __file__], capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-3000:]
    results = [json.loads(line) for line in child.stdout.splitlines()]
    assert [r["shape"] for r in results] == list(SHAPES)
    too_costly = [r for r in results
                  if not (r["cpu"] < CPU_LIMIT and r["memory_kib"] < MEMORY_LIMIT
                          and r["status"] in ("done", "ignored") and r["replies"] <= MAX_REPLIES)]
    assert not too_costly, too_costly
    assert all(SIZE * 0.6 < r["size"] <= SIZE * 1.1 for r in results), [(r["shape"], r["size"]) for r in results]


if __name__ == "__main__":
    main()
