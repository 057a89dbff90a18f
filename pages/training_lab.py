"""Training lab: train a tiny causal Transformer live and watch the causal mask matter.

Two experiments from the learners' curriculum, both run by core.train on the CPU in seconds:
the reversal task (does the mask work?) and a tiny language model on shipped Shakespeare. This
page reads its own sliders, hands frozen settings to core.train, and shows the progress it
reports and the plain values it returns, drawn by render/lab_charts.py. No tensor maths here.

Running: Train starts the run on a thread of its own (ui/lab/runs.py), so it goes on whatever
else the learner clicks, on this page or another; a fragment redraws its progress on a timer.
Stop ends it before its next step, and core.train then measures the model as it stands.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from functools import partial
from typing import Any, Callable

import streamlit as st

from core.config import divisors
from core.train import LMSettings, ReversalSettings, load_text, make_tokenizer, train_lm, train_reversal
from render.lab_charts import (MASK_OFF, MASK_ON, accuracy_chart, attention_chart, examples_table, live_loss_spec,
                               loss_chart)
from render.tables import in_words
from render.words import counted
from ui.lab.marks import mark_runs, runs_lost
from ui.lab.runs import LabRun, keep_trained, start_run
from ui.link.choices import LAB_TASKS
from ui.look.charts import drawn_at_this_link, show_chart
from ui.look.theme import theme
from ui.server.guard import guard
from ui.server.streamlit_internals import leave_legacy_pages_mode
from ui.sidebar.config import forget_link_warnings

leave_legacy_pages_mode()  # before anything is drawn: see ui/server/streamlit_internals.py

MAX_SECONDS = 60.0  # a safety net: the sliders' worst corner could otherwise train for minutes
REDRAW_SECONDS = 0.25  # how often the progress bar and the live loss curve are redrawn
WIDTHS = [8, 16, 32, 64, 128]
FF_WIDTHS = [16, 32, 64, 128, 256, 512]
RATES = [0.0003, 0.001, 0.003, 0.01]


# --------------------------------------------------------------------------------------------
# Widgets


def model_sliders(prefix: str, defaults: Any) -> dict[str, Any]:
    """The shared model-size sliders; nhead only offers divisors of E, so d_k is always whole."""
    c1, c2, c3, c4 = st.columns(4)
    E = c1.select_slider("E — embedding size", WIDTHS, value=defaults.E, key=f"{prefix}_E", persist_state="session")
    heads = [h for h in divisors(E) if h <= 8]
    key = f"{prefix}_nhead"
    if st.session_state.get(key) not in heads:
        st.session_state[key] = max(h for h in heads if h <= max(defaults.nhead, 1))
    nhead = c2.select_slider("nhead — heads", heads, key=key, persist_state="session",
                             help="Only divisors of E: d_k = E / nhead.")
    layers = c3.slider("layers — blocks", 1, 4, defaults.layers, key=f"{prefix}_layers", persist_state="session")
    d_ff = c4.select_slider("d_ff — FFN width", FF_WIDTHS, value=defaults.d_ff, key=f"{prefix}_d_ff",
                            persist_state="session")
    return {"E": E, "nhead": nhead, "layers": layers, "d_ff": d_ff}


def run_sliders(prefix: str, defaults: Any, max_steps: int) -> dict[str, Any]:
    c1, c2, c3, c4 = st.columns(4)
    N = c1.select_slider("N — sequences per step", [4, 8, 16, 32, 64, 128], value=defaults.N, key=f"{prefix}_N",
                         persist_state="session")
    steps = c2.slider("steps", 5, max_steps, defaults.steps, step=5, key=f"{prefix}_steps", persist_state="session")
    lr = c3.select_slider("learning rate", RATES, value=defaults.lr, key=f"{prefix}_lr", persist_state="session")
    seed = c4.number_input("seed (0 to 9,999)", 0, 9999, defaults.seed, step=1, key=f"{prefix}_seed",
                           persist_state="session",
                           help="The same seed and sizes give the same run, to the last digit.")
    return {"N": N, "steps": steps, "lr": lr, "seed": int(seed)}


# --------------------------------------------------------------------------------------------
# Running on a thread of its own (ui/lab/runs.py), with live progress


def train_buttons(prefix: str, train: Callable[..., Any], settings: Any) -> LabRun | None:
    """Train and Stop; returns this experiment's run while one is going.

    Train starts a run on a thread of its own and is off while the run goes; Stop is on only then.
    A click that changes that reruns the page at once, so the buttons show the new state.
    """
    key = f"{prefix}_training"
    run: LabRun | None = st.session_state.get(key)
    b1, b2 = st.columns([1, 5])
    start = b1.button("Train", key=f"{prefix}_run", type="primary", disabled=run is not None)
    stop = b2.button("Stop", key=f"{prefix}_stop", disabled=run is None or run.stopping,
                     help="Ends the run in progress; the model is then measured as it stands.")
    if start and run is None and start_run(key, train, settings, MAX_SECONDS) is not None:
        st.rerun()
    if stop and run is not None:
        run.stop()
        st.rerun()
    return run


@st.fragment(run_every=REDRAW_SECONDS)
def live_progress(prefix: str, floor: float | None) -> None:
    """The bar and the loss curve of the run in progress, redrawn on a timer by themselves.

    Once the run has ended, the whole page reruns and shows the result instead.
    """
    run: LabRun | None = st.session_state.get(f"{prefix}_training")
    if run is None or not run.running:
        st.rerun()
    loss, last = run.loss[:], run.last
    if run.stopping:
        text = (f"Stopping once the current step is done ({len(loss)} done so far); then the model is measured "
                "as it stands…")
    elif last is None:
        text = "Starting…"
    else:
        text = f"step {last.step} of {last.steps} · loss {last.loss:.3f} · {last.seconds:.1f} s"
        if last.step == last.steps:
            text += "; now the model is measured…"
    st.progress(min(len(loss) / run.steps, 1.0), text=text)
    if loss:
        show_chart(live_loss_spec(loss, floor, run.steps, theme()), width="stretch")
    st.caption("The run goes on while you use the rest of the app: come back here for the result. "
               "Closing the tab stops it.")


def ended_run(prefix: str) -> dict | None:
    """Take this experiment's run out of session state once it has ended: its result, or None.

    Called before the buttons are drawn, so they show that no run is going. A run that failed
    leaves its error on the page instead of a result.
    """
    key = f"{prefix}_training"
    run: LabRun | None = st.session_state.get(key)
    if run is None or run.running:
        return None
    del st.session_state[key]
    keep_trained(run)  # the Explorer and the Attention page may switch to it, for this session
    with guard("Training"):
        return run.outcome()
    return None


# --------------------------------------------------------------------------------------------
# The reversal task


WHY_CHEAT = """
**Why the model cheats without the mask.** The model learns to predict the *next* token, so at
every position its input is the sequence so far and the answer is the token one step to the right.
In a single forward pass the whole sequence is fed in at once, so that answer is sitting in the
input, one position over (and here a second time, in the mirror half). The causal mask is what
hides it: position p may attend only to positions 0…p. Take the mask away and attention can simply
look ahead and copy, so a model trained long enough "predicts" even the random first half
perfectly; the attention maps below show where this one looks. The model has learned to read the
answer, not to predict it: when it generates text, the next token does not exist yet, and the
skill is worth nothing.
"""

WHY_MIRROR = """
**Why, with the mask, only the second half can be learned.** The first half, x, is drawn at
random, so what came before says nothing about the next token: the best any model can do is guess,
right 1 time in vocab_size. By the second half all of x is in the past, and each token of
reverse(x) is a copy of one of them (position M/2 + j repeats position M/2 − 1 − j). Attention can
learn to look back to that position, so with enough training accuracy there climbs to 100%. Half
the tokens stay unpredictable, so with the mask the loss cannot fall below ln(vocab_size)/2 per
token.
"""


def points(difference: float) -> str:
    """A difference of two shares in percentage points ("+0.6 pp"): 6.8% against 6.2% is 0.6 points
    apart, which "+0.6%" would read as a relative change."""
    return f"{100 * difference:+.1f} pp"


def reversal_floor(vocab_size: int, causal: bool) -> float | None:
    """The lowest loss a masked run can reach: half the tokens stay a uniform guess."""
    return math.log(vocab_size) / 2 if causal else None


def changed_settings(kept: dict, settings: dict) -> list[str]:
    """The settings, the mask aside, in which ``settings`` differ from a kept run's. Two runs are shown
    side by side only if there are none: the page compares the mask's two modes, nothing else."""
    return [k for k in kept if k != "causal" and kept[k] != settings.get(k)]


