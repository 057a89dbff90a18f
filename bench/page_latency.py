"""Server-side latency of every page at the sliders' extremes and the presets, measured with AppTest.

Usage:  python bench/page_latency.py [--repeats 3] [--pages explorer,quiz] [--configs default,max:E]
        python bench/page_latency.py --list          # the configs it knows
        python bench/page_latency.py --pairs         # also every two sliders at their ends together
        python bench/page_latency.py --pages explorer --configs default,real:Llama-2-70B --no-quiz-actions
                                                     # the Explorer at Llama-2-70B beside the default

For each page and config it times (a) the page's first run at that config with every cache the app
keeps by config emptied (Streamlit's st.cache_data and st.cache_resource, ui.compute.trace_cache's
traces), as a slider moved to a value no session has asked for meets it, and (b) a rerun at the
same config, now seen before. Every page is opened once at the default config first, untimed, so
one-off imports and the per-process chart templates are out of the figures (see empty_caches).
On the quiz page it also times, each after an untimed run of the page from emptied caches (so the
figure is what the click adds), (c) opening "Answer key, for teachers" and (d) checking one
question for each of the quiz's evidence experiments (that run draws the live evidence).
Each figure is the median of ``--repeats`` runs. AppTest runs the script in-process, so the figures
leave out the browser and the websocket. AppTest compiles the page scripts afresh on every run
(0.1-0.25 s for pages/quiz.py), where a server compiles each once; here they are compiled once, as
the server does, unless ``--recompile``.
Not a test: timings depend on the machine; docs/performance.md says what this measures.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402
from streamlit.runtime.pages_manager import PagesManager  # noqa: E402
from streamlit.runtime.scriptrunner.script_cache import ScriptCache  # noqa: E402
from streamlit.testing.v1 import app_test  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from core import DEFAULT, PRESETS, REAL_MODELS, TransformerConfig  # noqa: E402
from ui.link.config import (CONFIG_FIELDS, FFS, LAYER_RANGE, LENGTHS, N_RANGE, VOCABS, WIDTHS,  # noqa: E402
                           nhead_options, snap_config)
from ui.server.streamlit_internals import without_pages_dir  # noqa: E402


def timed(at: AppTest) -> float:
    """Seconds of one run of ``at``; raises if the app did."""
    start = time.perf_counter()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(f"the app raised: {at.exception[0].value}")
    return elapsed

PAGES = {"explorer": "pages/explorer.py", "attention": "pages/attention.py", "positional": "pages/positional.py",
         "quiz": "pages/quiz.py", "training_lab": "pages/training_lab.py", "cost": "pages/cost.py",
         "compare": "pages/compare.py"}
SLIDERS = {"N": list(range(N_RANGE[0], N_RANGE[1] + 1)), "M": LENGTHS, "M_target": LENGTHS, "E": WIDTHS,
           "vocab_size": VOCABS, "layers": list(range(LAYER_RANGE[0], LAYER_RANGE[1] + 1)), "d_ff": FFS}


def moved(**changes) -> TransformerConfig:
    """The default config with some sliders moved, as the sidebar makes it: the other sliders stay put
    (d_ff does not follow E) and nhead snaps to the nearest divisor of E the slider offers."""
    return snap_config({**{k: getattr(DEFAULT, k) for k in CONFIG_FIELDS}, **changes})[0]


def configs() -> dict[str, TransformerConfig]:
    """The default, each slider alone at its minimum and at its maximum, all at their maximum, the presets."""
    out = {"default": DEFAULT}
    for name, options in SLIDERS.items():
        for end, value in (("min", options[0]), ("max", options[-1])):
            out[f"{end}:{name}"] = moved(**{name: value})
    heads = nhead_options(DEFAULT.E)
    out["min:nhead"], out["max:nhead"] = moved(nhead=heads[0]), moved(nhead=heads[-1])
    top = {name: options[-1] for name, options in SLIDERS.items()}
    out["max:all"] = moved(**top, nhead=nhead_options(top["E"])[-1])
    for name, cfg in PRESETS.items():
        if cfg != DEFAULT:
            out["preset:" + name.split(" (")[0]] = cfg
    for name, cfg in REAL_MODELS.items():  # those the sidebar's sliders reach, as a link opens them
        if snap_config(link(cfg))[0] == cfg:
            out["real:" + name] = cfg
    return out


def link(cfg: TransformerConfig) -> dict[str, str]:
    """The link that opens the app on ``cfg``: every field the sidebar sets, booleans as true/false."""
    return {k: str(v).lower() if isinstance(v, bool) else str(v) for k in CONFIG_FIELDS
            if (v := getattr(cfg, k)) is not None}


def pairs() -> dict[str, TransformerConfig]:
    """Every two sliders at their ends together, the others at the default (nhead as one of them, at
    the fewest or most heads E allows). A cost that shows only where two sizes meet is missed one
    slider at a time: at the widest E with the narrowest d_ff the FFN evidence once built 3.6 billion
    weights. Configs the sidebar makes the same (both sliders at 1, say) are timed once."""
    ends = {name: (options[0], options[-1]) for name, options in SLIDERS.items()}
    out: dict[str, TransformerConfig] = {}
    for a, b in itertools.combinations([*SLIDERS, "nhead"], 2):
        for end_a, end_b in itertools.product(("min", "max"), repeat=2):
            changes = {name: ends[name][end == "max"] for name, end in ((a, end_a), (b, end_b)) if name != "nhead"}
            if "nhead" in (a, b):
                heads = nhead_options(moved(**changes).E)
                changes["nhead"] = heads[-1] if (end_a if a == "nhead" else end_b) == "max" else heads[0]
            cfg = moved(**changes)
            if cfg not in out.values():
                out[f"{end_a}:{a}+{end_b}:{b}"] = cfg
    return out


def empty_caches() -> None:
    """Forget every result the app keeps by config, as a config no session has asked for yet meets it.

    The functools caches of pages/ and core/ are kept: they hold chart templates and source lines,
    the same for every config, which a running server built for its first visitor."""
    st.cache_data.clear()
    st.cache_resource.clear()
    from ui.compute.trace_cache import CACHE
    CACHE.clear()
    gc.collect()


def new_app(page: str) -> AppTest:
    """An app that has run ``page`` once at the default config: AppTest scans the installed packages
    for components on an instance's first run (about 0.2 s here), which a server does once at start."""
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=600)
    at.switch_page(page)  # the first run opens this page, not the explorer
    timed(at)
    return at


