"""Headless Chromium for the tests of the HTML part of board mails (issue 18): renders a
mail's HTML as a mail client would, with JavaScript on so that a script that slipped
through would run and be caught, and every request aborted and recorded.

Test files use it as

    from browser import assert_grid, page, requires_chromium, screenshot, show  # noqa: F401

    @requires_chromium
    def test_board(page):
        shown = show(page, html)
        assert not shown.requests and not shown.scripts_ran and shown.overflow <= 0
        assert_grid(shown.cells, [["a1", "b1"], ["a2", "b2"]])

Debian's chromium (/usr/bin/chromium) and the playwright package are used; nothing is
downloaded. Without either the tests skip and say which is missing.
"""

from __future__ import annotations

import importlib.util
import os
import re
import tempfile
import weakref
from pathlib import Path
from typing import Any, NamedTuple

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
# The page the mail is written into: a real origin, so that a relative URL (src=x) is a
# request too (on about:blank it would not parse and never be seen). The route answers it;
# it never reaches a network.
BASE_URL = "http://pbmserv.test/mail"
_INIT_URL = "pbmserv-harness-init.js"
_EVALUATE_URL = "pbmserv-harness-evaluate.js"


def _missing() -> str:
    """Why the browser tests cannot run here, or '' when they can."""
    if not os.access(CHROMIUM, os.X_OK):
        return f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium)"
    if importlib.util.find_spec("playwright") is None:
        return "the Python package playwright is not installed (pip install -e '.[test]')"
    return ""


requires_chromium = pytest.mark.skipif(bool(_missing()), reason=_missing() or "Chromium is here")


class Cell(NamedTuple):
    x: float
    y: float
    width: float
    height: float
    text: str


class Shown(NamedTuple):
    requests: list[str]  # URLs the page tried to fetch (all aborted): must be empty
    scripts_ran: bool
    overflow: float  # document scrollWidth - viewport width: > 0 means horizontal scrolling
    cells: dict[str, Cell]  # by data-cell name, in document order
    board: str | None  # the data-board value
    page: Any  # the playwright Page, still showing the mail
    script_signs: list[str]  # why scripts_ran is true: each sign of a script seen


# Runs in the page's own world before any of the mail: counts what only a script does.
# The counter lives in a closure the page cannot reach; the harness reads it by a function.
_INIT_SCRIPT = r"""
(() => {
  const signs = [];
  const hit = (what) => { signs.push(String(what)); };
  Object.defineProperty(window, '__pbmservHarness', {value: () => signs.slice(), enumerable: false});
  for (const name of ['alert', 'confirm', 'prompt', 'print', 'open', 'eval']) {
    const original = window[name];
    window[name] = function (...args) { hit('called ' + name); return original.apply(this, args); };
  }
  for (const name of ['log', 'info', 'warn', 'error', 'debug', 'trace', 'dir', 'table']) {
    const original = console[name];
    console[name] = function (...args) { hit('console.' + name); return original.apply(this, args); };
  }
  for (const name of ['write', 'writeln']) {
    const original = Document.prototype[name];
    Document.prototype[name] = function (...args) { hit('document.' + name); return original.apply(this, args); };
  }
  // setter traps: a script that installs a handler or sets a cookie is seen even if it does nothing else
  for (const name of ['onload', 'onerror', 'onmessage', 'onbeforeunload', 'onunload', 'onclick']) {
    const descriptor = Object.getOwnPropertyDescriptor(window, name);
    if (!descriptor || !descriptor.set) continue;
    Object.defineProperty(window, name, {
      configurable: true, enumerable: descriptor.enumerable, get: descriptor.get,
      set(value) { hit('set window.' + name); descriptor.set.call(this, value); },
    });
  }
  const cookie = Object.getOwnPropertyDescriptor(Document.prototype, 'cookie');
  if (cookie && cookie.set) {
    Object.defineProperty(Document.prototype, 'cookie', {
      configurable: true, get: cookie.get,
      set(value) { hit('set document.cookie'); cookie.set.call(this, value); },
    });
  }
})();
//# sourceURL=""" + _INIT_URL

