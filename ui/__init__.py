"""Streamlit-aware helpers the pages share: sidebar and URL state, cached traces, theme, quiz session, lab runs."""
