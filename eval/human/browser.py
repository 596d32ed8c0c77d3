"""Drive the study in Chromium through Playwright: a server process, page helpers, screenshots.

Used by the browser tests and by ``python -m eval.human screenshots``. Chromium is the
system's (Debian's ``chromium`` package); nothing is downloaded.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "CHROMIUM_ARGS", "StudyURL", "free_port", "serve", "chromium", "join", "start", "play_turn", "ask_to_buy",
    "first_option", "rate", "save_screenshots",
]

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StudyURL(str):
    """The base URL of a served study; ``admin`` is its researcher page (with the token the
    server printed) and ``log`` the server's log file."""

    admin: str
    log: Path


@contextlib.contextmanager
def serve(out: str | os.PathLike, assistants: str, *extra: str, port: int | None = None,
          timeout: float = 120.0) -> Iterator[StudyURL]:
    """Run ``python -m eval.human serve`` in a child process; yields its base URL; stops it after."""
    port = port or free_port()
    cmd = [sys.executable, "-m", "eval.human", "serve", "--assistants", assistants, "--out", str(out),
           "--port", str(port), *extra]
    log = open(Path(out).parent / f"server-{port}.log", "ab")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}; see {log.name}")
            try:
                with urllib.request.urlopen(url + "/api/options", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"server did not answer within {timeout:g} s; see {log.name}") from None
                time.sleep(0.2)
        served = StudyURL(url)
        served.log = Path(log.name)
        printed = [line for line in served.log.read_text(encoding="utf-8", errors="replace").splitlines()
                   if line.startswith("researcher page: ") and f":{port}/" in line]
        served.admin = url + "/admin?" + printed[-1].split("/admin?", 1)[1] if printed else ""
        yield served
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@contextlib.contextmanager
def chromium(executable: str = "/usr/bin/chromium") -> Iterator[Any]:
    """A Playwright page in the system Chromium (1400 x 1000); requests to anything but the
    local server are aborted and listed in ``page.external_requests``."""
    from playwright.sync_api import sync_playwright

    if not Path(executable).exists():
        raise ValueError(f"Chromium not found at {executable}: apt-get install chromium")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(60_000)
            # The app must work offline: anything but the local server is refused and noted.
            page.external_requests = []

            def local_only(route: Any) -> None:
                url = route.request.url
                if url.startswith(("http://127.0.0.1", "data:")):
                    route.continue_()
                else:
                    page.external_requests.append(url)
                    route.abort()

            page.route("**/*", local_only)
            yield page
        finally:
            browser.close()


def _wait_page(page: Any, name: str) -> None:
    page.wait_for_selector(f"body[data-page='{name}']")


def join(page: Any, url: str, age_group: str = "25-34", frequency: str = "weekly") -> str:
    """Open the study, fill the profile, begin; returns the resume code shown."""
    page.goto(url + "/")
    _wait_page(page, "join")
    page.select_option("#age_group", age_group)
    page.select_option("#shopping_frequency", frequency)
    page.click("#join")
    page.wait_for_selector("body[data-page='briefing']")
    return page.text_content("#resume-code")


def start(page: Any) -> None:
    page.click("#start")
    _wait_page(page, "chat")


def play_turn(page: Any, utterance: str, tool: str, args: dict[str, Any] | None = None,
              gave_up: bool = False) -> None:
    """Type, choose one action and its arguments, send; waits for the server's answer."""
    turn_before = page.text_content("#turn")
    lines_before = page.locator("#dialogue li").count()
    page.fill("#utterance", utterance)
    page.select_option("#tool", tool)
    for name, value in (args or {}).items():
        field = page.locator(f"#arg-{name}")
        if field.evaluate("e => e.tagName") == "SELECT":
            field.select_option(str(value))
        else:
            field.fill(str(value))
    if gave_up:
        page.check("#gave-up")
    page.click("#send")
    page.wait_for_function(
        "([turn, lines]) => document.body.dataset.page !== 'chat' || !document.getElementById('error').hidden"
        " || document.getElementById('turn').textContent !== turn"
        " || document.querySelectorAll('#dialogue li').length !== lines",
        arg=[turn_before, lines_before],
    )


def ask_to_buy(page: Any, item: str, utterance: str = "") -> str:
    """Choose add to cart and ``item``, press Send; returns the confirmation's text (nothing
    is sent until :func:`confirm_purchase`)."""
    page.fill("#utterance", utterance)
    page.select_option("#tool", "add_to_cart")
    page.locator("#arg-item").select_option(item)
    page.click("#send")
    page.wait_for_selector("#confirm:not([hidden])")
    return page.text_content("#confirm-text")


