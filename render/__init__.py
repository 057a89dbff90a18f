"""Pure builders of what the pages show (DataFrames, Altair specs, the SVG figure): no streamlit, no torch."""
