"""Monte Carlo odds: the attack resolved N times through the real pipeline.

Every resolution is an ordinary one — the same host, plugins, steps and
decisions as a live attack — with its own seed and the rules' default for
every decision not answered in advance. Seeds are derived from one base seed,
so a run is reproducible, and the counts do not depend on how the seeds are
shared out between worker processes.

Shared between processes, the samples are dealt out in chunks of consecutive
seeds, each process taking the next chunk as it finishes one: a process that
starts late (a fork) or runs slower (a busy core) simply takes fewer, and all
finish together.
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
#: Samples a process takes at a time when they are shared (about 5–20 ms of work).
CHUNK = 100


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
    keys: dict[Any, int] = {}
    _count(host, request, seeds, keys, stop)
    return _outcomes(keys)


def _outcomes(keys: dict[Any, int]) -> Counter[AttackOutcome]:
    counts: Counter[AttackOutcome] = Counter()
    for key, n in keys.items():
        counts[outcome_of_key(key)] += n
    return counts


def _count(
    host: Any, request: OddsRequest, seeds: list[int], keys: dict[Any, int], stop: Callable[[], bool] | None = None
) -> None:
    """Resolve one resolution per seed, counting each outcome's key in ``keys``."""
    engine = host.engine
    ruleset, tokens, attacker = request.ruleset, request.tokens, request.attacker
    targets, declaration = list(request.targets), request.declaration
    answers = {key: list(given) for key, given in request.answers.items()} or None
    # Odds read only the outcome: no trace is kept (the hooks run exactly as in
    # a live attack), and every decision takes its given answer or the rules'
    # default where it is asked, without a round trip through the driver.
    # Outcomes are counted by their plain-tuple keys, made into AttackOutcomes at the end.
    begin = engine.starter(ruleset, tokens, attacker=attacker, targets=targets, declaration=declaration, answers=answers, trace=False)
    for i, s in enumerate(seeds):
        if stop is not None and i and stop():
            break  # at least one sample always runs
        key = outcome_key(begin(s).run().outcome)
        keys[key] = keys.get(key, 0) + 1


def cores() -> int:
    """The cores this process may run on (its CPU affinity, where the system tells)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # pragma: no cover - no affinity on this system
        return os.cpu_count() or 1


def _chunk(seed: int, samples: int, index: int) -> list[int]:
    """The seeds of chunk ``index`` (consecutive samples, :data:`CHUNK` of them but the last)."""
    start = index * CHUNK
    return sample_seeds(seed, min(CHUNK, samples - start), start)


def _chunks(host: Any, request: OddsRequest, seed: int, samples: int, claim: Callable[[], int | None], done: list[int]):
    """Resolve chunks as long as ``claim`` deals one out; their indices go to ``done``. The counts' keys."""
    keys: dict[Any, int] = {}
    while (index := claim()) is not None:
        _count(host, request, _chunk(seed, samples, index), keys)
        done.append(index)
    return keys


def _child(host: Any, request: OddsRequest, seed: int, samples: int, claim: Callable[[], int | None], out: Any) -> None:
    """A forked worker: resolve the chunks it is dealt and send their counts; on any failure send nothing."""
    done: list[int] = []
    try:
        result = (_chunks(host, request, seed, samples, claim, done), done)
    except BaseException:
        result = None  # the parent resolves the chunks it took and raises what it raises
    out.send(result)
    out.close()


def _dealer(counter: Any, chunks: int) -> Callable[[], int | None]:
    """The next chunk's index from a counter shared between processes (``None``: all are dealt)."""
    lock = counter.get_lock()

    def claim() -> int | None:
        with lock:
            index = counter.value
            if index >= chunks:
                return None
            counter.value = index + 1
        return index

    return claim


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
    # This process resolves chunks alongside forked children: one fork fewer
    # than workers, and no pool to start and stop.
    fork = multiprocessing.get_context("fork")
    chunks = -(-samples // CHUNK)
    claim = _dealer(fork.Value("q", 0), chunks)
    children = []
    for _ in range(workers - 1):
        read, write = fork.Pipe(duplex=False)
        child = fork.Process(target=_child, args=(host, request, seed, samples, claim, write), daemon=True)
        child.start()
        write.close()
        children.append((child, read))
    error: Exception | None = None
    try:
        done: list[int] = []
        keys = _chunks(host, request, seed, samples, claim, done)
        for child, read in children:
            try:
                result = read.recv()
            except EOFError:  # the child died before sending
                result = None
            if result is not None:
                theirs, their_done = result
                for key, n in theirs.items():
                    keys[key] = keys.get(key, 0) + n
                done += their_done
        # Chunks a failed child took are resolved here, in order: same seeds, same counts or an error.
        for index in sorted(set(range(chunks)).difference(done)):
            _count(host, request, _chunk(seed, samples, index), keys)
    except Exception as exc:
        error = exc  # raised below, once the children are stopped
    finally:
        for child, read in children:
            read.close()
            if child.is_alive():
                child.terminate()
            child.join()
    if error is not None:
        # Raise what one process would: the first failing sample's error (a chunk
        # before the one that failed here may fail too).
        _run(host, request, sample_seeds(seed, samples))
        raise error
    # The same outcomes in the same order however the chunks were dealt.
    return Counter(dict(sorted(_outcomes(keys).items())))
