"""What the theme's config cannot say: colours by theme, given as CSS on every run (streamlit_app.py).

Streamlit tells the server the browser's theme with each run (ui.look.theme.theme), and a switch of theme starts
one (ui/components/theme_watch.py), so these follow a switch as the charts' ink does (render.palette.INK).

- Code: Streamlit colours code with one palette, chosen for the dark theme, whose comments (the shape
  comments a learner reads) fall under WCAG's 4.5:1 on the light code box. Each theme gets its own palette
  here, in Streamlit's hues (tests/ui/look/test_css.py holds every colour to its contrast).
- Inline code in a caption is faded with the caption, so it takes the caption's own colour.
- The dark primary blue cannot read at 4.5:1 both under white text and on the page, so the words it writes
  on the page (a lab slider's value, the selected tab) take the lighter blue of PRIMARY_WORDS.
"""

from __future__ import annotations

from ui.server.streamlit_internals import by_test_id

# Prism's token classes, grouped as Streamlit's own syntax theme groups them (its CSS, in the frontend's
# StreamlitSyntaxHighlighter), each group under the name of the colour it takes.
TOKEN_GROUPS = {
    "muted": ("comment", "prolog", "doctype", "cdata", "punctuation", "unchanged.line"),
    "light_blue": ("attr-name", "property", "variable"),
    "green": ("boolean", "constant", "symbol", "inserted.line", "inserted.prefix"),
    "teal": ("number", "regex"),
    "string": ("string", "char", "attr-value"),
    "orange": ("operator", "entity", "decorator", "atrule"),
    "purple": ("url",),
    "blue": ("keyword", "tag", "function", "class-name", "selector"),
    "red": ("important", "deleted.line", "deleted.prefix"),
}

# Each colour reads at 4.5:1 or more on its theme's codeBackgroundColor (tests/ui/look/test_css.py measures it).
CODE_INK = {
    "light": {"muted": "#5d6273", "light_blue": "#0a6591", "green": "#18743a", "teal": "#08756a",
              "string": "#16733a", "orange": "#b04a05", "purple": "#7b3fc2", "blue": "#1560b8", "red": "#c8102e"},
    "dark": {"muted": "#a0a5b5", "light_blue": "#6ec3f0", "green": "#4cc472", "teal": "#43c2ae",
             "string": "#5cc97e", "orange": "#f08a3c", "purple": "#b592f0", "blue": "#5aa2f5", "red": "#ff6b7f"},
}

# The highlighted code boxes sit in containers keyed "code_..." (pages/explorer.py); their tokens sit in
# the <pre>, one element more than Streamlit's own rule names, so these win whichever sheet comes later.
_BOX = '[class*="st-key-code_"] pre'


# The words the primary colour writes on the page, by theme, where it is not dark enough under white text and
# light enough on the page at once (None: the primary itself does both).
PRIMARY_WORDS = {"light": None, "dark": "#748ffc"}
# Where Streamlit writes words in the primary colour on the main area: the lab's slider values (no hook but
# their test id) and the selected or hovered tab's name.
_PRIMARY_WORDS_AT = (f'[class*="st-key-tl_"] {by_test_id("stSliderThumbValue")} p',
                     ':is(.st-key-x_tabs, .st-key-p_tab, .st-key-tl_task) [role="tab"]:is([aria-selected="true"], :hover) p')


def theme_css(theme: str | None) -> str:
    """A <style> for ``theme`` ("light" or "dark"): code boxes' tokens in its palette, a caption's inline code in
    the caption's own colour, and the main area's words in the primary colour in PRIMARY_WORDS. ``None``, while the
    server does not know the theme (a session's first run): the light rules, and the dark ones under the browser's
    ``prefers-color-scheme: dark`` (docs/layout.md)."""
    if theme is None:
        return f"<style>{_rules('light')} @media (prefers-color-scheme: dark) {{ {_rules('dark')} }}</style>"
    return f"<style>{_rules(theme)}</style>"


def _rules(theme: str) -> str:
    ink = CODE_INK[theme]
    rules = [", ".join(f"{_BOX} .token.{token}" for token in tokens) + f" {{ color: {ink[group]}; }}"
             for group, tokens in TOKEN_GROUPS.items()]
    # Every caption of every page: no key reaches them all, so Streamlit's test id for a caption it is.
    rules.append(f"{by_test_id('stCaptionContainer')} code {{ color: inherit; }}")
    if PRIMARY_WORDS[theme]:
        rules.append(f"{', '.join(_PRIMARY_WORDS_AT)} {{ color: {PRIMARY_WORDS[theme]}; }}")
    return " ".join(rules)
