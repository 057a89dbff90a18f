"""python -m quizzes: the answer key as JSON, and one-line errors with exit status 2."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core import TransformerConfig
from quizzes import BY_ID, QUESTIONS, Context, answer_key, check, questions_for
from quizzes.__main__ import main

from .conftest import CONFIG_A

ROOT = Path(__file__).resolve().parents[2]


def test_json_answer_key(capsys):
    assert main(["--N", "2", "--M", "8", "--E", "16", "--nhead", "2", "--vocab-size", "100", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [q["id"] for q in doc["questions"]] == [q.id for q in questions_for(None, CONFIG_A)]
    assert all(set(q) == {"id", "topic", "kind", "prompt", "answer", "formula"} for q in doc["questions"])
    expected = {q["id"]: q["answer"] for q in answer_key(CONFIG_A)["questions"]}
    assert {q["id"]: q["answer"] for q in doc["questions"]} == expected
    assert expected["qkv-scores"] == [2, 2, 8, 8]


def test_text_output(capsys):
    assert main(["--E", "8", "--nhead", "4"]) == 0
    assert "dk-value" in capsys.readouterr().out


def test_the_key_gives_each_answer_with_its_formula_at_the_config_asked_for(capsys):
    """A teacher marking by hand needs the formula beside the number: at the default M_target = M,
    (N, M_target, E) has the encoder output's numbers and is still wrong. Tied embeddings and a
    learned table change the total's formula, so the key takes them as flags too."""
    assert main(["--positional", "learned", "--max-len", "20", "--tie-embeddings", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    by_id = {q["id"]: q for q in doc["questions"]}
    assert doc["config"]["max_len"] == 20 and doc["config"]["tie_embeddings"] is True
    assert by_id["shape-memory"]["formula"] == "(N, M, E)" and by_id["dk-why-scale"]["formula"] is None
    assert by_id["pos-params"]["formula"] == "max_len*E" and by_id["pos-params"]["answer"] == 20 * 16
    assert by_id["params-total"]["formula"].startswith("vocab_size*E + max_len*E + ")
    assert main([]) == 0
    text = capsys.readouterr().out
    assert "-> 28   that is M_target*(M_target - 1)/2" in text
    positional = text[text.index("] pos-params "):].split("\n[")[0]
    assert "-> 0\n" in positional + "\n" and "that is" not in positional  # sinusoids' 0: no formula to repeat


@pytest.mark.parametrize("args", [["--E", "16", "--nhead", "3"], ["--N", "zero"], ["--bogus"], ["--M", "0"]])
def test_bad_arguments_exit_2_with_one_line(args):
    done = subprocess.run([sys.executable, "-m", "quizzes", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_key_as_csv_reads_back_and_its_letters_are_the_quizs():
    """The page's download: one row per question, read back by a spreadsheet's CSV reader; each answer
    as written there is marked right by the quiz, a choice's with the letter the quiz takes for it;
    the file name says which config it holds for."""
    import csv
    import io

    from quizzes.bank import KEY_COLUMNS, key_csv, key_file_name
    from quizzes.check import choice_index

    cfg = TransformerConfig(tie_embeddings=True)
    ctx = Context(cfg)
    rows = list(csv.DictReader(io.StringIO(key_csv(answer_key(cfg, ctx)))))
    assert [r["id"] for r in rows] == [q.id for q in questions_for(None, cfg)] and tuple(rows[0]) == KEY_COLUMNS
    for row in rows:
        q = BY_ID[row["id"]]
        if q.choices:
            letter, text = row["answer"].split(") ", 1)
            assert choice_index(letter, q.choices) == q.choices.index(text)
            assert check(q, q.expected(ctx), letter)
        else:
            assert not row["choices"] and check(q, q.expected(ctx), row["answer"])
    assert key_file_name(cfg) == "quiz-answer-key_N2_M8_Mtarget8_E16_nhead2_vocab100_layers2_dff64_sinusoidal8_tied.csv"


def test_the_key_for_a_family_lists_only_its_questions_with_the_live_answers(capsys):
    """python -m quizzes --arch decoder-only --nhead-kv 2 ...: the key of a Llama-like model lists the questions
    about that model only (none on cross-attention or M_target), each with the answer the model gives."""
    flags = ["--arch", "decoder-only", "--nhead", "4", "--nhead-kv", "2", "--positional", "rope", "--norm", "rmsnorm",
             "--activation", "swiglu", "--norm-first", "--no-bias", "--json"]
    assert main(flags) == 0
    doc = json.loads(capsys.readouterr().out)
    cfg = TransformerConfig(arch="decoder-only", nhead=4, nhead_kv=2, positional="rope", norm="rmsnorm",
                            activation="swiglu", norm_first=True, bias=False)
    assert doc["config"] == cfg.to_dict()
    ids = [q["id"] for q in doc["questions"]]
    assert ids == [q.id for q in QUESTIONS if q.applies(cfg)] and len(ids) < len(QUESTIONS)
    assert not {"shape-cross", "shape-target", "mask-blocked", "params-total"} & set(ids)
    by_id = {q["id"]: q for q in doc["questions"]}
    assert by_id["gqa-group"]["answer"] == 2 and by_id["gqa-group"]["formula"] == "nhead/nhead_kv"
    assert by_id["kv-shape"]["answer"] == [2, 2, 2, 2, 8, 4]  # (layers, 2, N, nhead_kv, M, d_k)
    assert by_id["kv-bytes"]["answer"] == 2 * 2 * 2 * 2 * 8 * 4 * 2
    assert by_id["rope-table"]["answer"] == [8, 4] and by_id["swiglu-params"]["answer"] == 3 * 16 * 64
    assert by_id["norm-count"]["answer"] == 2 * 2 + 1 and by_id["norm-count"]["formula"] == "2*layers + 1"
    ctx = Context(cfg)
    for item in doc["questions"]:
        q = BY_ID[item["id"]]
        given = str(tuple(item["answer"])) if q.kind == "shape" else str(item["answer"])
        assert check(q, q.expected(ctx), given), q.id


def test_the_text_key_of_encoder_only_has_no_decoder_question(capsys):
    assert main(["--arch", "encoder-only"]) == 0
    text = capsys.readouterr().out
    assert "] fam-reach-encoder (predict)" in text and "] kv-shape " not in text and "] shape-cross " not in text


@pytest.mark.slow
def test_the_answer_key_at_gpt_2_small_s_sizes(capsys):
    """GPT-2 small's sizes trace shape-only; the text questions' pass runs capped, and the key is whole."""
    assert main(["--arch", "decoder-only", "--N", "1", "--M", "1024", "--E", "768", "--nhead", "12",
                 "--layers", "12", "--d-ff", "3072", "--vocab-size", "50257", "--positional", "learned",
                 "--max-len", "1024", "--activation", "gelu", "--norm-first", "--tie-embeddings", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    by_id = {q["id"]: q for q in doc["questions"]}
    assert by_id["yt-predict-row2"]["answer"] == "the same numbers" and "E ≤ 64" in by_id["yt-predict-row2"]["prompt"]


def test_the_key_takes_the_later_parts_flags(capsys):
    """--n-experts, --window, --head-dim and --qk-norm bring their questions into the key, answered at the config the
    flags make; --attention mla gives latent attention's and the text's, and none of multi-head attention's."""
    args = ["--arch", "decoder-only", "--positional", "rope", "--nhead", "4", "--n-experts", "4", "--top-k", "2",
            "--window", "3", "--json"]
    assert main(args) == 0
    by_id = {q["id"]: q for q in json.loads(capsys.readouterr().out)["questions"]}
    assert by_id["moe-router-shape"]["answer"] == [2, 8, 4] and by_id["moe-router-shape"]["formula"] == "(N, M, n_experts)"
    assert by_id["win-kept"]["answer"] == 3 and "mla-cache-layer" not in by_id
    assert main(["--arch", "decoder-only", "--positional", "rope", "--attention", "mla", "--json"]) == 0
    ids = [q["id"] for q in json.loads(capsys.readouterr().out)["questions"]]
    assert "mla-cache-layer" in ids and all(i.startswith(("mla-", "yt-")) for i in ids)  # and the text's
    assert main(["--arch", "decoder-only", "--positional", "rope", "--nhead", "4", "--head-dim", "6", "--qk-norm",
                 "--json"]) == 0
    by_id = {q["id"]: q for q in json.loads(capsys.readouterr().out)["questions"]}
    assert by_id["hd-concat"]["answer"] == [2, 8, 24] and by_id["qk-params"]["answer"] == 2 * 2 * 6
