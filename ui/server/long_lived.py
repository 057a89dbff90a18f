"""Keep Python's garbage collector off the objects that live as long as the server.

Streamlit runs a full collection after every script run (``runner.postScriptGC``), and with torch,
pandas and altair imported that walk holds Python's lock long enough to stall other sessions and the
lab's training thread. ``gc.freeze()`` moves what the imports made into a generation collections skip;
a frozen object is still freed once nothing refers to it. The app freezes after a run that loaded many
new modules. ``TSE_GC_FREEZE=0`` turns it off.
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