def next_run_words(results: dict[str, dict], settings: dict) -> str | None:
    """What pressing Train would do to the runs shown, read off the toggle and the sliders as they are now, a
    changed seed, steps or learning rate included (such a run replaces the one shown). None when there is nothing
    worth saying."""
    kept = next(iter(results.values()))["settings"]  # every kept run has these, the mask aside
    changed = changed_settings(kept, settings)
    was, now = (in_words([f"{k}={values[k]}" for k in changed]) if changed else "" for values in (kept, settings))
    if len(results) > 1:
        return (f"Training now would replace both runs: they had {was}, and the settings above now say {now}."
                if changed else None)
    other, toggle = (MASK_OFF, "on") if kept["causal"] else (MASK_ON, "off")
    switched = settings["causal"] != kept["causal"]  # the toggle already asks for the other mode
    if not changed:
        if switched:
            return f"*Remove the causal mask* is {toggle} now: press **Train** to show the run {other} beside this one."
        return (f"To compare both runs here, turn {toggle} *Remove the causal mask* and train again with every "
                "other setting unchanged.")
    back = "put back this run's value" + ("s" if len(changed) > 1 else "")
    if switched:
        then = f"{back} and press **Train**"
    else:
        then = f"{back}, turn {toggle} *Remove the causal mask* and train again"
    return (f"Training now would replace this run instead of adding one beside it: it had {was}, and the settings "
            f"above now say {now}. To compare both runs here, {then}.")


