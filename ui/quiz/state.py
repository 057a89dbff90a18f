"""The quiz's state: its session keys, the learner's progress, and the callbacks that change them.

A page script cannot be imported (importing it would draw the page), so what the quiz page and its
helpers share lives here: the keys of st.session_state, the progress and its messages, and every
callback of the page's buttons and choices. Callbacks run before the page, so the score at the top
of a run is already up to date. The page (pages/quiz.py) draws; the browser's copy of the progress
is kept in step by ui/quiz/sync.py.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from core import TransformerConfig
from core.tokens import MAX_LINES, MAX_TOKENS, TokenizedText, text_config
from quizzes import BY_ID, Context, Question, format_answer
from quizzes.check import mark, readable
import quizzes.experiments as experiments
from quizzes.experiments import TAKES_SHAPES, Evidence
from quizzes.progress import counted, load_progress, missed, new_progress, now_ms, record, restamped
from quizzes.recheck import file_config, recheck
from quizzes.topics.your_text import EXAMPLE
from render.markdown import as_literal
from ui.compute.traces import cached_shape_only, cached_shapes
from ui.link.choices import ALL_TOPICS, HIDDEN, LINKED, quiz_order
from ui.link.config import on_sliders
from ui.sidebar.config import forget_link_warnings, this_run

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


@st.cache_data(max_entries=128, show_spinner="Running the experiment…")
def cached_evidence(name: str, cfg) -> Evidence:
    """One experiment per (name, config), shared by every session (each gets a copy). The shape experiments share
    one shape-only trace of the config (quizzes.experiments.TAKES_SHAPES) rather than each tracing it again: a deep
    model's trace is slow."""
    return experiments.run(name, cfg, cached_shape_only(cfg) if name in TAKES_SHAPES else None)


def quiz_config() -> tuple[TransformerConfig, TokenizedText | None]:
    """The model the quiz asks about, the run's (sized by the learner's text when the box holds one, so the
    answers are those of the pass the learner just read), and that text's tokens."""
    run = this_run()
    return run.cfg, run.tokens


def context(cfg, text: TokenizedText | None = None) -> Context:
    return Context(cfg, trace=cached_shapes(cfg), runner=cached_evidence, text=text)


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
        cfg, text = quiz_config()
        ctx = context(cfg, text)
        if not readable(q, given, q.reading_symbols(ctx)):
            # Not marked wrong: a typo must not replace the last attempt. Shown under the question.
            st.session_state["quiz_unreadable"] = qid
            return
        right, expected = mark(q, ctx, given)
        st.session_state[PROGRESS] = record(progress(), qid, str(given), right, format_answer(q, expected),
                                            cfg.to_dict(), text=text)
        if right and st.session_state.get("quiz_review"):
            st.session_state[RIGHTED] = st.session_state.get(RIGHTED, frozenset()) | {qid}
        st.session_state[CHECKED] = qid
        clear_messages()
    except Exception as exc:  # noqa: BLE001 - a failing experiment must not take the page down
        flash("error", f"Could not compute the expected answer: {exc}", fresh=True)


def flash(kind: str, text: str, *, fresh: bool = False) -> None:
    """Queue a message (st.info, st.success, ...) for the top of the page; it stays until the learner's next
    action, and ``fresh`` starts the queue afresh. A queue, not one slot: a reset or an import and another tab's
    save can land in the same run (docs/quiz.md)."""
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
    # The message is at the top, out of sight from Reset on a phone: the next run scrolls to it.
    st.session_state[SCROLL_MESSAGES] = next_scroll()


def ask_reset() -> None:
    """Reset progress asks first, or stops asking (a second press)."""
    st.session_state[ASK_RESET] = not st.session_state.get(ASK_RESET, False)


def keep_answers() -> None:
    """The page stops asking whether to forget every answer: "Keep them", or the expander closed."""
    st.session_state[ASK_RESET] = False


def still_asking() -> bool:
    """Whether this run asks to forget every answer: the question lasts until the learner's next action, and
    anything but "Yes" or "Keep them" is a no; runs the browser starts (BROWSER_SPOKE) and opening or closing "Save
    or restore progress" leave it waiting (docs/quiz.md). Read before the button is drawn: its value is True on the
    run its press started."""
    toggled = st.session_state.pop(IO_TOGGLED, False)
    if (st.session_state.get(ASK_RESET) and not st.session_state.get("quiz_ask_reset")
            and not st.session_state.get(BROWSER_SPOKE) and not toggled):
        st.session_state[ASK_RESET] = False
    return bool(st.session_state.get(ASK_RESET))


