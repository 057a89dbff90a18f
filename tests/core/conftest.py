"""Fixtures shared by the core tests."""

import pytest

from core import onednn


@pytest.fixture
def kernel_on(monkeypatch):
    """oneDNN's linear kernel on for this test, whatever the process started with (importing the app
    under AppTest turns it off for its server), on a PyTorch build that has it."""
    if not onednn._kernel_works():
        pytest.skip("this PyTorch build has no oneDNN linear kernel")
    monkeypatch.setattr(onednn, "LINEAR", True)
