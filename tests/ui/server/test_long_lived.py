"""ui/server/long_lived.py: what the imports made is frozen once, so Streamlit's collections skip it."""

from __future__ import annotations

import gc
import sys
import weakref

import pytest

import ui.server.long_lived as long_lived


@pytest.fixture
def fresh(monkeypatch):
    """As if nothing had been frozen yet; whatever the test freezes is unfrozen afterwards."""
    monkeypatch.delenv("TSE_GC_FREEZE", raising=False)
    monkeypatch.setattr(long_lived, "_modules_at_last_freeze", 0)
    yield
    gc.unfreeze()


def test_the_first_call_freezes_what_is_alive_and_the_next_does_nothing(fresh):
    before = len(gc.get_objects())
    assert long_lived.freeze_long_lived()
    assert gc.get_freeze_count() >= before // 2  # the objects alive now, no longer in any generation
    assert len(gc.get_objects()) < 1000
    assert not long_lived.freeze_long_lived()  # no module imported since


def test_many_new_modules_freeze_again(fresh, monkeypatch):
    assert long_lived.freeze_long_lived()
    monkeypatch.setattr(long_lived, "_modules_at_last_freeze", len(sys.modules) - long_lived.NEW_MODULES + 1)
    assert not long_lived.freeze_long_lived()  # one module short of the threshold
    monkeypatch.setattr(long_lived, "_modules_at_last_freeze", len(sys.modules) - long_lived.NEW_MODULES)
    assert long_lived.freeze_long_lived()


def test_an_environment_switch_turns_it_off(fresh, monkeypatch):
    monkeypatch.setenv("TSE_GC_FREEZE", "0")
    frozen = gc.get_freeze_count()
    assert not long_lived.freeze_long_lived()
    assert gc.get_freeze_count() == frozen


def test_frozen_objects_are_still_freed_when_nothing_refers_to_them(fresh):
    class Box:
        pass

    box = Box()
    ref = weakref.ref(box)
    assert long_lived.freeze_long_lived()
    del box
    assert ref() is None  # freed by reference counting at once, frozen or not
