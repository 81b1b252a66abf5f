"""pbmserv.mail.parse: where the commands are (DESIGN §2) and robustness."""

from __future__ import annotations

import datetime as dt
from functools import partial
from email.message import EmailMessage

from hypothesis import given, settings, strategies as st

from pbmserv.mail import loopguard, parse as parsing
from pbmserv.mail.parse import CommandLine, ParsedMail, html_to_text, parse_message, strip_subject

ACCOUNT = {"help", "signup", "list", "message", "broadcast", "change"}
GAME_COMMANDS = {"move", "show", "challenge", "help", "resign", "games", "showas", "chat"}


def is_command(words: list[str]) -> bool:
    return bool(words) and (
        words[0].lower() in ACCOUNT
        or (words[0].lower() == "superwari" and len(words) > 1 and words[1].lower() in GAME_COMMANDS)
    )


def takes_text(words: list[str]) -> bool:
    return bool(words) and (
        words[0].lower() in {"message", "broadcast"} or (len(words) > 1 and words[1].lower() == "chat")
    )


def mail(body: str | bytes = "", subject: str = "hello", headers: str | None = None,
         content_type: str = "text/plain; charset=utf-8") -> bytes:
    """A raw mail with CRLF line endings, as it comes off the wire."""
    if headers is None:
        headers = (
            "From: Alice Example <alice@example.com>\n"
            f"Subject: {subject}\n"
            "Date: Mon, 01 Jan 2024 10:00:00 +0100\n"
            "Message-ID: <m1@example.com>\n"
            f"Content-Type: {content_type}\n"
        )
    if isinstance(body, str):
        body = body.encode("utf-8")
    return headers.replace("\n", "\r\n").encode("utf-8") + b"\r\n" + body.replace(b"\n", b"\r\n")


def parse(raw: bytes) -> ParsedMail:
    return parse_message(raw, is_command, takes_text)


def texts(parsed: ParsedMail) -> list[str]:
    return [command.text for command in parsed.commands]


# --- headers ---------------------------------------------------------------

def test_headers():
    parsed = parse(mail("hi\n", subject="hello"))
    assert parsed.sender == "alice@example.com"
    assert parsed.reply_to == "alice@example.com"
    assert parsed.subject == "hello"
    assert parsed.message_id == "<m1@example.com>"
    assert parsed.date == dt.datetime(2024, 1, 1, 9, 0, tzinfo=dt.timezone.utc)
    assert parsed.date.utcoffset() == dt.timedelta(hours=1)
    assert parsed.text == "hi\n"


def test_reply_to_wins_when_valid():
    headers = ("From: alice@example.com\nReply-To: Alice <Alice@Home.example>\n"
               "Subject: x\n")
    assert parse(mail("", headers=headers)).reply_to == "Alice@Home.example"


def test_invalid_reply_to_falls_back_to_sender():
    headers = "From: alice@example.com\nReply-To: not an address\nSubject: x\n"
    assert parse(mail("", headers=headers)).reply_to == "alice@example.com"


def test_no_from():
    parsed = parse(mail("list\n", headers="Subject: x\n"))
    assert parsed.sender == ""
    assert parsed.reply_to == ""
    assert parsed.message_id is None
    assert parsed.date is None
    assert texts(parsed) == ["list"]


def test_unparseable_from_and_date():
    headers = "From: just garbage\nDate: the day after tomorrow\nSubject: x\n"
    parsed = parse(mail("", headers=headers))
    assert parsed.sender == ""
    assert parsed.date is None


def test_date_minus_0000_is_utc():
    headers = "From: a@b.c\nDate: Mon, 01 Jan 2024 10:00:00 -0000\n"
    assert parse(mail("", headers=headers)).date == dt.datetime(2024, 1, 1, 10, tzinfo=dt.timezone.utc)


def test_message_id_without_brackets_gets_them():
    headers = "From: a@b.c\nMessage-ID: abc@b.c\n"
    assert parse(mail("", headers=headers)).message_id == "<abc@b.c>"


