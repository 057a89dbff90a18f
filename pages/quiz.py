"""Quiz: questions whose answers are computed from the live model for the sidebar's config.

Reads the shared config, asks the quizzes package for questions and expected answers and
core.experiments (cached here) for the evidence, and shows that evidence as pages/evidence.py
draws it. Progress is a JSON-able dict in st.session_state, mirrored into the learner's browser
(pages/browser_store.py) so that a closed tab or a server restart does not lose it; it can also
be exported and imported. No tensor maths here.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd
import streamlit as st

from core import TransformerConfig
from core.experiments import TAKES_SHAPES, Evidence, run as run_experiment
from pages.browser_store import browser_store, conflict, report
from pages.common import (announce, as_literal, cached_shape_only, cached_shapes, drawn_at_this_link, guard, show_chart,
                          theme)
from pages.enter_checks import enter_checks
from pages.evidence import ASKED, RECORD_PHONE_CSS, charts, label, literal_frame, marked_table, plain, table_height
from pages.expander_closed import on_expander_closed
from pages.scroll_to import scroll_to
from pages.page_links import ALL_TOPICS, LINKED, MAX_SEED, ONE, SET, quiz_order
from pages.sidebar import CONFIG_FIELDS, current_config, forget_link_warnings, on_sliders
from pages.tables import sizes_text
from quizzes import BY_ID, KIND_LABELS, QUESTIONS, TOPICS, Context, Question, answer_key, check, format_answer
from quizzes.bank import KEY_COLUMNS, key_csv, key_file_name, key_rows
from quizzes.check import MAX_INPUT, in_symbols, mark, parse_shape, readable, shown_formula
from quizzes.progress import (counted, dumps, load_progress, merge, missed, new_progress, now_ms, record, restamped,
                              scores)
from quizzes.recheck import file_config, recheck

ALL = ALL_TOPICS
PROGRESS = "quiz_progress"
STORE = "quiz_store"  # the browser store's widget key
STORED = "quiz_stored"  # None until the browser has reported; then whether it can keep the progress
BASE = "quiz_store_base"  # the text this session last knew the browser to hold (another tab may change it)
SEQ = "quiz_store_seq"  # numbers the saves handed to the browser
MERGED_SEQ = "quiz_store_merged"  # the save whose conflict report was merged last
HEARD = "quiz_store_heard"  # the store's report as the last run took it: a new one starts a run of the browser's
WRAPPED = "quiz_wrapped"  # (question id, words) after Previous or Next went round the end of the list
AT = "quiz_at"  # the question one-at-a-time mode shows, by id: the list around it may change (a link's q=)
LISTED = "quiz_listed"  # the (topic, seed, review) that last made the list of questions
SCROLL_UP = "quiz_scroll_up"  # set by the lower Next: the next run scrolls the new question into view
SCROLL_MESSAGES = "quiz_scroll_messages"  # set by a reset: the next run scrolls its message into view
SCROLLS = "quiz_scrolls"  # how many scrolls were asked for, so each mounts under a key of its own
RIGHTED = "quiz_righted"  # questions answered right during this review: they stay in its list
SAY = "quiz_say"  # what the next run reads out once (announce): the answer to a reset or an import
ASK_RESET = "quiz_asking_reset"  # True while the page asks whether to forget every answer
BROWSER_SPOKE = "quiz_browser_spoke"  # True on a run that takes news from the browser's store, not from the learner
CHECKED = "quiz_checked"  # the question whose Check this run answers: a right answer is read out (announce)
FLASH = "quiz_flash"  # messages for the top of the page, each shown once, as (kind, text) pairs
IO = "quiz_io"  # the "Save or restore progress" expander: its open state
IO_TOGGLED = "quiz_io_toggled"  # set when that expander opened or closed: the run leaves Reset's question waiting
IO_NOTE = "quiz_io_note"  # the last import's result, (kind, text), shown in that expander
IO_REOPEN = "quiz_io_reopen"  # set by an import: the expander opens (stays open) on the next run
SCROLL_IO_NOTE = "quiz_scroll_io_note"  # set by an import: the next run scrolls its result into view
MORE = "quiz_more"  # the expander of the score per topic, the shuffle seed and Reset progress (show_more)
KEY_OPEN = "quiz_key_open"  # the answer key's expander: its open state (the key is computed only while open)
SHAPE_HINT = "e.g. (2, 8, 16), 2x8x16, [2,8,16] or (N, M, E)"
UNREADABLE = {  # what to write instead, for a reply that cannot be read as an answer of that kind
    # Examples in backticks: shown as Markdown, 4*E**2 + 4*E lost its stars to italics.
    "shape": "Could not read that as a shape. Write its sizes as numbers, e.g. `(2, 8, 16)` or `2 x 8 x 16`, or "
             "in the config's symbols, e.g. `(N, M, E)`, `N x M x E` or `(N, nhead, M, E/nhead)`.",
    "numeric": "Could not read that as a number. Write a number, e.g. `1088`, `1,088` or `1.088e3`, or arithmetic "
               "in numbers and the config's symbols, e.g. `4*E**2 + 4*E` or `4E^2 + 4E`.",
    "choice": "Pick one of the choices.",
    "predict": "Pick one of the choices.",
}
TOPIC_PX = 280  # the topic's box: its longest name whole; with Mode and Review, one row at 1280 px, two at 1024
NAV_BUTTON_PX = 104  # Previous and Next, one width: wide enough for "◀ Previous", narrow enough for a phone's row
# How to read an evidence chart whose title alone does not say: the influence maps are the first
# evidence the quiz shows (its first five questions), and their 'lower' and 'full' were unexplained.
READING = {
    "dependency_maps": (
        "How to read the maps: row i is output position i and column j is input position j. A square is "
        "coloured when nudging input j moved output i (the darker, the further), and white when it did not "
        "move at all. 'lower' in the table means only squares on and below the diagonal are coloured: each "
        "output depends on its own input and earlier ones. 'full' means every output depends on every input."),
}


@st.cache_data(max_entries=128, show_spinner="Running the experiment…")
def cached_evidence(name: str, cfg) -> Evidence:
    """One experiment per (name, config), shared by every session (each gets a copy). The shape
    experiments share one shape-only trace of the config, the page's own when it is one, rather
    than each tracing the config again (core.experiments.TAKES_SHAPES): at 96+96 layers each
    trace took most of a second."""
    return run_experiment(name, cfg, cached_shape_only(cfg) if name in TAKES_SHAPES else None)


def context(cfg) -> Context:
    return Context(cfg, trace=cached_shapes(cfg), runner=cached_evidence)


def progress() -> dict[str, Any]:
    if PROGRESS not in st.session_state:
        st.session_state[PROGRESS] = new_progress()
    return st.session_state[PROGRESS]


# --- callbacks: they run before the page, so the score at the top is already up to date -------------

def submit(qid: str) -> None:
    q = BY_ID[qid]
    given = st.session_state.get(f"ans_{qid}")
    if given is None or (isinstance(given, str) and not given.strip()):
        # Shown under this question's own button (show_question), not at the top of the page.
        st.session_state["quiz_empty"] = qid
        return
    try:
        cfg = current_config()
        ctx = context(cfg)
        if not readable(q, given, q.reading_symbols(ctx)):
            # Not marked wrong: a typo must not replace the last attempt. Shown under the question.
            st.session_state["quiz_unreadable"] = qid
            return
        right, expected = mark(q, ctx, given)
        st.session_state[PROGRESS] = record(progress(), qid, str(given), right, format_answer(q, expected),
                                            cfg.to_dict())
        if right and st.session_state.get("quiz_review"):
            st.session_state[RIGHTED] = st.session_state.get(RIGHTED, frozenset()) | {qid}
        st.session_state[CHECKED] = qid
        clear_messages()
    except Exception as exc:  # noqa: BLE001 - a failing experiment must not take the page down
        flash("error", f"Could not compute the expected answer: {exc}", fresh=True)


def flash(kind: str, text: str, *, fresh: bool = False) -> None:
    """Queue a message (st.info, st.success, ...) for the top of the page. A queue, not one slot: a
    reset or an import and another tab's save can land in the same run, and both must be told.

    Messages stay until the learner's next action (Check, Previous, Next, a reset or an import:
    ``fresh`` starts the queue afresh), not for one run only: another tab's save is merged in a run
    that the browser's own report follows at once, and its note vanished before it could be read.
    """
    if fresh:
        clear_messages()
    st.session_state[FLASH] = [*(st.session_state.get(FLASH) or []), (kind, text)]


def clear_messages() -> None:
    """The learner has acted: the messages of their last action, at the top and under the import, go."""
    st.session_state[FLASH] = []
    st.session_state.pop(IO_NOTE, None)
    st.session_state.pop(WRAPPED, None)


def reset() -> None:
    """Yes, forget my answers: only while the page asks (still_asking). A press that arrives after the
    question was withdrawn, from a button the browser had not yet taken off the page, forgets nothing."""
    if not st.session_state.get(ASK_RESET):
        return
    st.session_state[PROGRESS] = new_progress(reset_at=now_ms())  # the reset reaches other tabs too
    st.session_state["quiz_pos"] = 0
    st.session_state.pop(AT, None)  # back to the first question
    st.session_state.pop(RIGHTED, None)
    for key in [k for k in st.session_state if str(k).startswith("ans_")]:
        del st.session_state[key]
    st.session_state[ASK_RESET] = False
    done = "Progress reset, here and in the copy this browser keeps."
    flash("info", done, fresh=True)
    st.session_state[SAY] = done  # the button just pressed is gone, and focus with it; an info box is not read out
    # Reset sits under the questions, the message at the top of the page: out of sight on a phone, and
    # often on a laptop too, so the next run scrolls it into view (the quiz starts over there anyway).
    st.session_state[SCROLL_MESSAGES] = next_scroll()


def ask_reset() -> None:
    """Reset progress asks first, or stops asking (a second press)."""
    st.session_state[ASK_RESET] = not st.session_state.get(ASK_RESET, False)


def keep_answers() -> None:
    """The page stops asking whether to forget every answer: "Keep them", or the expander closed."""
    st.session_state[ASK_RESET] = False


def still_asking() -> bool:
    """Whether this run asks to forget every answer. The question answers one press of Reset progress and
    lasts until the learner's next action: "Yes" and "Keep them" answer it, and anything else is a no
    (closing the expander, any other control, a visit to another page). Left pending, it waited in the
    closed expander, or on the page the learner came back to, and a "Yes" was still there when the
    expander was opened again. Read before the button is drawn: its value is True on the run its press
    started.

    A run the browser's store starts (its first report, another tab's save merged in, a failed write and
    the read after it: take_browser_report) is no action of the learner's, and leaves the question as it
    is: straight after a press of Reset, another tab's save withdrew it a moment after it showed.
    Nor is opening or closing "Save or restore progress", where the question sends the learner to export
    first (io_toggled); an import from there is an action, and answers no."""
    toggled = st.session_state.pop(IO_TOGGLED, False)
    if (st.session_state.get(ASK_RESET) and not st.session_state.get("quiz_ask_reset")
            and not st.session_state.get(BROWSER_SPOKE) and not toggled):
        st.session_state[ASK_RESET] = False
    return bool(st.session_state.get(ASK_RESET))


def _into_review() -> None:
    """While reviewing, put the quiz on a question of the review's list: the one in view if the list
    has it, else the list's first. Called by the callbacks that change the list (the review, the topic,
    the shuffle), which run before the sidebar writes the link: left to the page, the question moved
    after the link named another one (the topic's first, which the learner had not missed), and Back
    and Forward then opened that one and ended the review."""
    if st.session_state.get("quiz_review"):
        ids = [q.id for q in ordered(st.session_state.get("quiz_topic", ALL), st.session_state.get("quiz_seed", 0),
                                     True)]
        if ids and st.session_state.get(AT) not in ids:
            st.session_state[AT] = ids[0]


def new_shuffle() -> None:
    """A new shuffle starts at its first question: it asks for a new order from the top, and would
    otherwise only renumber the question in view. Decided here, before the run, so that the link the
    sidebar writes (pages.page_links: seed= and q=) already names that question."""
    st.session_state.pop(AT, None)  # the sidebar then puts the quiz on the new order's first
    _into_review()  # or, in a review, the first of its list in the new order
    forget_link_warnings()


def new_review() -> None:
    """A review lists only what is missed now (RIGHTED goes: see ordered), and opens on the question in
    view when it is among them, else on the first (_into_review)."""
    st.session_state.pop(RIGHTED, None)
    _into_review()
    forget_link_warnings()


def new_topic() -> None:
    """A new topic: in a review, a question of the review's list in that topic (_into_review); outside
    one, the sidebar keeps the question if the topic has it, else puts the quiz on the topic's first."""
    _into_review()
    forget_link_warnings()


def go_to_question(qid: str, wrapped: str | None = None) -> None:
    """Previous and Next name the question they lead to, not a step from wherever the quiz is by
    then, so a click applied twice lands on the same question. (Streamlit 1.67 can replay a
    button's trigger into a later run when runs overlap. With steps, a browser test twice came
    back one question too far on, once in CI; the cause was not pinned down.)

    ``wrapped`` says so when the click went round the end of the list: Next on the last question
    leads to the first, which otherwise looked like a jump to nowhere in particular."""
    st.session_state[AT] = qid
    clear_messages()
    if wrapped:
        st.session_state[WRAPPED] = (qid, wrapped)
    forget_link_warnings()


def next_from_below(qid: str, wrapped: str | None = None) -> None:
    """The Next under an answer's evidence: the next question, scrolled into view (pages.scroll_to). When
    it is answered too, as every question of a review is, the page stayed at the foot of its evidence."""
    go_to_question(qid, wrapped)
    st.session_state[SCROLL_UP] = next_scroll()


def next_scroll() -> int:
    """A new number for a scroll request (pages.scroll_to mounts each under a key of its own)."""
    st.session_state[SCROLLS] = st.session_state.get(SCROLLS, 0) + 1
    return st.session_state[SCROLLS]


def position(questions: list[Question], listed: tuple) -> int:
    """Where one-at-a-time mode stands in ``questions``, made by ``listed`` (topic, seed, review).

    On the question it showed last, when the list still has it: a new topic or review that keeps
    it stays on it, at its new number. Otherwise the first question of the new list: a position
    carried over from another list named a question at random (review opened on "Question 2 of
    2"). A new shuffle starts at its first (new_shuffle), and a link's q= sets the question before
    this (pages.page_links). A question answered right while reviewing stays in the list until the
    review is turned off (see ordered).
    """
    ids = [q.id for q in questions]
    before = st.session_state.get(LISTED)
    if st.session_state.get(AT) in ids:
        pos = ids.index(st.session_state[AT])
    elif before == listed:
        pos = min(st.session_state.get("quiz_pos", 0), len(ids) - 1)
    else:
        pos = 0
    st.session_state[AT], st.session_state["quiz_pos"], st.session_state[LISTED] = ids[pos], pos, listed
    return pos


def apply_import(data: bytes | str) -> None:
    """Replace the progress with an uploaded or pasted file, or explain why not (keeping the current one).

    Either way the result is said under the import, where the learner is looking, and the
    expander stays open to show it. (It closed after an import that took and stayed open after
    one refused: the browser alone kept whether it was open, and could lose that when an import
    changed the page above it. Now the app keeps it, under the expander's key.)
    """
    clear_messages()
    st.session_state[IO_REOPEN] = True
    # The result sits under the paste box and its button: after a file was dropped on the drop zone over
    # them, it stood below the window's foot (936 px down an 800 px laptop window), so the next run shows it.
    st.session_state[SCROLL_IO_NOTE] = next_scroll()
    loaded, message = load_progress(data)
    if loaded is None:
        # The message quotes the file (its version, say): escaped, or '[x](https://…)' there was a link.
        st.session_state[IO_NOTE] = ("error", f"Import refused, your current progress is kept. {as_literal(message)}")
        return
    # Marked again, not taken at the file's word: "correct": true typed into it showed "Right." over a wrong answer.
    with st.spinner("Checking the imported answers against the model…"):
        loaded, rechecked = recheck(loaded, context, slider_config)
    if rechecked.left_out and not rechecked.checked:
        none = ("The file's one answer could not" if rechecked.left_out == 1 else
                f"None of the file's {counted(rechecked.left_out)} could")
        st.session_state[IO_NOTE] = ("error", f"Import refused, your current progress is kept. {none} be checked "
                                     "against the model.")
        return
    st.session_state[PROGRESS] = restamped(loaded, now_ms())  # it replaces what other tabs hold, too
    st.session_state[IO_NOTE] = ("success", " ".join(filter(None, (
        f"Imported {counted(len(loaded['answers']))}.", rechecked.summary(), message))))
    st.session_state[SAY] = st.session_state[IO_NOTE][1]  # a success box is a status: not read out (a refusal is)


def slider_config(entry: dict[str, Any]) -> TransformerConfig | None:
    """The config an imported answer names, if the sidebar could have shown it; None otherwise. A
    config off the sliders was not made here, and checking at it costs more than any slider does: 70
    answers, each at a config of its own at core's limits, took 42.6 s to mark, and 17.3 s at the
    sliders' largest sizes (``python bench/recheck.py --core-max``, medians of three)."""
    cfg = file_config(entry)
    return cfg if cfg is not None and on_sliders(cfg) else None


def import_pasted() -> None:
    apply_import(st.session_state.get("quiz_paste", ""))


# --- rendering ------------------------------------------------------------------------------------

def ordered(topic: str, seed: int, review: bool) -> list[Question]:
    """The questions of a topic, in the seed's order (as a link's q= counts them); in review, those of
    them whose latest answer is wrong, and those answered right during this review: a question that
    left the list at once took its "Right." with it, and the learner never saw it."""
    qs = quiz_order(topic, seed)
    if review:
        wrong = set(missed(progress())) | st.session_state.get(RIGHTED, frozenset())
        qs = [q for q in qs if q.id in wrong]
    return qs


def show_evidence(ev: Evidence, asked: str | None = None) -> None:
    """The evidence for one question: its values, then its chart or table. ``asked`` is the row
    (a core.rows key) the question asks about, marked in a table that lists it."""
    st.markdown(f"**Live evidence: {ev.title}**")
    numbers = [{"measured": ev.labels.get(k) or label(k), "value": plain(v)} for k, v in ev.values.items()
               if not isinstance(v, (list, tuple)) or len(v) <= 16]
    if numbers:
        # A static HTML table, not st.dataframe's grid: the grid cut the learned table's error message (the
        # evidence for the answer) with an ellipsis at 1280 px and pushed the values past a 390 px phone's
        # edge. These cells wrap, so each name and value reads whole at any width, every row shows, and a
        # screen reader reads the cells. They are Markdown, hence escaped: "max |difference|" stays as written.
        st.table(literal_frame(pd.DataFrame(numbers)), hide_index=True)
    drawn = [drawn_at_this_link(each) for each in charts(ev, theme())]
    if len(drawn) > 1:
        # A facet's maps in a row that wraps: side by side on a laptop, one under another on a phone.
        with st.container(horizontal=True, wrap=True, gap="medium"):
            for each in drawn:
                show_chart(each, width="content")
    elif drawn:
        show_chart(drawn[0], width=360 if ev.chart.get("kind") == "heatmap" else "stretch")
    elif ev.chart.get("kind") == "table":
        table, row = marked_table(ev.records, asked)
        if row is not None:
            name = row.get("tensor") or row.get("step") or row["key"]
            shape = f": live shape `{row['live shape']}`" if "live shape" in row else ""
            st.markdown(f"Your question asks about **{name}**, marked *{ASKED}* in the table{shape}.")
        # An HTML table, not st.dataframe's grid: on a 390 px phone the grid was 570 px wide in a 324 px box, and
        # "live shape" and "formula", the evidence itself, began off-screen. These cells wrap, so every column
        # fits the screen, and a screen reader reads the cells under their headers. Every row in view when one
        # is marked, however many: it must not hide below a scroll.
        st.table(table, hide_index=True, height="content" if row is not None else table_height(len(ev.records)))
    if ev.name in READING:
        st.caption(READING[ev.name])
    if ev.note:
        st.caption(ev.note)


def as_typed(text: str) -> str:
    """A typed answer, quoted as code so that Markdown leaves it alone: quoted plainly, the stars of
    `3*E*(E+1)` were read as italics and the learner saw '3E(E+1)' quoted back. The fence is one
    backtick longer than any run of backticks inside, so even those show."""
    text = " ".join(str(text).split())  # from an imported file it may hold a blank line, which ends the span
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""  # Markdown's rule for a span that starts with one
    return f"{fence}{pad}{text}{pad}{fence}"


def show_question(q: Question, ctx: Context, number: str) -> None:
    # A heading per question, so that a screen reader's list of headings walks a topic set question
    # by question; what kind of question it is, in smaller print under it. An h2, the level under
    # the page's h1 (an h3 left the outline a level short, as if a section were missing).
    st.header(f"{number} · {q.topic}", anchor=False)
    st.caption(KIND_LABELS[q.kind].capitalize() + (" · changes with the config" if q.parametric else ""))
    st.markdown(q.text(ctx))
    if q.sizes is not None:
        # Not the sidebar's sizes: say which ones a symbol in the reply ('3*E^2') will stand for.
        named = q.reading_symbols(ctx)
        st.caption("Symbols in your answer stand for this question's sizes, not the sidebar's: "
                   + ", ".join(f"{k}={named[k]:,}" for k in ("E", "nhead", "d_ff", "layers", "vocab_size")) + ".")
    key = f"ans_{q.id}"
    if st.session_state.get(key):
        # Hand a kept draft back to the browser explicitly. Otherwise a box shown again can come
        # back empty in the browser when Previous lands before Next's run has finished (3 of 40
        # fast Next-then-Previous rounds in a browser loop), and the next click sends that empty
        # box back over the draft.
        st.session_state[key] = st.session_state[key]
    if q.kind in ("choice", "predict"):
        label = "Your prediction" if q.kind == "predict" else "Your answer"
        # The question's number in every label, so that a screen reader's list of a topic set's
        # controls tells them apart.
        st.radio(f"{label} to {number}", q.choices, index=None, key=key, persist_state="session")
    else:
        hint = SHAPE_HINT if q.kind == "shape" else ("in millions" if q.unit == "millions" else "a number")
        # No max_chars: Streamlit's box drops a change longer than that whole, so a paste of 201
        # characters vanished without a word. A long answer is told how long it is instead (below).
        st.text_input(f"Your answer to {number}", key=key, persist_state="session", placeholder=hint)
    st.button("Commit my prediction and run" if q.kind == "predict" else "Check", key=f"submit_{q.id}",
              on_click=submit, args=(q.id,), type="primary")
    if st.session_state.get("quiz_empty") == q.id:
        st.session_state["quiz_empty"] = None
        st.warning("Type or pick an answer first: the box is empty. The result below is from your last check."
                   if q.id in progress()["answers"] else "Type or pick an answer first.")
    if st.session_state.get("quiz_unreadable") == q.id:
        st.session_state["quiz_unreadable"] = None
        draft = st.session_state.get(key)
        too_long = isinstance(draft, str) and len(draft) > MAX_INPUT
        st.warning((f"That answer is {len(draft):,} characters long, and an answer is read only up to {MAX_INPUT}: "
                    "a shape or a number fits in far fewer. It is still in the box to shorten." if too_long
                    else UNREADABLE[q.kind])
                   + (" Your last checked answer is kept below." if q.id in progress()["answers"] else ""))
    attempt = progress()["answers"].get(q.id)
    if attempt is None:
        return
    # The answer is quoted as typed, with no full stop after it: an answer may end with its own. A
    # choice is a sentence and reads as one; escaped, since an imported file's text is anyone's.
    sentence = q.kind in ("choice", "predict")
    given = as_literal(attempt["given"]) if sentence else as_typed(attempt["given"])
    formula = q.formula(ctx)
    symbolic = in_symbols(q, attempt["given"])
    if attempt["correct"]:
        st.success(f"Right. You answered {given}", icon=":material/check_circle:")
        if q.kind == "shape" and symbolic and formula is None:
            # Read through the config's symbols, with no row's formula to hold them to: they are
            # checked by the numbers they stand for, so M and M_target (equal by default) pass for
            # each other.
            st.caption("Symbols are checked by their values at this config, so two that happen to be equal here "
                       "(M and M_target, say) pass for each other. Compare your order with the explanation's.")
    else:
        st.error(f"Not quite. You answered {given}", icon=":material/cancel:")
        if q.kind == "shape":
            # A missing or extra axis is the commonest slip, and hard to see in two rows of numbers.
            ours = parse_shape(attempt["given"], q.reading_symbols(ctx))
            theirs = parse_shape(attempt["expected"])
            if ours is not None and theirs is not None and len(ours) != len(theirs):
                st.caption(f"Your shape has {len(ours)} axes and the expected one has {len(theirs)}: "
                           "compare them axis by axis, from the left.")
        if symbolic and formula and check(q, q.expected(ctx), attempt["given"], q.reading_symbols(ctx)):
            # The right numbers, from the wrong symbols (quizzes.check.same_formula): say so, or the
            # learner sees their own numbers as the expected ones and cannot tell what was wrong.
            value = "numbers" if q.kind == "shape" else "number"
            st.warning(f"Your symbols give the right {value} at this config, but not the formula {formula}: two "
                       "symbols can have the same value here (by default M_target = M) and still stand for different "
                       "sizes. Move one of them in the sidebar to see the difference.")
    if st.session_state.get(CHECKED) == q.id and attempt["correct"]:
        # Streamlit makes st.error (and st.warning) an alert, which a screen reader reads out when it
        # appears, but st.success a status, which screen readers mostly leave unread when it appears
        # with its words already in it: a wrong answer was heard, a right one met silence. Said on
        # the run that answers the Check only.
        announce(f"{number}: right. The explanation and the live evidence follow.", q.id)
    then = attempt.get("config") or {}
    changed = [k for k in CONFIG_FIELDS if k in then and then[k] != getattr(ctx.cfg, k)]
    answered = shown_formula(answered_formula(q, ctx, then) if changed else formula, attempt["expected"])
    # A chosen sentence in plain type: in code type a two-line choice broke into grey blocks of
    # monospace, hard to read beside the same sentence quoted plainly in "You answered".
    # Quoted by as_typed, like the answer: from an imported file, a backtick in it closed the span and
    # the rest, a link say, was Markdown.
    shown = as_literal(attempt["expected"]) if sentence else (
        as_typed(attempt["expected"]) + (f", that is {as_typed(answered)}" if answered else ""))
    st.markdown(f"Expected, for the config you answered with: {shown}" if q.parametric else f"Expected: {shown}")
    if changed:
        st.caption("You answered with " + ", ".join(f"{k}={as_literal(str(then[k]))}" for k in changed)
                   + "; the evidence below is for the sidebar's config now. Check again to re-answer.")
    st.markdown(q.explanation)
    with guard(f"The {q.evidence.replace('_', ' ')} experiment"):
        show_evidence(cached_evidence(q.evidence, ctx.cfg), q.row)


def answered_formula(q: Question, ctx: Context, then: dict[str, Any]) -> str | None:
    """The answer's formula at the config an attempt was made with (``then``, from its record), which
    a number's formula can depend on: a learned positional table has max_len*E parameters, sinusoids
    none. None when that config no longer reads (an old or hand-edited progress file)."""
    try:
        return q.formula(ctx, TransformerConfig.from_dict(then))
    except (TypeError, ValueError):
        return None


def show_scores() -> list[dict]:
    """The score line; returns the per-topic scores it sums, for show_more's table."""
    rows = scores(progress())
    right = sum(r["right"] for r in rows)
    wrong = sum(r["wrong"] for r in rows)
    total = sum(r["questions"] for r in rows)
    st.markdown(f"Score: **{right} right**, **{wrong} wrong**, {total - right - wrong} not tried yet "
                f"(of {total} questions).")
    return rows


def show_more(rows: list[dict]) -> None:
    """The controls a learner reaches for now and then, in one expander under the question (or a topic
    set's questions), over the progress's own: the shuffle seed, Reset progress and the score per topic
    (``rows``, from show_scores). The page reads the seed before (current_seed), to order the questions.

    Closed until opened: drawn on the page, they and the notes over them put the first question
    below the fold of a laptop screen (its heading 622 px down a window 800 px high, its choices
    under the fold), and further still on a phone. Closed over the question, it still left a 390 x 844
    phone only Q1's heading above the fold, its text at 842 to 894 px. The label names all three, so
    that each is found without opening it; a shuffle also says its seed there, as a link's seed=
    shuffles the quiz unasked. Keyed but not tracked: the key alone names the block, so it stays open
    while that label changes. A tracked one (on_change) is a widget whose identity includes its label:
    a new seed would have made it a new expander, closed, under the learner's hands. So the page learns
    that it was closed from the browser (pages.expander_closed), and only while Reset's question waits
    on it."""
    seed = current_seed()
    shuffled = f" · shuffled, seed {seed}" if seed else ""
    asking = still_asking()
    with st.expander(f"Shuffle, reset and score per topic{shuffled}", key=MORE, icon=":material/tune:"):
        # The controls first, where the expander opens: under the table they were a scroll away.
        with st.container(horizontal=True, vertical_alignment="bottom"):
            st.number_input("Shuffle seed", min_value=0, max_value=MAX_SEED, step=1, on_change=new_shuffle,
                            key="quiz_seed", persist_state="session", width=200,
                            help="0 keeps the bank's order; any other number shuffles it reproducibly.")
            st.button("Reset progress", key="quiz_ask_reset", on_click=ask_reset)
        if asking:
            # Asked twice: one slip lost every answer. Asked here, in the page, not in a popover:
            # Streamlit draws a popover's buttons at the end of the page, so the keyboard reached "Yes"
            # only after every question of a topic set; here it is the next stop after Reset. A
            # warning is an alert, which a screen reader reads out when it appears.
            st.warning("Forget every answer, here and in the copy this browser keeps? Export them first to keep a "
                       "copy.")
            with st.container(horizontal=True):
                st.button("Yes, forget my answers", key="quiz_reset", on_click=reset, type="primary")
                st.button("Keep them", key="quiz_keep", on_click=keep_answers)
            # Closing the expander is a no too (still_asking), but it starts no run by itself: the page is
            # told (pages.expander_closed). In the sidebar, like the store, so that it takes no room here.
            with st.sidebar:
                on_expander_closed(MORE, keep_answers, key="quiz_more_closed")
        if st.session_state.get(STORED) is not False:  # when it is not, the page says so at the top, in full
            st.caption(":material/save: Your answers are kept in this browser, so they outlast a closed tab or a "
                       "server restart. *Reset progress* forgets them; *Save or restore progress*, just below, "
                       "exports them to move to another browser.")
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def current_seed() -> int:
    """The shuffle seed, as its box (show_more, drawn under the questions) holds it or a link's seed= set
    it: the order of the questions, which are drawn before the box, depends on it."""
    return int(st.session_state.get("quiz_seed", 0))


def io_toggled() -> None:
    """"Save or restore progress" opened or closed. Reset's question says "Export them first to keep a copy",
    and the run this starts withdrew it (still_asking): the learner who opened the expander to do as told
    found no Yes when they came back. This run leaves the question waiting."""
    st.session_state[IO_TOGGLED] = True


def show_progress_io() -> None:
    if st.session_state.pop(IO_REOPEN, False):
        st.session_state[IO] = True  # before the expander is drawn: after it, Streamlit refuses the change
    # Keyed and tracking its state (on_change), so that the app, not the browser, says whether it is open.
    with st.expander("Save or restore progress", key=IO, on_change=io_toggled):
        # A download changes nothing here, so it starts no run ("ignore"): its run withdrew Reset's question,
        # which asks to export first.
        st.download_button("Export progress (JSON)", data=dumps(progress()), file_name="quiz-progress.json",
                           mime="application/json", key="quiz_export", on_click="ignore")
        upload = st.file_uploader("Import progress (JSON)", type=["json"], key="quiz_upload")
        if upload is not None and st.session_state.get("quiz_upload_seen") != upload.file_id:
            st.session_state["quiz_upload_seen"] = upload.file_id
            apply_import(upload.getvalue())
            st.rerun()
        st.text_area("…or paste a progress file", key="quiz_paste", persist_state="session", height=80,
                     max_chars=1_000_000)
        st.button("Load pasted progress", key="quiz_paste_load", on_click=import_pasted)
        if IO_NOTE in st.session_state:
            kind, text = st.session_state[IO_NOTE]
            with st.container(key="quiz_io_note"):
                getattr(st, kind)(text)
                if request := st.session_state.pop(SCROLL_IO_NOTE, None):  # only on the run after the import
                    scroll_to("quiz_io_note", request, block="nearest")  # the drop zone above stays in view


@st.cache_data(max_entries=32, show_spinner="Computing every answer…")
def answer_key_for(cfg) -> tuple[list[dict[str, str]], str]:
    """The answer key at one config, as table rows and as CSV; its experiments are the page's own,
    shared with every session (cached_evidence)."""
    key = answer_key(cfg, context(cfg))
    return key_rows(key), key_csv(key)


def show_answer_key(cfg) -> None:
    """Every question's answer at the sidebar's config, for a teacher preparing a class. Computed only
    while open (a keyed expander, like the progress one), since it runs every experiment."""
    with st.expander("Answer key, for teachers", key=KEY_OPEN, on_change="rerun"):
        if not st.session_state.get(KEY_OPEN):
            return
        # The sizes in words: on a projector the sidebar is often closed, and a screenshot of the key
        # otherwise lost which sizes its numbers hold for.
        st.caption(f"Spoilers: every question's expected answer, and its formula in symbols where it has one, at "
                   f"{sizes_text(cfg)}. Parametric answers hold at these sizes only; the file's name says them too. "
                   f"Q is the number the quiz shows over a question with {ALL} and shuffle seed 0; Q in topic, "
                   "with its topic chosen. A shuffle seed, or a review of what was missed, renumbers them. A "
                   "link opens the quiz on one by its Q, `?q=42`, or by its Q in topic, `?topic=masking&q=1`.")
        with guard("The answer key"):
            rows, csv_text = answer_key_for(cfg)
            # On screen the number and the answer come first, seen without scrolling sideways; the
            # file has every column (topic, kind, the lettered choices).
            st.dataframe(pd.DataFrame(rows, columns=KEY_COLUMNS), hide_index=True, width="stretch",
                         column_order=("Q", "answer", "formula", "Q in topic", "question", "id"),
                         column_config={"Q": st.column_config.TextColumn(width=56),
                                        "Q in topic": st.column_config.TextColumn(width="medium"),
                                        "answer": st.column_config.TextColumn(width="medium"),
                                        "formula": st.column_config.TextColumn(width="medium")})
            st.download_button("Download the answer key (CSV)", data=csv_text, file_name=key_file_name(cfg),
                               mime="text/csv", key="quiz_key_csv", on_click="ignore")


def take_browser_report() -> None:
    """Restore the progress the browser keeps, once per session, as soon as the browser has said
    what it holds; and note when it cannot keep it. Runs before anything is drawn, so the score
    and the note at the top already show the result.

    Answers already given in this session are merged with the stored copy (quizzes.progress.merge):
    the later attempt at each question counts.

    Once the browser has reported (STORED is set), another tab's save is looked for on every run, with
    or without a report: a visit to another page drops the store's state (Streamlit forgets the state
    of a widget that a run does not draw), and back on the quiz this returned early, so another tab's
    save was never merged and each later save of this tab was refused over it: in Chromium, the answer
    given then was kept by neither the browser nor a new tab.
    """
    st.session_state[BROWSER_SPOKE] = False  # set below when this run brings news from the browser
    found = report(STORE)
    if found is not None:
        heard_news(found)
    if st.session_state.get(STORED) is not None:  # reported before; a failed write or another tab is news
        if found is not None and not found["available"] and st.session_state[STORED] is not False:
            st.session_state[STORED] = False
        take_other_tabs()
        return
    if found is None:
        return
    st.session_state[STORED] = found["available"]
    st.session_state[BASE] = found["text"]
    if not found["text"]:
        return
    loaded, message = load_progress(found["text"])
    if loaded is None:
        flash("warning", "The progress this browser kept could not be read, so the quiz starts afresh and the "
                         f"unreadable copy is replaced. {as_literal(message)}")
    elif loaded["answers"] or "reset_at" in loaded:
        # Marked again, as an import is: the copy may have been marked before a checker was fixed, or edited in
        # the browser's storage. An answer that cannot be checked now is kept as it was, not lost.
        with st.spinner("Checking your saved answers against the model…"):
            loaded, rechecked = recheck(loaded, context, slider_config, keep=True)
        fresh = not progress()["answers"]
        st.session_state[PROGRESS] = merge(progress(), loaded)
        if fresh and loaded["answers"]:
            flash("success", " ".join(filter(None, (
                f"Welcome back: {counted(len(loaded['answers']))} restored from this browser.",
                rechecked.restored_summary(), message))))


def heard_news(found: dict[str, Any]) -> None:
    """Mark this run as the browser's (BROWSER_SPOKE) when the store's report is not the one the last run
    took: a new report is what started it. Every new report, not only those the page acts on: after a
    refused write (a full quota) the store, read only from then on, reads the browser's copy again and
    reports it, and that run, taken for the learner's, withdrew Reset's question 1.7 s after it showed."""
    if found != st.session_state.get(HEARD):
        st.session_state[HEARD] = found
        st.session_state[BROWSER_SPOKE] = True


def take_other_tabs() -> None:
    """Merge what another tab saved since this one last looked, when the browser refused to save
    over it (pages/browser_store.py). Both tabs' answers are kept: without this, the tab that saved
    last lost the other's."""
    found = conflict(STORE)
    if found is None or found["seq"] <= st.session_state.get(MERGED_SEQ, -1):
        return
    st.session_state[BROWSER_SPOKE] = True
    st.session_state[MERGED_SEQ] = found["seq"]
    st.session_state[BASE] = found["text"]  # the next save may replace it: it is merged in now
    loaded, _ = load_progress(found["text"])
    if loaded is None:  # emptied ("" is no progress file) or unreadable: this tab's progress is written over it
        return
    mine = progress()
    merged = merge(mine, loaded)
    if (merged["answers"], merged.get("reset_at")) != (mine["answers"], mine.get("reset_at")):
        st.session_state[PROGRESS] = merged
        note = merge_note(mine, merged)
        flash("info", note)
        st.toast(note, icon=":material/sync:")  # seen where the learner is, even far down a topic set


def merge_note(mine: dict, merged: dict) -> str:
    """What another tab's save changed here, in words: the answers it brought, and those its later
    reset (or import) dropped from this tab, so that a wiped score is never a surprise."""
    taken = sum(1 for qid, entry in merged["answers"].items() if mine["answers"].get(qid) is not entry)
    dropped = sum(1 for qid in mine["answers"] if qid not in merged["answers"])
    said = []
    if merged.get("reset_at", 0) > mine.get("reset_at", 0):
        said.append("reset the progress (or imported a file)" + (
            f", which clears the {counted(dropped)} given here before it" if dropped else ""))
    if taken:
        said.append(f"saved {counted(taken)} that {'is' if taken == 1 else 'are'} now counted here too")
    return f"Another quiz tab in this browser {' and '.join(said)}."


def keep_in_browser() -> None:
    """Mount the browser's store: it reads once, then keeps every new state of the progress.

    Nothing is written until the browser has reported what it holds, so a fresh session's empty
    progress never replaces a stored one. Mounted in the sidebar, before the page's body, so the
    browser reports (one rerun) while the body is still being drawn, not later, when the learner
    may already be pressing Next: with the store at the bottom of the page, two CI runs lost or
    doubled a quiz click.

    Where the browser cannot keep it (STORED is False: storage blocked, or a write refused), nothing is
    handed to it again: each save failed and reported so, and the report started a run that saved again,
    a run four or five times a second for as long as the page was open, which also withdrew Reset's
    question (still_asking) before the learner could answer it.
    """
    with st.sidebar:
        if st.session_state.get(STORED) is not True:  # not reported yet, or cannot keep it: read only
            browser_store("quiz-progress", key=STORE, save=None)
            return
        seq = st.session_state[SEQ] = st.session_state.get(SEQ, 0) + 1
        text = dumps(progress())
        browser_store("quiz-progress", key=STORE, save=text, base=st.session_state.get(BASE), seq=seq)
        st.session_state[BASE] = text  # unless the browser reports a conflict, this is what it now holds


cfg = current_config()
take_browser_report()
keep_in_browser()
with st.sidebar:
    enter_checks()  # Enter in an answer checks it; in the sidebar, like the store, so it takes no room
st.title("Quiz")
st.html(RECORD_PHONE_CSS)  # a style alone: Streamlit adds it to the page without drawing anything
# Every size, d_ff and the embeddings' tying included: the parameter counts turn on them, and a class
# following along on a projector checks its own sliders against this line. Kept short: the longer intro,
# with the note on saved progress under it, helped push the first question below the fold, and this one
# took four lines of a 390 px phone (three now, four at the largest sizes).
# Shapes, numbers and predictions, not every answer: ten conceptual questions keep theirs, with live evidence.
st.caption(f"Shapes, numbers and predictions follow the live model at the sidebar's sizes, {sizes_text(cfg)}.")
if st.session_state.get(STORED) is False:  # when it can keep them, show_more says so, under Reset
    st.info("This browser does not let the app keep your progress (its storage is blocked), so it lives in this "
            "session only: a closed tab or a server restart loses anything you have not exported under *Save or "
            "restore progress*.", icon=":material/save:")

# The messages sit in one container drawn on every run, empty or not. A message that came or went
# otherwise moved every element below it to a new place in the page's tree, and for the length of
# that run the browser showed the old Next beside the new one: another tab's save, merged in here
# at any moment, could make a click on Next land on the stale button.
with st.container(key="quiz_messages"):
    if said := st.session_state.pop(SAY, None):
        announce(said, "quiz")
    for kind, text in st.session_state.get(FLASH) or []:  # all of them, until the learner acts (see flash)
        getattr(st, kind)(text)
    if request := st.session_state.pop(SCROLL_MESSAGES, None):
        scroll_to("quiz_messages", request)  # only on the run right after the reset

rows = show_scores()
seed = current_seed()
# One row on a laptop, the row right over the question's Previous and Next: what to be asked, and how. A
# row that wraps, not columns: three columns squeezed the radio onto two lines and cut "Review what I
# missed" short beside a projector's sidebar (1024 px), where they do not stack.
# Said on the controls themselves: "A topic set" and a review's list meant nothing to a newcomer until tried.
# The sidebar has read the topic, shuffle, mode and question from a link (topic=masking&seed=0&mode=one&q=3) and
# keeps them in the URL (pages.page_links); a change of any is a step in the browser's history.
controls = st.container(horizontal=True, wrap=True, vertical_alignment="bottom", key="quiz_controls")
mode = controls.radio("Mode", [ONE, SET], key="quiz_mode", persist_state="session", horizontal=True,
                      on_change=forget_link_warnings,
                      help=f"A topic set shows every question of the chosen topic on one page (with {ALL}, all "
                           f"{len(QUESTIONS)}); one at a time steps through them with Previous and Next.")
topic = controls.selectbox("Topic", [ALL, *TOPICS], key="quiz_topic", persist_state="session", on_change=new_topic,
                           width=TOPIC_PX)
if st.session_state.pop(LINKED, False) and st.session_state.get("quiz_review"):
    # A link named a question (q=), counted in the topic: a review of what this learner missed that does
    # not hold it ends, so that the question shows. One that holds it goes on (Back and Forward in a review).
    if st.session_state.get(AT) not in {q.id for q in ordered(topic, seed, True)}:
        st.session_state["quiz_review"] = False
review = controls.toggle("Review what I missed", key="quiz_review", persist_state="session",
                         help="Only the questions whose latest answer was wrong. Answer one right and it leaves "
                              "the list once the review ends.",
                         on_change=new_review)

ctx = context(cfg)
questions = ordered(topic, seed, review)
# A question keeps its number in a review: numbered by its place in the review, the Q3 a learner got
# wrong came back as Q2, and "Q2" in the review was another question than Q2 outside it.
numbers = {q.id: f"Q{i}" for i, q in enumerate(ordered(topic, seed, False), start=1)}
if not questions:
    st.info("Nothing to review: no question's latest answer is wrong." if review else "No questions here.")
elif mode == ONE:
    pos = position(questions, (topic, seed, review))
    last = len(questions) - 1
    # Past either end, Previous and Next go round; the question they lead to says so (below the row).
    went_round_to_last = "That was the first question: Previous went round to the last." if last else None
    went_round_to_first = "That was the last question: Next went round to the first." if last else None
    # One row, edge to edge: Previous at the left, Next at the right, the count in the middle of the
    # two (both buttons one width, so that the middle is the row's). Columns left Next a quarter of
    # the row short of the right edge, the count off their centre line, and on a phone stacked all
    # three on rows of their own. The row never wraps: the count takes the room between the buttons
    # and breaks onto two lines there (a wrapping row put Next alone under Previous on a 360 px phone).
    with st.container(horizontal=True, wrap=False, gap="xsmall", horizontal_alignment="distribute",
                      vertical_alignment="center", key="quiz_nav"):
        st.button("◀ Previous", key="quiz_prev", on_click=go_to_question,
                  args=(questions[pos - 1].id, went_round_to_last if pos == 0 else None), width=NAV_BUTTON_PX)
        st.markdown(f"Question {pos + 1} of {len(questions)}", width="stretch", text_alignment="center")
        st.button("Next ▶", key="quiz_next", on_click=go_to_question,
                  args=(questions[(pos + 1) % len(questions)].id, went_round_to_first if pos == last else None),
                  width=NAV_BUTTON_PX)
    wrapped = st.session_state.get(WRAPPED)
    if wrapped and wrapped[0] == questions[pos].id and pos in (0, last):
        st.caption(wrapped[1])
    with guard("This question"):
        show_question(questions[pos], ctx, numbers[questions[pos].id])
    if len(questions) > 1 and questions[pos].id in progress()["answers"]:
        # Under an answered question too: its evidence is a screen or two of tables and charts, and the
        # only Next was above the question, so every question ended in a scroll back up (on a phone, two).
        st.button("Next question ▶", key="quiz_next_below", on_click=next_from_below,
                  args=(questions[(pos + 1) % len(questions)].id, went_round_to_first if pos == last else None))
    # Only on the run right after the press: a later run (a Check, say) leaves the page where it is.
    if request := st.session_state.pop(SCROLL_UP, None):
        scroll_to("quiz_nav", request)  # the new question's row of Previous and Next
else:
    for q in questions:
        with st.container(border=True), guard(f"Question {q.id}"):
            show_question(q, ctx, numbers[q.id])
st.session_state[CHECKED] = None  # said once, on the run after the Check, or not at all

show_more(rows)  # under the question: over it, it kept Q1's text below a phone's fold
show_progress_io()
show_answer_key(cfg)
