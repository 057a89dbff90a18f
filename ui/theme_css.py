"""What the theme's config cannot say: colours by theme, given as CSS on every run (streamlit_app.py).

Streamlit tells the server the browser's theme with each run (ui.theme.theme), and a switch of theme
starts one (ui/components/theme_watch.py), so these follow a switch as the charts' ink does (render.palette.INK).

Code. Streamlit colours code with one palette for both themes, chosen for the dark one. On the light
theme's code box (#f8f9fc) its grey, which it gives to comments and punctuation, stood 3.53:1, and
its blue keywords 3.71:1, its numbers 2.56:1, its strings 2.89:1, its operators 2.90:1 (measured in
Chromium, WCAG's formula): under the 4.5:1 that WCAG asks of text, for the very comments, "# (N, L,
E) -> (N, nhead, L, d_k)", that say what every line does to a shape. On the dark theme its keywords
stood 4.26:1 and its comments 4.48:1. Each theme here has its own palette, every colour at least
5:1 on that theme's code box (tests/app/test_theme_ink.py), with the hues Streamlit gives each kind
of token.

Inline code inside a caption (``layers``, ``enc.0.self_attn.q``) is drawn at the caption's 60 %
opacity, so its green faded to 2.99:1 on the light theme and 4.27:1 on the dark. Only the caption's
own near-black reaches 4.5:1 once faded (4.6:1), so there it takes the caption's colour; the font and
the grey chip still mark it as code.

Words in the primary colour. The dark theme's primary blue fills the primary buttons under white text,
and writes the main area's slider values and its selected tab's name on the page: no one blue reads at
4.5:1 in both places (it would need a luminance of at most 0.183 under white and at least 0.211 on
#14161c). axe-core measured #4c6ef5 at 4.32:1 under white (Check, Train) and 4.18:1 on the page (the
lab's sliders and tabs). The config's dark primary is now #4567ee, 4.74:1 under white and 3.81:1 on
the page, which is enough for what it draws there that is not text (a slider's track, a radio's dot:
3:1); the words it would write on the page take PRIMARY_WORDS instead, the lighter blue the dark
sidebar already has for its own slider values.
"""

from __future__ import annotations

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

# Each colour against its theme's codeBackgroundColor (.streamlit/config.toml): light on #f8f9fc, dark on
# #1c1e26. Light: 5.76, 6.08, 5.54, 5.30, 5.62, 5.21, 5.99, 5.87 and 5.59 to 1, in TOKEN_GROUPS' order;
# dark: 6.76, 8.49, 7.48, 7.57, 8.01, 6.65, 6.60, 6.27 and 6.07.
CODE_INK = {
    "light": {"muted": "#5d6273", "light_blue": "#0a6591", "green": "#18743a", "teal": "#08756a",
              "string": "#16733a", "orange": "#b04a05", "purple": "#7b3fc2", "blue": "#1560b8", "red": "#c8102e"},
    "dark": {"muted": "#a0a5b5", "light_blue": "#6ec3f0", "green": "#4cc472", "teal": "#43c2ae",
             "string": "#5cc97e", "orange": "#f08a3c", "purple": "#b592f0", "blue": "#5aa2f5", "red": "#ff6b7f"},
}

# A code box's tokens sit in its <pre>: one element more than Streamlit's own rule names, so these win
# whichever style sheet comes later.
_BOX = '[data-testid="stCode"] pre'


# The words the primary colour writes on the page, by theme, where it is not dark enough under white text and
# light enough on the page at once (None: the primary itself does both). #748ffc: 6.09:1 on #14161c.
PRIMARY_WORDS = {"light": None, "dark": "#748ffc"}
# Where Streamlit writes words in the primary colour on the main area (found in Chromium by colour, on every
# page): a slider's value over its thumb, and the selected or hovered tab's name.
_PRIMARY_WORDS_AT = ('[data-testid="stMain"] [data-testid="stSliderThumbValue"] p',
                     '[data-testid="stMain"] [data-testid="stTab"]:is([aria-selected="true"], :hover) p')


def theme_css(theme: str | None) -> str:
    """A <style> for ``theme`` ("light" or "dark"): code boxes' tokens in its palette, a caption's inline code
    in the caption's own colour, and the main area's words in the primary colour in PRIMARY_WORDS.

    ``None``, when the server does not know the theme yet (a session's first run can end before the
    browser has said): the light rules, and the dark ones under the browser's own ``prefers-color-scheme:
    dark``, which is what the app follows until a learner picks a theme in its menu. A dark system's
    slider values and code were drawn in the light theme's colours until the next run. The reverse now
    happens instead, for that first run only, to a learner who picked Light in the menu on a dark system:
    the dark rules on the light page (comments #a0a5b5 on the light code box, about 2.4:1)."""
    if theme is None:
        return f"<style>{_rules('light')} @media (prefers-color-scheme: dark) {{ {_rules('dark')} }}</style>"
    return f"<style>{_rules(theme)}</style>"


def _rules(theme: str) -> str:
    ink = CODE_INK[theme]
    rules = [", ".join(f"{_BOX} .token.{token}" for token in tokens) + f" {{ color: {ink[group]}; }}"
             for group, tokens in TOKEN_GROUPS.items()]
    rules.append('[data-testid="stCaptionContainer"] code { color: inherit; }')
    if PRIMARY_WORDS[theme]:
        rules.append(f"{', '.join(_PRIMARY_WORDS_AT)} {{ color: {PRIMARY_WORDS[theme]}; }}")
    return " ".join(rules)
