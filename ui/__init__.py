"""Streamlit-aware helpers the pages share, grouped by job.

- ``ui.sidebar``: the sidebar's widgets, the config a run hands to the page, and the page navigation.
- ``ui.link``: what a URL asks for and the URL that reproduces a run (no Streamlit there).
- ``ui.compute``: calls into core, cached for the server's sessions.
- ``ui.sections``: parts of a page that more than one page draws (the text box, the values, experts, the KV cache).
- ``ui.quiz``: the quiz's session state behind one facade, and its copy in the browser.
- ``ui.lab``: the Training lab's runs in their threads, and their marks in the browser.
- ``ui.look``: theme, CSS, layout and charts.
- ``ui.server``: error guard, warm-up, long-lived objects, and the one module that touches Streamlit internals.
- ``ui.components``: small custom components (a few lines of JavaScript each).
"""