def _into_review() -> None:
    """While reviewing, put the quiz on a question of the review's list: the one in view if the list has it, else
    the list's first. Called by the callbacks that change the list, so the link the sidebar writes names the
    question shown (docs/quiz.md)."""
    if st.session_state.get("quiz_review"):
        ids = [q.id for q in ordered(st.session_state.get("quiz_topic", ALL), st.session_state.get("quiz_seed", 0),
                                     True, this_run().cfg)]
        if ids and st.session_state.get(AT) not in ids:
            st.session_state[AT] = ids[0]


def new_shuffle() -> None:
    """A new shuffle starts at its first question: it asks for a new order from the top, and would
    otherwise only renumber the question in view. Decided here, before the run, so that the link the
    sidebar writes (ui.link.choices: seed= and q=) already names that question."""
    st.session_state.pop(AT, None)  # the sidebar then puts the quiz on the new order's first
    st.session_state[HIDDEN] = None
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
    st.session_state[HIDDEN] = None
    _into_review()
    forget_link_warnings()


def go_to_question(qid: str, wrapped: str | None = None) -> None:
    """Go to question ``qid``, named rather than a step, so a click Streamlit replays into a later run lands on the
    same question. ``wrapped`` holds the words said when the click went round the end of the list."""
    st.session_state[AT] = qid
    st.session_state[HIDDEN] = None  # the learner moved on: a question hidden before stays behind
    clear_messages()
    if wrapped:
        st.session_state[WRAPPED] = (qid, wrapped)
    forget_link_warnings()


def go_to_next_scrolled_up(qid: str, wrapped: str | None = None) -> None:
    """The Next under an answer's evidence: the next question, scrolled into view (ui.components.scroll_to). When
    it is answered too, as every question of a review is, the page stayed at the foot of its evidence."""
    go_to_question(qid, wrapped)
    st.session_state[SCROLL_UP] = next_scroll()


def next_scroll() -> int:
    """A new number for a scroll request (ui.components.scroll_to mounts each under a key of its own)."""
    st.session_state[SCROLLS] = st.session_state.get(SCROLLS, 0) + 1
    return st.session_state[SCROLLS]


def position(questions: list[Question], listed: tuple) -> int:
    """Where one-at-a-time mode stands in ``questions``, made by ``listed`` (topic, seed, review): on the question
    it showed last when the list still has it, else at the new list's first. A new shuffle starts at its first
    (new_shuffle), and a link's q= sets the question before this (ui.link.choices)."""
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
    """Replace the progress with an uploaded or pasted file, or explain why not (keeping the current one). The
    result is said under the import, and the expander is kept open to show it."""
    clear_messages()
    st.session_state[IO_REOPEN] = True
    # The result sits below the drop zone, often below the window's foot: the next run scrolls to it.
    st.session_state[SCROLL_IO_NOTE] = next_scroll()
    loaded, message = load_progress(data)
    if loaded is None:
        # The message quotes the file (its version, say): escaped, so '[x](https://…)' in it is no link.
        st.session_state[IO_NOTE] = ("error", f"Import refused, your current progress is kept. {as_literal(message)}")
        return
    # Marked again, not taken at the file's word: an edited file must not turn a wrong answer right.
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
    """The config an imported answer names, if the sidebar could have shown it; None otherwise: checking off the
    sliders can cost far more than any slider does. Sizes a text sets (core.tokens.text_config) need only be within
    what a text can set."""
    cfg = file_config(entry)
    if cfg is None:
        return None
    if on_sliders(cfg):
        return cfg
    return cfg if text_sized(cfg) and on_sliders(text_config(cfg, EXAMPLE)) else None


def text_sized(cfg: TransformerConfig) -> bool:
    """Whether a text could have set the config's sizes: at most MAX_LINES lines of at most MAX_TOKENS tokens, in
    the text and in its target, and no more distinct tokens than those hold, with the start token."""
    return (cfg.N <= MAX_LINES and cfg.M <= MAX_TOKENS and (cfg.M_target or 0) <= MAX_TOKENS
            and cfg.vocab_size <= 2 * MAX_LINES * MAX_TOKENS + 1)


