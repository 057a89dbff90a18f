"""Quiz: questions whose answers are computed from the live model for the sidebar's config.

Reads the shared config, asks the quizzes package for questions and expected answers and
quizzes.experiments (cached in ui/quiz/state.py) for the evidence, and shows that evidence as
render/evidence.py draws it. Progress is a JSON-able dict in st.session_state, mirrored into the
learner's browser (ui/quiz/sync.py, ui/components/browser_store.py) so that a closed tab or a server
restart does not lose it; it can also be exported and imported. This script draws; its session
keys and callbacks are in ui/quiz/state.py. No tensor maths here.
"""

from __future__ import annotations

import re
from typing import Any

import pandas as pd
import streamlit as st

from core import TransformerConfig
from quizzes import KIND_LABELS, TOPICS, Context, Question, answer_key, check
from quizzes.bank import (KEY_COLUMNS, applying_text, key_csv, key_file_name, key_rows, other_parts_text,
                          questions_for)
from quizzes.check import MAX_INPUT, in_symbols, parse_shape, shown_formula
from quizzes.experiments import Evidence
from quizzes.progress import dumps, scores
from render.evidence import (ASKED, RECORD_PHONE_CSS, charts, literal_frame, marked_table, name_from_key, table_height,
                             value_text)
from render.markdown import as_literal
from render.tables import sizes_text
from render.words import counted
from ui.components.enter_checks import enter_checks
from ui.components.expander_closed import on_expander_closed
from ui.components.scroll_to import scroll_to
from ui.link.choices import MAX_SEED, ONE, SET
from ui.link.config import CONFIG_FIELDS
from ui.look.charts import drawn_at_this_link, show_chart
from ui.look.layout import announce
from ui.look.theme import theme
from ui.quiz.state import (ALL, answer_key_open, apply_import, ask_reset, cached_evidence, checks_answered, context,
                           current_seed, end_review_without_linked_question, go_to_next_scrolled_up, go_to_question,
                           import_note, import_pasted, just_checked, keep_answers, messages, new_review, new_shuffle,
                           new_topic, new_upload, ordered, position, progress, progress_io_toggled, quiz_config,
                           reopen_progress_io, reset, still_asking, storage_blocked, submit, take_announcement,
                           take_empty_answer, take_scroll, take_unreadable_answer, went_round)
from ui.quiz.sync import keep_in_browser, take_browser_report
from ui.sections.your_text import sizes_set_words
from ui.server.guard import guard
from ui.server.streamlit_internals import leave_legacy_pages_mode
from ui.sidebar.config import forget_link_warnings

leave_legacy_pages_mode()  # before anything is drawn: see ui/server/streamlit_internals.py

SHAPE_HINT = "e.g. (2, 8, 16), 2x8x16, [2,8,16] or (N, M, E)"
UNREADABLE = {  # what to write instead, for a reply that cannot be read as an answer of that kind
    # Examples in backticks: as plain Markdown, the stars of 4*E**2 + 4*E would turn to italics.
    "shape": "Could not read that as a shape. Write its sizes as numbers, e.g. `(2, 8, 16)` or `2 x 8 x 16`, or "
             "in the config's symbols, e.g. `(N, M, E)`, `N x M x E` or `(N, nhead, M, E/nhead)`.",
    "numeric": "Could not read that as a number. Write a number, e.g. `1088`, `1,088` or `1.088e3`, or arithmetic "
               "in numbers and the config's symbols, e.g. `4*E**2 + 4*E` or `4E^2 + 4E`.",
    "choice": "Pick one of the choices.",
    "predict": "Pick one of the choices.",
}
TOPIC_PX = 280  # the topic's box: its longest name whole, in one row with Mode and Review on a laptop
NAV_BUTTON_PX = 104  # Previous and Next, one width: wide enough for "◀ Previous", narrow enough for a phone's row
# How to read an evidence chart whose title alone does not say: the influence maps are the first
# evidence the quiz shows (its first five questions), and their 'lower' and 'full' need saying.
READING = {
    "dependency_maps": (
        "How to read the maps: row i is output position i and column j is input position j. A square is "
        "coloured when nudging input j moved output i (the darker, the further), and white when it did not "
        "move at all. 'lower' in the table means only squares on and below the diagonal are coloured: each "
        "output depends on its own input and earlier ones. 'full' means every output depends on every input."),
}