def confirm_purchase(page: Any) -> None:
    page.click("#confirm-yes")
    page.wait_for_function("document.body.dataset.page !== 'chat' || !document.getElementById('error').hidden")


def first_option(page: Any, argument: str) -> str:
    """The first handle offered for a target argument (``item``, ``fixture``, ...) right now."""
    values = page.evaluate("(arg) => (window.currentState().handles[arg] || []).map((h) => h.handle)", argument)
    if not values:
        raise RuntimeError(f"no {argument} in the participant's view")
    return values[0]


def rate(page: Any, scores: dict[str, int]) -> None:
    _wait_page(page, "rating")
    for dimension, value in scores.items():
        page.check(f"input[name='{dimension}'][value='{value}']")
    page.click("#rate")
    page.wait_for_function("document.body.dataset.page !== 'rating' || !document.getElementById('error').hidden")


def save_screenshots(out: str | os.PathLike, chromium_path: str = "/usr/bin/chromium") -> list[Path]:
    """Play one short conversation with the heuristic assistant and save a PNG of every page:
    join, briefing, chat (asking to confirm a purchase), questionnaire (outcome and transcript
    above the questions), done, and the researcher's progress page."""
    from eval.judge import DIMENSIONS

    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    shots: list[Path] = []

    def shot(page: Any, name: str) -> None:
        path = target / f"human_{name}.png"
        page.screenshot(path=str(path), full_page=True)
        shots.append(path)

    with tempfile.TemporaryDirectory() as tmp, serve(Path(tmp) / "study", "heuristic",
                                                      "--tasks-per-participant", "1") as url:
        with chromium(chromium_path) as page:
            page.goto(url + "/")
            _wait_page(page, "join")
            shot(page, "1_join")
            join(page, url)
            shot(page, "2_briefing")
            start(page)
            for said in page.evaluate("window.currentState().briefing.details"):  # tell what the task says
                play_turn(page, said, "idle")
            for _ in range(3):  # walk, silently, where the assistant points ("Shelf 9 [N]" -> N)
                fixture = named_fixture(page)
                if fixture is None:
                    break
                play_turn(page, "", "move_to_fixture", {"fixture": fixture, "approach": "nearest"})
            item = _product_matching(page, "Yogurt") or first_option(page, "item")
            play_turn(page, "Let me look at this one.", "pick_up_item", {"item": item})
            held = page.evaluate("window.currentState().held && window.currentState().held.handle") or item
            ask_to_buy(page, held, "I'll take this one.")
            shot(page, "3_chat")
            confirm_purchase(page)
            _wait_page(page, "rating")
            shot(page, "4_questionnaire")
            rate(page, {d: 4 for d in DIMENSIONS})
            _wait_page(page, "done")
            shot(page, "5_done")
            other = page.context.browser.new_page(viewport={"width": 1400, "height": 1000})  # its own storage
            other.set_default_timeout(60_000)
            other.route("**/*", lambda route: route.continue_() if route.request.url.startswith(
                ("http://127.0.0.1", "data:")) else route.abort())
            join(other, url)  # a second participant, mid-conversation, for the progress page
            start(other)
            play_turn(other, "Hello, I need something for dinner.", "idle")
            page.goto(url.admin)
            page.wait_for_selector("body[data-loaded='yes']")
            shot(page, "6_admin")
    return shots


def named_fixture(page: Any) -> str | None:
    """The last fixture label the assistant's latest words name ("Open Cooler 1 [C]") that is
    in the participant's view now, if any."""
    return page.evaluate(
        "() => { const s = window.currentState(); const said = s.dialogue.filter((l) => l.speaker === 'assistant');"
        " const seen = new Set((s.handles.fixture || []).map((h) => h.handle));"
        " const marks = [...(said.length ? said[said.length - 1].text : '').matchAll(/\\[([A-Z]+)\\]/g)]"
        ".map((m) => m[1]).filter((h) => seen.has(h)); return marks.length ? marks[marks.length - 1] : null; }")


def _product_matching(page: Any, word: str) -> str | None:
    """The handle of the first product in view whose name has ``word``, if any."""
    return page.evaluate(
        "(w) => { const h = (window.currentState().handles.item || []).find((t) => t.name.includes(w));"
        " return h ? h.handle : null; }", word)
