"""The quiz's session state behind one facade (state), and its copy in the browser's storage (sync)."""
