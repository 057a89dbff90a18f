"""The training lab page runs tiny trainings to the end and renders their plain results.

A run trains on a thread of its own (ui/lab/runs.py): a click on Train starts it and the page
shows its progress; once it has ended, the next run of the page shows the result.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from render.lab_charts import accuracy_chart, attention_chart, crossings, label_place, loss_chart
from tests.support.apptest import LAB_PAGE as PAGE, make_app, small_model, train


@pytest.fixture
def lab():
    at = make_app()
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception
    return at


def test_page_opens_with_both_experiments_and_no_result_yet(lab):
    assert [t.label for t in lab.tabs] == ["Reversal: does the mask work?", "A tiny language model"]
    # No 'curriculum' a first-time learner has never seen; 'decoder-only' next to EncoderLayer says why.
    intro = " ".join(m.value for m in lab.markdown)
    assert "curriculum" not in intro
    assert "The model is decoder-only: self-attention under a causal mask, with no encoder" in intro
    assert lab.button(key="tl_rev_run") and lab.button(key="tl_lm_run")
    assert "tl_rev_latest" not in lab.session_state
    assert lab.select_slider(key="tl_rev_nhead").options == ["1", "2", "4", "8"]  # divisors of E=64, up to 8


def test_reversal_trains_to_the_end_then_compares_without_the_mask(lab):
    lab.slider(key="tl_rev_M").set_value(4)
    lab.slider(key="tl_rev_vocab").set_value(4)
    small_model(lab, "tl_rev", steps=10)
    train(lab, "tl_rev")
    results = lab.session_state["tl_rev_results"]
    assert list(results) == ["with the causal mask"]
    res = results["with the causal mask"]
    assert res["steps_done"] == 10 and len(res["per_position_accuracy"]) == 4
    assert res["settings"]["E"] == 16 and res["settings"]["causal"] is True
    assert [m.label for m in lab.metric][:3] == ["first half (x) accuracy", "second half (reverse(x)) accuracy",
                                                   "chance, 1/vocab_size"]
    assert lab.metric[2].value == "25.0%"
    # The gap to chance is in percentage points: 6.8% against 6.2% is "+0.6 pp", not a relative "+0.6%".
    gap = 100 * (res["first_half"] - res["chance"])
    assert lab.metric[0].delta == f"{gap:+.1f} pp vs chance"
    assert not any("Why the model cheats" in m.value for m in lab.markdown)
    # The next step names the control and which way to move it (it is off after a run with the mask).
    assert any(c.value.startswith("To compare both runs here, turn on *Remove the causal mask* and train again")
               for c in lab.caption)

    # The held-out sequences' column of row labels has a header ("example 1: sequence" under "example"): an
    # unnamed index left the grid's first header empty, for a screen reader a column named by nothing.
    examples = lab.dataframe[0].value
    assert examples.index.name == "example" and examples.index[0] == "example 1: sequence"

    lab.toggle(key="tl_rev_nomask").set_value(True)
    train(lab, "tl_rev")
    results = lab.session_state["tl_rev_results"]
    assert set(results) == {"with the causal mask", "without the mask"}  # same sizes: both kept for the chart
    assert results["without the mask"]["settings"]["causal"] is False
    assert any("Why the model cheats" in m.value for m in lab.markdown)
    # Ten steps learn little: the fixed paragraphs under the run promise no perfect accuracy it did not reach,
    # and the one on the second half says it holds with the mask, beside a run without it too.
    texts = " ".join(m.value for m in lab.markdown)
    assert "so accuracy climbs to 100%" not in texts and 'even the random first half is "predicted"' not in texts
    assert "Why, with the mask, only the second half can be learned." in texts

    lab.slider(key="tl_rev_steps").set_value(5).run()  # new sizes: the older run no longer compares
    assert ("Training now would replace both runs: they had steps=10, and the settings above now say steps=5."
            in [c.value for c in lab.caption])
    train(lab, "tl_rev")
    assert list(lab.session_state["tl_rev_results"]) == ["without the mask"]
    assert any(c.value.startswith("To compare both runs here, turn off *Remove the causal mask* and train again")
               for c in lab.caption)


def test_the_next_step_follows_the_toggle_and_says_when_a_run_would_be_replaced(lab):
    """The words under a single run read the toggle and the sliders as they are now. A fixed "Turn on
    *Remove the causal mask*" stayed after the learner had turned it on (as a link with mask=off does),
    and "with the same sizes" let a changed seed replace the run without a word: a run is kept beside
    the other only if every setting but the mask is the same."""
    lab.slider(key="tl_rev_M").set_value(4)
    lab.slider(key="tl_rev_vocab").set_value(4)
    small_model(lab, "tl_rev", steps=10)
    train(lab, "tl_rev")

    def words():
        return [c.value for c in lab.caption]

    assert ("To compare both runs here, turn on *Remove the causal mask* and train again with every other setting "
            "unchanged.") in words()
    lab.toggle(key="tl_rev_nomask").set_value(True).run()
    assert ("*Remove the causal mask* is on now: press **Train** to show the run without the mask beside this one."
            in words())
    assert not any("turn on" in w.lower() for w in words())
    lab.number_input(key="tl_rev_seed").set_value(1).run()
    assert ("Training now would replace this run instead of adding one beside it: it had seed=0, and the settings "
            "above now say seed=1. To compare both runs here, put back this run's value and press **Train**."
            in words())
    lab.toggle(key="tl_rev_nomask").set_value(False).run()
    lab.slider(key="tl_rev_steps").set_value(15).run()
    assert ("Training now would replace this run instead of adding one beside it: it had steps=10 and seed=0, and "
            "the settings above now say steps=15 and seed=1. To compare both runs here, put back this run's values, "
            "turn on *Remove the causal mask* and train again." in words())
    lab.toggle(key="tl_rev_nomask").set_value(True)
    train(lab, "tl_rev")  # as the words said: the new run took the old one's place
    assert list(lab.session_state["tl_rev_results"]) == ["without the mask"]


def test_language_model_trains_and_shows_samples(lab):
    lab.radio(key="tl_lm_tok").set_value("word")
    lab.select_slider(key="tl_lm_M").set_value(16)
    small_model(lab, "tl_lm", steps=5)
    lab.select_slider(key="tl_lm_len").set_value(20)
    train(lab, "tl_lm")
    res = lab.session_state["tl_lm_result"]
    assert res["steps_done"] == 5 and res["settings"]["tokenizer"] == "word"
    samples = [c.value for c in lab.code if c.value.startswith("To be")]
    assert samples == res["samples"] and len(samples) == 2


def test_the_held_out_sentence_says_what_this_runs_held_out_loss_did(lab):
    """A fixed sentence said the held-out loss "soon turns back up" under a run in which it fell to the
    last measurement (learning rate 0.0003). The sentence now reads the run."""
    lab.select_slider(key="tl_lm_M").set_value(16)
    small_model(lab, "tl_lm", steps=6)
    train(lab, "tl_lm")
    res = lab.session_state["tl_lm_result"]
    counts = f"{res['train_sequences']} training sequences, {res['val_sequences']} held out."

    def words(val_loss, loss=(3.0, 2.9, 2.8, 2.7, 2.6, 2.5)):
        lab.session_state["tl_lm_result"] = {**res, "val_loss": val_loss, "loss": list(loss)}
        lab.run()
        assert not lab.exception
        final = lab.metric[0]  # the training loss the sentence gives for the last step, as it averages it
        assert (final.value, final.delta) == (f"{sum(loss) / len(loss):.3f}", f"mean of the last {len(loss)} steps")
        lowest = lab.metric[1]  # the metric beside the chart names the step the sentence names
        return next(c.value for c in lab.caption if c.value.startswith(counts)), (lowest.value, lowest.delta)

    turn = (" With so little text it turns back up once the model starts memorising its lines; more steps, or a "
            "higher learning rate, show where.")
    assert words([(3, 2.9), (6, 2.7)]) == (
        counts + " The held-out loss is at its lowest at the last measurement (2.700 at step 6): it has not turned "
        "back up yet." + turn, ("2.700", "at step 6"))
    # A new low after a rise; then a tie with an earlier low (as shown, three decimals): the metric names the
    # first, the sentence both.
    assert words([(2, 2.9), (4, 3.0), (6, 2.5)]) == (
        counts + " The held-out loss is at its lowest at the last measurement (2.500 at step 6): it rose between "
        "measurements but has not turned back up for good yet." + turn, ("2.500", "at step 6"))
    assert words([(2, 2.7), (4, 2.8), (6, 2.70004)]) == (
        counts + " The held-out loss is as low at the last measurement (step 6) as at step 2 (2.700): it rose "
        "between measurements but has not turned back up for good yet." + turn, ("2.700", "at step 2"))
    assert words([(2, 2.9), (4, 2.7), (6, 2.7)])[0] == (
        counts + " The held-out loss is as low at the last measurement (step 6) as at step 4 (2.700): it has not "
        "turned back up yet." + turn)
    # Lowest at step 4 and up since; the training loss, averaged over the steps up to each, went on falling.
    assert words([(2, 2.9), (4, 2.6), (6, 2.8)]) == (
        counts + " The held-out loss was lowest at step 4 (2.600) and rose to 2.800 by step 6, while the training "
        "loss (the mean of up to 10 steps ending at each) went from 2.850 to 2.750: from there on the model "
        "memorises its lines instead of learning the language.", ("2.600", "at step 4"))
    rose, _ = words([(2, 2.9), (4, 2.6), (6, 2.8)], loss=(3.0, 2.0, 3.0, 2.0, 3.5, 3.5))
    assert rose.endswith("went from 2.500 to 2.833, so the rise is not memorisation, which pushes the training "
                         "loss down.")
    assert words([(6, 2.7)])[0] == counts  # one measurement shows no trend
    # A run stopped after its first step: its one step, in the metrics and the chart's words.
    lab.session_state["tl_lm_result"] = {**res, "val_loss": [], "loss": [3.0], "steps_done": 1,
                                         "stopped": "stop requested"}
    lab.run()
    assert not lab.exception
    assert (lab.metric[0].delta, lab.metric[3].delta) == ("its one step", "1 step")
    [chart] = [json.loads(c.proto.spec) for c in lab.get("vega_lite_chart")
               if "training loss" in json.loads(c.proto.spec).get("description", "")]
    assert "per training step, 1 step: 3.000 at step 1" in chart["description"]


def test_a_prompt_outside_the_text_is_refused_with_a_message(lab):
    lab.text_input(key="tl_lm_prompt").input("Zebra").run()
    assert not lab.exception
    assert any("The prompt must use only" in w.value for w in lab.warning)
    assert any("'Z'" in c.value and "not in the training text" in c.value for c in lab.code)


def test_a_failing_run_shows_an_error_and_the_page_survives(lab, monkeypatch):
    import core.train

    def broken(settings, **kwargs):
        raise RuntimeError("out of patience")

    monkeypatch.setattr(core.train, "train_reversal", broken)
    train(lab, "tl_rev")
    assert any("Training failed: out of patience" in e.value for e in lab.error)
    assert "tl_rev_latest" not in lab.session_state  # a failed run leaves no result behind
    assert lab.button(key="tl_lm_run")  # the other tab still renders


class Hold:
    """Where the held run waits (after step ``step``) and the event that lets it go on."""

    def __init__(self) -> None:
        self.step = 3
        self.release = threading.Event()


@pytest.fixture
def held(monkeypatch):
    """The real reversal training, held after a step until the test lets it go (or Stop)."""
    import core.train

    real, hold = core.train.train_reversal, Hold()

    def held_run(settings, *, on_progress, stop, max_seconds, **options):  # options: keep_model
        def report(p):
            on_progress(p)
            if p.step == hold.step:
                for _ in range(600):  # at most 60 s, whatever the test does
                    if hold.release.is_set() or stop.is_set():
                        break
                    time.sleep(0.1)
        return real(settings, on_progress=report, stop=stop, max_seconds=max_seconds, **options)

    monkeypatch.setattr(core.train, "train_reversal", held_run)
    return hold


def start_held(lab, hold: Hold, steps: int = 40):
    """Start a held run and wait until it reaches the step it is held at."""
    small_model(lab, "tl_rev", steps=steps)
    lab.button(key="tl_rev_run").click().run()
    assert not lab.exception
    run = lab.session_state["tl_rev_training"]
    for _ in range(600):
        if len(run.loss) >= hold.step:
            break
        time.sleep(0.05)
    assert len(run.loss) == hold.step and run.running
    return run


def test_the_live_loss_curve_without_a_floor_carries_its_rows_inside_its_layer(lab, held):
    """Without the mask there is no floor line, so the live chart is one curve. Its rows must sit in
    its layer: at the top of the spec Streamlit sent them after the first paint of every redraw,
    and Vega warned "Infinite extent for field loss" about a hundred times in one run."""
    lab.toggle(key="tl_rev_nomask").set_value(True)
    run = start_held(lab, held)
    lab.run()  # what the progress fragment's timer does
    [chart] = lab.get("vega_lite_chart")
    spec = json.loads(chart.proto.spec)
    assert "data" not in spec and not chart.proto.data.data  # nothing left for Streamlit to send later
    [curve] = spec["layer"]
    assert [(r["step"], r["loss"]) for r in curve["data"]["values"]] == list(enumerate(run.loss, 1))
    lab.button(key="tl_rev_stop").click().run()
    assert run.wait(timeout=60)


def test_a_running_run_shows_its_progress_and_stop_ends_it_with_a_measured_model(lab, held):
    run = start_held(lab, held)
    lab.run()  # what the progress fragment's timer does
    assert lab.button(key="tl_rev_run").disabled and not lab.button(key="tl_rev_stop").disabled
    assert any("step 3 of 40" in p.proto.text for p in lab.get("progress"))
    [chart] = lab.get("vega_lite_chart")
    curve = json.loads(chart.proto.spec)["layer"][0]
    assert [(r["step"], r["loss"]) for r in curve["data"]["values"]] == list(enumerate(run.loss, 1))
    assert curve["encoding"]["x"]["scale"]["domain"] == [0, 40]  # the whole run's width from the start
    assert not lab.metric  # no result yet

    lab.button(key="tl_rev_stop").click().run()
    assert not lab.exception
    assert run.wait(timeout=60)
    lab.run()
    assert not lab.exception
    res = lab.session_state["tl_rev_results"]["with the causal mask"]
    assert res["steps_done"] == 3 and res["stopped"] == "stop requested"
    assert len(res["per_position_accuracy"]) == res["settings"]["M"]  # measured as it stands
    assert any("stopped early (stop requested) after 3 of 40 steps" in w.value for w in lab.warning)
    assert not lab.button(key="tl_rev_run").disabled and lab.button(key="tl_rev_stop").disabled


def test_after_the_last_step_the_bar_says_the_model_is_being_measured(lab, held):
    held.step = 5
    run = start_held(lab, held, steps=5)
    lab.run()
    assert any(p.proto.text.startswith("step 5 of 5") and p.proto.text.endswith("now the model is measured…")
               for p in lab.get("progress"))
    held.release.set()
    assert run.wait(timeout=60)


def test_a_run_goes_on_while_the_learner_is_on_another_page(lab, held):
    run = start_held(lab, held, steps=10)
    lab.switch_page("pages/explorer.py").run()
    lab.slider(key="w_N").set_value(3).run()  # clicks elsewhere in the app
    assert not lab.exception and run.running
    held.release.set()
    assert run.wait(timeout=60)
    lab.switch_page(PAGE).run()
    assert not lab.exception
    res = lab.session_state["tl_rev_results"]["with the causal mask"]
    assert res["steps_done"] == 10 and res["stopped"] is None
    assert lab.metric[0].label == "first half (x) accuracy"


def test_a_busy_server_turns_a_run_away_with_a_message(lab):
    from ui.lab.runs import run_slots

    slots = run_slots()
    assert slots.acquire(blocking=False) and slots.acquire(blocking=False)  # two runs elsewhere
    try:
        lab.button(key="tl_rev_run").click().run()
    finally:
        slots.release()
        slots.release()
    assert not lab.exception
    assert any("Two trainings are already running" in w.value for w in lab.warning)
    assert "tl_rev_training" not in lab.session_state and not lab.button(key="tl_rev_run").disabled


class Endless:
    """A trainer that takes a step every 10 ms until it is stopped, like core.train's loop."""

    def __call__(self, settings, *, on_progress, stop, max_seconds):
        from core.train import Progress

        step, start = 0, time.monotonic()
        while not stop.is_set() and time.monotonic() - start < max_seconds:
            step += 1
            on_progress(Progress(step=step, steps=settings.steps, loss=1.0 / step, seconds=time.monotonic() - start))
            time.sleep(0.01)
        outcome = {"steps_done": step, "stopped": "stop requested" if stop.is_set() else "time limit"}
        return type("Result", (), {"to_dict": lambda self: dict(outcome)})()