# --- rendering ------------------------------------------------------------------------------------

def show_evidence(ev: Evidence, asked: str | None = None) -> None:
    """The evidence for one question: its values, then its chart or table. ``asked`` is the row
    (a core.rows key) the question asks about, marked in a table that lists it."""
    st.markdown(f"**Live evidence: {ev.title}**")
    numbers = [{"measured": ev.labels.get(k) or name_from_key(k), "value": value_text(v)} for k, v in ev.values.items()
               if not isinstance(v, (list, tuple)) or len(v) <= 16]
    if numbers:
        # A static table whose cells wrap and read whole (docs/layout.md); Markdown, hence escaped.
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
        # A static table whose cells wrap; every row in view when one is marked, so it never hides below a scroll.
        st.table(table, hide_index=True, height="content" if row is not None else table_height(len(ev.records)))
    if ev.name in READING:
        st.caption(READING[ev.name])
    if ev.note:
        st.caption(ev.note)


def as_typed(text: str) -> str:
    """A typed answer, quoted as code so that Markdown leaves it alone (the stars of `3*E*(E+1)` would read as
    italics). The fence is one backtick longer than any run of backticks inside, so even those show."""
    text = " ".join(str(text).split())  # from an imported file it may hold a blank line, which ends the span
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""  # Markdown's rule for a span that starts with one
    return f"{fence}{pad}{text}{pad}{fence}"


def show_question(q: Question, ctx: Context, number: str) -> None:
    # An h2 per question, under the page's h1: a screen reader's list of headings walks a topic set by it.
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
        # Hand a kept draft back explicitly: a box shown again during a fast Previous can come back empty.
        st.session_state[key] = st.session_state[key]
    if q.kind in ("choice", "predict"):
        label = "Your prediction" if q.kind == "predict" else "Your answer"
        # The question's number in every label, so that a screen reader's list of a topic set's
        # controls tells them apart.
        st.radio(f"{label} to {number}", q.choices, index=None, key=key, persist_state="session")
    else:
        hint = SHAPE_HINT if q.kind == "shape" else ("in millions" if q.unit == "millions" else "a number")
        # No max_chars: Streamlit's box drops a longer change whole, without a word. A long answer is
        # told how long it is instead (below).
        st.text_input(f"Your answer to {number}", key=key, persist_state="session", placeholder=hint)
    st.button("Commit my prediction and run" if q.kind == "predict" else "Check", key=f"submit_{q.id}",
              on_click=submit, args=(q.id,), type="primary")
    if take_empty_answer(q.id):
        st.warning("Type or pick an answer first: the box is empty. The result below is from your last check."
                   if q.id in progress()["answers"] else "Type or pick an answer first.")
    if take_unreadable_answer(q.id):
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
    # choice is a sentence, set apart by quotation marks; escaped, since an imported file's text is anyone's.
    sentence = q.kind in ("choice", "predict")
    given = f"“{as_literal(attempt['given'])}”" if sentence else as_typed(attempt["given"])
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
                st.caption(f"Your shape has {counted(len(ours), 'axis', 'axes')} and the expected one has "
                           f"{len(theirs)}: compare them axis by axis, from the left.")
        if symbolic and formula and check(q, q.expected(ctx), attempt["given"], q.reading_symbols(ctx)):
            # The right numbers from the wrong symbols (quizzes.check.same_formula): said, or it looks right.
            value = "numbers" if q.kind == "shape" else "number"
            st.warning(f"Your symbols give the right {value} at this config, but not the formula {formula}: two "
                       "symbols can have the same value here (by default M_target = M) and still stand for different "
                       "sizes. Move one of them in the sidebar to see the difference.")
    if just_checked(q.id) and attempt["correct"]:
        # st.success is a status a screen reader leaves unread: a right answer is announced, once.
        announce(f"{number}: right. The explanation and the live evidence follow.", q.id)
    then = attempt.get("config") or {}
    changed = [k for k in CONFIG_FIELDS if k in then and then[k] != getattr(ctx.cfg, k)]
    answered = shown_formula(answered_formula(q, ctx, then) if changed else formula, attempt["expected"])
    # A chosen sentence in plain type, anything else quoted by as_typed: an imported file's text is anyone's.
    shown = as_literal(attempt["expected"]) if sentence else (
        as_typed(attempt["expected"]) + (f", that is {as_typed(answered)}" if answered else ""))
    st.markdown(f"Expected, for the config you answered with: {shown}" if q.parametric else f"Expected: {shown}")
    if changed:
        st.caption("You answered with " + ", ".join(f"{k}={as_literal(str(then[k]))}" for k in changed)
                   + "; the evidence below is for the sidebar's config now. Check again to re-answer.")
    st.markdown(q.explanation)
    with guard(f"The {q.evidence.replace('_', ' ')} experiment"):
        with st.container(key=f"evidence_{q.id}"):  # keyed: RECORD_PHONE_CSS finds its tables by it
            show_evidence(cached_evidence(q.evidence, ctx.cfg), q.row)


