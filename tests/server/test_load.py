"""Load on loopback: 32 concurrent streaming clients against the tiny model for 60 s (ZINC_LOAD_SECONDS
changes it), some of them hanging up mid-stream. Zero failed requests,
every finished stream well-formed (chunks, one finish_reason per choice, [DONE] last), the slots of
clients that left are freed, and memory stays flat."""

from __future__ import annotations

import asyncio
import json
import os
import random
import time

import pytest

httpx = pytest.importorskip("httpx")
CLIENTS = 32


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


async def _client(i: int, url: str, until: float, stats: dict) -> None:
    rng = random.Random(i)
    async with httpx.AsyncClient(timeout=120) as http:
        while time.monotonic() < until:
            leave = rng.random() < 0.2
            body = {"messages": [{"role": "user", "content": f"client {i} says hi"}], "stream": True,
                    "max_tokens": rng.randint(4, 24), "stream_options": {"include_usage": True}}
            try:
                async with http.stream("POST", url + "/v1/chat/completions", json=body) as r:
                    if r.status_code != 200:
                        stats["failed"].append(f"status {r.status_code}: {await r.aread()}")
                        continue
                    lines = []
                    async for line in r.aiter_lines():
                        if line:
                            lines.append(line)
                        if leave and len(lines) >= 2:
                            break
            except httpx.HTTPError as e:
                stats["failed"].append(repr(e))
                continue
            if leave:
                stats["left"] += 1
                continue
            _check_stream(lines, stats)


def _check_stream(lines: list[str], stats: dict) -> None:
    if not lines or lines[-1] != "data: [DONE]" or not all(x.startswith("data: ") for x in lines):
        stats["failed"].append(f"malformed stream: {lines[-3:]}")
        return
    objs = [json.loads(x[6:]) for x in lines[:-1]]
    finishes = [c["finish_reason"] for o in objs for c in o["choices"] if c.get("finish_reason")]
    if len(finishes) != 1 or "usage" not in objs[-1] or "error" in objs[-1]:
        stats["failed"].append(f"bad stream ending: {objs[-2:]}")
        return
    stats["ok"] += 1


@pytest.mark.slow
def test_32_streaming_clients(served):
    seconds = float(os.environ.get("ZINC_LOAD_SECONDS", "60"))
    stats: dict = {"ok": 0, "left": 0, "failed": []}

    async def main(duration: float) -> None:
        until = time.monotonic() + duration
        await asyncio.gather(*(_client(i, served.url, until, stats) for i in range(CLIENTS)))

    asyncio.run(main(2))  # warm-up round: caches, allocator pools
    rss0 = _rss()
    stats = {"ok": 0, "left": 0, "failed": []}
    asyncio.run(main(seconds))
    assert not stats["failed"], stats["failed"][:5]
    assert stats["ok"] >= CLIENTS and stats["left"] > 0, stats
    t0 = time.monotonic()
    eng = served.host.engine
    while eng.n_running or eng.n_waiting:
        assert time.monotonic() - t0 < 10, "slots of departed clients were not freed"
        time.sleep(0.05)
    assert eng.n_caches == 0
    grown = _rss() - rss0
    assert grown < 64 * 2**20, f"memory grew by {grown / 2**20:.1f} MiB"
    print(f"load: {stats['ok']} complete streams, {stats['left']} clients left early, "
          f"RSS growth {grown / 2**20:.1f} MiB")
