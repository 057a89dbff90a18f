"""The "Your text" box: a learner's own sentence as the batch of the pass, on the Explorer and the Attention page.

Data flows one way: the box's text (kept in session state, and in the link when short) -> core.tokens'
tokenizer -> the sidebar, before it draws, reads the sizes the text sets (text_sizes) and works out the run's
config with ``core.tokens.text_config`` -> the page traces that config, and the value views trace it again with
the text's own ids (``core.trace(cfg, text=...)``). The page draws the box (text_box).
Nothing the learner types is rendered as markup: messages quote it through ``render.markdown.as_literal``,
and tables and charts show it as text.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core import TransformerConfig
from core.tokens import MAX_LINES, MAX_TOKENS, TokenizedText, text_config, tokenize
from core.train import TrainedModel
from render.markdown import as_literal
from render.values import token_frame, vocab_frame
from render.words import counted
from ui.lab.runs import TRAINED_KEY
from ui.link import TEXT_NAMES, TEXT_PAGES

TEXT_KEY, LEVEL_KEY, TARGET_KEY = "yt_text", "yt_level", "yt_target"
LABEL = "Your text (optional): run it through the model"
TARGET_LABEL = "Target text (optional): what the decoder should read, shifted right"
LEVELS = {"words": "word", "characters": "char"}  # the choice as the page words it -> core.tokens' level
MAX_LINK_CHARS = 200  # a longer text makes a link too long to paste into a chat or a slide
LINK_NAMES = dict(zip(TEXT_NAMES, (TEXT_KEY, LEVEL_KEY, TARGET_KEY)))  # link name -> session key
PAGES = TEXT_PAGES  # the pages that draw the box


@dataclass(frozen=True)
class YourText:
    """The learner's text, tokenized, and the config whose sizes it sets."""

    text: str
    level: str  # "word" or "char"
    target: str | None
    tokens: TokenizedText
    cfg: TransformerConfig


def _state_text(key: str) -> str:
    value = st.session_state.get(key)
    return value if isinstance(value, str) else ""


def _level() -> str:
    return LEVELS.get(st.session_state.get(LEVEL_KEY, "words"), "word")


@st.cache_data(max_entries=32, show_spinner=False)
def _tokenize(text: str, level: str, target: str | None) -> TokenizedText:
    return tokenize(text, level, target)


def current_text(cfg: TransformerConfig) -> tuple[YourText | None, str | None]:
    """The text in the box (drawn later on the page, so read from session state) and the config it sets;
    or None and a message for the learner when the box holds no tokens. Never raises."""
    text = _state_text(TEXT_KEY)
    if not text:
        return None, None
    target = _state_text(TARGET_KEY) if cfg.arch == "encoder-decoder" else ""
    try:
        tokens = _tokenize(text, _level(), target or None)
        return YourText(text, _level(), target or None, tokens, text_config(cfg, tokens)), None
    except ValueError as exc:
        return None, str(exc)


_LINK_READ = "yt_link_read"


def seed_from_link(page: str) -> None:
    """On a session's first run, the text a link to a page with the box carries (text=, tokens=, target=) goes into
    the box. Another page's link leaves it out, as its warning says: there tokens= may be the page's own."""
    if st.session_state.get(_LINK_READ):
        return
    st.session_state[_LINK_READ] = True
    if page not in PAGES:
        return
    for name, key in LINK_NAMES.items():
        value = st.query_params.get(name)
        if value is None or key in st.session_state:
            continue
        if key == LEVEL_KEY:
            value = next((label for label, level in LEVELS.items() if value in (label, level)), None)
            if value is None:
                continue
        st.session_state[key] = value


def text_link_values(page: str) -> dict[str, str]:
    """The text's part of the page's link (text=, tokens=, target=), for the sidebar's one write of the link per
    run: only a text of at most MAX_LINK_CHARS characters goes in (st.query_params URL-encodes it). Before the
    page has read a link's text (a session's first run), what the link carries is kept for it to read."""
    if page not in PAGES:
        return {}
    if not st.session_state.get(_LINK_READ):
        return {name: st.query_params[name] for name in LINK_NAMES if name in st.query_params}
    text, target = _state_text(TEXT_KEY), _state_text(TARGET_KEY)
    if not text or len(text) + len(target) > MAX_LINK_CHARS:
        return {}
    level = st.session_state.get(LEVEL_KEY, "words")
    return {"text": text, "tokens": LEVELS.get(level, "word")} | ({"target": target} if target else {})


MODEL_KEY = "yt_model"
UNTRAINED_CHOICE, TRAINED_CHOICE = "untrained (random weights)", "trained in the Training lab"


def trained_model() -> TrainedModel | None:
    """The Training lab's model, when this session has one and the learner switched to it."""
    trained = st.session_state.get(TRAINED_KEY)
    if not isinstance(trained, TrainedModel) or st.session_state.get(MODEL_KEY) != TRAINED_CHOICE:
        return None
    return trained


