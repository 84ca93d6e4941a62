"""The chat UI in headless Chromium (Debian's /usr/bin/chromium driven by Playwright; no browser
download): send a message and watch it stream, stop it, start and switch conversations, reload
and find the history, search, export and import, markdown with highlighted code and copy buttons.
Screenshots go to build/test-artifacts/ui/. The served model is slowed down and never ends on its
own, so streaming and stopping are observable."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

sync_api = pytest.importorskip("playwright.sync_api")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not os.path.exists(CHROMIUM):
    pytest.skip("Debian's chromium is not installed (apt-get install chromium)", allow_module_level=True)

ARTIFACTS = Path(__file__).resolve().parents[2] / "build" / "test-artifacts" / "ui"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage"]


class SlowModel:
    """A model proxy whose forward takes a while and never picks an end-of-generation token."""

    def __init__(self, model, delay: float) -> None:
        self._m, self._delay = model, delay
        self._eog = np.array(sorted(model.tokenizer.eog_ids))

    def forward(self, ids, cache, last_only=False):
        time.sleep(self._delay)
        out = self._m.forward(ids, cache, last_only=last_only)
        out[:, self._eog] = -np.inf
        return out

    def __getattr__(self, name):
        return getattr(self._m, name)


@pytest.fixture(scope="module")
def ui_server(tiny_path, server_factory):
    import zinc

    s = server_factory(SlowModel(zinc.load(tiny_path, n_ctx=2048), 0.03), model_id="qwen3-tiny")
    yield s
    s.stop()


@pytest.fixture
def page(tmp_path):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(str(tmp_path / "profile"), executable_path=CHROMIUM,
                                                   headless=True, args=ARGS, accept_downloads=True,
                                                   viewport={"width": 1200, "height": 800})
        pg = ctx.new_page()
        pg.set_default_timeout(20000)
        errors: list[str] = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        yield pg
        ctx.close()
        assert not errors, errors


def _text(pg, sel):
    return pg.locator(sel).last.inner_text()


def test_chat_ui(ui_server, page, tmp_path):
    pg = page
    pg.goto(ui_server.url + "/")
    pg.wait_for_selector("#model option[value='qwen3-tiny']", state="attached")
    assert "cpu" in pg.locator("#status").inner_text()
    # 1. send a message and watch it stream, then stop it
    pg.fill("#input", "Hello there, tell me a story")
    pg.keyboard.press("Enter")
    pg.wait_for_selector(".msg.assistant .md.cursor")
    assert pg.locator("#stop").is_visible() and not pg.locator("#send").is_visible()
    pg.wait_for_function("document.querySelector('.msg.assistant .md').innerText.length > 5")
    first = _text(pg, ".msg.assistant .md")
    pg.wait_for_function(f"document.querySelector('.msg.assistant .md').innerText.length > {len(first)}")
    pg.screenshot(path=str(ARTIFACTS / "1-streaming.png"))
    pg.click("#stop")
    pg.wait_for_selector("#send", state="visible")
    assert "stopped" in _text(pg, ".msg.assistant .stats")
    _wait_idle(ui_server.host)
    # 2. a second conversation that finishes on its own (max tokens from the settings)
    pg.click("#settings-btn")
    pg.fill("#max_tokens", "12")
    pg.locator("#max_tokens").dispatch_event("change")
    pg.fill("#system", "You are a pirate.")
    pg.locator("#system").dispatch_event("change")
    pg.click("#new-chat")
    pg.fill("#input", "Second question")
    pg.click("#send")
    pg.wait_for_selector(".msg.assistant .stats")
    stats = _text(pg, ".msg.assistant .stats")
    assert "12 tokens" in stats and "tok/s" in stats and "context" in stats, stats
    assert pg.locator("#conv-list li").count() == 2
    pg.screenshot(path=str(ARTIFACTS / "2-second-chat.png"))
    # 3. switch back, regenerate is offered on the last reply, edit re-sends
    pg.click("#conv-list li:has-text('Hello there')")
    assert _text(pg, ".msg.user .text") == "Hello there, tell me a story"
    # 4. reload: the history is still there; search filters it
    pg.reload()
    pg.wait_for_selector("#conv-list li")
    assert pg.locator("#conv-list li").count() == 2
    pg.fill("#search", "second")
    assert pg.locator("#conv-list li").count() == 1
    pg.fill("#search", "")
    # 5. export, wipe, import
    with pg.expect_download() as dl:
        pg.click("#export")
    path = tmp_path / "export.json"
    dl.value.save_as(path)
    data = json.loads(path.read_text())
    assert len(data["conversations"]) == 2
    pg.evaluate("localStorage.clear()")
    pg.reload()
    pg.wait_for_selector(".empty")
    assert pg.locator("#conv-list li").count() == 0
    pg.set_input_files("#import-file", str(path))
    pg.wait_for_function("document.querySelectorAll('#conv-list li').length === 2")


def _wait_idle(host, timeout=10.0):
    t0 = time.monotonic()
    while host.engine.n_running or host.engine.n_waiting:
        assert time.monotonic() - t0 < timeout, "stopping in the UI did not cancel the generation"
        time.sleep(0.02)


MARKDOWN = ("Here is **bold**, *italic* and `code`.\n\n## A heading\n\n- one\n- two\n\n"
            "```python\ndef add(a, b):\n    # sum\n    return a + b  \n```\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\n"
            "<script>alert(1)</script> [link](javascript:alert(1))")


def test_markdown_thinking_edit_regenerate(ui_server, page, tmp_path):
    pg = page
    conv = {"conversations": [{"id": "md1", "title": "Markdown demo", "updated": 1, "system": "", "messages": [
        {"role": "user", "content": "Show me markdown"},
        {"role": "assistant", "content": MARKDOWN, "reasoning": "The user wants markdown. I will show code."}]}]}
    f = tmp_path / "md.json"
    f.write_text(json.dumps(conv))
    pg.goto(ui_server.url + "/")
    pg.set_input_files("#import-file", str(f))
    pg.click("#conv-list li:has-text('Markdown demo')")
    md = pg.locator(".msg.assistant .md")
    assert md.locator("strong").inner_text() == "bold" and md.locator("h2").count() == 1
    assert md.locator("li").count() == 2 and md.locator("table td").count() == 2
    assert md.locator(".codeblock .copy").count() == 1 and md.locator(".hl-k").count() >= 2
    assert md.locator("script").count() == 0 and "<script>" in md.inner_text()
    assert md.locator("a").count() == 0  # javascript: links are not made links
    det = pg.locator("details.thinking")
    assert not det.evaluate("d => d.open")
    det.locator("summary").click()
    assert "wants markdown" in det.inner_text()
    pg.screenshot(path=str(ARTIFACTS / "3-markdown.png"), full_page=True)
    # regenerate replaces the last reply; edit truncates and re-sends
    pg.click("#settings-btn")
    pg.fill("#max_tokens", "6")
    pg.locator("#max_tokens").dispatch_event("change")
    pg.locator(".msg.assistant").hover()
    pg.click(".msg.assistant .regenerate")
    pg.wait_for_selector(".msg.assistant .stats")
    assert "6 tokens" in _text(pg, ".msg.assistant .stats") and pg.locator(".codeblock").count() == 0
    n_prompt = ui_server.host.model.tokenize("Show me markdown", add_special=False)
    pg.locator(".msg.assistant").hover()
    pg.click(".msg.assistant .regenerate")  # the same prompt again: all but its last token from the cache
    pg.wait_for_selector(".msg.assistant .stats")
    stats = _text(pg, ".msg.assistant .stats")
    assert "6 tokens" in stats and re.search(r"\b(\d+) prompt tokens cached", stats), stats
    assert int(re.search(r"(\d+) prompt tokens cached", stats).group(1)) > len(n_prompt), stats
    pg.locator(".msg.user").hover()
    pg.click(".msg.user .edit")
    pg.fill(".edit-box", "Edited question")
    pg.click(".save-edit")
    pg.wait_for_selector(".msg.assistant .stats")
    assert _text(pg, ".msg.user .text") == "Edited question" and pg.locator(".msg").count() == 2


def test_server_error_shown(ui_server, page):
    pg = page
    pg.goto(ui_server.url + "/")
    pg.wait_for_selector("#model option", state="attached")
    pg.click("#settings-btn")
    pg.fill("#max_tokens", "999999")
    pg.locator("#max_tokens").dispatch_event("change")
    pg.fill("#input", "hi")
    pg.click("#send")
    pg.wait_for_selector("#error:not([hidden])")
    assert "max_tokens" in pg.locator("#error").inner_text()
    assert "max_tokens" in _text(pg, ".msg.assistant .err")
    pg.screenshot(path=str(ARTIFACTS / "4-error.png"))
