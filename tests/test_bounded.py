"""Issue 16: the work on one mail is bounded. Parsing, HTML to text, masking, quoting
and relaying grow linearly with the mail and stop at hard caps; what is quoted or
relayed is masked, stripped of control characters and wrapped to 78 characters."""

from __future__ import annotations

import time

from conftest import Server
from pbmserv.mail.parse import (MAX_COMMAND_CHARS, MAX_HEADER_CHARS, MAX_TEXT_LINES, html_to_text,
                                parse_message)
from pbmserv.mail.text import (MASK, MAX_PASSWORDS, QUOTE_LINES, RELAY_LINES, WIDTH, Masker, passwords_in,
                               quote, relay_safe)


def is_command(words: list[str]) -> bool:
    return bool(words) and words[0].lower() in {"help", "vacation", "message"}


def takes_text(words: list[str]) -> bool:
    return bool(words) and words[0].lower() == "message"


def parse(raw: bytes):
    return parse_message(raw, is_command, takes_text)


def cpu(action, runs: int = 3) -> float:
    """The CPU time `action` takes in this thread: not that of other threads of the
    test process (a browser driver's, a server's of an earlier test on this worker).
    The least of `runs` runs: on a loaded CI machine one run once took 50 times its
    usual time (time the virtual machine lost to others counts as the thread's), and
    what these caps catch, work that grows faster than the input, is slow in every run."""
    took = []
    for _run in range(runs):
        start = time.thread_time()
        action()
        took.append(time.thread_time() - start)
    return min(took)


# --- HTML ------------------------------------------------------------------

def test_nested_blockquotes_quote_once_and_cost_linear_time():
    html = "<blockquote>quote<br>" * 20_000
    seconds = cpu(lambda: html_to_text(html))
    assert html_to_text(html).split("\n") == ["> quote"] * 20_000
    assert seconds < 1.0


def test_unterminated_tags_and_comments_cost_linear_time():
    for html in ("<p>help</p>" + "<a b='" * 50_000, "<p>help</p>" + "<!--" * 50_000):
        assert cpu(lambda: html_to_text(html)) < 0.5
        assert html_to_text(html) == "help"


# --- masking ---------------------------------------------------------------

def test_a_password_glued_to_punctuation_is_masked():
    mask = Masker(["hunter2"], "pbmserv@localhost")
    assert mask("my password is hunter2.") == f"my password is {MASK}."
    assert mask("(hunter2) hunter2, pw=hunter2\nhunter2") == f"({MASK}) {MASK}, pw={MASK}\n{MASK}"
    assert mask("hunter22 xhunter2 hunter2_") == "hunter22 xhunter2 hunter2_"  # other words


def test_the_longest_password_wins_and_punctuation_in_passwords_counts():
    mask = Masker(["pass", "pass.word", "!pw!"], "pbmserv@localhost")
    assert mask("pass.word pass. x!pw!y") == f"{MASK} {MASK}. x{MASK}y"


def test_reply_to_play_tokens_are_masked_and_a_run_of_them_costs_linear_time():
    mask = Masker([], "pbmserv@localhost")
    assert mask("write to PBMSERV+ab12@localhost.") == f"write to PBMSERV+{MASK}@localhost."
    run = "pbmserv+" * 50_000
    assert cpu(lambda: mask(run)) < 0.5


def test_a_thousand_passwords_mask_a_big_text_fast():
    lines = [f"vacation u{i} p{i}w{i} 1" for i in range(MAX_PASSWORDS)]
    secrets = passwords_in(lines, lambda words: words[2:3] if words[0] == "vacation" else [])
    assert len(secrets) == MAX_PASSWORDS
    text = "\n".join(lines * 12)  # ~250 kB
    masked = ""

    def run():
        nonlocal masked
        masked = Masker(secrets, "pbmserv@localhost")(text)
    assert cpu(run) < 1.0
    assert masked.split("\n")[:2] == [f"vacation u0 {MASK} 1", f"vacation u1 {MASK} 1"]
    assert "p999w999" not in masked


def test_passwords_that_share_a_prefix_cost_linear_time():
    secrets = ["p" * n + "1" for n in range(1, 200)]
    assert cpu(lambda: Masker(secrets, "pbmserv@localhost")("p" * 200_000)) < 0.5


def test_passwords_are_distinct_and_reading_stops_past_the_cap():
    read = []

    def words(line_words):
        read.append(line_words)
        return line_words[1:]
    assert passwords_in(["x a bb", "> x bb a"], words) == ["bb", "a"]
    read.clear()
    found = passwords_in([f"x p{i}" for i in range(5 * MAX_PASSWORDS)], words)
    assert len(found) == MAX_PASSWORDS + 1 and len(read) == MAX_PASSWORDS + 1


def test_more_passwords_than_the_cap_mask_every_word():
    mask = Masker([f"p{i}" for i in range(MAX_PASSWORDS + 1)], "pbmserv@localhost")
    assert mask("my p5000 is\nhere") == f"{MASK} {MASK} {MASK}\n{MASK}"


# --- relayed and quoted text -----------------------------------------------

