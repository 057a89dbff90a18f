"""RoPE on the positional page: its rotation angles as a heatmap, and the relative property's two scores
as a table (no streamlit, no torch)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import altair as alt
import pandas as pd

from render.charts import BAND_AXIS, MAX_SIDE, MIN_PLOT, PER_CELL, WEIGHTS_DECOR
from render.tables import described, fill_data
from render.words import counted

if TYPE_CHECKING:  # types only: core.views imports torch
    from core.views import RopeScores, RopeView

TURN = 2 * math.pi


def _angles_template() -> dict:
    # The colour is the direction a pair points after the turn, so a cyclic scheme: 0 and 2π look alike.
    return alt.Chart(alt.NamedData(name="cells")).mark_rect().encode(
        x=alt.X("pair:O", title="pair i (dimensions i and i + d_k/2)",
                axis=alt.Axis(labelAngle=0, labelOverlap=True, **BAND_AXIS)),
        y=alt.Y("position:O", title="position p", axis=alt.Axis(**BAND_AXIS)),
        color=alt.Color("turned:Q", scale=alt.Scale(scheme="sinebow", domain=[0, TURN]),
                        title="θ mod 2π", legend=alt.Legend(values=[0, math.pi / 2, math.pi, 3 * math.pi / 2, TURN],
                                                             format=".2f")),
        tooltip=["position:O", "pair:O", alt.Tooltip("theta:Q", title="θ (radians)", format=".4f"),
                 alt.Tooltip("turned:Q", title="θ mod 2π", format=".3f")],
    ).to_dict()


def rope_angles_spec(v: RopeView) -> dict:
    """Positions down, pairs across: each cell is how far RoPE turns that pair at that position."""
    cells = [{"position": p, "pair": i, "theta": theta, "turned": theta % TURN}
             for p, row in enumerate(v.angles) for i, theta in zip(v.pairs, row)]
    spec = fill_data(_angles_template(), {"cells": cells})
    spec["width"] = min(MAX_SIDE - WEIGHTS_DECOR[0], max(MIN_PLOT, PER_CELL * len(v.pairs)))
    spec["height"] = min(MAX_SIDE - WEIGHTS_DECOR[1], max(MIN_PLOT, PER_CELL * v.positions))
    spec["autosize"] = {"type": "pad", "contains": "padding"}
    spec["usermeta"] = {"decor": list(WEIGHTS_DECOR)}  # for charts.full_width
    return described(spec, f"Heatmap of RoPE's rotation angles: {counted(v.positions, 'position')} down, "
                           f"{len(v.pairs)} of the {counted(v.d_k // 2, 'pair')} of d_k = {v.d_k} across, coloured by "
                           "the angle modulo a full turn.")


def rope_angles_frame(v: RopeView) -> pd.DataFrame:
    """The angles in radians, one row per position, one column per pair."""
    return pd.DataFrame(v.angles, index=[f"position {p}" for p in range(v.positions)],
                        columns=[f"pair {i}" for i in v.pairs])


def rope_scores_frame(r: RopeScores) -> pd.DataFrame:
    """The same q and k scored at (i, j) and at (i + s, j + s), side by side."""
    return pd.DataFrame({
        "query at": [r.i, r.i + r.s],
        "key at": [r.j, r.j + r.s],
        "offset i − j": [r.i - r.j, r.i - r.j],
        "q·k after RoPE": [f"{r.score:.9g}", f"{r.shifted:.9g}"],
    }, index=["(i, j)", "(i + s, j + s)"])