def go_to(at: AppTest, cfg: TransformerConfig) -> None:
    """Make the next run read ``cfg`` from the URL, as a session's first run does (ui.sidebar.config._read_url)."""
    del at.session_state["url_read"]
    at.query_params.clear()
    at.query_params.update(link(cfg))


def checked(at: AppTest, cfg: TransformerConfig) -> None:
    ran = at.session_state["sidebar_run"].cfg  # the Run the sidebar handed to the page (ui.sidebar.config.this_run)
    if ran != cfg:
        raise RuntimeError(f"the app ran at {ran}, not {cfg}")


def page_times(at: AppTest, cfg: TransformerConfig) -> tuple[float, float]:
    """(first run at ``cfg`` with empty caches, rerun at the same config)."""
    empty_caches()
    go_to(at, cfg)
    first = timed(at)
    checked(at, cfg)
    return first, timed(at)


def one_per_experiment() -> dict[str, str]:
    """The first question of the bank that shows each experiment: experiment -> question id."""
    from quizzes import QUESTIONS
    out: dict[str, str] = {}
    for q in QUESTIONS:
        out.setdefault(q.evidence, q.id)
    return out


def answer(at: AppTest, qid: str) -> None:
    """Give question ``qid`` a readable (not necessarily right) answer; the caller times the Check."""
    from quizzes import BY_ID
    q = BY_ID[qid]
    if q.kind in ("choice", "predict"):
        at.radio(key=f"ans_{qid}").set_value(q.choices[0])
    else:
        at.text_input(key=f"ans_{qid}").input("(1, 2)" if q.kind == "shape" else "1")
    at.button(key=f"submit_{qid}").click()


