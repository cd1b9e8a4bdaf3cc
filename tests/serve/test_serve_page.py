"""The page at ``/`` in headless Chromium: type a sentence, press Parse, and the tree appears
as an SVG arc diagram with one arc per word, the CoNLL-U below it; the page loads nothing from
another site (it has no script at all).

docs/serve-page.png was taken by this test, serving a tagging model:
``DPARSE_SERVE_PAGE_MODEL=models/en_ewt-o1-cle-tagged DPARSE_SERVE_SCREENSHOT=docs/serve-page.png
pytest tests/serve/test_serve_page.py``."""

from __future__ import annotations

import base64
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import DevTools
from servers import Server, require_serving

require_serving()

SENTENCE = "The dog chased the cat across the garden ."
SCREENSHOT_VARIABLE = "DPARSE_SERVE_SCREENSHOT"  # also save the screenshot there (docs/)
MODEL_VARIABLE = "DPARSE_SERVE_PAGE_MODEL"  # serve this model instead of the tiny one
WAIT_SECONDS = 60


def wait_for(tools: DevTools, session: str, expression: str) -> object:
    """Poll the page until ``expression`` is truthy (its value), at most WAIT_SECONDS."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not (value := tools.evaluate(session, expression)):
        assert time.monotonic() < deadline, f"the page never made {expression} true"
    return value


@pytest.fixture
def server(tiny_first_order: Path) -> Iterator[Server]:
    """The tiny model (or $DPARSE_SERVE_PAGE_MODEL) served as ``en``, and again as
    ``en-eisner``, for the picker to offer two."""
    model = os.environ.get(MODEL_VARIABLE) or tiny_first_order / "model"
    running = Server(f"en={model}", f"en-eisner={model}")
    yield running
    running.finish()


def test_typing_a_sentence_and_pressing_parse_draws_its_tree(server: Server,
                                                            tmp_path: Path) -> None:
    page = server.client.get("/")
    assert page.status_code == 200 and "<script" not in page.text
    assert "http" not in page.text.replace(server.url, "")  # nothing from another site
    tools = DevTools(tmp_path)
    try:
        session = tools.open(server.url + "/")
        wait_for(tools, session, "document.readyState === 'complete' && "
                                 "!!document.getElementById('data')")
        assert tools.evaluate(session, "document.querySelectorAll('svg').length") == 0
        tools.evaluate(session, "const box = document.getElementById('data'); box.value = '';"
                                " box.focus(); true")
        tools.call("Input.insertText", {"text": SENTENCE}, session)  # typed
        button = tools.evaluate(session, "(() => { const r = document.getElementById('parse')"
                                         ".getBoundingClientRect(); return [r.x + r.width / 2,"
                                         " r.y + r.height / 2]; })()")
        for kind in ("mousePressed", "mouseReleased"):  # pressed
            tools.call("Input.dispatchMouseEvent", {"type": kind, "x": button[0],
                                                    "y": button[1], "button": "left",
                                                    "clickCount": 1}, session)
        wait_for(tools, session, "document.readyState === 'complete' && "
                                 "document.querySelectorAll('#trees svg').length > 0")
        arcs = tools.evaluate(session, "document.querySelectorAll('#trees svg path').length")
        words = tools.evaluate(session, "document.getElementById('conllu').textContent"
                                        ".split('\\n').filter(l => /^\\d+\\t/.test(l)).length")
        typed = tools.evaluate(session, "document.getElementById('data').value")
        shot = tools.call("Page.captureScreenshot", {"format": "png"}, session)["data"]
    finally:
        tools.close()
    assert typed == SENTENCE
    assert words == len(SENTENCE.split()) and arcs == words  # one arc per word
    png = base64.b64decode(shot)
    assert png.startswith(b"\x89PNG")
    (tmp_path / "page.png").write_bytes(png)
    if os.environ.get(SCREENSHOT_VARIABLE):
        Path(os.environ[SCREENSHOT_VARIABLE]).write_bytes(png)