def answered_formula(q: Question, ctx: Context, then: dict[str, Any]) -> str | None:
    """The answer's formula at the config an attempt was made with (``then``, from its record), which
    a number's formula can depend on: a learned positional table has max_len*E parameters, sinusoids
    none. None when that config no longer reads (an old or hand-edited progress file)."""
    try:
        return q.formula(ctx, TransformerConfig.from_dict(then))
    except (TypeError, ValueError):
        return None


def show_scores(cfg: TransformerConfig) -> list[dict]:
    """The score line over the questions about the sidebar's model, and how many of the bank's those are;
    returns the per-topic scores it sums, for show_more's table. Answers to another family's questions are
    kept, and count again when the sidebar shows that family."""
    applying = {q.id for q in questions_for(None, cfg)}
    done = progress()
    rows = scores(done, applying)
    right = sum(r["right"] for r in rows)
    wrong = sum(r["wrong"] for r in rows)
    total = sum(r["questions"] for r in rows)
    kept = sum(qid not in applying for qid in done["answers"])
    kept_text = (f" Your {counted(kept, 'answer')} to questions about other models {'is' if kept == 1 else 'are'} "
                 "kept, and count again when the sidebar shows such a model." if kept else "")
    # Each family is asked about its own model only: no cross-attention for GPT, no KV cache for the paper's.
    st.markdown(f"Score: **{right} right**, **{wrong} wrong**, {total - right - wrong} not tried yet, counting only "
                f"the questions about this model: {applying_text(cfg)}{kept_text}", help=other_parts_text(cfg) or None)
    return rows


def show_more(rows: list[dict]) -> None:
    """The controls a learner reaches for now and then, in one expander under the question (or a topic set's
    questions): the shuffle seed, Reset progress and the score per topic (``rows``, from show_scores); the page
    reads the seed earlier (current_seed). Closed until opened; keyed but not tracked, so a new seed in its label
    does not close it (docs/layout.md)."""
    seed = current_seed()
    shuffled = f" · shuffled, seed {seed}" if seed else ""
    asking = still_asking()
    with st.expander(f"Shuffle, reset and score per topic{shuffled}", key="quiz_more", icon=":material/tune:"):
        # The controls first, where the expander opens, not a scroll away under the table.
        with st.container(horizontal=True, vertical_alignment="bottom"):
            st.number_input(f"Shuffle seed (0 to {MAX_SEED:,})", min_value=0, max_value=MAX_SEED, step=1,
                            on_change=new_shuffle, key="quiz_seed", persist_state="session", width=200,
                            help="0 keeps the bank's order; any other number shuffles it reproducibly.")
            st.button("Reset progress", key="quiz_ask_reset", on_click=ask_reset)
        if asking:
            # Asked twice, in the page (a popover's buttons come last in the keyboard's order), as an alert.
            st.warning("Forget every answer, here and in the copy this browser keeps? Export them first to keep a "
                       "copy.")
            with st.container(horizontal=True):
                st.button("Yes, forget my answers", key="quiz_reset", on_click=reset, type="primary")
                st.button("Keep them", key="quiz_keep", on_click=keep_answers)
            # Closing the expander is a no too (still_asking), but it starts no run by itself: the page is
            # told (ui.components.expander_closed). In the sidebar, like the store, so that it takes no room here.
            with st.sidebar:
                on_expander_closed("quiz_more", keep_answers, key="quiz_more_closed")
        if not storage_blocked():  # when it is, the page says so at the top, in full
            st.caption(":material/save: Your answers are kept in this browser, so they outlast a closed tab or a "
                       "server restart. *Reset progress* forgets them; *Save or restore progress*, just below, "
                       "exports them to move to another browser.")
        st.dataframe(pd.DataFrame([r for r in rows if r["questions"]]), hide_index=True, width="stretch")


