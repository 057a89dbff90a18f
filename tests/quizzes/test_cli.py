"""python -m quizzes: the answer key as JSON, and one-line errors with exit status 2."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from quizzes import QUESTIONS, answer_key
from quizzes.__main__ import main

from .conftest import CONFIG_A

ROOT = Path(__file__).resolve().parents[2]


def test_json_answer_key(capsys):
    assert main(["--N", "2", "--M", "8", "--E", "16", "--nhead", "2", "--vocab-size", "100", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["questions"]) == len(QUESTIONS)
    assert all(set(q) == {"id", "topic", "kind", "prompt", "answer"} for q in doc["questions"])
    expected = {q["id"]: q["answer"] for q in answer_key(CONFIG_A)["questions"]}
    assert {q["id"]: q["answer"] for q in doc["questions"]} == expected
    assert expected["qkv-scores"] == [2, 2, 8, 8]


def test_text_output(capsys):
    assert main(["--E", "8", "--nhead", "4"]) == 0
    assert "dk-value" in capsys.readouterr().out


@pytest.mark.parametrize("args", [["--E", "16", "--nhead", "3"], ["--N", "zero"], ["--bogus"], ["--M", "0"]])
def test_bad_arguments_exit_2_with_one_line(args):
    done = subprocess.run([sys.executable, "-m", "quizzes", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
