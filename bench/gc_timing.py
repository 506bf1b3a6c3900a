"""The server's garbage collections, timed from inside it (``bench/capacity_bench.py``).

Standard library only: the bench loads it into the server process before the
server's own code (``--source`` runs another checkout's ``vtt_bridge``; nothing
here may import it first).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any


def time_collections(path: str) -> None:
    """Note every garbage collection of this process (its event loop: not the resolvers it forks):
    when, which generation, how long; written to ``path`` as JSON lines when it exits.

    With ``CAPACITY_GC_DETAIL`` set, every collection over 20 ms is also printed (stderr) as it
    ends, and SIGUSR1 prints what cyclic garbage the process holds (the bench sends it once the
    clients left). ``CAPACITY_GC_DETAIL=census`` prints every collection with what it walks:
    the kinds of objects and the coroutines among them (costly: a diagnosis, not a measurement).
    """
    import atexit
    import collections
    import gc

    pid = os.getpid()
    started = [0.0, 0.0]
    rows: list[tuple[float, int, float, float, int]] = []
    detail = os.environ.get("CAPACITY_GC_DETAIL", "")
    census: list[Any] = []

    def walked(generation: int) -> list[Any]:
        objects = gc.get_objects(generation)
        kinds = collections.Counter(type(o).__name__ for o in objects)
        coroutines = collections.Counter(o.cr_code.co_qualname for o in objects if type(o).__name__ == "coroutine")
        return [len(objects), kinds.most_common(12), coroutines.most_common(8), gc.get_count()]

    def timed(phase: str, info: dict[str, Any]) -> None:
        if os.getpid() != pid:
            return
        if phase == "start":
            census[:] = walked(info["generation"]) if detail == "census" else []
            started[:] = time.perf_counter(), time.thread_time()
            return
        wall, cpu = time.perf_counter() - started[0], time.thread_time() - started[1]
        rows.append((time.time(), info["generation"], wall, cpu, info["collected"]))
        if detail == "census" or (detail and wall > 0.02):
            print(
                f"GC generation {info['generation']}: {wall * 1000:.1f} ms (CPU {cpu * 1000:.1f} ms),"
                f" {info['collected']} freed; walked {census}",
                file=sys.stderr,
                flush=True,
            )

    def full(signum: int, frame: Any) -> None:
        """SIGUSR2 (sent once every attack of play is answered): how many objects the collector
        tracks (frozen ones included), and what a full collection of all of them costs now and
        frees (cycles that reference counting could not free: what a server that freezes its
        objects keeps until its next full collection)."""
        frozen = gc.get_freeze_count()
        tracked = len(gc.get_objects()) + frozen
        gc.unfreeze()
        wall, cpu = time.perf_counter(), time.thread_time()
        freed = gc.collect()
        rows.append((time.time(), -tracked, time.perf_counter() - wall, time.thread_time() - cpu, freed))
        if frozen:
            gc.freeze()

    def garbage(signum: int, frame: Any) -> None:
        """SIGUSR1: the cyclic garbage this process holds (frozen or not), by kind, with the frames,
        exceptions and coroutines in it."""
        gc.unfreeze()
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            freed = gc.collect()
            found = gc.garbage
            kinds = collections.Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in found)
            frames = collections.Counter(
                f"{o.f_code.co_qualname} {Path(o.f_code.co_filename).name}:{o.f_lineno}"
                for o in found
                if type(o).__name__ == "frame"
            )
            errors = collections.Counter(repr(o)[:80] for o in found if isinstance(o, BaseException))
            print(
                f"GARBAGE {freed} objects, {sum(sys.getsizeof(o) for o in found):,} bytes (shallow):"
                f" {kinds.most_common(20)}; frames {frames.most_common(8)}; exceptions {errors.most_common(4)}",
                file=sys.stderr,
                flush=True,
            )
        finally:
            gc.garbage.clear()
            gc.set_debug(0)

    signal.signal(signal.SIGUSR2, full)
    if detail:
        signal.signal(signal.SIGUSR1, garbage)
    gc.callbacks.append(timed)
    atexit.register(lambda: Path(path).write_text("".join(json.dumps(r) + "\n" for r in rows)))
