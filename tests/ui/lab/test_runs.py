"""A training run's thread (ui/lab/runs.py) and the process around it."""

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

# A real training run started on its thread, then the process ends at once, mid-run.
TRAIN_AND_EXIT = """
import threading
from core.train import ReversalSettings, train_reversal
from ui.lab.runs import LabRun
run = LabRun(train_reversal, ReversalSettings(steps=100_000), max_seconds=120, slot=threading.BoundedSemaphore(1))
run.start()
while run.last is None:
    run.wait(0.05)
print("training")
"""


def test_a_process_that_ends_mid_run_exits_cleanly_after_one_step():
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-c", TRAIN_AND_EXIT], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Fatal Python error" not in out.stderr and "terminate called" not in out.stderr, out.stderr[-3000:]
    assert out.stdout.strip() == "training"
    assert time.monotonic() - start < 100  # stopped at its next step, not at its time limit