def reversal_tab() -> None:
    d = ReversalSettings()
    st.markdown(
        "Each training sequence is **[x, reverse(x)]**: M/2 random tokens, then the same tokens "
        "backwards. The model is decoder-only: self-attention under a causal mask, with no encoder and no "
        "cross-attention (built from the app's own `EncoderLayer`, which is that block once the mask is on). "
        "It is trained to predict every next token. The test: with a working mask the model can predict "
        "the second half but not the first. Accuracy is measured per position on "
        f"{d.eval_sequences} fresh sequences: the model's top guess for each token, made from the "
        "tokens before it.")
    c1, c2, c3 = st.columns([2, 2, 3])
    # Short labels, the rest in their help: a label on two lines pushes its slider below its neighbour's.
    M = c1.slider("M — sequence length", 4, 32, d.M, step=2, key="tl_rev_M", persist_state="session",
                  help="The length of [x, reverse(x)]: M/2 random tokens x, then the same tokens reversed. "
                       "Even, so that both halves are whole.")
    vocab_size = c2.slider("vocab_size — symbols", 2, 32, d.vocab_size, key="tl_rev_vocab",
                           persist_state="session",
                           help="How many different symbols x's random tokens are drawn from: chance is "
                                "1/vocab_size.")
    # In the URL (mask=off), with the tab (task=reversal): ui.link.choices. No link starts a run.
    no_mask = c3.toggle("Remove the causal mask", key="tl_rev_nomask", persist_state="session",
                        on_change=forget_link_warnings,
                        help="Lets every position see the future: trains and tests with "
                             "forward(tokens, causal=False).")
    sizes = model_sliders("tl_rev", d)
    run = run_sliders("tl_rev", d, max_steps=1000)
    settings = ReversalSettings(M=M, vocab_size=vocab_size, causal=not no_mask, **sizes, **run)
    results: dict[str, dict] = st.session_state.setdefault("tl_rev_results", {})
    if (res := ended_run("tl_rev")) is not None:
        done = res["settings"]  # the run's own settings: the sliders may have moved since it started
        name = MASK_ON if done["causal"] else MASK_OFF
        for other in list(results):  # keep the other mode only if every other setting was the same
            if changed_settings(results[other]["settings"], done):
                del results[other]
        results[name] = res
        st.session_state["tl_rev_latest"] = name
    if (training := train_buttons("tl_rev", partial(train_reversal, keep_model=True), settings)) is not None:
        live_progress("tl_rev", reversal_floor(training.settings.vocab_size, training.settings.causal))
        return

    latest = st.session_state.get("tl_rev_latest")
    if latest not in results:
        st.caption("Press **Train**: the default run takes a few seconds.")
        return
    res = results[latest]
    s = res["settings"]
    cols = st.columns(4)
    cols[0].metric("first half (x) accuracy", f"{res['first_half']:.1%}",
                   f"{points(res['first_half'] - res['chance'])} vs chance", delta_color="off",
                   delta_arrow="off", help="pp: percentage points, the accuracy minus chance.")
    cols[1].metric("second half (reverse(x)) accuracy", f"{res['second_half']:.1%}")
    cols[2].metric("chance, 1/vocab_size", f"{res['chance']:.1%}")
    cols[3].metric("training time", f"{res['seconds']:.1f} s", counted(res['steps_done'], "step"),
                   delta_color="off", delta_arrow="off")
    if res["stopped"]:
        st.warning(f"This run stopped early ({res['stopped']}) after {res['steps_done']} of {s['steps']} steps.")
    st.header("Accuracy at each position")
    show_chart(accuracy_chart(results, theme()), width="stretch")
    if (words := next_run_words(results, asdict(settings))) is not None:
        st.caption(words)
    if MASK_OFF in results:
        st.markdown(WHY_CHEAT)
    st.markdown(WHY_MIRROR)
    st.caption(":material/swap_horiz: The Explorer and the Attention page can now switch to this trained model "
               "(*Model* above their text box), on a sequence of its task: for this session only.")
    st.header("Where each position looks")
    st.caption("Attention weights of each block, averaged over heads and 64 held-out sequences. Row r0 is "
               "the guess for the first mirrored token, and so on; the input at column x3 is the token x3. "
               "With the mask nothing right of the diagonal can be seen (× marks what it hides); the mirror "
               "half learns to look back at the token it copies. Without the mask, rows look ahead at the "
               "answer itself.")
    for name, run in results.items():
        blocks = run.get("attention") or []
        cols = st.columns(max(len(blocks), 2))
        for i, weights in enumerate(blocks):
            chart = attention_chart(weights, run["settings"]["M"], f"{name}: block {i}",
                                    causal=run["settings"]["causal"])
            with cols[i]:
                show_chart(drawn_at_this_link(chart), width="stretch")
    st.header("Training loss")
    show_chart(loss_chart(res["loss"], floor=reversal_floor(s["vocab_size"], s["causal"]), theme=theme()),
               width="stretch")
    st.header("A few held-out sequences")
    st.caption("Columns x0… hold the random half, r0… its mirror. ✗ marks a wrong guess, with the guess shown.")
    st.dataframe(examples_table(res), width="stretch")
    st.caption(f"Run: {latest}; M={s['M']}, vocab_size={s['vocab_size']}, E={s['E']}, nhead={s['nhead']}, "
               f"layers={s['layers']}, d_ff={s['d_ff']}, N={s['N']}, steps={s['steps']}, lr={s['lr']}, "
               f"seed={s['seed']}.")