def show_progress_io() -> None:
    reopen_progress_io()  # before the expander is drawn: after it, Streamlit refuses the change
    # Keyed and tracking its state (on_change), so that the app, not the browser, says whether it is open.
    with st.expander("Save or restore progress", key="quiz_io", on_change=progress_io_toggled):
        # A download changes nothing here, so it starts no run ("ignore"): its run withdrew Reset's question,
        # which asks to export first.
        st.download_button("Export progress (JSON)", data=dumps(progress()), file_name="quiz-progress.json",
                           mime="application/json", key="quiz_export", on_click="ignore")
        upload = st.file_uploader("Import progress (JSON)", type=["json"], key="quiz_upload")
        if upload is not None and new_upload(upload.file_id):
            apply_import(upload.getvalue())
            st.rerun()
        st.text_area("…or paste a progress file", key="quiz_paste", persist_state="session", height=80,
                     max_chars=1_000_000)
        st.button("Load pasted progress", key="quiz_paste_load", on_click=import_pasted)
        if note := import_note():
            kind, text = note
            with st.container(key="quiz_io_note"):
                getattr(st, kind)(text)
                if request := take_scroll("import"):  # only on the run after the import
                    scroll_to("quiz_io_note", request, block="nearest")  # the drop zone above stays in view


@st.cache_data(max_entries=32, show_spinner="Computing every answer…")
def answer_key_for(cfg, text=None) -> tuple[list[dict[str, str]], str]:
    """The answer key at one config, as table rows and as CSV; its experiments are the page's own,
    shared with every session (cached_evidence)."""
    key = answer_key(cfg, context(cfg, text))
    return key_rows(key), key_csv(key)


def show_answer_key(cfg) -> None:
    """Every question's answer at the sidebar's config, for a teacher preparing a class. Computed only
    while open (a keyed expander, like the progress one), since it runs every experiment."""
    with st.expander("Answer key, for teachers", key="quiz_key_open", on_change="rerun"):
        if not answer_key_open():
            return
        # The sizes in words: on a projector the sidebar is often closed, and a screenshot of the key must
        # still say which sizes its numbers hold for.
        st.caption(f"Spoilers: every question's expected answer, and its formula in symbols where it has one, at "
                   f"{sizes_text(cfg)}. Parametric answers hold at these sizes only; the file's name says them too. "
                   f"Q is the number the quiz shows over a question with {ALL} and shuffle seed 0; Q in topic, "
                   "with its topic chosen. A shuffle seed, or a review of what was missed, renumbers them. A "
                   "link opens the quiz on one by its Q, `?q=42`, or by its Q in topic, `?topic=masking&q=1`.")
        with guard("The answer key"):
            rows, csv_text = answer_key_for(cfg, text)
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


cfg, text = quiz_config()
take_browser_report()
keep_in_browser()
with st.sidebar:
    enter_checks()  # Enter in an answer checks it; in the sidebar, like the store, so it takes no room
st.html(RECORD_PHONE_CSS)  # a style alone: Streamlit adds it to the page without drawing anything
# Every size the answers turn on, short: a class checks its sliders against it, and the first question stays high.
st.caption(f"Shapes, numbers and predictions follow the live model at the sidebar's sizes, {sizes_text(cfg)}."
           + (f" {sizes_set_words(cfg.M_target is not None)} come from your text." if text is not None else ""))
if storage_blocked():  # when it can keep them, show_more says so, under Reset
    st.info("This browser does not let the app keep your progress (its storage is blocked), so it lives in this "
            "session only: a closed tab or a server restart loses anything you have not exported under *Save or "
            "restore progress*.", icon=":material/save:")

