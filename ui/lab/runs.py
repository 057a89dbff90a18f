"""Training runs that outlast a click: each run trains on a thread of its own, owned by one session.

Why a thread: trained inside the page's script, a run ended at the learner's first click anywhere,
because Streamlit reruns the script on every click. Looking something up on the explorer while the
model trained threw the run away. On its own thread the run goes on whatever the learner clicks or
wherever they go, and the page only reads how far it got: a fragment redraws the progress bar and
the loss curve a few times a second, and once the run has ended the whole page reruns to show the
result. The Stop button sets an event that core.train checks before every step; a stopped run is
still measured, on the model as it stands.

The thread calls core.train and writes plain values into its LabRun, which the page reads. Of
Streamlit it only asks, after each step, whether its session is still connected (Runtime's
is_active_session, which may be called from any thread). Limits: at most two runs at once on a
server (it may have only two cores), one per experiment per session, and a time limit each. A run
whose tab has been closed stops once its session has been gone for ABANDON_GRACE seconds, so that it
frees its slot for someone else; the grace lets a tab that only lost its connection for a moment
reconnect to a run still going.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

import streamlit as st

from core.train import Progress
from ui.server.streamlit_internals import session_alive

ABANDON_GRACE = 5.0  # seconds a run's session may be gone (tab closed) before the run stops


class LabRun:
    """One training run on its own thread: its settings, its progress so far, then its outcome."""

    def __init__(self, train: Callable[..., Any], settings: Any, *, max_seconds: float,
                 slot: threading.BoundedSemaphore, alive: Callable[[], bool] | None = None):
        """``alive`` answers whether the session that started the run is still connected; the run
        asks it after every step (None: never ask)."""
        self.settings = settings
        self.last: Progress | None = None  # the latest report, replaced whole (never half-written)
        self.loss: list[float] = []  # one value per step done; only the run's thread appends
        self.result: dict | None = None
        self.trained: Any = None  # the trained model, when the run keeps one (core.train's keep_model)
        self.error: Exception | None = None
        self.abandoned = False  # stopped because its session went away
        self._alive = alive
        self._gone_since: float | None = None
        self._stop = threading.Event()
        self._slot = slot
        # Not a daemon: a daemon thread still inside PyTorch when the interpreter finalizes aborts the process.
        # The run stops at its next step once the main thread has ended (_report), so an exit waits one step.
        self._thread = threading.Thread(target=self._train, args=(train, max_seconds),
                                        name=f"lab-run-{type(settings).__name__}", daemon=False)

    @property
    def steps(self) -> int:
        """The steps the run was asked for."""
        return self.settings.steps

    def start(self) -> "LabRun":
        self._thread.start()
        return self

    def _train(self, train: Callable[..., Any], max_seconds: float) -> None:
        try:
            outcome = train(self.settings, on_progress=self._report, stop=self._stop, max_seconds=max_seconds)
            self.trained = getattr(outcome, "trained", None)
            self.result = outcome.to_dict()
            if self.abandoned:  # seen only by a tab that reconnects later; say why, not "stop requested"
                self.result["stopped"] = f"its tab was closed or lost its connection for {ABANDON_GRACE:g} s"
        except Exception as exc:  # noqa: BLE001 - kept for the page to show; a thread has nowhere to raise
            self.error = exc
        finally:
            self._slot.release()

    def _report(self, p: Progress) -> None:
        self.loss.append(p.loss)
        self.last = p
        if not threading.main_thread().is_alive():  # the process is exiting
            self._stop.set()
            return
        if self._connected():
            self._gone_since = None
            return
        now = time.monotonic()
        if self._gone_since is None:
            self._gone_since = now
        elif now - self._gone_since >= ABANDON_GRACE:
            self.abandoned = True
            self._stop.set()

    def _connected(self) -> bool:
        """Whether the run's session is still there; a check that fails counts as yes, so that it
        can never end a learner's run."""
        try:
            return self._alive is None or self._alive()
        except Exception:  # noqa: BLE001 - see the docstring
            return True

    def stop(self) -> None:
        """Ask the run to end before its next step; it is then measured as it stands."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the run has ended (tests use this); True if it has."""
        self._thread.join(timeout)
        return not self.running

    def outcome(self) -> dict:
        """The result of an ended run, or the exception it failed with, raised again."""
        if self.running:
            raise RuntimeError("the run has not ended yet")
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


@st.cache_resource
def run_slots() -> threading.BoundedSemaphore:
    """At most two trainings at once on this server: the machine may have only two cores.

    A semaphore is built for sharing between threads, which is what cache_resource requires.
    """
    return threading.BoundedSemaphore(2)


def start_run(key: str, train: Callable[..., Any], settings: Any, max_seconds: float) -> LabRun | None:
    """Start a run and keep it in session state under ``key``; None (and a warning) if the server is busy."""
    slot = run_slots()
    if not slot.acquire(blocking=False):
        st.warning("Two trainings are already running on this server; try again in a few seconds.")
        return None
    try:
        run = LabRun(train, settings, max_seconds=max_seconds, slot=slot, alive=session_alive()).start()
    except BaseException:  # the thread never started, so nothing else will give the slot back
        slot.release()
        raise
    st.session_state[key] = run
    return run




TRAINED_KEY = "lab_trained"  # this session's last trained model (core.train.TrainedModel), for the Explorer


def keep_trained(run: LabRun) -> None:
    """Keep an ended run's trained model for this session alone, in its state: the Explorer and the Attention
    page may switch to it. Never in a cache every session shares, as it holds the run's weights."""
    if run.trained is not None:
        st.session_state[TRAINED_KEY] = run.trained