# --------------------------------------------------------------------------------------------
# The tiny language model


def lm_tab() -> None:
    d = LMSettings()
    text = load_text()
    st.markdown(
        f"The same kind of model on real text, at a small scale: train it on "
        f"{len(text.encode()) / 1000:.1f} KB of Shakespeare shipped with the app (nine passages; see "
        "`core/data/SOURCE.md`). The text is cut into **non-overlapping** sequences of M + 1 tokens, "
        "and the last tenth is held out to measure what the model learned rather than memorised.")
    c1, c2 = st.columns([1, 3])
    kind = c1.radio("tokenizer", ["char", "word"], key="tl_lm_tok", persist_state="session", horizontal=True,
                    help="char: one token per character. word: re.split(r'\\b', text), words and the gaps between.")
    M = c2.select_slider("M — context length in tokens", [8, 16, 32, 48, 64, 96, 128], value=d.M, key="tl_lm_M",
                         persist_state="session")
    tok = make_tokenizer(kind, text)
    pieces = tok.split(text)
    with st.expander(f"How the {kind} tokenizer cuts the text: vocab_size = {len(tok)}, "
                     f"{len(pieces):,} tokens, {len(pieces) // (M + 1)} sequences of M + 1"):
        st.code(" | ".join(repr(p)[1:-1] for p in pieces[:40]), language="text", wrap_lines=True)
    sizes = model_sliders("tl_lm", d)
    run = run_sliders("tl_lm", d, max_steps=600)
    c1, c2, c3 = st.columns([3, 1, 1])
    prompt = c1.text_input("prompt for the samples", d.prompt, max_chars=60, key="tl_lm_prompt",
                           persist_state="session")
    temperature = c2.select_slider("temperature", [0.2, 0.5, 0.8, 1.0, 1.5], value=d.temperature, key="tl_lm_temp",
                                   persist_state="session",
                                   help="Below 1 sharpens the model's choices, above 1 flattens them.")
    sample_tokens = c3.select_slider("sample length", [20, 50, 100, 200, 400], value=d.sample_tokens,
                                     key="tl_lm_len", persist_state="session")
    try:
        tok.encode(prompt)
        settings = LMSettings(tokenizer=kind, M=M, prompt=prompt, temperature=temperature,
                              sample_tokens=sample_tokens, **sizes, **run)
    except ValueError as exc:  # the message quotes the user's text: shown as code, never as markdown
        st.warning(f"The prompt must use only characters (or words) the text contains; using “{d.prompt}” "
                   "for the samples instead.")
        st.code(str(exc), language="text", wrap_lines=True)
        settings = LMSettings(tokenizer=kind, M=M, temperature=temperature, sample_tokens=sample_tokens,
                              **sizes, **run)
    if (res := ended_run("tl_lm")) is not None:
        st.session_state["tl_lm_result"] = res
    if train_buttons("tl_lm", train_lm, settings) is not None:
        live_progress("tl_lm", None)
        return

    res = st.session_state.get("tl_lm_result")
    if res is None:
        st.caption("Press **Train**: the default run takes a few seconds.")
        return
    s = res["settings"]
    cols = st.columns(4)
    # The mean of the last steps, as the sentence under the chart reads the training loss, so the two agree.
    steps = len(res["loss"])
    averaged = min(steps, TRAIN_WINDOW)
    cols[0].metric("final training loss", f"{_training_loss_before(res, steps):.3f}" if steps else "–",
                   (f"mean of the last {averaged} steps" if averaged > 1 else "its one step") if steps else None,
                   delta_color="off",
                   delta_arrow="off", help="One step's batch is noisy, so the last steps' losses are averaged.")
    val = held_out(res)  # rounded once, for the metric and the sentence under the chart alike
    best = lowest_held_out(val)
    cols[1].metric("lowest held-out loss", f"{best[1]:.3f}" if best else "–",
                   f"at step {best[0]}" if best else None, delta_color="off", delta_arrow="off")
    cols[2].metric("uniform guess, ln(vocab_size)", f"{res['uniform_loss']:.3f}")
    cols[3].metric("training time", f"{res['seconds']:.1f} s", counted(res['steps_done'], "step"),
                   delta_color="off", delta_arrow="off")
    if res["stopped"]:
        st.warning(f"This run stopped early ({res['stopped']}) after {res['steps_done']} of {s['steps']} steps.")
    st.header("Loss")
    show_chart(loss_chart(res["loss"], val=res["val_loss"], uniform=res["uniform_loss"], theme=theme()),
               width="stretch")
    st.caption(held_out_words(res, val))
    st.header("Samples")
    for i, sample in enumerate(res["samples"], 1):
        st.caption(f"sample {i}: the prompt, then {s['sample_tokens']} {s['tokenizer']} tokens drawn at "
                   f"temperature {s['temperature']}")
        st.code(sample, language="text", wrap_lines=True)


