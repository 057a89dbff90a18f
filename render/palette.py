"""The few colours a chart draws straight onto the page, by the page's theme ("light" or "dark")."""

# No one ink reads at WCAG's contrast on both themes' pages, so each theme has its own; "ground" is the page,
# for a halo round words a curve may cross. tests/ui/look/test_css.py holds each to its contrast.

INK = {
    "light": {"label": "#6b6b6b", "alert": "#c8102e", "blocked": "#444444", "ground": "#ffffff"},
    "dark": {"label": "#a3a3a3", "alert": "#ff6b7f", "blocked": "#6e7480", "ground": "#14161c"},
}