class Session:
    """Whether the run's session is connected, as the test says."""

    def __init__(self) -> None:
        self.connected = True
        self.asked = 0

    def __call__(self) -> bool:
        self.asked += 1
        return self.connected


def until(condition, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def test_a_run_whose_tab_is_gone_stops_and_frees_its_slot_but_a_short_drop_does_not_stop_it(monkeypatch):
    from types import SimpleNamespace

    import ui.lab.runs as lab_runs

    monkeypatch.setattr(lab_runs, "ABANDON_GRACE", 0.3)
    slot = threading.BoundedSemaphore(1)
    assert slot.acquire(blocking=False)  # what start_run does before it starts a run
    session = Session()
    run = lab_runs.LabRun(Endless(), SimpleNamespace(steps=10_000), max_seconds=30, slot=slot,
                          alive=session).start()
    assert until(lambda: len(run.loss) >= 5)
    session.connected = False  # a dropped connection that comes back within the grace
    asked = session.asked
    assert until(lambda: session.asked >= asked + 3)
    session.connected = True
    time.sleep(0.5)  # longer than the grace in all, but never that long in one stretch
    assert run.running and not run.stopping and not run.abandoned

    session.connected = False  # the tab is closed
    gone = time.monotonic()
    assert run.wait(timeout=10)
    assert time.monotonic() - gone >= 0.3  # not before the grace was over
    assert run.abandoned
    assert run.outcome()["stopped"] == "its tab was closed or lost its connection for 0.3 s"
    assert slot.acquire(blocking=False)  # the slot is free for someone else


def test_outside_a_served_app_a_run_never_asks_for_its_session():
    from ui.server.streamlit_internals import session_alive

    assert session_alive() is None  # no script run, no runtime: nothing to ask


def test_a_session_check_that_fails_never_ends_a_run(monkeypatch):
    from types import SimpleNamespace

    import ui.lab.runs as lab_runs

    monkeypatch.setattr(lab_runs, "ABANDON_GRACE", 0.05)

    def broken() -> bool:
        raise RuntimeError("Runtime hasn't been created!")  # what Streamlit says once its runtime is gone

    slot = threading.BoundedSemaphore(1)
    assert slot.acquire(blocking=False)
    run = lab_runs.LabRun(Endless(), SimpleNamespace(steps=10_000), max_seconds=30, slot=slot,
                          alive=broken).start()
    assert until(lambda: len(run.loss) >= 30)  # well past the grace, several checks later
    assert run.running and not run.abandoned and run.error is None
    run.stop()
    assert run.wait(timeout=10) and run.outcome()["stopped"] == "stop requested"


def chart_words(at) -> list[str]:
    """Each chart's description, which Vega makes its accessible name, once its marks are hidden."""
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert all(spec["config"]["aria"] is spec["config"]["mark"]["aria"] is False for spec in specs)
    return [spec["description"] for spec in specs]


def test_every_lab_chart_has_a_sentence_for_screen_readers(lab):
    """The accuracy, attention and loss charts each say what they show, with their key figures."""
    lab.slider(key="tl_rev_M").set_value(4)
    lab.slider(key="tl_rev_vocab").set_value(4)
    small_model(lab, "tl_rev", steps=10)
    train(lab, "tl_rev")
    res = lab.session_state["tl_rev_results"]["with the causal mask"]
    accuracy, attention, loss = chart_words(lab)
    assert accuracy.startswith("Line chart of the accuracy of the next-token guess at each of the 4 positions")
    halves = f"{res['first_half']:.1%} on the first half, x, and {res['second_half']:.1%} on the second"
    assert f"one line per run. With the causal mask: {halves}" in accuracy
    assert accuracy.endswith("chance, 1/vocab_size = 25.0%.")
    assert attention.startswith("Heatmap, with the causal mask: block 0: attention weights averaged over heads")
    assert ". 0% of the weight lies right of the diagonal, on inputs the causal mask hides" in attention
    assert loss.startswith("Line chart of the training loss (cross-entropy, nats per token) per training step, "
                           f"10 steps: {res['loss'][0]:.3f} at step 1, {res['loss'][-1]:.3f} at step 10")
    assert loss.endswith("the best possible with the mask, ln(vocab_size)/2 = 0.69.")

    lab.select_slider(key="tl_lm_M").set_value(16)
    small_model(lab, "tl_lm", steps=5)
    lab.select_slider(key="tl_lm_len").set_value(20)
    train(lab, "tl_lm")
    lm = lab.session_state["tl_lm_result"]
    lm_loss = chart_words(lab)[-1]
    assert "Held-out loss, measured" in lm_loss if lm["val_loss"] else "Held-out" not in lm_loss
    assert lm_loss.endswith(f"a uniform guess, ln(vocab_size) = {lm['uniform_loss']:.2f}.")


def test_the_lab_charts_count_whole_steps_and_give_chance_in_per_cent(lab):
    """A run of 5 steps had loss ticks at 1.5, 2.5, ... steps, and chance read "0.250" on an axis in per
    cent, beside the figure above it and the chart's sentence, both "25.0%"."""
    lab.slider(key="tl_rev_M").set_value(4)
    lab.slider(key="tl_rev_vocab").set_value(4)
    small_model(lab, "tl_rev", steps=5)
    train(lab, "tl_rev")

    loss = json.loads(lab.get("vega_lite_chart")[-1].proto.spec)
    axis = loss["layer"][0]["encoding"]["x"]["axis"]
    assert axis["tickMinStep"] == 1 and axis["format"] == "d"
    drawn = json.dumps(accuracy_chart(lab.session_state["tl_rev_results"]).to_dict())  # its rows, labels too
    assert "chance = 1/vocab_size = 25.0%" in drawn and "0.250" not in drawn


def test_the_live_loss_chart_says_how_far_the_run_has_come(lab, held):
    run = start_held(lab, held)
    lab.run()  # what the progress fragment's timer does
    [words] = chart_words(lab)
    assert words.startswith("Line chart of the training loss (cross-entropy, nats per token) per training step, "
                            f"3 of 40 steps so far: {run.loss[0]:.3f} at step 1, {run.loss[-1]:.3f} at step 3")
    lab.button(key="tl_rev_stop").click().run()
    assert run.wait(timeout=60)


def chart_specs(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


def test_lab_charts_keep_their_labels_readable(lab):
    """Every row of an attention map has its label, the halves' names sit above 100%, where no
    accuracy can reach, and the step axis asks for ticks by the plot's width, not one per 40 px."""
    lab.slider(key="tl_rev_M").set_value(6)
    lab.slider(key="tl_rev_vocab").set_value(4)
    small_model(lab, "tl_rev", steps=10)
    train(lab, "tl_rev")
    accuracy, attention, loss = chart_specs(lab)

    # The rows are the chart's height, 16 px each with the title and labels around them, and Vega
    # may not thin their labels; the columns' font follows the plot's width in the browser.
    assert attention["height"] == 6 * 16 and attention["autosize"]["type"] == "fit-x"
    cells = attention["layer"][0]  # under the crosses of the cells the mask hid
    assert cells["encoding"]["y"]["axis"]["labelOverlap"] is False
    # Centred on their rows and columns: Streamlit's labelFlush hung the first row's label low.
    assert cells["encoding"]["y"]["axis"]["labelFlush"] is False
    assert cells["encoding"]["x"]["axis"]["labelFlush"] is False
    assert "width / 6" in cells["encoding"]["x"]["axis"]["labelFontSize"]["expr"]

    lines = next(layer for layer in accuracy["layer"] if layer["mark"]["type"] == "line")
    top = lines["encoding"]["y"]["scale"]["domain"][1]
    assert top > 1 and max(lines["encoding"]["y"]["axis"]["values"]) == 1
    names = next(layer for layer in accuracy["layer"] if layer["mark"]["type"] == "text"
                 and layer["encoding"]["text"]["field"] == "part")
    # Drawn from the plot's top edge down, the names end above the 100% line.
    label_bottom = names["mark"]["dy"] + 11
    assert label_bottom < accuracy["height"] * (top - 1) / top

    step_axis = loss["layer"][0]["encoding"]["x"]["axis"]
    assert step_axis["tickCount"] == {"expr": "ceil(width / 120)"} and step_axis["labelSeparation"] > 0


def test_the_attention_maps_cross_out_what_the_mask_hid_and_only_with_the_mask(lab):
    """Under the mask the hidden inputs' weight is exactly 0, the scale's palest blue, which the small
    weights of inputs a model ignores also look like: the mask's triangle could not be seen. A cross
    now marks each hidden cell, right of the diagonal, as on the attention page; a run without the
    mask has none."""
    lab.slider(key="tl_rev_M").set_value(6)
    lab.slider(key="tl_rev_vocab").set_value(4)
    small_model(lab, "tl_rev", steps=5)
    train(lab, "tl_rev")
    lab.toggle(key="tl_rev_nomask").set_value(True)
    train(lab, "tl_rev")
    results = lab.session_state["tl_rev_results"]
    assert list(results) == ["with the causal mask", "without the mask"]
    masked, unmasked = chart_specs(lab)[1:3]  # block 0 of each run, as drawn
    keys = ["BOS", "x0", "x1", "x2", "r0", "r1"]  # input k holds token k - 1
    guesses = ["x0", "x1", "x2", "r0", "r1", "r2"]

    def cells_of(name: str, causal: bool) -> list[dict]:
        """The rows the page draws for block 0 (Streamlit moves them out of the spec it sends)."""
        spec = attention_chart(results[name]["attention"][0], 6, f"{name}: block 0", causal=causal).to_dict()
        return spec["datasets"][spec["data"]["name"]]

    rows = cells_of("with the causal mask", True)
    hidden = {(r["guessing"], r["looks at"]) for r in rows if r["mask"] == "hidden"}
    assert hidden == {(guesses[q], keys[k]) for q in range(6) for k in range(6) if k > q}  # 15 of 36
    assert all(r["weight"] == 0 for r in rows if r["mask"] == "hidden")
    assert all(r["weight"] > 0 for r in rows if r["mask"] == "visible")
    cells, crosses = masked["layer"]
    assert crosses["mark"]["text"] == "×" and crosses["transform"] == [{"filter": "datum.mask == 'hidden'"}]
    assert crosses["encoding"]["x"]["field"] == "looks at" and crosses["encoding"]["y"]["field"] == "guessing"
    assert "Each of those cells is marked with a cross" in masked["description"]

    rows = cells_of("without the mask", False)
    assert {r["mask"] for r in rows} == {"visible"} and "layer" not in unmasked
    assert "cross" not in unmasked["description"]
    assert "× marks what it hides" in " ".join(c.value for c in lab.caption)


def line_labels(spec: dict) -> list[dict]:
    """The text layers that name a dashed line (their words are a "label" field), in drawing order."""
    return [layer["mark"] for layer in spec["layer"]
            if layer["mark"]["type"] == "text" and layer["encoding"]["text"]["field"] == "label"]


def test_a_dashed_lines_words_go_where_no_curve_runs_and_keep_a_halo():
    """The words of a dashed line had one fixed place: under ln(vocab_size) at the right end, where a
    held-out loss that rises back towards a uniform guess ran through them (at 390 px, 600 steps: the
    orange line crossed "a uniform guess: ln(vocab_size) = 4.19"). They now go above it there, where no
    curve runs, and are drawn twice: a halo in the page's colour, then the words, so a curve that must
    cross them (a run with no empty place) breaks off round the letters instead of striking them."""
    import math

    from render.palette import INK

    uniform = math.log(65)  # nats per token: 4.17
    loss = [4.8 * math.exp(-step / 80) + 1.0 for step in range(200)]  # from above the line, down to 1.0
    val = [(step, 2.7 + 1.2 * max(0, step - 60) / 140) for step in range(20, 201, 20)]  # rises to 3.9
    labels = line_labels(loss_chart(loss, val=val, uniform=uniform).to_dict())
    assert len(labels) == 2, labels  # the halo, then the words
    halo, words = labels
    assert (words["align"], words["baseline"]) == ("right", "bottom") and words["dy"] < 0  # above the line
    assert halo["stroke"] == halo["color"] == INK["light"]["ground"] and halo["strokeWidth"] >= 3
    assert "stroke" not in words and words["color"] == INK["light"]["label"]
    where = ("align", "baseline", "dx", "dy")
    assert [halo[k] for k in where] == [words[k] for k in where]  # the halo right under the words

    # A masked run's floor: the loss settles just above it, so its words stay under it.
    floor = math.log(16) / 2
    settled = [max(2.9 - step / 40, floor + 0.01) for step in range(300)]
    halo, words = line_labels(loss_chart(settled, floor=floor, theme="dark").to_dict())
    assert words["baseline"] == "top" and halo["stroke"] == INK["dark"]["ground"]

    results = {"with the causal mask": {"settings": {"M": 4}, "chance": 0.25,
                                         "per_position_accuracy": [0.25, 0.26, 1.0, 1.0],
                                         "first_half": 0.255, "second_half": 1.0}}
    halo, words = line_labels(accuracy_chart(results, "dark").to_dict())
    assert halo["stroke"] == INK["dark"]["ground"] and words["color"] == INK["dark"]["alert"]


def test_a_label_with_no_empty_place_takes_the_least_crossed_one_inside_the_plot():
    """A run that has learned nothing runs along chance on both halves: every place of its words is
    crossed. They take the one the fewest segments cross, and never the space under a line too near
    the axis for them (chance = 6.2% leaves 15.8 px of a 280 px plot; they need 16)."""
    near_chance = [[(p, 0.055 + 0.02 * (p % 2)) for p in range(16)]]  # zigzags through 6.2% at every step
    assert label_place(1 / 16, "chance = 1/vocab_size = 6.2%", near_chance, (-0.5, 15.5), (0, 1.1),
                       280)[1] == "above"
    learned_right = [[(p, 0.06 if p < 8 else 1.0) for p in range(16)]]  # the mirror half learned
    assert label_place(1 / 16, "chance = 1/vocab_size = 6.2%", learned_right, (-0.5, 15.5), (0, 1.1),
                       280) == ("right", "above")
    just_above_right = [[(p, 0.25 if p < 8 else 0.3) for p in range(16)]]  # 0.3 is 12 px above 25%
    assert label_place(0.25, "chance = 1/vocab_size = 25.0%", just_above_right, (-0.5, 15.5), (0, 1.1),
                       280) == ("right", "below")
    both_right = [[(p, 0.9 if p < 10 else 0.25 + 0.05 * (-1) ** p) for p in range(16)]]  # zigzags from 10 on
    assert label_place(0.25, "chance = 1/vocab_size = 25.0%", both_right, (-0.5, 15.5), (0, 1.1),
                       280) == ("left", "above")
    assert crossings([(0, 0.0), (10, 1.0)], (4, 6, 0.45, 0.55)) == 1  # a segment through the box
    assert crossings([(0, 0.0), (10, 1.0)], (4, 6, 0.7, 0.8)) == 0  # passing beside it
    assert crossings([(5, 0.5)], (4, 6, 0.45, 0.55)) == 1  # one held-out measurement: a point


class CountedLoss(float):
    """A held-out loss that counts how often it is rounded: round() calls __round__."""

    rounded = 0

    def __round__(self, ndigits=None):
        CountedLoss.rounded += 1
        return round(float(self), ndigits)


def test_each_held_out_loss_is_rounded_once_a_run_for_the_metric_and_the_sentence(lab):
    """The metric took held_out(res) and the sentence under the chart took it twice more (once itself, once
    through lowest_held_out): the same list, rounded three times a run. The page rounds it once now and
    hands that list to both, which still say the same."""
    lab.select_slider(key="tl_lm_M").set_value(16)
    small_model(lab, "tl_lm", steps=6)
    train(lab, "tl_lm")
    res = lab.session_state["tl_lm_result"]
    val_loss = [(2, CountedLoss(2.9)), (4, CountedLoss(2.6)), (6, CountedLoss(2.8))]
    lab.session_state["tl_lm_result"] = {**res, "val_loss": val_loss, "loss": [3.0, 2.9, 2.8, 2.7, 2.6, 2.5]}
    CountedLoss.rounded = 0
    lab.run()
    assert not lab.exception
    assert CountedLoss.rounded == len(val_loss)
    assert (lab.metric[1].value, lab.metric[1].delta) == ("2.600", "at step 4")
    assert any("lowest at step 4 (2.600) and rose to 2.800 by step 6" in c.value for c in lab.caption)