SHOWN = 3  # decimals a loss is shown with: values equal when shown count as equal


def held_out(res: dict) -> list[tuple[int, float]]:
    """The run's held-out measurements (step, loss), rounded as the page shows them."""
    return [(step, round(loss, SHOWN)) for step, loss in res["val_loss"]]


def lowest_held_out(val: list[tuple[int, float]]) -> tuple[int, float] | None:
    """The lowest of the held-out measurements ``val`` (as held_out rounds them) and its step (the first, in a
    tie), for the metric and the sentence alike."""
    return min(val, key=lambda sv: sv[1], default=None)


TRAIN_WINDOW = 10  # training steps averaged to say whether the training loss fell: one step's batch is noisy


def _training_loss_before(res: dict, step: int) -> float:
    """The mean training loss over the (at most TRAIN_WINDOW) steps up to ``step``."""
    losses = res["loss"][max(0, step - TRAIN_WINDOW):step]
    return sum(losses) / len(losses)


def held_out_words(res: dict, val: list[tuple[int, float]]) -> str:
    """What this run's held-out loss did, read off the run: it need not turn back up (a low learning rate, few
    steps). ``val`` is held_out(res), already rounded for the metric beside the chart: taken as it is, not rounded
    again."""
    counts = f"{res['train_sequences']} training sequences, {res['val_sequences']} held out."
    if len(val) < 2:
        return counts
    (best_step, best), (last_step, last) = lowest_held_out(val), val[-1]
    turn = ("With so little text it turns back up once the model starts memorising its lines; more steps, or a "
            "higher learning rate, show where.")
    if last == best:  # the last measurement is as low as any
        yet = "it has not turned back up yet" if all(
            later <= earlier for (_, earlier), (_, later) in zip(val, val[1:])) else \
            "it rose between measurements but has not turned back up for good yet"
        if best_step == last_step:
            lowest = f"is at its lowest at the last measurement ({last:.3f} at step {last_step})"
        else:  # a tie: the metric names the first of the two steps
            lowest = f"is as low at the last measurement (step {last_step}) as at step {best_step} ({best:.3f})"
        return f"{counts} The held-out loss {lowest}: {yet}. {turn}"
    then, now = _training_loss_before(res, best_step), _training_loss_before(res, last_step)
    rose = (f"{counts} The held-out loss was lowest at step {best_step} ({best:.3f}) and rose to {last:.3f} by step "
            f"{last_step}")
    training = (f"the training loss (the mean of up to {TRAIN_WINDOW} steps ending at each) went from {then:.3f} "
                f"to {now:.3f}")
    if round(now, SHOWN) < round(then, SHOWN):
        return (f"{rose}, while {training}: from there on the model memorises its lines instead of learning the "
                "language.")
    return f"{rose}; meanwhile {training}, so the rise is not memorisation, which pushes the training loss down."


