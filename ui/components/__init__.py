"""JavaScript components that take no room: each does one thing in the page's own document."""
