"""Run code in a fresh interpreter at the repository root, for what only shows in a new process."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def fresh_python(code: str, *, timeout: float = 300, **env: str) -> str:
    """Run ``code`` with ``python -c`` (``env`` added to this process's environment) and return its stdout, stripped."""
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                            env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()