# One container drawn on every run, empty or not, so a message never moves the buttons below it mid-run.
with st.container(key="quiz_messages"):
    if said := take_announcement():
        announce(said, "quiz")
    for kind, text in messages():  # all of them, until the learner acts (see flash)
        getattr(st, kind)(text)
    if request := take_scroll("messages"):
        scroll_to("quiz_messages", request)  # only on the run right after the reset

rows = show_scores(cfg)
seed = current_seed()
# What to be asked and how, in one row that wraps (docs/layout.md); the sidebar keeps these in the link.
controls = st.container(horizontal=True, wrap=True, vertical_alignment="bottom", key="quiz_controls")
mode = controls.radio("Mode", [ONE, SET], key="quiz_mode", persist_state="session", horizontal=True,
                      on_change=forget_link_warnings,
                      help=f"A topic set shows every question of the chosen topic on one page (with {ALL}, all "
                           f"{len(questions_for(None, cfg))} that apply to this model); one at a time steps through "
                           "them with Previous and Next.")
topic = controls.selectbox("Topic", [ALL, *TOPICS], key="quiz_topic", persist_state="session", on_change=new_topic,
                           width=TOPIC_PX)
end_review_without_linked_question(topic, seed, cfg)  # a link's q= shows its question
review = controls.toggle("Review what I missed", key="quiz_review", persist_state="session",
                         help="Only the questions whose latest answer was wrong. Answer one right and it leaves "
                              "the list once the review ends.",
                         on_change=new_review)

ctx = context(cfg, text)
questions = ordered(topic, seed, review, cfg)
# A question keeps its number in a review, so that "Q3" names one question inside the review and out.
numbers = {q.id: f"Q{i}" for i, q in enumerate(ordered(topic, seed, False, cfg), start=1)}
if not questions:
    st.info("Nothing to review: no question's latest answer is wrong." if review else
            f"None of this topic's questions is about this {cfg.arch} model with its parts: choose another topic, "
            "or another family or parts in the sidebar's Architecture group.")
elif mode == ONE:
    pos = position(questions, (topic, seed, review))
    last = len(questions) - 1
    # Past either end, Previous and Next go round; the question they lead to says so (below the row).
    went_round_to_last = "That was the first question: Previous went round to the last." if last else None
    went_round_to_first = "That was the last question: Next went round to the first." if last else None
    # Previous, the count, Next: one row edge to edge that never wraps (docs/layout.md).
    with st.container(horizontal=True, wrap=False, gap="xsmall", horizontal_alignment="distribute",
                      vertical_alignment="center", key="quiz_nav"):
        st.button("◀ Previous", key="quiz_prev", on_click=go_to_question,
                  args=(questions[pos - 1].id, went_round_to_last if pos == 0 else None), width=NAV_BUTTON_PX)
        st.markdown(f"Question {pos + 1} of {len(questions)}", width="stretch", text_alignment="center")
        st.button("Next ▶", key="quiz_next", on_click=go_to_question,
                  args=(questions[(pos + 1) % len(questions)].id, went_round_to_first if pos == last else None),
                  width=NAV_BUTTON_PX)
    wrapped = went_round()
    if wrapped and wrapped[0] == questions[pos].id and pos in (0, last):
        st.caption(wrapped[1])
    with guard("This question"):
        show_question(questions[pos], ctx, numbers[questions[pos].id])
    if len(questions) > 1 and questions[pos].id in progress()["answers"]:
        # Under an answered question too: its evidence is a screen or two long, and Next above it would
        # end every question in a scroll back up.
        st.button("Next question ▶", key="quiz_next_below", on_click=go_to_next_scrolled_up,
                  args=(questions[(pos + 1) % len(questions)].id, went_round_to_first if pos == last else None))
    # Only on the run right after the press: a later run (a Check, say) leaves the page where it is.
    if request := take_scroll("question"):
        scroll_to("quiz_nav", request)  # the new question's row of Previous and Next
else:
    for q in questions:
        with st.container(border=True), guard(f"Question {q.id}"):
            show_question(q, ctx, numbers[q.id])
checks_answered()  # said once, on the run after the Check, or not at all

show_more(rows)  # under the question: over it, it kept Q1's text below a phone's fold
show_progress_io()
show_answer_key(cfg)
