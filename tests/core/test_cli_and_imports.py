"""The CLI and the package boundary, as a user meets them: in a fresh process."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_cli_prints_the_table():
    out = run("-m", "core", "--N", "2", "--M", "8", "--E", "16", "--nhead", "2", "--vocab-size", "100")
    assert out.returncode == 0, out.stderr
    assert "output probabilities" in out.stdout and "(2, 8, 100)" in out.stdout


def test_cli_json_has_the_documented_keys():
    out = run("-m", "core", "--N", "2", "--M", "8", "--E", "16", "--nhead", "2", "--vocab-size", "100",
              "--M-target", "6", "--layers", "2", "--json")
    data = json.loads(out.stdout)
    assert {"config", "shape_only", "rows", "extras", "params"} <= set(data)
    assert [r["index"] for r in data["rows"]] == list(range(1, 15))
    assert data["rows"][13]["shape"] == [2, 6, 100]
    assert {"index", "name", "shape", "formula"} <= set(data["rows"][0])


@pytest.mark.parametrize("args, words", [
    (["--E", "10", "--nhead", "4"], "nhead=4 must divide E=10"),
    (["--N", "abc"], "--N"),
    (["--N", "-3"], "N=-3"),
    (["--bogus"], "unrecognized"),
])
def test_cli_bad_arguments_exit_2_with_one_line(args, words):
    out = run("-m", "core", *args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], out.stderr
    assert "Traceback" not in out.stderr


def test_gpt3_sizes_trace_shape_only_without_real_allocation():
    code = (
        "import resource, core\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "t = core.trace(core.config.GPT3_SIZES)\n"
        "after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(t.shape_only, t.row('output_probabilities').shape, after - before)\n"
    )
    out = run("-c", code)
    shape_only, *_, grown_kib = out.stdout.split()
    assert shape_only == "True"
    assert "(64, 2048, 50257)" in out.stdout
    assert int(grown_kib) < 200 * 1024  # a real pass would need tens of TiB


def test_import_core_does_not_import_streamlit_or_altair():
    out = run("-c", "import sys, core, core.trace, core.model; "
                    "print(any(m.split('.')[0] in ('streamlit', 'altair') for m in sys.modules))")
    assert out.stdout.strip() == "False"
