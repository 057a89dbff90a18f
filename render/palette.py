"""The few colours a chart draws straight onto the page, by the page's theme ("light" or "dark")."""

# What a chart draws straight onto the page (words, dashed rules, a masked cell), by the page's theme
# (ui.theme.theme): no one grey or red reads at 4.5:1 on both white and the dark theme's #14161c,
# and Vega's default, black, vanishes on the latter. Words: "label" is 5.33:1 on white and 7.17:1 on
# #14161c, "alert" 5.88:1 and 6.60:1. "blocked" fills a masked cell, a shape, for which 3:1 will do:
# against the page and against the visible cells' light blue, #6e7480 is 3.85:1 and 3.51:1. "ground"
# is the page itself (.streamlit/config.toml's backgroundColor): a halo of it round words a curve may
# cross keeps them readable.
INK = {
    "light": {"label": "#6b6b6b", "alert": "#c8102e", "blocked": "#444444", "ground": "#ffffff"},
    "dark": {"label": "#a3a3a3", "alert": "#ff6b7f", "blocked": "#6e7480", "ground": "#14161c"},
}