PREFIXES = {"reversal": "tl_rev", "language-model": "tl_lm"}  # each experiment's (LAB_TASKS) widget keys


def runs_going() -> dict[str, bool]:
    """Whether this session has a run of each experiment (going, or ended and not yet shown)."""
    return {task: f"{prefix}_training" in st.session_state for task, prefix in PREFIXES.items()}


def lost_runs_notice() -> None:
    """Say so when a run this tab started went with the server session that ran it (ui/lab/marks.py)."""
    lost = runs_lost(runs_going())
    if lost:
        names = in_words([f"*{label}*" for label, task in LAB_TASKS.items() if task in lost])
        st.warning(f"The training run of {names} that this tab started has stopped: the server session running "
                   "it ended (the server restarted, or this page reconnected to another one), and the run with "
                   "it. Your settings are kept: press **Train** to start it again.", icon=":material/sync_problem:")


st.caption("Small models trained live on this machine's CPU. The sidebar's sizes belong to the explorer's "
           "model; these experiments have their own sliders.")
lost_runs_notice()
# Keeps its state (a key and on_change), so that a link and Back can choose the experiment (task=).
rev, lm = st.tabs(list(LAB_TASKS), key="tl_task", on_change=forget_link_warnings)
with rev:
    reversal_tab()
with lm:
    lm_tab()
with st.sidebar:  # takes no room; beside the quiz's store (ui/quiz/sync.py)
    mark_runs(runs_going())
