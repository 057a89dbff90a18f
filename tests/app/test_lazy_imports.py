"""Only the training lab makes the server import torch._dynamo (about a second and 70 MiB)."""

from tests.fresh_python import fresh_python

CODE = """
import sys
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest
from ui.pages_dir import without_pages_dir

PagesManager.__init__ = without_pages_dir(PagesManager.__init__)  # the entry script runs on every rerun
at = AppTest.from_file("streamlit_app.py", default_timeout=120).run()
for page in ("pages/explorer.py", "pages/attention.py", "pages/positional.py", "pages/quiz.py"):
    at.switch_page(page).run()
    at.sidebar.selectbox(key="w_preset").set_value(next(o for o in at.sidebar.selectbox(key="w_preset").options
                                                        if o.startswith("GPT-3"))).run()
    assert not at.exception, at.exception
before = "torch._dynamo" in sys.modules
at.switch_page("pages/training_lab.py").run()
from core.train import warm_up_in_background
warm_up_in_background().join(120)
print(before, "torch._dynamo" in sys.modules)
"""


def test_pages_other_than_the_training_lab_never_import_torch_dynamo():
    assert fresh_python(CODE) == "False True"
