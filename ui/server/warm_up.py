"""PyTorch's one-time cost of a first shape-only pass, paid in the background when the server starts."""

from __future__ import annotations

import threading

import streamlit as st

from core.shapes import warm_up


@st.cache_resource(show_spinner=False)
def warm_shapes_in_background() -> threading.Thread:
    """Start core.shapes.warm_up on a thread of its own, once per server process (st.cache_resource keeps the
    thread), so the first learner to ask for a shape-only trace does not wait for it. Explicitly not a daemon,
    which it would inherit from the script run's thread: a daemon thread still inside PyTorch at exit aborts the
    interpreter."""
    thread = threading.Thread(target=warm_up, name="shape-warm-up", daemon=False)
    thread.start()
    return thread