# What is in the DOM once loaded: script elements, on* handler attributes, javascript: URLs
# (a handler that no event fired never ran, but it would in a client that fires it).
_STATIC_SIGNS = r"""() => {
  const signs = [];
  for (const script of document.querySelectorAll('script')) signs.push('a <script> element');
  for (const element of document.querySelectorAll('*')) {
    for (const attribute of element.attributes) {
      const tag = element.tagName.toLowerCase();
      if (attribute.name.toLowerCase().startsWith('on')) signs.push(`${tag}[${attribute.name}] handler attribute`);
      const value = attribute.value.replace(/[\s\u0000-\u001f]/g, '').toLowerCase();
      if (value.startsWith('javascript:')) signs.push(`${tag}[${attribute.name}] javascript: URL`);
    }
  }
  return signs;
}"""

_LAYOUT = r"""() => {
  const cells = [];
  for (const element of document.querySelectorAll('[data-cell]')) {
    const box = element.getBoundingClientRect();
    cells.push([element.getAttribute('data-cell'), box.left + window.scrollX, box.top + window.scrollY,
                box.width, box.height, element.innerText.trim()]);
  }
  const board = document.querySelector('[data-board]');
  const width = Math.max(document.documentElement.scrollWidth, document.body ? document.body.scrollWidth : 0);
  return {cells, board: board && board.getAttribute('data-board'), overflow: width - window.innerWidth};
}"""

# Two frames and a timer tick: handlers of load/error events and zero-delay timers have run.
_SETTLE = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 50))))"


