"""Prometheus metrics for the server, in the text exposition format (no client library needed).

Counters: requests by endpoint and status, prompt (and cached prompt) and generated tokens.
Histograms: time to first token, decode tok/s and request duration. Gauges (read at scrape time):
running and queued requests, uptime.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import Any

TTFT_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
TPS_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)
DURATION_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


class Histogram:
    def __init__(self, buckets: tuple[float, ...]) -> None:
        self.buckets = buckets
        self.counts = [0] * len(buckets)
        self.sum = 0.0
        self.count = 0

    def observe(self, v: float) -> None:
        self.sum += v
        self.count += 1
        for i, b in enumerate(self.buckets):
            if v <= b:
                self.counts[i] += 1

    def lines(self, name: str) -> list[str]:
        out = [f'{name}_bucket{{le="{b}"}} {c}' for b, c in zip(self.buckets, self.counts)]
        out += [f'{name}_bucket{{le="+Inf"}} {self.count}', f"{name}_sum {self.sum:.6f}",
                f"{name}_count {self.count}"]
        return out


class Metrics:
    """Thread-safe counters and histograms; `render(host)` gives the /metrics text."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.started = time.time()
        self.requests: dict[tuple[str, int], int] = defaultdict(int)
        self.prompt_tokens = 0
        self.cached_tokens = 0
        self.generated_tokens = 0
        self.ttft = Histogram(TTFT_BUCKETS)
        self.tps = Histogram(TPS_BUCKETS)
        self.duration = Histogram(DURATION_BUCKETS)

    def request(self, endpoint: str, status: int) -> None:
        with self._lock:
            self.requests[(endpoint, status)] += 1

    def generation(self, stats: Any) -> None:
        with self._lock:
            self.prompt_tokens += stats.prompt_tokens
            self.cached_tokens += stats.cached_tokens
            self.generated_tokens += stats.generated_tokens
            if stats.ttft_s is not None:
                self.ttft.observe(stats.ttft_s)
            if stats.decode_tok_s:
                self.tps.observe(stats.decode_tok_s)
            self.duration.observe(stats.total_s)

    def render(self, running: int, waiting: int) -> str:
        with self._lock:
            lines = ["# HELP zinc_requests_total HTTP requests by endpoint and status.",
                     "# TYPE zinc_requests_total counter"]
            for (ep, st), n in sorted(self.requests.items()):
                lines.append(f'zinc_requests_total{{endpoint="{ep}",status="{st}"}} {n}')
            lines += ["# HELP zinc_prompt_tokens_total Prompt tokens processed.",
                      "# TYPE zinc_prompt_tokens_total counter", f"zinc_prompt_tokens_total {self.prompt_tokens}",
                      "# HELP zinc_prompt_tokens_cached_total Prompt tokens taken from a finished request's cache.",
                      "# TYPE zinc_prompt_tokens_cached_total counter",
                      f"zinc_prompt_tokens_cached_total {self.cached_tokens}",
                      "# HELP zinc_generated_tokens_total Tokens generated.",
                      "# TYPE zinc_generated_tokens_total counter",
                      f"zinc_generated_tokens_total {self.generated_tokens}"]
            for name, h, what in (("zinc_time_to_first_token_seconds", self.ttft, "Time to first token."),
                                  ("zinc_decode_tokens_per_second", self.tps, "Decode speed per request."),
                                  ("zinc_request_duration_seconds", self.duration, "Generation wall time.")):
                lines += [f"# HELP {name} {what}", f"# TYPE {name} histogram", *h.lines(name)]
        lines += ["# HELP zinc_requests_running Requests generating now.", "# TYPE zinc_requests_running gauge",
                  f"zinc_requests_running {running}",
                  "# HELP zinc_requests_queued Requests waiting for a slot (queue depth).",
                  "# TYPE zinc_requests_queued gauge", f"zinc_requests_queued {waiting}",
                  "# HELP zinc_uptime_seconds Seconds since the server started.",
                  "# TYPE zinc_uptime_seconds gauge", f"zinc_uptime_seconds {time.time() - self.started:.1f}"]
        return "\n".join(lines) + "\n"
