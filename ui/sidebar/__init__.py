"""The sidebar: its config widgets (config), the newer parts' controls (parts) and the page navigation."""