def test_rfc2047_subject_with_encoded_newline_is_one_line():
    headers = "From: a@b.c\nSubject: =?utf-8?q?superwari_show=0D=0A101?=\n"
    parsed = parse(mail("", headers=headers))
    assert parsed.subject == "superwari show 101"
    assert parsed.from_subject
    assert parsed.commands == [CommandLine("superwari show 101", ["superwari", "show", "101"], "")]


def test_rfc2047_subject_decoded():
    headers = "From: a@b.c\nSubject: =?iso-8859-1?q?J=F6rg_says_hi?=\n"
    assert parse(mail("", headers=headers)).subject == "Jörg says hi"


# --- the Subject -----------------------------------------------------------

def test_strip_subject():
    assert strip_subject("Re: RE: Fwd: Fw: AW: WG: SV: [pbm] [x y] re:superwari show 101") == \
        "superwari show 101"
    assert strip_subject("  [tag]Re : hello  ") == "hello"
    assert strip_subject("Regards") == "Regards"


def test_subject_command():
    parsed = parse(mail("Good luck!\n\n-- \nAlice\n", subject="superwari move 101 alice pw c"))
    assert parsed.from_subject is True
    assert parsed.commands == [CommandLine(
        "superwari move 101 alice pw c", ["superwari", "move", "101", "alice", "pw", "c"], "")]
    assert parsed.comment == "Good luck!"


def test_subject_command_after_prefixes_and_tags():
    parsed = parse(mail("", subject="Re: [pbmserv] Fwd: SuperWari SHOW 101"))
    assert parsed.from_subject is True
    assert texts(parsed) == ["SuperWari SHOW 101"]
    assert parsed.subject == "Re: [pbmserv] Fwd: SuperWari SHOW 101"
    assert parsed.comment == ""


def test_subject_command_with_wrong_arguments_still_counts():
    parsed = parse(mail("superwari show 101\n", subject="superwari move"))
    assert parsed.from_subject is True
    assert texts(parsed) == ["superwari move"]
    assert parsed.comment == ""  # a command line is never comment: it may carry a password


def test_subject_comment_skips_quotes_and_attribution():
    body = ("Nice one.\n\nSecond paragraph.\n\nOn Mon, 1 Jan 2024, Bob wrote:\n"
            "> Super-Wari Board 101 alice\n> old\nend\nignored\n")
    parsed = parse(mail(body, subject="superwari move 101 alice pw c"))
    assert parsed.comment == "Nice one.\n\nSecond paragraph."


def test_subject_message_command_relays_the_body():
    parsed = parse(mail("\nHello Bob,\nsee you.\n\n-- \nsig\n", subject="message alice pw bob"))
    assert parsed.from_subject is True
    assert parsed.commands == [
        CommandLine("message alice pw bob", ["message", "alice", "pw", "bob"], "Hello Bob,\nsee you.")]
    assert parsed.comment == "Hello Bob,\nsee you."


def test_server_reply_subject_falls_to_the_body():
    body = ("superwari move 101 alice pw c\n\n"
            "On Mon, 1 Jan 2024 at 10:00, PBM Server <pbmserv@example.com> wrote:\n"
            "> Summary of Super-Wari Board 101\n> It is alice's turn.\n")
    parsed = parse(mail(body, subject="Re: Super-Wari Board 101 alice"))
    assert parsed.from_subject is False
    assert parsed.commands == [CommandLine(
        "superwari move 101 alice pw c", ["superwari", "move", "101", "alice", "pw", "c"], "")]
    assert parsed.comment == ""


# --- the body --------------------------------------------------------------

def test_body_one_command():
    parsed = parse(mail("  superwari show 101  \n"))
    assert parsed.from_subject is False
    assert parsed.commands == [CommandLine("superwari show 101", ["superwari", "show", "101"], "")]


def test_body_several_commands_and_comment():
    body = ("Hi,\n\nsignup alice secret\n\nsuperwari challenge alice secret bob\n"
            "superwari show 101\nthanks!\n")
    parsed = parse(mail(body))
    assert texts(parsed) == ["signup alice secret", "superwari challenge alice secret bob",
                             "superwari show 101"]
    assert parsed.comment == "Hi,\n\n\nthanks!"


