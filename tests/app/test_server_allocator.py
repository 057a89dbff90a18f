"""The server keeps glibc's malloc defaults: the tuning for one user costs memory with many sessions."""

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
