"""CPU time for the tests that bound how long the code under test holds a thread.

Those tests count CPU time, not wall time, so that a loaded machine leaving the process
waiting for a core does not count against the code. Neither should the interpreter's own
pauses: a full garbage collection walks every object the process holds, and in a test
process that has imported and run the whole suite that took 200 to 500 ms (measured), in
whichever thread allocated at the moment, whatever it was doing. :func:`thread_time` is this
thread's CPU time less the collections it ran (``gc.callbacks``, which run in the thread that
collects).

```python
from support import cpu

started = cpu.thread_time()
work()
assert cpu.thread_time() - started < BOUND
```
"""

from __future__ import annotations

import gc
import threading
import time
from typing import Any

__all__ = ["collecting", "thread_time"]


class _Collections(threading.local):
    started: float | None = None
    total: float = 0.0


_here = _Collections()


def _collection(phase: str, info: dict[str, Any]) -> None:
    if phase == "start":
        _here.started = time.thread_time()
    elif _here.started is not None:
        _here.total += time.thread_time() - _here.started
        _here.started = None


def collecting() -> float:
    """The CPU time this thread has spent in garbage collections so far (since this module
    was imported)."""
    return _here.total


def thread_time() -> float:
    """This thread's CPU time (``time.thread_time()``), less the garbage collections it ran."""
    return time.thread_time() - _here.total


gc.callbacks.append(_collection)