def test_body_skips_quoted_lines():
    body = "> superwari show 102\n  > > superwari show 103\nsuperwari show 101\n>superwari show 104\n"
    assert texts(parse(mail(body))) == ["superwari show 101"]


def test_body_skips_attribution_lines():
    body = ("superwari show 101\nOn Tue, 2 Jan 2024 at 11:00, Bob <bob@example.com>\n"
            "wrote:\nAm 02.01.2024 um 11:00 schrieb Bob:\nBob wrote:\nsuperwari show 102\n")
    parsed = parse(mail(body))
    assert texts(parsed) == ["superwari show 101", "superwari show 102"]
    assert parsed.comment == ""


def test_body_stops_at_original_message():
    body = "superwari show 101\n-----Original Message-----\nsuperwari show 102\n"
    assert texts(parse(mail(body))) == ["superwari show 101"]


def test_body_stops_at_signature():
    for separator in ("-- ", "--"):
        body = f"superwari show 101\n{separator}\nsuperwari show 102\n"
        assert texts(parse(mail(body))) == ["superwari show 101"]


def test_body_stops_at_end():
    body = "superwari show 101\n  END  \nsuperwari show 102\n"
    assert texts(parse(mail(body))) == ["superwari show 101"]


def test_body_commands_are_read_however_much_prose_comes_before():
    body = ("Hello there!\nI hope you're well.\nHere is my move for today:\nsuperwari show 101\nthree\n\n"
            "> quoted\n> superwari show 103\nfour\nfive\nsix\nsuperwari show 102\n-- \nsuperwari show 104\n")
    parsed = parse(mail(body))
    assert texts(parsed) == ["superwari show 101", "superwari show 102"]
    assert parsed.comment == "Hello there!\nI hope you're well.\nHere is my move for today:\nthree\n\nfour\nfive\nsix"


def test_body_message_text_after_message_command():
    body = ("message alice pw bob carol\n\nHello you two,\n> quoted goes (it may be private)\n\nbye\n\n"
            "-- \nAlice\n")
    parsed = parse(mail(body))
    assert parsed.commands == [CommandLine(
        "message alice pw bob carol", ["message", "alice", "pw", "bob", "carol"],
        "Hello you two,\n\nbye")]
    assert parsed.comment == ""


def test_body_chat_relay_stops_reading_commands():
    body = "superwari show 101\nsuperwari chat 101 alice pw\nsuperwari show 102\nend\nx\n"
    parsed = parse(mail(body))
    assert texts(parsed) == ["superwari show 101", "superwari chat 101 alice pw"]
    assert parsed.commands[0].relay == ""
    assert parsed.commands[1].relay == ""  # not run, and not relayed either


def test_no_commands_anywhere():
    parsed = parse(mail("Hello there\n"))
    assert parsed.commands == []
    assert parsed.comment == "Hello there"


def test_invisible_characters_and_trailing_whitespace():
    body = "super\u200bwari\u00a0show\u00a0101\u00a0 \t\n"
    parsed = parse(mail(body))
    assert texts(parsed) == ["superwari show 101"]
    assert parsed.text == "superwari show 101\n"


def test_bare_cr_line_endings():
    raw = mail("", headers="From: a@b.c\n") + b"superwari show 101\rsuperwari show 102\r"
    assert texts(parse(raw)) == ["superwari show 101", "superwari show 102"]


# --- MIME and charsets -----------------------------------------------------

def test_html_only_mail():
    html = ("<html><head><style>p {color: red}</style><title>Title</title>"
            "<script>var x = 'superwari show 9';</script></head><body>"
            "<div>superwari move 101 alice pw a&amp;b</div><p>Nice&nbsp;game &lt;3</p>"
            "line<br>break<br/>"
            "<blockquote><p>Super-Wari Board 101</p><blockquote>superwari show 5</blockquote>"
            "</blockquote></body></html>")
    parsed = parse(mail(html, content_type="text/html; charset=utf-8"))
    assert parsed.text == ("superwari move 101 alice pw a&b\nNice game <3\nline\nbreak\n"
                           "> Super-Wari Board 101\n> superwari show 5")  # one `>` however deep
    assert texts(parsed) == ["superwari move 101 alice pw a&b"]
    assert parsed.comment == "Nice game <3\nline\nbreak"


