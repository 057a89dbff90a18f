"""Cost: what the sidebar's model costs in compute and memory, for inference and training, every figure
with its formula and the formula with this config's numbers; and a live check of the formulas against
the model's own pass.

The figures are formulas over the config (core.cost), cached by config and settings (ui.compute.cost);
the live check runs the model, on the meta device when it is large, so it is drawn last.
"""

import streamlit as st

from core.cost import LIVE_SAVED_BUDGET_BYTES, OPTIMIZERS, RECOMPUTE, CostSettings, gpus
from core.memory import estimate
from render.cost import crossover_words, figure_value, figures_frame, fits_frame, flops_frame, flops_spec, live_frame
from render.palette import INK
from render.words import counted
from ui.compute.cost import cached_counted_flops, cached_live, cached_report
from ui.link.choices import (BATCH_CHOICES, CONTEXT_CHOICES, DP_CHOICES, FLASH_TEXT, GPU_NAMES, MFU_CHOICES, OPTIMAL,
                           TOKEN_TEXT)
from ui.look.charts import show_chart
from ui.look.theme import theme
from ui.server.guard import guard
from ui.server.streamlit_internals import leave_legacy_pages_mode
from ui.sidebar.config import forget_link_warnings, this_run

leave_legacy_pages_mode()  # before anything is drawn: see ui/server/streamlit_internals.py

run = this_run()
cfg = run.cfg
state = st.session_state
# The sidebar has kept every choice in range (ui.link.choices.cost_choices) before the page runs, so the
# settings are read first and each widget is drawn beside the figures it changes.
widget = {"persist_state": "session", "on_change": forget_link_warnings}


def settings() -> CostSettings:
    tokens = state["c_tokens"]
    return CostSettings(context=state["c_context"], batch=state["c_batch"], gpu=state["c_gpu"], mfu=state["c_mfu"],
                        train_tokens=None if tokens == OPTIMAL else tokens, optimizer=state["c_optimizer"],
                        zero_stage=state["c_zero"], data_parallel=state["c_dp"], recompute=state["c_recompute"],
                        flash=state["c_flash"])


def show_figures(figures, keys=None) -> None:
    st.table(figures_frame(figures, keys).set_index("figure"))


st.caption("Every figure below has its formula beside it, and the formula again with this config's numbers. "
           "P is the parameter count, P_active the parameters one token uses (all of them, except the routed "
           "experts a mixture of experts skips), D the training tokens, s the context and b the batch.")

report = None
with guard("Working out the costs"):
    report = cached_report(cfg, settings())

