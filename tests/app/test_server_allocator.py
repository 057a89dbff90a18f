"""The server keeps glibc's malloc defaults and PyTorch's own F.linear: the tuning and oneDNN's kernel, good for
one user, cost memory with many sessions."""

import sys

import pytest

from tests.fresh_python import fresh_python


def tuned_after_importing_the_app(**env) -> str:
    out = fresh_python("import streamlit_app, core; print(core.MALLOC_TUNED)", timeout=120, **env)
    return out.splitlines()[-1]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the tuning is for glibc on Linux")
def test_the_app_leaves_malloc_untuned_unless_asked():
    assert tuned_after_importing_the_app() == "False"
    assert tuned_after_importing_the_app(TSE_MALLOC_TUNING="1") == "True"


def test_the_app_leaves_onednn_off_unless_asked():
    def after_importing_the_app(**env) -> str:
        code = "import os, streamlit_app, core; print(core.onednn.LINEAR, os.environ.get('LRU_CACHE_CAPACITY'))"
        return fresh_python(code, timeout=120, **env).splitlines()[-1]

    assert after_importing_the_app() == "False None"  # off, and oneDNN's caches left alone
    assert after_importing_the_app(TSE_ONEDNN="1") == "True 16"
