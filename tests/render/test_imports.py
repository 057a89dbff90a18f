"""render/ builds plain values (DataFrames, Altair specs, the SVG figure) and imports neither streamlit
nor torch: the flow is widgets -> config -> core -> plain values -> render, and nothing imports upward."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RENDER = sorted(f"render.{p.stem}" for p in (ROOT / "render").glob("*.py") if p.stem != "__init__")

# Imports every render module with streamlit and torch refused, core mounted bare (its __init__ imports
# torch): render may use only core's torch-free modules.
PROBE = """
import importlib, importlib.abc, sys, types
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("streamlit", "torch", "ui", "pages"):
            raise ImportError(f"render imported {name}")
sys.meta_path.insert(0, Refuse())
core = types.ModuleType("core"); core.__path__ = ["core"]; sys.modules["core"] = core
for name in sys.argv[1:]:
    importlib.import_module(name)
print(sorted(m for m in sys.modules if m.split(".")[0] in ("streamlit", "torch", "ui", "pages")))
"""


def test_render_imports_neither_streamlit_nor_torch():
    assert RENDER, "no render modules found"
    done = subprocess.run([sys.executable, "-c", PROBE, *RENDER], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