if report is not None:
    p = report.params
    active = (f"{p.active:,} active per token ({p.active / p.total:.1%}), " if p.active != p.total else "")
    st.markdown(f"**This model:** {p.total:,} parameters, {active}of which {p.embedding:,} are looked up rather "
                "than multiplied.")

    st.header("Compute")
    with guard("The compute figures"):
        c1, c2, c3 = st.columns(3)
        c1.selectbox("GPU", GPU_NAMES, key="c_gpu", help="Its datasheet's bf16 dense peak, memory and bandwidth: "
                     "the table under Inference memory names each source.", **widget)
        c2.select_slider("MFU — share of the peak a run reaches", MFU_CHOICES, key="c_mfu",
                         format_func=lambda v: f"{v:.0%}", help="Model FLOPs utilisation: large training runs "
                         "reach about 35 to 55% of the peak.", **widget)
        c3.select_slider("D — training tokens", list(TOKEN_TEXT), key="c_tokens", format_func=TOKEN_TEXT.__getitem__,
                         help="'optimal' is Chinchilla's compute-optimal D ≈ 20 · P_active.", **widget)
        show_figures(report.compute)
        per_token = report.compute["FLOPs per token"].value
        thumb = report.compute["rule of thumb"].value
        st.caption(f"FLOPs per token counts each matrix multiply of one token's forward pass: 2 FLOPs (a multiply "
                   f"and an add) for each weight it is multiplied by, and the attention scores and weighted sums, "
                   f"which grow with the context. The rule of thumb, 2 · P_active plus the attention term, also "
                   f"counts the weights that are looked up, not multiplied (the embeddings), and the norms' "
                   f"and biases' parameters: {thumb - per_token:+,.0f} FLOPs a token here. Training costs about 6 "
                   "FLOPs a parameter and token: 2 forward, 4 backward (the gradients of the inputs and of the "
                   "weights).")
        frame = flops_frame(report.flops_by_component)
        st.subheader("FLOPs per token, by component")
        show_chart(flops_spec(frame, INK[theme()]["label"]), width="stretch")
        show_figures(report.flops_by_component)

    st.header("Inference memory")
    with guard("The inference memory"):
        c1, c2 = st.columns(2)
        c1.select_slider("s — context, tokens", sorted({*CONTEXT_CHOICES, cfg.M}), key="c_context",
                         format_func=lambda v: f"{v:,}", help="Tokens each sequence holds: the KV cache's length.",
                         **widget)
        c2.select_slider("b — batch, sequences", sorted({*BATCH_CHOICES, cfg.N}), key="c_batch", **widget)
        show_figures(report.inference)
        weights = report.inference["weights, bf16"].value
        cache = report.inference["KV cache"].value
        bigger = "more than" if cache > weights else "less than"
        cache_words = (f"At s = {state['c_context']:,} and b = {state['c_batch']}, the KV cache takes {bigger} the "
                       f"bf16 weights ({cache / weights:.2f} ×): the weights stay fixed, the cache grows with every "
                       "token of every sequence." if cache else
                       "An encoder-only model reads its input once and generates nothing, so it keeps no KV cache.")
        st.caption(cache_words + " Peak activations are one forward pass's largest moment; spelled-out attention's "
                   "scores, 2 · b · nhead · s², grow with the square of the context.")
        st.subheader("Fits on")
        st.caption("Weights in bf16 plus the KV cache plus peak activations, against each GPU's memory (no "
                   "framework overhead counted). Each GPU's figures come from the datasheet named in its row.")
        st.dataframe(fits_frame(report.fits, gpus()), hide_index=True, width="stretch")

    st.header("Decode speed bound")
    with guard("The decode bound"):
        show_figures(report.decode)
        st.caption("Generating one token at a time reads every active weight and each sequence's cache once a "
                   "step, so the GPU's bandwidth bounds the tokens a second. Prefill handles the whole prompt at "
                   "once and is bound by compute instead. " + crossover_words(report.decode, state["c_batch"]))

    st.header("Training memory")
    with guard("The training memory"):
        c1, c2, c3 = st.columns(3)
        c1.selectbox("Optimizer", list(OPTIMIZERS), key="c_optimizer",
                     help="Bytes a parameter: " + "; ".join(f"{k}: {w} + {g} + {o} = {w + g + o}"
                                                            for k, (w, g, o) in OPTIMIZERS.items()), **widget)
        c2.radio("ZeRO stage", [0, 1, 2, 3], key="c_zero", horizontal=True,
                 help="1 shards the optimizer state over the data-parallel GPUs, 2 the gradients too, 3 the weights "
                      "too.", **widget)
        c3.select_slider("Data-parallel GPUs", DP_CHOICES, key="c_dp", format_func=lambda v: f"{v:,}", **widget)
        c1, c2 = st.columns(2)
        c1.radio("Recomputation", list(RECOMPUTE), key="c_recompute", horizontal=True,
                 help="none keeps every activation; selective recomputes the attention map in backward; full keeps "
                      "only each layer's input and reruns the layer.", **widget)
        c2.toggle("FlashAttention", key="c_flash", help="A fused kernel that never stores the attention map.",
                  **widget)
        show_figures(report.training)
        w, g, o = OPTIMIZERS[state["c_optimizer"]]
        st.caption(f"{state['c_optimizer']}: {w} bytes of weights, {g} of gradients and {o} of optimizer state a "
                   f"parameter, {w + g + o} in all. The activations follow Korthikanti et al. (2022) for a GPT-style "
                   "layer (LayerNorm, GELU, d_ff = 4h) in fp16, with h = E and a = nhead: 34 · s · b · h for the "
                   "linear parts and 5 · a · s² · b for the attention map (its softmax, dropout mask and dropout "
                   "output), the term that grows with s². Selective recomputation and FlashAttention both drop that "
                   "term; full recomputation keeps 2 · s · b · h. SwiGLU keeps three d_ff-wide tensors instead of "
                   "GELU's input and output, so the 19 of the MLP grows; RMSNorm keeps no mean, so the norms' 4 "
                   "shrinks a little.")

    st.header("Live check")
    with guard("The live check"):
        # As core.cost decides whether one real training step is small enough to measure here.
        small = 3 * estimate(cfg).total <= LIVE_SAVED_BUDGET_BYTES
        if small or state.get(f"c_counted_{hash(cfg)}"):
            live = cached_live(cfg) if small else {**report.live, "counted_flops": cached_counted_flops(cfg)}
            st.dataframe(live_frame(live), hide_index=True, width="stretch")
            flops, formula = live["counted_flops"], live["formula_flops"]
            st.caption(f"PyTorch's FlopCounterMode counted {flops:,} FLOPs in one forward pass of the sidebar's "
                       f"batch (N = {counted(cfg.N, 'sequence')} of M = {counted(cfg.M, 'token')}), against "
                       f"{formula:,} from our per-token formula times the tokens. It counts matrix multiplies only, "
                       "2 FLOPs a multiply-add, as the formula does; the rule of thumb's other parameters (the "
                       "embedding lookup, the norms, the biases) and the softmax are in neither. A mixture of experts "
                       "counted on the meta device hands each expert an even share of tokens, rounded up, so it may "
                       "count a few rows more.")
            if live.get("saved_bytes") is not None:
                st.caption("Bytes saved for backward were measured in one real training step with "
                           "torch.autograd.graph.saved_tensors_hooks, each tensor once, the weights left out. Our "
                           "exact count follows this spelled-out model tensor by tensor, in float32: it keeps the "
                           "attention weights after the softmax, N · nhead · M² numbers a layer, which a fused "
                           "kernel such as FlashAttention never stores (it recomputes them in backward)."
                           + ("" if live.get("expected_saved_bytes") is not None else
                              " This family's bytes are measured only: the exact count covers dense decoder-only and "
                              "encoder-only models with multi-head attention and added or no positions; its other "
                              "parts save tensors of their own."))
        else:
            st.caption("This model is large: the counter runs its own pass on the meta device (nothing is "
                       "allocated), which still takes seconds at this size. The bytes saved for backward are "
                       "measured only on models small enough to train here.")
            if st.button("Count the FLOPs of one forward pass", key="c_count"):
                state[f"c_counted_{hash(cfg)}"] = True
                st.rerun()
