"""Decoding: how a model's next-token distributions become a continuation, one generated token at a time.

Greedy, beam search, sampling (temperature, top-k, top-p) and minimum Bayes risk run on the shipped character
LM (or the lab's reversal model, or untrained weights), with every step's tensors and shapes; teacher forcing
is shown beside them. The page uses its own model, not the sidebar's config.
"""

import streamlit as st

from core.decode.models import MODEL_NAMES
from core.tokens import escaped
from render.decoding import (beam_tree_frame, beam_tree_spec, cache_frame, candidates_frame, continuations_frame,
                             distribution_frame, finished_frame, records_frame, scores_frame, token_text,
                             token_text_line, utility_frame)
from render.markdown import as_literal
from render.words import counted
from ui.compute.decoding import cached_model, cached_run
from ui.link.choices import (DECODING_MODELS, DECODING_STRATEGIES, EARLY_STOPPING, LENGTH_PENALTIES, MAX_DECODING_G,
                           TEMPERATURES, TOP_PS)
from ui.look.charts import show_chart
from ui.server.guard import guard
from ui.server.streamlit_internals import leave_legacy_pages_mode
from ui.sidebar.config import forget_link_warnings

leave_legacy_pages_mode()  # before anything is drawn: see ui/server/streamlit_internals.py

STRATEGY_NAMES = {"greedy": "Greedy", "beam": "Beam search", "sample": "Sampling", "mbr": "Minimum Bayes risk"}
EARLY_NAMES = {"false": "False (heuristic)", "true": "True (stop at B finished)", "never": "never"}
EARLY_VALUES = {"false": False, "true": True, "never": "never"}
keep = {"persist_state": "session", "on_change": forget_link_warnings}

st.caption("A language model gives a distribution over the next token; decoding turns those distributions into a "
           "continuation. Every strategy below runs on the model's KV cache: one pass over the prompt, then one "
           "position per new token. Step through a run to see each step's tensors and their shapes.")

left, right = st.columns([3, 2])
model_key = right.selectbox("Model", DECODING_MODELS, format_func=MODEL_NAMES.__getitem__, key="d_model", **keep,
                            help="The character LM ships with the app: it was trained by "
                                 "`python -m core.decode.train_default` on the lab's Shakespeare passages. The "
                                 "reversal model is trained here with the Training lab's default settings, and "
                                 "reads numbers 0-15.")
prompt = left.text_area("Prompt — the text to continue", key="d_prompt", height=80, **keep)
strategy = st.radio("Strategy", DECODING_STRATEGIES, format_func=STRATEGY_NAMES.__getitem__, key="d_strategy",
                    horizontal=True, **keep)
G = st.slider("G — new tokens", 1, MAX_DECODING_G, key="d_G", **keep)
beams, lp, early, T, k, p, S, seed = 4, 1.0, "false", 1.0, 0, 1.0, 8, 0
c1, c2, c3 = st.columns(3)
if strategy == "beam":
    beams = c1.slider("B — beams", 1, 8, key="d_beams", **keep)
    lp = c2.select_slider("Length penalty", LENGTH_PENALTIES, key="d_lp", **keep,
                          help="A finished hypothesis scores (sum of log p) / length ** penalty: above 0 favours "
                               "longer ones.")
    early = c3.radio("Early stopping", EARLY_STOPPING, format_func=EARLY_NAMES.__getitem__, key="d_early", **keep)
elif strategy in ("sample", "mbr"):
    T = c1.select_slider("Temperature", TEMPERATURES, key="d_T", **keep)
    k = c2.number_input("top-k (0: off)", 0, 100, key="d_k", **keep)
    p = c3.select_slider("top-p", TOP_PS, key="d_p", **keep)
    seed = c1.number_input("Seed", 0, 1_000_000, key="d_seed", **keep)
    if strategy == "mbr":
        S = c2.slider("S — samples", 2, 16, key="d_S", **keep)
newline = st.checkbox("Stop at a line end (the newline is the end token)", key="d_newline", value=False,
                      disabled=model_key == "reversal")


def run_of(name: str):
    return cached_run(model_key, prompt, name, int(G), int(beams), float(lp), EARLY_VALUES[early], float(T),
                      int(k) or None, float(p), int(S), int(seed), bool(newline) and model_key != "reversal")


