"""Transformer Shape Explorer: the entry script.

Streamlit runs this file on every interaction. It sets the page up, draws the page's heading and the shared
sidebar (so every page sees one config) and hands over to the selected page.
"""

import os

import streamlit as st

from core.views import limit_torch_threads
from ui.components.scroll_keys import scroll_keys
from ui.components.theme_watch import watch_theme
from ui.look.css import theme_css
from ui.look.layout import with_wrapper
from ui.look.theme import said_theme
from ui.server.long_lived import freeze_long_lived
from ui.server.streamlit_internals import CLOSE_FULLSCREEN, by_test_id
from ui.server.warm_up import warm_shapes_in_background
from ui.sidebar.config import give_to_page, sidebar_config
from ui.sidebar.navigation import draw_navigation

# Small passes run fastest on one thread (see limit_torch_threads); TSE_TORCH_THREADS overrides.
_threads = os.environ.get("TSE_TORCH_THREADS", "1")
limit_torch_threads(int(_threads) if _threads.isdigit() else 1)

# The tab's icon, drawn here: three stacked squares, a tensor's layers. A ":material/...:" icon
# would make every visitor's browser fetch it from fonts.gstatic.com (and fail offline).
ICON = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
        '<rect x="11" y="2" width="19" height="19" rx="3" fill="#9ab8f0"/>'
        '<rect x="6.5" y="6.5" width="19" height="19" rx="3" fill="#5b8ae0"/>'
        '<rect x="2" y="11" width="19" height="19" rx="3" fill="#2d5bb8"/></svg>')
APP_TITLE = "Transformer Shape Explorer"
st.set_page_config(page_title=APP_TITLE, page_icon=ICON, layout="wide")

# A hidden second entry answers at /explorer, the address a learner guesses from /attention: Streamlit
# serves the default page at the root only.
PAGES = [
    st.Page("pages/explorer.py", title="Explorer", icon=":material/table_view:", default=True, url_path="home"),
    st.Page("pages/explorer.py", title="Explorer", icon=":material/table_view:", url_path="explorer",
            visibility="hidden"),
    st.Page("pages/attention.py", title="Attention", icon=":material/grid_on:", url_path="attention"),
    st.Page("pages/positional.py", title="Positional encoding", icon=":material/waves:", url_path="positional"),
    st.Page("pages/quiz.py", title="Quiz", icon=":material/quiz:", url_path="quiz"),
    st.Page("pages/training_lab.py", title="Training lab", icon=":material/science:", url_path="training_lab"),
    st.Page("pages/decoding.py", title="Decoding", icon=":material/account_tree:", url_path="decoding"),
    st.Page("pages/cost.py", title="Cost", icon=":material/calculate:", url_path="cost"),
    st.Page("pages/compare.py", title="Compare", icon=":material/compare_arrows:", url_path="compare"),
]
SHOWN_PAGES = [PAGES[0], *PAGES[2:]]  # the /explorer alias is not listed twice
# Each page's heading by its url_path ("" the default page), drawn here before the sidebar: a page switch shows
# at once where the learner has gone, while the sidebar and the page are still on their way.
HEADINGS = {"": "Transformer Shape Explorer", "explorer": "Transformer Shape Explorer", "attention": "Attention",
            "positional": "Positional encoding", "quiz": "Quiz", "training_lab": "Training lab", "decoding": "Decoding",
            "cost": "What this model costs", "compare": "Two models side by side"}

# Charts scroll sideways rather than shrink (a canvas resized by CSS misplaces its tooltips); in fullscreen,
# whose frame has no key but its test id, an SVG chart is scaled to fit the window whole.
FULLSCREEN_FIT = (f"{by_test_id('stFullScreenFrame')}:has({CLOSE_FULLSCREEN}) .vega-embed > svg.marks "
                  "{ max-width: 100%; max-height: calc(100vh - 5rem); width: auto; height: auto; }")
st.html(f"<style>.vega-embed {{ max-width: 100%; overflow-x: auto; }} {FULLSCREEN_FIT}</style>")
st.html(theme_css(said_theme()))  # colours by theme that the config cannot set: code's, and some words'
# The app draws its own navigation (ui/sidebar/navigation.py), whose links carry the config.
page = st.navigation(PAGES, position="hidden")
navigation = st.sidebar.container(key="page_nav")  # first in the sidebar, filled once the config is known
# The page's own name leads the tab's title: a screen reader announces it on arriving, and the tab and the
# browser's history tell the pages apart by it. (Imported without a server, the page has no title.)
title = getattr(page, "title", None)
st.set_page_config(page_title=f"{title} · {APP_TITLE}" if title else APP_TITLE)
if getattr(page, "url_path", None) in HEADINGS:
    st.title(HEADINGS[page.url_path])
# The one config of this run, worked out before the page runs; the page reads it with ui.sidebar.config.this_run().
run = sidebar_config(getattr(page, "url_path", ""))
give_to_page(run)
draw_navigation(navigation, SHOWN_PAGES, run)
page.run()
# Last in the sidebar, and hidden: these components draw nothing, and hidden (with the wrapper Streamlit
# puts round their box) they leave no gap at the sidebar's foot, yet still run.
with st.sidebar.container(key="page_helpers"):
    st.html(f"<style>{with_wrapper('.st-key-page_helpers')} {{ display: none; }}</style>")
    watch_theme()  # a switch of theme starts a run: the charts' ink follows it
    scroll_keys()  # a map or code box that scrolls sideways takes the focus, so the keyboard scrolls it
# After the first page is drawn, so that its table does not wait: PyTorch's one-time cost of a shape-only pass.
warm_shapes_in_background()
# What the imports made lives as long as the server: spare it Streamlit's collection after every run.
freeze_long_lived()
