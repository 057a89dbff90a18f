"""AppTest helpers shared by the page tests: open the app or one of its pages, and drive the quiz and the lab
as a learner would. tests/conftest.py makes each AppTest run the entry script first, as the server does."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.config import ARCHS
from quizzes.progress import FORMAT
from ui.sidebar.config import ARCHITECTURE_OPEN

ARCHITECTURE_FAMILIES = tuple(f"{arch}, " for arch in ARCHS)

APP = str(Path(__file__).resolve().parents[2] / "streamlit_app.py")
LAB_PAGE = "pages/training_lab.py"


def make_app(query: dict[str, str] | None = None, timeout: float = 60) -> AppTest:
    """A fresh AppTest of the whole app (entry script, sidebar, navigation)."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    if query:
        at.query_params.update(query)
    return at


def architecture_opened(at: AppTest) -> AppTest:
    """The sidebar's Architecture group opened, as a learner opens it: its widgets are drawn only then."""
    at.session_state[ARCHITECTURE_OPEN] = True
    return at


def architecture_summary(at: AppTest) -> str:
    """The line under the closed Architecture group that names its choices as they run."""
    [line] = [c.value for c in at.sidebar.caption if c.value.startswith(ARCHITECTURE_FAMILIES)]
    return line


def explorer_opened(at: AppTest, tab: str = "Memory against M", copy: bool = False, more: bool = False,
                    code: bool = False, words: bool = False, glossary: bool = False) -> AppTest:
    """Run the explorer with one of its pictures' tabs open, and its Markdown copy, its extras table, the
    code of the row picked to read whole, the figure in words or the glossary opened if asked: the page draws
    what is open only."""
    at.session_state["x_tabs"] = tab
    at.session_state["x_copy"] = copy
    at.session_state["x_more"] = more
    at.session_state["x_code"] = code
    at.session_state["x_words"] = words
    at.session_state["glossary"] = glossary
    return at.run()


def figure_in_words(at: AppTest):
    """The Explorer's figure in words, opened (its Architecture tab open): drawn once opened."""
    at = explorer_opened(at, tab="Architecture", words=True)
    return next(e for e in at.expander if e.label.startswith("The figure in words"))


def open_page(page: str, query: dict[str, str]) -> AppTest:
    """The app opened on a link to one of its pages, as a browser opens /positional?...."""
    at = make_app(query)
    at.switch_page(f"pages/{page}.py")
    return at.run()


def score_line(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("Score:"))


def answer(at, qid: str, text: str):
    at.text_input(key=f"ans_{qid}").input(text).run()
    at.button(key=f"submit_{qid}").click().run()
    assert not at.exception


def stored_copy(at) -> str | None:
    """The text the page last handed the browser to keep; None while it waits for the browser's report."""
    store = next(el for el in at.get("bidi_component") if el.key == "quiz_store")
    return json.loads(store.proto.json)["save"]


def browser_reports(at, text: str = "", available: bool = True) -> None:
    """Play the browser's side: what it holds under the quiz's name, or that its storage is blocked."""
    at.session_state["quiz_store"] = {"found": {"available": available, "text": text}}
    at.run()
    assert not at.exception


def answered(qids, query: dict[str, str] | None = None, topic: str = "All topics"):
    """The quiz page as a topic set, with these questions answered (imported, so wrong): their
    evidence is on the page."""
    doc = {"format": FORMAT, "version": 1,
           "answers": {qid: {"correct": False, "given": "?", "expected": "x"} for qid in qids}}
    at = make_app(query).run()
    at.switch_page("pages/quiz.py").run()
    at.text_area(key="quiz_paste").input(json.dumps(doc)).run()
    at.button(key="quiz_paste_load").click().run()
    at.radio(key="quiz_mode").set_value("A topic set").run()
    at.selectbox(key="quiz_topic").set_value(topic).run()
    assert not at.exception
    assert not [e.value for e in at.error if "failed" in e.value]  # no experiment fell over
    return at


def small_model(at, prefix: str, steps: int) -> None:
    """Sizes that train in well under a second."""
    at.select_slider(key=f"{prefix}_E").set_value(16).run()
    at.select_slider(key=f"{prefix}_nhead").set_value(2)
    at.slider(key=f"{prefix}_layers").set_value(1)
    at.select_slider(key=f"{prefix}_d_ff").set_value(32)
    at.select_slider(key=f"{prefix}_N").set_value(8)
    at.slider(key=f"{prefix}_steps").set_value(steps)


def train(at, prefix: str):
    """Click Train, wait for the run's thread to end, then rerun the page as its timer would.

    (A run that fails at once may have ended, and been shown, within the click's own reruns.)
    """
    at.button(key=f"{prefix}_run").click().run()
    assert not at.exception
    if f"{prefix}_training" in at.session_state:
        assert at.session_state[f"{prefix}_training"].wait(timeout=60), "the run did not end within a minute"
        at.run()
        assert not at.exception
    assert f"{prefix}_training" not in at.session_state  # an ended run is taken out of session state
    assert not at.button(key=f"{prefix}_run").disabled and at.button(key=f"{prefix}_stop").disabled
    return at


def running(at):
    """The config the app ran on its last run: the one the sidebar worked out and handed to the page."""
    return at.session_state["sidebar_run"].cfg


def sliders(at):
    """The sidebar's own config on the last run (link, preset and sliders), before a text or trained model."""
    return at.session_state["sidebar_run"].sliders
