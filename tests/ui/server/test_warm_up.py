"""The server's background shape warm-up: it leaves a process free to end cleanly while it still runs."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

# The app run once in AppTest, as a test file or a notebook does, then the process ends at once: the
# warm-up the run started is then still inside PyTorch.
RUN_AND_EXIT = """
import threading
from streamlit.testing.v1 import AppTest
at = AppTest.from_file("streamlit_app.py", default_timeout=120).run()
assert not at.exception, at.exception
print([t.is_alive() for t in threading.enumerate() if t.name == "shape-warm-up"])
"""


def test_a_process_that_ran_the_app_in_apptest_exits_cleanly():
    out = subprocess.run([sys.executable, "-c", RUN_AND_EXIT], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Fatal Python error" not in out.stderr and "terminate called" not in out.stderr, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "[True]"  # the exit came while the warm-up ran
