"""One failing part of a page shows a short error in place; the rest of the page still renders."""

from __future__ import annotations

import traceback
from contextlib import contextmanager
from typing import Iterator

import streamlit as st


@contextmanager
def guard(what: str) -> Iterator[None]:
    """Show a failure in one part of a page as a short error; the rest of the page still renders."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - a page must survive any one failing part
        st.error(f"{what} failed: {exc}")
        with st.expander("Details"):
            st.code("".join(traceback.format_exception(exc)), language="text")
