"""Transformer Shape Explorer: placeholder entry until the explorer page lands."""

import streamlit as st

from core import DEFAULT, trace

st.set_page_config(page_title="Transformer Shape Explorer", layout="wide")
t = trace(DEFAULT)
st.dataframe([{"#": r.index, "tensor": r.name, "formula": r.formula, "live shape": str(r.shape)} for r in t.rows])
