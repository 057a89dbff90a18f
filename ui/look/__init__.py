"""How pages look: the theme, the CSS written for it, layout helpers, and charts shown in the theme."""
