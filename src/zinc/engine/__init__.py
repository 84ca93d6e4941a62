"""The engine: sequence caches (`cache`), sampling and stop conditions (`sampler`), the step scheduler
(`scheduler`), the request engine (`engine`) and the text-level `generate` / `chat` (`generate`).

    from zinc.engine import Engine, SamplingParams
    with Engine(model, max_running=4) as eng:
        h = eng.submit(model.tokenize("Hi"), SamplingParams(temperature=0, max_tokens=16))
        print(h.result().text)
"""

from zinc.engine.engine import Engine, Event, GenerationResult, RequestHandle, RequestStats, Usage
from zinc.engine.sampler import Sampler, SamplingParams, StopChecker, StopMatcher, TokenLogprob

__all__ = ["Engine", "Event", "GenerationResult", "RequestHandle", "RequestStats", "Usage",
           "Sampler", "SamplingParams", "StopChecker", "StopMatcher", "TokenLogprob"]
