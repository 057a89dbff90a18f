"""Placeholder page (quiz); replaced by its issue's work."""

import streamlit as st

from pages.common import cached_trace, current_config

cfg = current_config()
st.title("quiz")
t = cached_trace(cfg)
st.write(f"{len(t.rows)} rows traced; shape_only={t.shape_only}")