class _Recorder:
    """One page's hooks, set up once: every request aborted and recorded, and every sign of a
    script (CDP: a script compiled or a console call in a page's own world; dialogs; errors)."""

    def __init__(self, page):
        self.requests: list[str] = []
        self.signs: list[str] = []
        self.recording = False
        self.main_worlds: set[int] = set()
        page.add_init_script(_INIT_SCRIPT)
        page.route("**/*", self._route)
        page.on("request", lambda request: self._request(request.url))
        page.on("websocket", lambda socket: self._request(socket.url))
        page.on("dialog", self._dialog)
        page.on("pageerror", lambda error: self._sign(f"page error: {error}"))
        cdp = page.context.new_cdp_session(page)
        cdp.on("Runtime.executionContextCreated", self._world)
        cdp.on("Debugger.scriptParsed", self._parsed)
        cdp.on("Runtime.consoleAPICalled", self._console)
        cdp.send("Runtime.enable")
        cdp.send("Debugger.enable")
        cdp.send("Debugger.setSkipAllPauses", {"skip": True})  # a `debugger;` statement must not hang the test
        self.cdp = cdp

    def _route(self, route):
        if route.request.url == BASE_URL and not self.recording:
            route.fulfill(status=200, content_type="text/html; charset=utf-8", body="<!DOCTYPE html><title></title>")
        else:
            self._request(route.request.url)
            route.abort()

    def _request(self, url: str):
        if self.recording and url not in self.requests:
            self.requests.append(url)

    def _dialog(self, dialog):
        self._sign(f"a dialog ({dialog.type})")
        dialog.dismiss()

    def _world(self, event):
        context = event["context"]
        if (context.get("auxData") or {}).get("isDefault"):
            self.main_worlds.add(context["id"])

    def _console(self, event):
        if event.get("executionContextId") in self.main_worlds:
            self._sign(f"console.{event.get('type')} called")

    def _parsed(self, event):
        if event.get("executionContextId") in self.main_worlds and event.get("url") not in (_INIT_URL, _EVALUATE_URL):
            self._sign(f"a script was compiled ({event.get('length')} characters, url {event.get('url')!r})")

    def evaluate(self, function: str):
        """Calls a function in the page's own world by CDP, not page.evaluate: playwright's
        evaluate compiles its helper scripts there and calls eval and console.debug."""
        answer = self.cdp.send("Runtime.evaluate", {"expression": f"({function})()\n//# sourceURL={_EVALUATE_URL}",
                                                    "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in answer:
            raise RuntimeError(f"harness evaluate failed: {answer['exceptionDetails']}")
        return answer["result"].get("value")

    def _sign(self, sign: str):
        if self.recording:
            self.signs.append(sign)


_recorders: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def show(page, html: str, width: int = 375) -> Shown:
    """Loads a mail's HTML in `page` at `width` x 800 px and reports what it did and where
    its board cells are. Every request is aborted: a mail client shows no remote content."""
    recorder = _recorders.get(page)
    if recorder is None:
        recorder = _recorders[page] = _Recorder(page)
    page.set_viewport_size({"width": width, "height": 800})
    recorder.recording = False
    page.goto(BASE_URL)
    recorder.requests.clear()
    recorder.signs.clear()
    recorder.recording = True
    try:
        page.set_content(html, wait_until="load")
        recorder.evaluate(_SETTLE)
        trapped = recorder.evaluate("() => window.__pbmservHarness ? window.__pbmservHarness() : ['no harness trap']")
        static = recorder.evaluate(_STATIC_SIGNS)
        layout = recorder.evaluate(_LAYOUT)
        recorder.evaluate("() => 0")  # a round trip: CDP events sent before it have arrived
    finally:
        recorder.recording = False
    signs = [*static, *trapped, *recorder.signs]
    cells: dict[str, Cell] = {}
    repeated = []
    for name, x, y, w, h, text in layout["cells"]:
        if name in cells:
            repeated.append(name)
        cells[name] = Cell(x, y, w, h, text)
    assert not repeated, f"data-cell names must be unique in a mail; repeated: {sorted(set(repeated))}"
    return Shown(list(recorder.requests), bool(signs), layout["overflow"], cells, layout["board"], page, signs)


def assert_grid(cells: dict[str, Cell], rows: list[list[str]], tolerance: float = 0.5):
    """The cells of each row share top and height; rows of equal length share each column's
    x and width. Compares browser boxes, so it holds for what a reader sees."""
    missing = [name for row in rows for name in row if name not in cells]
    assert not missing, f"no data-cell for {missing} (cells found: {sorted(cells)})"
    problems = []
    for number, row in enumerate(rows, 1):
        first = cells[row[0]]
        for name in row[1:]:
            cell = cells[name]
            if abs(cell.y - first.y) > tolerance or abs(cell.height - first.height) > tolerance:
                problems.append(f"row {number}: {name!r} top {cell.y:.1f} height {cell.height:.1f}, but "
                                f"{row[0]!r} top {first.y:.1f} height {first.height:.1f}")
    by_length: dict[int, list[list[str]]] = {}
    for row in rows:
        by_length.setdefault(len(row), []).append(row)
    for group in by_length.values():
        for index in range(len(group[0])):
            first = cells[group[0][index]]
            for row in group[1:]:
                cell = cells[row[index]]
                if abs(cell.x - first.x) > tolerance or abs(cell.width - first.width) > tolerance:
                    problems.append(f"column {index + 1}: {row[index]!r} x {cell.x:.1f} width {cell.width:.1f}, but "
                                    f"{group[0][index]!r} x {first.x:.1f} width {first.width:.1f}")
    assert not problems, "board cells are not an aligned grid:\n" + "\n".join(problems)


_screenshot_dir: list[Path] = []


def screenshot(shown: Shown, name: str, directory: str | os.PathLike | None = None, board_only: bool = False) -> Path:
    """Saves a PNG of the shown mail (or of its data-board element) for people to look at:
    into $PBMSERV_SCREENSHOTS/<name>.png when set, else `directory` or a temporary one."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise ValueError(f"screenshot name {name!r}: letters, digits, '.', '_' and '-' only")
    if os.environ.get("PBMSERV_SCREENSHOTS"):
        folder = Path(os.environ["PBMSERV_SCREENSHOTS"])
    elif directory is not None:
        folder = Path(directory)
    else:
        if not _screenshot_dir:
            _screenshot_dir.append(Path(tempfile.mkdtemp(prefix="pbmserv-screenshots-")))
        folder = _screenshot_dir[0]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    if board_only:
        shown.page.locator("[data-board]").first.screenshot(path=str(path))
    else:
        shown.page.screenshot(path=str(path), full_page=True)
    return path


_browser: dict[str, Any] = {}


def _launched(config):
    """One browser a test process, launched when first needed and closed when pytest ends."""
    browser = _browser.get("browser")
    if browser is not None and browser.is_connected():
        return browser
    from playwright.sync_api import sync_playwright

    if "playwright" not in _browser:
        _browser["playwright"] = sync_playwright().start()
        config.add_cleanup(_close)
    _browser["browser"] = _browser["playwright"].chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
    return _browser["browser"]


def _close():
    browser = _browser.pop("browser", None)
    try:
        if browser is not None and browser.is_connected():
            browser.close()
    finally:
        _browser.pop("playwright").stop()


@pytest.fixture
def page(request):
    """A fresh page (its own browser context: no cookies, cache or routes shared) at 375 x 800."""
    reason = _missing()
    if reason:
        pytest.skip(reason)
    context = _launched(request.config).new_context(viewport={"width": 375, "height": 800}, service_workers="block")
    context.set_default_timeout(15_000)
    try:
        yield context.new_page()
    finally:
        context.close()
