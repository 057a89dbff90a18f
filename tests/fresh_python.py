"""Run code in a fresh interpreter at the repository root, for what only shows at import time."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SET_BY_IMPORTS = ("TSE_MALLOC_TUNING", "TSE_ONEDNN", "ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY")


def fresh_python(code: str, *, timeout: float = 300, **env: str) -> str:
    """Run ``code`` with ``python -c`` and return its stdout, stripped.

    The variables that importing the app or core sets in the importing process (pytest's own, under
    AppTest) are passed only when a caller sets them, so that the child does not inherit them by
    accident: TSE_MALLOC_TUNING and TSE_ONEDNN (the app's entry script) and oneDNN's two cache
    capacities (core/onednn.py).
    """
    inherited = {k: v for k, v in os.environ.items() if k not in SET_BY_IMPORTS}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                            env={**inherited, **env})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()