def test_html_to_text_pre_keeps_lines():
    assert html_to_text("<pre>a\n  b</pre>after") == "a\n  b\nafter"


def test_multipart_alternative_prefers_plain():
    message = EmailMessage()
    message["From"] = "alice@example.com"
    message["Subject"] = "moves"
    message.set_content("superwari show 101\n")
    message.add_alternative("<p>superwari show 999</p>", subtype="html")
    message.add_attachment(b"superwari show 555\n", maintype="text", subtype="plain",
                           filename="notes.txt")
    parsed = parse(bytes(message))
    assert texts(parsed) == ["superwari show 101"]
    assert parsed.text == "superwari show 101\n"


def test_multipart_with_html_only_alternative():
    message = EmailMessage()
    message["From"] = "alice@example.com"
    message.add_alternative("<p>superwari show 7</p>", subtype="html")
    message.add_attachment(b"%PDF", maintype="application", subtype="pdf", filename="x.pdf")
    assert texts(parse(bytes(message))) == ["superwari show 7"]


def test_latin1_body():
    body = "superwari show 101\nGrüße, Jörg\n".encode("latin-1")
    parsed = parse(mail(body, content_type="text/plain; charset=iso-8859-1"))
    assert texts(parsed) == ["superwari show 101"]
    assert parsed.comment == "Grüße, Jörg"


def test_quoted_printable_body():
    headers = ("From: a@b.c\nContent-Type: text/plain; charset=utf-8\n"
               "Content-Transfer-Encoding: quoted-printable\n")
    raw = mail(b"superwari show =\n101\nGr=C3=BC=C3=9Fe\n", headers=headers)
    parsed = parse(raw)
    assert texts(parsed) == ["superwari show 101"]
    assert parsed.comment == "Grüße"


def test_unknown_charset_falls_back_to_utf8():
    body = "superwari show 101\nGrüße".encode("utf-8") + b"\xff\n"
    parsed = parse(mail(body, content_type="text/plain; charset=x-no-such-charset"))
    assert texts(parsed) == ["superwari show 101"]
    assert parsed.comment == "Grüße\ufffd"


def test_undeclared_8bit_body_is_read_as_utf8_with_replacement():
    raw = mail("", headers="From: a@b.c\n") + "superwari show 101\nGrüße\n".encode() + b"\xff\n"
    parsed = parse(raw)
    assert texts(parsed) == ["superwari show 101"]
    assert parsed.comment == "Grüße\n\ufffd"


def test_raw_8bit_header_does_not_leak_surrogates():
    raw = b"From: J\xf6rg <j@example.com>\r\nSubject: caf\xe9\r\n\r\nx\r\n"
    parsed = parse(raw)
    assert parsed.sender == "j@example.com"
    assert parsed.subject == "caf\ufffd"


# --- never raises ----------------------------------------------------------

def test_garbage_bytes():
    parsed = parse(b"\x00\xff\xfe garbage\r\n\r\n\x80\x81 superwari\r\n: :\r\n")
    assert parsed.sender == ""
    assert parsed.commands == []


def test_empty_input():
    assert parse(b"") == ParsedMail()


def test_registry_that_raises_counts_as_no_command():
    def broken(words):
        raise RuntimeError("boom")
    parsed = parse_message(mail("superwari show 101\n"), broken, broken)
    assert parsed.commands == []
    assert parsed.comment == "superwari show 101"


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000))
def test_never_raises_on_arbitrary_bytes(raw):
    parsed = parse(raw)
    assert isinstance(parsed, ParsedMail)
    for value in (parsed.sender, parsed.reply_to, parsed.subject, parsed.comment, parsed.text):
        value.encode("utf-8")  # no lone surrogates escape


header_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)


