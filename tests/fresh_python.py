"""Run code in a fresh interpreter at the repository root, for what only shows at import time."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def fresh_python(code: str, *, timeout: float = 300, **env: str) -> str:
    """Run ``code`` with ``python -c`` and return its stdout, stripped.

    TSE_MALLOC_TUNING is passed only when a caller sets it: the app's entry script sets it in
    whatever process imports it, such as pytest's own under AppTest, and the child must not inherit
    that by accident.
    """
    inherited = {k: v for k, v in os.environ.items() if k != "TSE_MALLOC_TUNING"}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                            env={**inherited, **env})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()