run = None
with guard("Decoding"):
    dm = cached_model(model_key)
    try:
        run = run_of(strategy)
    except ValueError as exc:
        st.error(as_literal(escaped(str(exc))), icon=":material/error:")

if run is not None:
    d = run.decoding
    labels = dm.labels
    cut = f" (its first {counted(run.prompt_cut, 'token')} left out: the model reads at most {dm.max_len} " \
          f"tokens, G = {G} of them new)" if run.prompt_cut else ""
    st.caption(f"The model ({dm.name}, vocab_size = {dm.vocab_size}) reads this prompt of M = "
               f"{counted(len(d.prompt[0]), 'token')}{cut}:")
    st.code(token_text_line(run.prompt_text), language=None)

    st.header("Step by step")
    n = len(d.steps)
    i = st.slider("Step — generated token", 1, n, key="d_step") if n > 1 else 1
    step = d.steps[i - 1]
    with guard("The step's tensors"):
        if strategy == "beam":
            st.markdown(f"**Step {i} of {n}.** Every beam's score plus each token's log-probability gives "
                        f"(N, B·vocab_size) = {step.get('candidates').shape} candidates; the best 2B = "
                        f"{2 * beams} are kept, and the best B that do not end become the new beams "
                        f"{step.get('beams').shape}.")
            show_chart(beam_tree_spec(beam_tree_frame(d, labels, i)), width="content")
            a, b = st.columns(2)
            a.caption("The running beams after this step")
            a.dataframe(scores_frame(step, labels, len(d.prompt[0])), hide_index=True)
            b.caption(f"The best 2B = {2 * beams} candidates")
            b.dataframe(candidates_frame(step, labels), hide_index=True)
            st.caption("Finished hypotheses so far (score: sum log p / length ** length penalty), best first")
            st.dataframe(finished_frame(step.get("finished").values, labels), hide_index=True)
        else:
            token = step.get("token").values[0][0]
            st.markdown(f"**Step {i} of {n}.** Chosen: `{as_literal(token_text(labels[token]))}`.")
            st.caption("The most likely tokens, and their probability after each filter (N, vocab_size) = "
                       f"{step.get('probs').shape}:")
            st.dataframe(distribution_frame(step, labels), hide_index=True)
            if strategy in ("sample", "mbr"):
                st.caption(f"Tokens left to draw from after the filters: {step.get('kept').values[0]} of "
                           f"{dm.vocab_size}.")
        st.caption("Every tensor this step recorded")
        st.dataframe(records_frame(step), hide_index=True)
        st.caption("The KV cache (layers, 2, rows, nhead_kv, tokens, d_k): it grows by one token a step"
                   + ("; beam search gathers its rows by each step's parent beams." if strategy == "beam" else "."))
        st.dataframe(cache_frame(d), hide_index=True)
        if strategy == "mbr":
            U = d.extra("utility").values[0]
            chosen = d.extra("chosen").values[0]
            st.subheader("Minimum Bayes risk")
            st.caption(f"{S} samples, and the (S, S) matrix of their unigram F1 (the tokens two samples share, "
                       f"2 · shared / (length i + length j)). Chosen: sample {chosen}, whose mean F1 against the "
                       "others is highest.")
            st.dataframe(utility_frame(U))
            samples = d.extra("samples").values[:S]
            st.dataframe(continuations_frame({f"sample {j}": dm.decode(s) for j, s in enumerate(samples)}),
                         hide_index=True)

    st.header("The continuations side by side")
    with guard("The strategies side by side"):
        cols = st.columns(len(DECODING_STRATEGIES))
        for col, name in zip(cols, DECODING_STRATEGIES):
            other = run if name == strategy else run_of(name)
            col.markdown(f"**{STRATEGY_NAMES[name]}**" + (" (chosen)" if name == strategy else ""))
            col.code(token_text_line(other.continuations[0]), language=None, wrap_lines=True)
    if run.forced is not None:
        f = run.forced.steps[0]
        same = run.forced.generated == d.generated
        st.caption(f"Teacher forcing, for contrast: one pass, no loop, over the prompt and the chosen continuation "
                   f"shifted right, {f.get('inputs').shape}, gives logits {f.get('logits').shape} at every position "
                   f"at once (loss {f.get('loss').values:.3f}). Its most likely token at each position "
                   + ("is the continuation itself: greedy picks those." if same else
                      "differs from the continuation where the strategy did not pick the most likely token."))
