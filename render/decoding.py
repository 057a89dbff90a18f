"""The decoding page's tables and its beam tree (no streamlit, no torch): built from a run's plain records."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import altair as alt
import pandas as pd

from core.tokens import escaped
from render.tables import described

if TYPE_CHECKING:  # types only: core.decode imports torch
    from core.decode.records import Decoding, Step

SHOWN = {" ": "␣", "\n": "↵"}  # a space and a line end, visible in a tree or a table


def token_text(label: str) -> str:
    """A token as a cell shows it: a space and a newline as visible marks, control characters escaped."""
    return SHOWN.get(label, escaped(label))


def shape_words(shape: Sequence[int]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ")"


def records_frame(step: Step) -> pd.DataFrame:
    """One step's recorded tensors: name, shape and what each holds."""
    return pd.DataFrame([{"tensor": r.name, "shape": shape_words(r.shape), "what it holds": r.note}
                         for r in step.records])


def cache_frame(d: Decoding) -> pd.DataFrame:
    """The KV cache's shape at every step (layers, 2, rows, nhead_kv, tokens, d_k), and for beam search the rows
    each step's reorder gathered."""
    rows = []
    for step in d.steps:
        row = {"step": step.index + 1, "KV cache shape": shape_words(step.get("kv_cache").shape)}
        if d.strategy == "beam":
            row["then reordered by (row ← parent row)"] = str(step.get("reorder_index").values)
        rows.append(row)
    return pd.DataFrame(rows)


def beam_tree_frame(d: Decoding, labels: Sequence[str], upto: int) -> pd.DataFrame:
    """The beams as a tree up to step ``upto`` (1-based): one node per running beam per step, with its token, its
    summed log-probability and the slot of the beam it grew from (the first prompt's beams only)."""
    rows = []
    B = d.settings["beams"]
    for step in d.steps[:upto]:
        i = step.index + 1
        tokens = step.get("beams").values
        scores = step.get("beam_scores").values[0]
        parents = step.get("beam_parent").values[0]
        for b in range(B):
            rows.append({"step": i, "beam": b, "token": token_text(labels[tokens[b][-1]]), "score": round(scores[b], 3),
                         "parent": parents[b], "from_step": i - 1})
    return pd.DataFrame(rows, columns=["step", "beam", "token", "score", "parent", "from_step"])


def beam_tree_spec(frame: pd.DataFrame) -> dict:
    """Each beam a row of nodes; a line from every node back to its parent at the step before (step 0 is the
    prompt's end, where every beam starts). Re-parented beams show as crossing lines."""
    base = alt.Chart(frame)
    x = alt.X("step:Q", title="generated token (step)", axis=alt.Axis(tickMinStep=1))
    y = alt.Y("beam:O", title="beam slot")
    edges = base.mark_rule(strokeWidth=1.5, opacity=0.6).encode(
        x=alt.X("from step:Q"), x2="step:Q", y=alt.Y("parent:O"), y2="beam:O")
    nodes = base.mark_circle(size=420, opacity=0.25).encode(x=x, y=y, tooltip=["step", "beam", "token", "score",
                                                                                 "parent"])
    text = base.mark_text(fontSize=13, fontWeight="bold").encode(x=x, y=y, text="token:N")
    width = max(200, 46 * (int(frame["step"].max()) + 1 if len(frame) else 1))
    spec = alt.layer(edges, nodes, text).properties(width=width, height=max(90, 36 * frame["beam"].nunique()),
                                                     title="The beams, step by step").to_dict()
    return described(spec, "A tree of the beams: each row a beam slot, each column a generated token; a line joins "
                           "every beam to the beam it grew from one step before.")


def scores_frame(step: Step, labels: Sequence[str], prompt_len: int) -> pd.DataFrame:
    """The running beams after a step: their text so far, summed log-probability and parent (first prompt)."""
    beams = step.get("beams").values
    scores = step.get("beam_scores").values[0]
    parents = step.get("beam_parent").values[0]
    return pd.DataFrame([{"beam": b, "continuation": "".join(token_text(labels[i]) for i in beams[b][prompt_len:]),
                          "score (sum log p)": round(scores[b], 4), "grew from beam": parents[b]}
                         for b in range(len(scores))])


def candidates_frame(step: Step, labels: Sequence[str]) -> pd.DataFrame:
    """The best 2B candidates of the first prompt: which beam each grows, by which token, at what score."""
    scores, parents, tokens = (step.get(n).values[0] for n in ("top_2B_scores", "top_2B_parent", "top_2B_token"))
    return pd.DataFrame([{"rank": r, "grows beam": parents[r], "by token": token_text(labels[tokens[r]]),
                          "score": round(scores[r], 4)} for r in range(len(scores))])


def finished_frame(finished: Any, labels: Sequence[str]) -> pd.DataFrame:
    """The first prompt's finished hypotheses, best first: continuation and length-penalised score."""
    return pd.DataFrame([{"continuation": "".join(token_text(labels[i]) for i in ids), "tokens": len(ids),
                          "score": round(score, 4)} for score, ids in (finished[0] if finished else [])],
                        columns=["continuation", "tokens", "score"])


STAGES = ("probs", "after temperature", "after top-k", "after top-p")


def distribution_frame(step: Step, labels: Sequence[str], top: int = 12) -> pd.DataFrame:
    """The first sequence's distribution before and after each filter, its ``top`` most likely tokens (by the
    model's own probabilities) as rows."""
    have = [s for s in STAGES if any(r.name == s for r in step.records)]
    if not have:
        have = ["probs"]
    columns = {s: step.get(s).values[0] for s in have}
    order = sorted(range(len(columns["probs"])), key=lambda i: -columns["probs"][i])[:top]
    return pd.DataFrame([{"token": token_text(labels[i]), **{s: round(columns[s][i], 4) for s in have}}
                         for i in order])


def utility_frame(matrix: Sequence[Sequence[float]]) -> pd.DataFrame:
    names = [f"sample {i}" for i in range(len(matrix))]
    return pd.DataFrame([[round(v, 3) for v in row] for row in matrix], index=names, columns=names)


def continuations_frame(texts: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame([{"strategy": k, "continuation": token_text_line(v)} for k, v in texts.items()])


def token_text_line(text: str) -> str:
    """A continuation on one line: line ends shown as ↵, control characters escaped."""
    return "".join("↵" if c == "\n" else escaped(c) for c in text)
