"""The step scheduler: which requests advance in the next engine step, and by how many tokens.

Requests wait in a FIFO `waiting` queue until one of `max_running` slots is free; admission is when
the engine gives a request its own cache, so at most `max_running` caches exist at any time.
Each step, `schedule()` returns a `StepPlan`: every running request that is decoding gets one token
(decode first: it keeps the latency of streams low), then requests still prefilling get their next
prompt chunk while the step's token budget lasts. Chunks always start at multiples of `n_ubatch`
(the boundaries never depend on what else runs), so a request computes exactly the same thing
alone or next to others. A step always makes progress: its first item is taken even when it is
larger than the budget.

A plan is a list of items, one per sequence; the engine may run them as separate forwards or (a
backend permitting) as one batched forward. Nothing here touches the model or the caches.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol


class Schedulable(Protocol):
    """What the scheduler needs to know about a request."""

    request_id: int
    n_prompt: int

    @property
    def prefill_remaining(self) -> int: ...  # prompt tokens not yet in the cache


@dataclass(frozen=True)
class WorkItem:
    """One sequence's share of a step: `n_tokens` prompt tokens (prefill) or one token (decode)."""

    request: Any
    n_tokens: int
    prefill: bool


@dataclass
class StepPlan:
    items: list[WorkItem] = field(default_factory=list)

    @property
    def n_tokens(self) -> int:
        return sum(it.n_tokens for it in self.items)

    def __bool__(self) -> bool:
        return bool(self.items)


class Scheduler:
    """Waiting and running queues with FIFO admission and a per-step token budget.

    `admit(request) -> bool` is called when a request moves from waiting to running (the engine
    allocates its cache there); returning False drops the request (the engine has finished it).
    """

    def __init__(self, max_running: int = 4, n_ubatch: int = 512, step_tokens: int | None = None) -> None:
        if max_running < 1 or n_ubatch < 1:
            raise ValueError(f"max_running and n_ubatch must be >= 1, got {max_running}, {n_ubatch}")
        self.max_running = int(max_running)
        self.n_ubatch = int(n_ubatch)
        self.step_tokens = max(1, int(step_tokens or n_ubatch))
        self.waiting: deque[Any] = deque()
        self.running: list[Any] = []

    def __len__(self) -> int:
        return len(self.waiting) + len(self.running)

    def add(self, request: Schedulable) -> None:
        self.waiting.append(request)

    def remove(self, request: Schedulable) -> bool:
        """Take a request out of whichever queue holds it; False when it is in neither."""
        if request in self.running:
            self.running.remove(request)
            return True
        try:
            self.waiting.remove(request)
            return True
        except ValueError:
            return False

    def admit(self, admit: Callable[[Any], bool]) -> list[Any]:
        """Move waiting requests into free running slots (FIFO); returns the ones admitted."""
        admitted = []
        while self.waiting and len(self.running) < self.max_running:
            req = self.waiting.popleft()
            if admit(req):
                self.running.append(req)
                admitted.append(req)
        return admitted

    def schedule(self) -> StepPlan:
        """The next step: one token for each decoding request, then prompt chunks within budget."""
        plan = StepPlan()
        budget = self.step_tokens
        for req in self.running:
            if req.prefill_remaining == 0:
                plan.items.append(WorkItem(req, 1, prefill=False))
                budget -= 1
        for req in self.running:
            left = req.prefill_remaining
            if left == 0:
                continue
            n = self.chunk_size(req, left)
            if plan.items and n > budget:
                break  # FIFO: later prompts wait for this one's chunk
            plan.items.append(WorkItem(req, n, prefill=True))
            budget -= n
        return plan

    def chunk_size(self, req: Any, left: int) -> int:
        """The next prompt chunk: up to the next multiple of n_ubatch from where the request is."""
        done = req.n_prompt - left
        return min(left, self.n_ubatch - done % self.n_ubatch)

    def finished(self, requests: Iterable[Any]) -> None:
        for req in requests:
            self.remove(req)