def quiz_times(cfg: TransformerConfig, experiments: set[str] | None = None) -> dict[str, float]:
    """Opening the answer key, and checking one question per experiment, each from empty caches. The
    page itself is run first (untimed), so the figure is what the click adds."""
    out = {}
    at = new_app(PAGES["quiz"])
    empty_caches()
    go_to(at, cfg)
    timed(at)
    checked(at, cfg)
    at.session_state["quiz_key_open"] = True
    out["answer key"] = timed(at)
    at.session_state["quiz_key_open"] = False
    for experiment, qid in one_per_experiment().items():
        if experiments is not None and experiment not in experiments:
            continue
        empty_caches()
        at.session_state["quiz_at"] = qid  # one question at a time, on this one
        timed(at)
        answer(at, qid)
        out[f"check {qid} ({experiment})"] = timed(at)
        if qid not in at.session_state["quiz_progress"]["answers"]:
            raise RuntimeError(f"{qid}: the answer was not recorded, so no evidence was drawn")
    return out


def side_by_side(rows: list[dict]) -> None:
    """Each page's medians with the configs beside one another, the default first: the figure to read is
    a config's cost against the default's, measured in the same run on the same machine."""
    pages = dict.fromkeys(r["page"] for r in rows)
    print("\nside by side (median ms: first run with empty caches / rerun):")
    for page in pages:
        mine = [r for r in rows if r["page"] == page and r["what"] in ("first run, empty caches", "rerun, config seen")]
        labels = sorted(dict.fromkeys(r["config"] for r in mine), key=lambda label: label != "default")
        cells = []
        for label in labels:
            first, rerun = (next(1000 * r["median_s"] for r in mine if r["config"] == label and r["what"] == what)
                            for what in ("first run, empty caches", "rerun, config seen"))
            cells.append(f"{label} {first:.0f} / {rerun:.0f}")
        print(f"  {page:<12} " + "   ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated: " + ", ".join(PAGES))
    parser.add_argument("--configs", default="", help="comma-separated config labels (--list); all by default")
    parser.add_argument("--no-quiz-actions", action="store_true", help="skip the answer key and the Checks")
    parser.add_argument("--experiments", default="", help="comma-separated: Check only the questions of these")
    parser.add_argument("--json", action="store_true", help="one JSON line per figure as well")
    parser.add_argument("--recompile", action="store_true", help="compile the scripts on every run, as AppTest does")
    parser.add_argument("--pairs", action="store_true", help="also every two sliders at their ends together")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    known = configs()
    if args.pairs:
        known |= {label: cfg for label, cfg in pairs().items() if cfg not in known.values()}
    if args.list:
        for label, cfg in known.items():
            print(f"{label:<28} {cfg}")
        return
    PagesManager.__init__ = without_pages_dir(PagesManager.__init__)  # entry script on every run
    if not args.recompile:
        shared = ScriptCache()  # one for the process, as the server keeps: each script compiled once
        app_test.ScriptCache = lambda: shared
    chosen = {k: known[k] for k in args.configs.split(",")} if args.configs else known
    pages = args.pages.split(",")
    apps = {page: new_app(PAGES[page]) for page in pages}  # one-off imports and warm-ups out of every figure
    rows = []

    def report(page: str, label: str, what: str, times: list[float]) -> None:
        med = statistics.median(times)
        flag = "  <-- over 1 s" if med > 1 else ""
        print(f"{page:<12} {label:<28} {what:<46} median {1000 * med:8.1f} ms  "
              f"(runs: {', '.join(f'{1000 * t:.0f}' for t in times)}){flag}", flush=True)
        rows.append({"page": page, "config": label, "what": what, "median_s": med, "runs_s": times})

    for label, cfg in chosen.items():
        for page in pages:
            runs = [page_times(apps[page], cfg) for _ in range(args.repeats)]
            report(page, label, "first run, empty caches", [r[0] for r in runs])
            report(page, label, "rerun, config seen", [r[1] for r in runs])
        if "quiz" in pages and not args.no_quiz_actions:
            only = set(args.experiments.split(",")) if args.experiments else None
            runs = [quiz_times(cfg, only) for _ in range(args.repeats)]
            for what in runs[0]:
                report("quiz", label, what, [r[what] for r in runs])
    if args.json:
        for row in rows:
            print(json.dumps(row))
    side_by_side(rows)
    worst = sorted(rows, key=lambda r: -r["median_s"])[:15]
    print("\nslowest medians:")
    for r in worst:
        print(f"  {1000 * r['median_s']:8.1f} ms  {r['page']:<12} {r['config']:<28} {r['what']}")


if __name__ == "__main__":
    main()
