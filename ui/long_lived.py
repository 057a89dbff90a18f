"""Keep Python's garbage collector off the objects that live as long as the server.

Streamlit runs a full collection, ``gc.collect(2)``, after every script run, fragment runs
included (its ``runner.postScriptGC`` option), so that memory does not build up between runs. A
full collection walks every object the collector tracks. Once torch, pandas, altair and the app
are imported that is about 256,000 objects, and one collection took 118 ms on this 2-core machine
when it was quiet (160-500 ms with other work running), holding Python's lock throughout: every
other session waited, and a training run on its own thread stalled each time the lab redrew its
progress (the default run reached its 60 s time limit instead of ending in about 8 s).

``gc.freeze()`` moves every object tracked now into a permanent generation that collections skip
(0.0 ms afterwards). A frozen object is still freed as soon as nothing refers
to it; only a reference cycle among frozen objects would never be collected. So the app freezes
what the imports made, after a collection, whenever a run ends with many more modules loaded
than at the last freeze: once after the first page's imports, again after each large lazy import
(the training lab's background import of torch._dynamo brings about 116,000 more objects).
``TSE_GC_FREEZE=0`` in the environment turns it off (``bench/post_run_gc.py`` compares both).
"""

from __future__ import annotations

import gc
import os
import sys
import threading

NEW_MODULES = 100  # imports that bring this many modules bring a large share of long-lived objects

_lock = threading.Lock()
_modules_at_last_freeze = 0


def freeze_long_lived() -> bool:
    """Freeze what is alive now if many modules were imported since the last freeze; True if it did.

    Cheap when there is nothing to do (one length check), so the entry script calls it every run.
    """
    global _modules_at_last_freeze
    if os.environ.get("TSE_GC_FREEZE", "1") == "0":
        return False
    if len(sys.modules) - _modules_at_last_freeze < NEW_MODULES:
        return False
    with _lock:
        if len(sys.modules) - _modules_at_last_freeze < NEW_MODULES:  # another session got here first
            return False
        gc.collect()  # garbage now is freed, not frozen
        gc.freeze()
        _modules_at_last_freeze = len(sys.modules)
        return True