@settings(max_examples=200, deadline=None)
@given(sender=header_text, subject=header_text, date=header_text, message_id=header_text,
       content_type=header_text, body=st.text(max_size=500))
def test_never_raises_on_arbitrary_text_in_headers(sender, subject, date, message_id,
                                                   content_type, body):
    headers = (f"From: {sender}\nReply-To: {sender}\nSubject: {subject}\nDate: {date}\n"
               f"Message-ID: {message_id}\nContent-Type: {content_type}\n")
    raw = headers.encode("utf-8") + b"\n" + body.encode("utf-8", "surrogatepass")
    parsed = parse(raw)
    assert isinstance(parsed, ParsedMail)
    assert "\n" not in parsed.subject and "\r" not in parsed.subject


# --- the Date and Message-ID read as written, equal to the header classes' reading ---

def with_header(name: str, value: str):
    first = "" if name == "From" else "From: a@example.org\r\n"
    last = "" if name == "Subject" else "Subject: x\r\n"
    raw = f"{first}{name}: {value}\r\n{last}\r\nbody\r\n"
    return loopguard.parse_bytes(raw.encode("utf-8", "surrogateescape"))


DATE_TEXT = st.one_of(
    st.builds(lambda day, month, year, hour, minute, zone: f"{day} {month} {year} {hour:02d}:{minute:02d}:00 {zone}",
              st.sampled_from(["Fri, 4", "4", "31", "Mon, 30", "0", "32"]), st.sampled_from(["Dec", "Feb", "Foo"]),
              st.sampled_from(["2026", "26", "99", "1900", "10000"]), st.integers(0, 25), st.integers(0, 61),
              st.sampled_from(["+0000", "-0000", "+0530", "GMT", "EST", "", "+9999", "(comment)"])),
    st.text(alphabet="0123456789 :,+-()ADFJMNOSTaceghlnoprtuvyz\t\r\n", max_size=40))


ID_TEXT = st.one_of(
    st.builds(lambda a, b: f"<{a}@{b}>", st.text(alphabet="ab.=?_-+/!%", min_size=0, max_size=12),
              st.text(alphabet="xy.-=?[]", min_size=0, max_size=12)),
    st.text(alphabet="<>@ab. ()\"=?\t\r\n", max_size=30))


FROM_TEXT = st.one_of(
    st.builds(lambda name, local, domain: f"{name}<{local}@{domain}>",
              st.sampled_from(["", "Alice ", "Alice  B ", "al ice", '"A, B" ', "=?utf-8?q?A?= ", "a.b "]),
              st.text(alphabet="ab.+_-\"", max_size=8), st.text(alphabet="xy.-[]", max_size=8)),
    st.builds(lambda local, domain: f"{local}@{domain}", st.text(alphabet="ab.+_-\" ", max_size=8),
              st.text(alphabet="xy.-[] ", max_size=8)),
    st.text(alphabet="<>@ab. ()\",;:=?\t", max_size=30))
READERS = {"Date": (parsing.header_date, parsing.parsed_date, DATE_TEXT),
           "Message-ID": (parsing._message_id, parsing.parsed_message_id, ID_TEXT),
           "From": (partial(loopguard.header_addresses, name="From"), partial(loopguard.parsed_addresses, name="From"),
                    FROM_TEXT),
           "Subject": (partial(loopguard.header_text, name="Subject"), partial(loopguard.parsed_text, name="Subject"),
                       st.text(alphabet="ab =?_\t\"()<>:;,.\\é", max_size=30))}


@settings(max_examples=4000, deadline=None)
@given(st.one_of([st.tuples(st.just(name), text) for name, (_fast, _slow, text) in READERS.items()]))
def test_dates_message_ids_addresses_and_subjects_are_read_as_their_header_classes_read_them(header):
    """Read as written where the shape allows it (ten times cheaper), they are what the
    header class gives, a date's time zone included, whatever the text."""
    name, text = header
    fast, slow, _text = READERS[name]
    message = with_header(name, text)
    assert fast(message) == slow(message)
    if name == "Date" and fast(message) is not None:
        assert fast(message).utcoffset() == slow(message).utcoffset()
