"""The cyclic garbage collector during a worker-pool run: what the run set up before its
workers start is kept out of the collector's scans.

CPython's full collection walks every object it tracks and holds the interpreter while it
does, so every worker waits. A build holds about 200,000 such objects once it is set up
(modules, compiled templates, plans, seed tuples, caches), and one full collection of them
took 190 ms on a 2-core machine: with 32 workers each against a 200 ms endpoint, every
reply that arrived meanwhile waited, and the in-flight efficiency of that run fell from
about 0.89 to 0.82 (``scripts/bench_build.py``). :func:`setup_frozen` moves the objects that
exist when the workers start into CPython's permanent generation (``gc.freeze()``), which
collections skip: they live as long as the run anyway. Objects made during the run are
collected as before. ``gc.unfreeze()`` at the end hands them back, so a process that runs
many builds (the tests, a notebook) still frees what each one left behind.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

_lock = threading.Lock()
_depth = 0  # runs inside one another (or side by side) freeze once and unfreeze at the last end


@contextmanager
def setup_frozen() -> Iterator[None]:
    """Keep every object that exists now out of the collector's scans until the block ends
    (the outermost block, when they nest or overlap)."""
    global _depth
    with _lock:
        _depth += 1
        if _depth == 1:
            gc.freeze()
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.unfreeze()