def leave_trained() -> None:
    """The sidebar's give-back button: the page runs the sliders' model again, not the trained one."""
    st.session_state[MODEL_KEY] = UNTRAINED_CHOICE


def clear_text() -> None:
    """The sidebar's give-back button: the box (and the target box) empty, the sliders set N, M and vocab_size."""
    st.session_state[TEXT_KEY] = ""
    st.session_state[TARGET_KEY] = ""


def text_sizes(arch: str, page: str) -> dict[str, int]:
    """The sizes the box's text sets (N, M, vocab_size, and M_target for the encoder-decoder), read before the
    sidebar draws its sliders for ``page`` (its url_path); {} while the box holds no tokens."""
    seed_from_link(page)
    mine, _ = current_text(TransformerConfig(arch=arch))
    if mine is None:
        return {}
    return {name: getattr(mine.cfg, name) for name in ("N", "M", "M_target", "vocab_size")
            if getattr(mine.cfg, name) is not None}


def sizes_set_words(target: bool) -> str:
    """The sizes a text sets, in words: N, M and vocab_size, with M_target when ``target`` (the encoder-decoder)."""
    return f"{'N, M, M_target' if target else 'N, M'} and vocab_size"


def text_box(cfg: TransformerConfig, mine: YourText | None, problem: str | None) -> YourText | None:
    """Draw the box, the tokenizer choice (and, for the encoder-decoder, a target box), and what became of the
    run's text ``mine`` (or why it was not used): its tokens with their ids, the sizes it sets, a cut, whether
    it fits in a link. Returns the text."""
    with st.container(border=True, key="your_text"):
        if isinstance(st.session_state.get(TRAINED_KEY), TrainedModel):
            st.radio("Model", [UNTRAINED_CHOICE, TRAINED_CHOICE], key=MODEL_KEY, horizontal=True,
                     persist_state="session",
                     help="The reversal model you trained in the Training lab, kept for this session only: its "
                          "pass reads a sequence of its task, [BOS, x, reverse(x)].")
        trained = trained_model()
        if trained is not None:
            ids = trained.batch.source[0]
            st.caption(f"The trained model ({as_literal(trained.weights)}) reads a sequence of its task: "
                       + " ".join(trained.batch.labels[i] for i in ids)
                       + ". Its symbols are its vocabulary, so your text is not used while it is on.")
            return None
        left, right = st.columns([4, 1])
        left.text_area(LABEL, key=TEXT_KEY, height=80, persist_state="session",
                       placeholder="the cat sat on the mat",
                       help=f"Each line is one sequence (N = lines, at most {MAX_LINES}), each cut at {MAX_TOKENS} "
                            "tokens. Its tokens become row 1 and its vocabulary sets vocab_size; id 0 is the "
                            "start token. Leave it empty for seeded random ids.")
        right.radio("Tokens", list(LEVELS), key=LEVEL_KEY, persist_state="session",
                    help="words: re.split(r'\\b', text), spaces and punctuation kept as tokens; characters: "
                         "list(text)")
        if cfg.arch == "encoder-decoder":
            st.text_input(TARGET_LABEL, key=TARGET_KEY, persist_state="session",
                          help="Left empty, the decoder reads your text itself, shifted right behind the start "
                               "token.")
        if problem is not None:
            st.warning(f"Your text was not used: {as_literal(problem)}.", icon=":material/edit_off:")
            return None
        if mine is None:
            return None
        _describe(mine)
        return mine


def _describe(mine: YourText) -> None:
    tok, cfg = mine.tokens, mine.cfg
    level = "word" if mine.level == "word" else "character"
    st.caption(f"{counted(cfg.N, 'sequence')} of up to M = {counted(cfg.M, level + ' token')}; "
               f"vocab_size = {cfg.vocab_size} ({counted(len(tok.vocab), 'distinct token')} and the start token, "
               f"id 0). Row 1 is ({cfg.N}, {cfg.M}).")
    if tok.cut:
        st.warning(f"Your text is longer than the model reads: each line is cut at {MAX_TOKENS} tokens, and "
                   f"only the first {MAX_LINES} lines are used.", icon=":material/content_cut:")
    chars = len(mine.text) + len(mine.target or "")
    if chars > MAX_LINK_CHARS:
        st.caption(f":material/link_off: This text is {chars:,} characters long, so it cannot be shared by link "
                   f"(at most {MAX_LINK_CHARS}); the link carries the sidebar's slider sizes, not your text's.")
    with st.expander("Your tokens and their ids"):
        first = tok.source[0]
        st.dataframe(token_frame(list(first), tok.ids(first)), hide_index=True, key="yt_tokens")
        st.caption("The vocabulary: the text's distinct tokens, sorted, numbered from 1; 0 is the start token.")
        st.dataframe(vocab_frame([tok.token(0), *tok.vocab]), hide_index=True, key="yt_vocab")
    if cfg.N > 1:
        st.caption(f"Each line is one sequence; the table shows sequence 0. Shorter lines are padded to M = {cfg.M}, "
                   "and the key padding mask hides the padding from every query.")
