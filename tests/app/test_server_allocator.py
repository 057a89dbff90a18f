"""The server keeps glibc's malloc defaults: the tuning for one user costs memory with many sessions."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tuned_after_importing_the_app(**env) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "TSE_MALLOC_TUNING"}
    result = subprocess.run([sys.executable, "-c", "import streamlit_app, core; print(core.MALLOC_TUNED)"],
                            cwd=ROOT, capture_output=True, text=True, timeout=120, env={**environ, **env})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the tuning is for glibc on Linux")
def test_the_app_leaves_malloc_untuned_unless_asked():
    assert tuned_after_importing_the_app() == "False"
    assert tuned_after_importing_the_app(TSE_MALLOC_TUNING="1") == "True"
