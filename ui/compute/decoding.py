"""The decoding page's cached model and runs: keyed by plain arguments, so every session shares them."""

from __future__ import annotations

import streamlit as st

from core.decode.models import DecodingModel, load
from core.decode.run import Run, decode


@st.cache_resource(show_spinner="Loading the model…")
def cached_model(key: str) -> DecodingModel:
    """One model per choice for the server's life: loaded (or, for the reversal model, trained) once, then only
    read; inference never changes it, so sessions may share it."""
    return load(key)


@st.cache_data(max_entries=128, show_spinner=False)
def cached_run(model: str, prompt: str, strategy: str, G: int, beams: int, length_penalty: float,
               early_stopping: bool | str, temperature: float, top_k: int | None, top_p: float, samples: int,
               seed: int, stop_at_newline: bool) -> Run:
    """A decoding run as plain records; raises ValueError for a bad value (not cached)."""
    return decode(cached_model(model), prompt, strategy, G, beams=beams, length_penalty=length_penalty,
                  early_stopping=early_stopping, temperature=temperature, top_k=top_k, top_p=top_p, samples=samples,
                  seed=seed, stop_at_newline=stop_at_newline)
