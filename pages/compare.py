"""Compare: two models side by side (the sidebar's, or any preset), their rows' shapes, parameters by
component, KV cache, FLOPs and memory, each difference marked. The two sides are in the link
(/compare?a=Llama-2-70B&b=Mixtral-8x7B: ui.link.choices.COMPARE_CHOICES), so a teacher can send one."""

import streamlit as st

from core.compare import find_preset
from render.compare import differences, highlighted, section_frame, sections
from ui.compute.cost import cached_compare
from ui.link.choices import COMPARED, SIDEBAR_MODEL, short_name
from ui.server.guard import guard
from ui.server.streamlit_internals import leave_legacy_pages_mode
from ui.sidebar.config import forget_link_warnings, this_run

leave_legacy_pages_mode()  # before anything is drawn: see ui/server/streamlit_internals.py

run = this_run()
widget = {"persist_state": "session", "on_change": forget_link_warnings}


def side_label(name: str) -> str:
    return "the sidebar's model" if name == SIDEBAR_MODEL else short_name(name)


def side_config(name: str):
    return run.cfg if name == SIDEBAR_MODEL else find_preset(name)


st.caption("Choose A and B: the sidebar's model or any preset. The link holds both, so it opens on the same "
           "comparison. Lines where A and B differ are marked ≠ and shaded.")
c1, c2 = st.columns(2)
a_name = c1.selectbox("A", COMPARED, key="cmp_a", format_func=side_label, **widget)
b_name = c2.selectbox("B", COMPARED, key="cmp_b", format_func=side_label, **widget)
a_label, b_label = side_label(a_name), side_label(b_name)

with guard("Comparing the two models"):
    with st.spinner("Working out both models' figures…"):
        lines = cached_compare(side_config(a_name), side_config(b_name))
    differ = differences(lines)
    st.markdown(f"**{a_label}** against **{b_label}**: {differ} of {len(lines)} lines "
                f"{'differs' if differ == 1 else 'differ'}. Memory "
                "is at each model's own M and N (context and batch), bf16 weights and cache, and mixed-precision "
                "Adam for training; the Cost page sets them for the sidebar's model.")
    for section in sections(lines):
        st.header(section[0].upper() + section[1:])
        st.table(highlighted(section_frame(lines, section, a_label, b_label)).hide(axis="index"))
