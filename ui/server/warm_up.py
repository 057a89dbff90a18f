"""PyTorch's one-time cost of a first shape-only pass, paid in the background when the server starts."""

from __future__ import annotations

import threading

import streamlit as st

from core.shapes import warm_up


@st.cache_resource(show_spinner=False)
def warm_shapes_in_background() -> threading.Thread:
    """Start core.shapes.warm_up on a thread of its own, once per server process (st.cache_resource keeps
    the thread), so that the first learner to ask for a shape-only trace does not wait for it.

    Not a daemon, said explicitly, as a thread started from a script run's (daemon) thread would inherit
    daemon: a process that ends while it runs then waits for it, where a daemon thread still inside PyTorch
    at exit aborts the interpreter.
    """
    thread = threading.Thread(target=warm_up, name="shape-warm-up", daemon=False)
    thread.start()
    return thread