def import_pasted() -> None:
    apply_import(st.session_state.get("quiz_paste", ""))


def ordered(topic: str, seed: int, review: bool, cfg: TransformerConfig | None = None) -> list[Question]:
    """The questions of a topic that apply to the model of ``cfg`` (the sidebar's by default), in the seed's order,
    picked out of the whole bank's shuffle so a seed orders every family alike. In review, those whose latest
    answer is wrong, and those answered right during this review, so their "Right." stays in view."""
    cfg = this_run().cfg if cfg is None else cfg
    qs = quiz_order(topic, seed, cfg)
    if review:
        wrong = set(missed(progress())) | st.session_state.get(RIGHTED, frozenset())
        qs = [q for q in qs if q.id in wrong]
    return qs


# The page's view of the quiz's session: pages/quiz.py asks these, and no session key leaves this module.

def just_checked(qid: str) -> bool:
    """Whether this run answers the Check of question ``qid`` (a right answer is read out once)."""
    return st.session_state.get(CHECKED) == qid


def checks_answered() -> None:
    """The run has said what the Check asked for: the next run says nothing more of it."""
    st.session_state[CHECKED] = None


def take_empty_answer(qid: str) -> bool:
    """Whether question ``qid`` was checked with an empty box, said once."""
    return _take_if("quiz_empty", qid)


def take_unreadable_answer(qid: str) -> bool:
    """Whether question ``qid`` was checked with an answer that could not be read, said once."""
    return _take_if("quiz_unreadable", qid)


def _take_if(key: str, qid: str) -> bool:
    if st.session_state.get(key) != qid:
        return False
    st.session_state[key] = None
    return True


def storage_blocked() -> bool:
    """Whether the browser said it cannot keep the progress (False until it has said anything)."""
    return st.session_state.get(STORED) is False


def take_announcement() -> str | None:
    """What this run reads out once (the answer to a reset or an import), or None."""
    return st.session_state.pop(SAY, None)


def messages() -> list[tuple[str, str]]:
    """The messages for the top of the page, as (kind, text), until the learner acts."""
    return st.session_state.get(FLASH) or []


_SCROLLS = {"messages": SCROLL_MESSAGES, "question": SCROLL_UP, "import": SCROLL_IO_NOTE}


def take_scroll(to: str) -> int | None:
    """The scroll request for ``to`` ("messages", "question" or "import") on the run right after it was asked."""
    return st.session_state.pop(_SCROLLS[to], None)


def went_round() -> tuple[str, str] | None:
    """(question id, words) after Previous or Next went round the end of the list, else None."""
    return st.session_state.get(WRAPPED)


def progress_io_toggled() -> None:
    """"Save or restore progress" opened or closed: this run leaves Reset's question waiting (still_asking)."""
    st.session_state[IO_TOGGLED] = True


def reopen_progress_io() -> None:
    """After an import, its expander opens (stays open); called before the expander is drawn."""
    if st.session_state.pop(IO_REOPEN, False):
        st.session_state[IO] = True


def import_note() -> tuple[str, str] | None:
    """The last import's result, (kind, text), or None."""
    return st.session_state.get(IO_NOTE)


def new_upload(file_id: str) -> bool:
    """Whether this uploaded file is new to the session (each upload is imported once)."""
    if st.session_state.get("quiz_upload_seen") == file_id:
        return False
    st.session_state["quiz_upload_seen"] = file_id
    return True


def answer_key_open() -> bool:
    """Whether the answer key's expander is open (the key is computed only then)."""
    return bool(st.session_state.get(KEY_OPEN))


def current_seed() -> int:
    """The shuffle seed, as its box holds it or a link's seed= set it: the questions, drawn before the box,
    are ordered by it."""
    return int(st.session_state.get("quiz_seed", 0))


def end_review_without_linked_question(topic: str, seed: int, cfg: TransformerConfig) -> None:
    """A link named a question (q=): a review of what this learner missed that does not hold it ends, so that
    the question shows. One that holds it goes on (Back and Forward in a review)."""
    if st.session_state.pop(LINKED, False) and st.session_state.get("quiz_review"):
        if st.session_state.get(AT) not in {q.id for q in ordered(topic, seed, True, cfg)}:
            st.session_state["quiz_review"] = False
