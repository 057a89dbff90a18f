"""The sidebar: its config widgets (config), the parts' fold (parts) and the page navigation."""
