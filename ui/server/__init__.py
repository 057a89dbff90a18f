"""The server side of a session: the error guard, the warm-up, long-lived objects, Streamlit internals."""
