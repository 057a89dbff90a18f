"""The few colours a chart draws straight onto the page, by the page's theme ("light" or "dark")."""

# No one grey or red reads at WCAG's 4.5:1 on both white and the dark page, and Vega's default, black,
# vanishes on the latter: so words, dashed rules and a masked cell ("blocked", a shape: 3:1 will do) take
# their theme's ink. "ground" is the page itself (.streamlit/config.toml): a halo of it round words a curve
# may cross keeps them readable. tests/ui/test_theme_css.py holds each to its contrast.
INK = {
    "light": {"label": "#6b6b6b", "alert": "#c8102e", "blocked": "#444444", "ground": "#ffffff"},
    "dark": {"label": "#a3a3a3", "alert": "#ff6b7f", "blocked": "#6e7480", "ground": "#14161c"},
}
