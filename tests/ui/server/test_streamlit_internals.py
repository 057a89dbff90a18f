"""ui/server/streamlit_internals.py leans on Streamlit's private ``PagesManager.uses_pages_directory``, its runtime and
its frontend's test ids: these fail loudly when a Streamlit upgrade changes any of them, so the workaround can be
revisited (or dropped)."""

import inspect
import re
from pathlib import Path

import pytest
from streamlit.commands import navigation
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner import script_runner

from ui.server.streamlit_internals import CLOSE_FULLSCREEN, TEST_IDS, by_test_id, without_pages_dir


@pytest.fixture(autouse=True)
def navigation_not_pages_dir():
    """Streamlit's own PagesManager here: the conftest's patch is what these tests look under."""


def test_a_pages_folder_beside_the_entry_script_still_turns_the_legacy_mode_on(tmp_path, monkeypatch):
    (tmp_path / "pages").mkdir()
    (tmp_path / "app.py").write_text("")
    monkeypatch.setattr(PagesManager, "uses_pages_directory", None)
    PagesManager(str(tmp_path / "app.py"), setup_watcher=False)
    assert PagesManager.uses_pages_directory is True


def test_the_legacy_mode_still_runs_the_page_alone_and_st_navigation_still_ends_it():
    assert "uses_pages_directory" in inspect.getsource(script_runner.ScriptRunner._run_script)
    assert callable(script_runner._mpa_v1)
    assert "PagesManager.uses_pages_directory = False" in inspect.getsource(navigation.navigation)


def test_without_pages_dir_ends_the_legacy_mode_as_soon_as_a_manager_is_made(tmp_path, monkeypatch):
    (tmp_path / "pages").mkdir()
    (tmp_path / "app.py").write_text("")
    monkeypatch.setattr(PagesManager, "uses_pages_directory", None)
    monkeypatch.setattr(PagesManager, "__init__", without_pages_dir(PagesManager.__init__))
    PagesManager(str(tmp_path / "app.py"), setup_watcher=False)
    assert PagesManager.uses_pages_directory is False


def test_a_runs_context_still_says_whether_back_or_forward_started_it():
    from dataclasses import fields

    from streamlit.runtime.scriptrunner import ScriptRunContext, get_script_run_ctx

    assert callable(get_script_run_ctx)
    assert "is_history_navigation" in {f.name for f in fields(ScriptRunContext)}


def test_the_runtime_can_still_say_whether_a_session_is_connected():
    from streamlit import runtime
    from streamlit.runtime import Runtime

    from ui.server.streamlit_internals import session_alive

    assert callable(runtime.exists) and callable(runtime.get_instance)
    assert callable(Runtime.is_active_session)
    assert session_alive() is None  # no script run, no runtime: nothing to ask


def _frontend_js() -> str:
    import streamlit

    static = Path(streamlit.__file__).parent / "static"
    return "\n".join(path.read_text(errors="replace") for path in static.rglob("*.js"))


def test_every_test_id_the_app_selects_by_is_still_in_streamlits_frontend():
    js = _frontend_js()
    missing = [name for name in TEST_IDS if not re.search(rf"[\"'`]{name}[\"'`]", js)]
    assert missing == [], f"Streamlit's frontend no longer names these test ids: {missing}"
    assert re.search(r"[\"'`]Close fullscreen[\"'`]", js), "the fullscreen frame's close label changed"
    assert CLOSE_FULLSCREEN == '[aria-label="Close fullscreen"]'


def test_a_selector_by_test_id_is_exact_and_refuses_an_unknown_id():
    assert by_test_id("stApp") == '[data-testid="stApp"]'
    with pytest.raises(ValueError, match="stNoSuchThing"):
        by_test_id("stNoSuchThing")


def test_no_module_outside_this_one_names_a_streamlit_test_id():
    root = Path(__file__).resolve().parents[3]
    sources = [*root.glob("streamlit_app.py"), *(root / "pages").rglob("*.py"), *(root / "ui").rglob("*.py"),
               *(root / "render").rglob("*.py")]
    named = [str(path.relative_to(root)) for path in sources
             if path.name != "streamlit_internals.py" and re.search(r"data-testid|aria-label=\"Close", path.read_text())]
    assert named == []
