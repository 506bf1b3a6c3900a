"""Monte Carlo odds: the attack resolved N times through the real pipeline.

Every resolution is an ordinary one — the same host, plugins, steps and
decisions as a live attack — with its own seed and the rules' default for
every decision not answered in advance. Seeds are derived from one base seed,
so a run is reproducible, and the counts do not depend on how the seeds are
shared out between worker processes.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import Counter
from collections.abc import Callable
from typing import Any

from .model import AttackOutcome, OddsRequest, outcome_key, outcome_of_key

__all__ = ["cores", "monte_carlo", "sample_seeds"]

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15

#: Below this many resolutions per worker, extra processes cost more than they
#: save (a fork costs a few milliseconds on an idle machine; a resolution 0.1–0.4).
MIN_PER_WORKER = 250


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def sample_seeds(seed: int, n: int, start: int = 0) -> list[int]:
    """Dice seeds ``start … start + n − 1`` derived from ``seed`` (SplitMix64 outputs)."""
    base = seed & _MASK
    return [_mix((base + (i + 1) * _GOLDEN) & _MASK) >> 1 for i in range(start, start + n)]


def _run(
    host: Any, request: OddsRequest, seeds: list[int], stop: Callable[[], bool] | None = None
) -> Counter[AttackOutcome]:
    engine = host.engine
    ruleset, tokens, attacker = request.ruleset, request.tokens, request.attacker
    targets, declaration = list(request.targets), request.declaration
    answers = {key: list(given) for key, given in request.answers.items()} or None
    # Odds read only the outcome: no trace is kept (the hooks run exactly as in
    # a live attack), and every decision takes its given answer or the rules'
    # default where it is asked, without a round trip through the driver.
    # Outcomes are counted by their plain-tuple keys, made into AttackOutcomes at the end.
    keys: dict[Any, int] = {}
    begin = engine.starter(ruleset, tokens, attacker=attacker, targets=targets, declaration=declaration, answers=answers, trace=False)
    for i, s in enumerate(seeds):
        if stop is not None and i and stop():
            break  # at least one sample always runs
        key = outcome_key(begin(s).run().outcome)
        keys[key] = keys.get(key, 0) + 1
    counts: Counter[AttackOutcome] = Counter()
    for key, n in keys.items():
        counts[outcome_of_key(key)] += n
    return counts


def cores() -> int:
    """The cores this process may run on (its CPU affinity, where the system tells)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # pragma: no cover - no affinity on this system
        return os.cpu_count() or 1


def _spans(samples: int, workers: int) -> list[tuple[int, int]]:
    """``(start, n)`` of each worker's share: consecutive seeds, sizes differing by one at most."""
    share, extra = divmod(samples, workers)
    spans, start = [], 0
    for i in range(workers):
        n = share + (1 if i < extra else 0)
        spans.append((start, n))
        start += n
    return spans


def _child(host: Any, request: OddsRequest, seed: int, span: tuple[int, int], out: Any) -> None:
    """A forked worker: resolve one share and send its counts; on any failure send nothing."""
    start, n = span
    try:
        counts = _run(host, request, sample_seeds(seed, n, start))
    except BaseException:
        counts = None  # the parent resolves this share itself and raises what it raises
    out.send(counts)
    out.close()


def monte_carlo(
    host: Any,
    request: OddsRequest,
    *,
    samples: int,
    seed: int,
    workers: int = 1,
    stop: Callable[[], bool] | None = None,
) -> Counter[AttackOutcome]:
    """Resolve ``request`` ``samples`` times with derived seeds: how often each outcome came.

    :param host: the :class:`~vtt_bridge.Host` whose plugins resolve the attack.
    :param request: a validated request (see :func:`~vtt_bridge.odds.odds_request`).
    :param samples: how many resolutions (at least 1).
    :param seed: the base seed.
    :param workers: processes to share the resolutions between, this one
        included (the others forked, so only where ``fork`` exists, and best
        from a single-threaded caller such as the CLI: a server should call
        this with 1 from an executor). At most one per
        :data:`MIN_PER_WORKER` samples. The counts are the same for any
        number of workers: sample ``i`` always has the same seed.
    :param stop: asked before each resolution but the first (single worker only);
        when it says ``True`` the counts so far are returned (a server's time
        budget, or its requester gone).
    """
    if samples < 1:
        raise ValueError("Monte Carlo needs at least one sample")
    workers = max(1, min(workers, samples // MIN_PER_WORKER))
    if workers == 1 or stop is not None or "fork" not in multiprocessing.get_all_start_methods():
        return _run(host, request, sample_seeds(seed, samples), stop)
    # This process resolves the first share while forked children resolve the
    # others: one fork fewer than workers, and no pool to start and stop.
    fork = multiprocessing.get_context("fork")
    mine, *theirs = _spans(samples, workers)
    children = []
    for span in theirs:
        read, write = fork.Pipe(duplex=False)
        child = fork.Process(target=_child, args=(host, request, seed, span, write), daemon=True)
        child.start()
        write.close()
        children.append((span, child, read))
    try:
        total = _run(host, request, sample_seeds(seed, mine[1], mine[0]))
        for span, child, read in children:
            try:
                counts = read.recv()
            except EOFError:  # the child died before sending
                counts = None
            if counts is None:  # a failed share is resolved here: same seeds, same counts or same error
                counts = _run(host, request, sample_seeds(seed, span[1], span[0]))
            total.update(counts)
    finally:
        for _, child, read in children:
            read.close()
            if child.is_alive():
                child.terminate()
            child.join()
    return total