def test_relay_safe_shows_control_characters_keeps_tabs_and_wraps():
    text = "red\x1b[31m!\x00 \u202eevil\u2066 \u2028x\ttab\n" + "word " * 40 + "\n" + "x" * 200
    assert relay_safe(text).split("\n") == [
        "red\ufffd[31m!\ufffd \ufffdevil\ufffd \ufffdx\ttab",
        " ".join(["word"] * 15), " ".join(["word"] * 15), " ".join(["word"] * 10),
        "x" * 78, "x" * 78, "x" * 44]


def test_relay_safe_caps_lines_and_characters():
    assert relay_safe("\n".join(f"line {i}" for i in range(1000))).split("\n")[-2:] == [
        f"line {RELAY_LINES - 1}", "[... 800 more lines not relayed]"]
    huge = "y" * 1_000_000
    seconds = cpu(lambda: relay_safe(huge))
    out = relay_safe(huge + "\nnext").split("\n")
    assert seconds < 0.5 and all(len(line) <= WIDTH for line in out)
    assert len("\n".join(out)) < 17_000 and out[-1].startswith("[... ") and out[-1].endswith(" more lines not relayed]")


def test_quote_masks_wraps_and_caps():
    mask = Masker(["secret1"], "pbmserv@localhost")
    text = "vacation u secret1 1\n" + "z" * 100 + "\n" + "\n".join(["q"] * 500)
    lines = quote(text, mask).split("\n")
    assert lines[:3] == [f"> vacation u {MASK} 1", "> " + "z" * 76, "> " + "z" * 24]
    assert len(lines) == QUOTE_LINES + 1 and all(len(line) <= WIDTH for line in lines)
    assert lines[-1] == "> [... 303 more lines not quoted]"  # 502 lines, 199 shown (one wrapped)


# --- parsing ---------------------------------------------------------------

def mail(headers: str, body: str) -> bytes:
    return (f"From: a@example.org\r\n{headers}\r\n" + body).encode()


def test_a_huge_folded_subject_is_read_from_its_start_only():
    subject = "\r\n ".join(["help"] + ["word"] * 200_000)
    parsed = None

    def run():
        nonlocal parsed
        parsed = parse(mail(f"Subject: {subject}\r\n", ""))
    assert cpu(run) < 1.0
    assert parsed.subject.startswith("help word") and len(parsed.subject) <= MAX_HEADER_CHARS


def test_ten_thousand_recipients_are_read_from_the_start_only():
    to = ",\r\n ".join(f"p{i}@example.org" for i in range(10_000))
    parsed = parse(mail(f"Subject: help\r\nTo: pbmserv+tok@localhost,\r\n {to}\r\n", ""))
    assert parsed.recipients[:2] == ["pbmserv+tok@localhost", "p0@example.org"]
    assert len(parsed.recipients) < 300


def test_body_lines_are_capped_and_long_lines_are_prose():
    body = "help\r\n" * (MAX_TEXT_LINES + 10)
    parsed = parse(mail("Subject: hi\r\n", body))
    assert parsed.truncated and len(parsed.text.split("\n")) == MAX_TEXT_LINES
    assert not parse(mail("Subject: hi\r\n", "help\r\n")).truncated
    long = "help " + "x" * MAX_COMMAND_CHARS
    assert [c.text for c in parse(mail("Subject: hi\r\n", f"{long}\r\nhelp me\r\n")).commands] == ["help me"]


def test_only_the_first_mime_parts_are_looked_at():
    parts = "".join("--b\r\nContent-Type: image/png\r\n\r\nx\r\n" for _ in range(200))
    body = parts + "--b\r\nContent-Type: text/plain\r\n\r\nhelp\r\n--b--\r\n"
    parsed = parse(mail("Subject: hi\r\nContent-Type: multipart/mixed; boundary=b\r\n", body))
    assert parsed.text == ""  # the text part is the 202nd: not read
    first = "--b\r\nContent-Type: text/plain\r\n\r\nhelp\r\n" + parts + "--b--\r\n"
    parsed = parse(mail("Subject: hi\r\nContent-Type: multipart/mixed; boundary=b\r\n", first))
    assert parsed.text == "help"


# --- through the worker ----------------------------------------------------

def test_an_error_quote_of_a_hostile_body_is_masked_short_and_capped(tmp_path):
    server = Server(tmp_path)
    server.signup("alice")
    # a near-miss short of a move's words: prose, quoted back, its password masked
    body = ("superwari mvoe 101 alice hunter2\r\nmy password is hunter2.\r\n"
            + "\x1b[2J" + "w" * 5000 + "\r\n") * 3
    replies = server.send("alice@example.org", "hello", body)
    text = "\n".join(reply.body for reply in replies)
    assert replies and "hunter2" not in text and "\x1b" not in text
    quoted = [line for reply in replies for line in reply.body.split("\n") if line.startswith(">")]
    assert quoted[:3] == ["> Subject: hello", ">", "> superwari mvoe 101 alice ********"]
    assert all(len(line) <= WIDTH for line in quoted) and len(quoted) <= QUOTE_LINES + 1
