"""The CLI and the package boundary, as a user meets them: in a fresh process."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

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
    (["--arch", "gpt"], "--arch: invalid choice: 'gpt'"),
    (["--norm", "batchnorm"], "--norm: invalid choice"),
    (["--activation", "tanh"], "--activation: invalid choice"),
    (["--positional", "alibi"], "--positional: invalid choice"),
    (["--nhead-kv", "3", "--nhead", "4"], "nhead_kv=3 must divide nhead=4"),
    (["--nhead-kv", "0"], "nhead_kv=0"),
    (["--positional", "rope", "--E", "6", "--nhead", "2"], "needs an even d_k"),
    (["--arch", "decoder-only", "--M-target", "4"], "M_target=4 is given for arch='decoder-only'"),
    (["--arch", "encoder-only", "--M-target", "4"], "leave M_target out"),
    # Each field within its own limit, the attention map beyond what PyTorch can size: it was a traceback.
    (["--N", "4096", "--M", "1048576", "--E", "65536", "--nhead", "1024"], "M can be at most 741,455"),
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
        "t = core.trace(core.TransformerConfig(N=64, M=2048, E=12288, nhead=96, layers=96, vocab_size=50257))\n"
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


def test_every_config_field_is_a_flag_of_both_commands_in_both_spellings():
    """A learner copies flags from the config's own names (vocab_size, M_target, max_len) or writes
    them with dashes; both commands take every field either way, and one not given keeps the
    config's default."""
    from dataclasses import fields

    from core import TransformerConfig
    from core.__main__ import build_parser as core_parser
    from core.cli import config_from
    from quizzes.__main__ import build_parser as quiz_parser

    expected = TransformerConfig(N=3, M=5, E=12, nhead=6, vocab_size=50, M_target=6, layers=1, d_ff=20,
                                 positional="rope", max_len=9, tie_embeddings=True, seed=7, norm_first=True,
                                 norm="rmsnorm", activation="swiglu", nhead_kv=2, bias=False)
    underscores = ["--N", "3", "--M", "5", "--E", "12", "--nhead", "6", "--vocab_size", "50", "--M_target", "6",
                   "--layers", "1", "--d_ff", "20", "--positional", "rope", "--max_len", "9",
                   "--tie_embeddings", "--seed", "7", "--arch", "encoder-decoder", "--norm_first",
                   "--norm", "rmsnorm", "--activation", "swiglu", "--nhead_kv", "2", "--no-bias"]
    # Multi-head latent attention's fields go with a decoder-only RoPE model of their own.
    latent = TransformerConfig(arch="decoder-only", positional="rope", attention="mla", kv_lora_rank=7, q_lora_rank=3,
                               rope_head_dim=2, nope_head_dim=5, v_head_dim=6)
    latent_args = ["--attention", "mla", "--kv_lora_rank", "7", "--q_lora_rank", "3", "--rope_head_dim", "2",
                   "--nope_head_dim", "5", "--v_head_dim", "6"]
    dashes = [arg.replace("_", "-") if arg.startswith("--") else arg for arg in underscores]
    # The mixture of experts and the window need a decoder-only model: a second command line gives them.
    parts = TransformerConfig(arch="decoder-only", layers=2, n_experts=4, top_k=3, n_shared_experts=1, d_ff_expert=6,
                              first_dense_layers=1, norm_topk=False, head_dim=4, qk_norm=True, window=3, global_every=2)
    part_underscores = ["--arch", "decoder-only", "--layers", "2", "--n_experts", "4", "--top_k", "3",
                        "--n_shared_experts", "1", "--d_ff_expert", "6", "--first_dense_layers", "1", "--no-norm_topk",
                        "--head_dim", "4", "--qk_norm", "--window", "3", "--global_every", "2"]
    named = {a.lstrip("-").removeprefix("no-") for a in underscores + part_underscores + latent_args
             if a.startswith("--")}
    assert named == {f.name for f in fields(TransformerConfig)}  # every field
    for parser in (core_parser(), quiz_parser()):
        assert config_from(parser.parse_args(underscores)) == expected
        assert config_from(parser.parse_args(dashes)) == expected
        assert config_from(parser.parse_args(part_underscores)) == parts
        assert config_from(parser.parse_args([a.replace("_", "-") for a in part_underscores])) == parts
        assert config_from(parser.parse_args([])) == TransformerConfig()
        latent_given = ["--arch", "decoder-only", "--positional", "rope"] + latent_args
        assert config_from(parser.parse_args(latent_given)) == latent
        assert config_from(parser.parse_args([a.replace("_", "-") for a in latent_given])) == latent


@pytest.mark.parametrize("command", ["core", "quizzes"])
def test_a_learned_table_too_short_for_the_sequences_is_one_line_not_a_traceback(command):
    """The config allows max_len < M (the explorer's charts sweep M past it), but no pass can run then:
    the model's own message says why, as one line with status 2."""
    out = run("-m", command, "--positional", "learned", "--max-len", "3", "--M", "8")
    assert out.returncode == 2 and out.stdout == "", out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and f"python -m {command}: error: sequence length 8" in lines[0], out.stderr


def test_the_shape_only_note_says_why_the_pass_had_no_values():
    asked = run("-m", "core", "--shape-only")
    assert "shape-only pass on the meta device, as --shape-only asked" in asked.stdout, asked.stderr
    assert "over the memory budget" not in asked.stdout
    big = run("-m", "core", "--N", "64", "--M", "2048", "--E", "12288", "--nhead", "96", "--layers", "96")
    assert "shape-only pass on the meta device: a real one would need about " in big.stdout, big.stderr
    assert "over the memory budget of 256.0 MiB" in big.stdout


@pytest.mark.parametrize("args", [["core", "--json"], ["quizzes"], ["quizzes", "--json"]])
def test_a_reader_that_stops_early_gets_no_traceback(args):
    """`python -m core --json | head` closes the pipe after a few lines. The command then stops
    quietly (status 1) instead of printing BrokenPipeError's traceback. The pipe is shrunk to one
    page so that the output (12 KB and more) cannot all be written before the reader has gone."""
    import fcntl
    import os

    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    with subprocess.Popen([sys.executable, "-m", *args], cwd=ROOT, stdout=write_end,
                          stderr=subprocess.PIPE, text=True) as proc:
        os.close(write_end)
        first = os.read(read_end, 100)
        os.close(read_end)
        stderr = proc.stderr.read()
        status = proc.wait(timeout=120)
    assert first  # the command did start writing
    assert stderr == "" and status == 1, stderr


def test_import_core_has_no_side_effects():
    """No environment variable set, no thread started: the app may import core anywhere, in any order."""
    code = ("import os, threading; before = dict(os.environ); "
            "import core, core.trace, core.slim, core.views, core.shapes, core.train; "
            "print(dict(os.environ) == before, threading.active_count())")
    out = run("-c", code)
    assert out.stdout.split() == ["True", "1"], out.stderr


def test_warm_up_is_a_tiny_meta_pass_that_leaves_no_thread():
    out = run("-c", "import threading, core.shapes; core.shapes.warm_up(); print(threading.active_count())")
    assert out.stdout.strip() == "1", out.stderr


def test_the_on_off_flags_take_both_forms():
    from core import TransformerConfig
    from core.__main__ import build_parser as core_parser
    from core.cli import config_from
    from quizzes.__main__ import build_parser as quiz_parser

    for parser in (core_parser(), quiz_parser()):
        on = config_from(parser.parse_args(["--tie-embeddings", "--norm-first", "--bias"]))
        off = config_from(parser.parse_args(["--no-tie-embeddings", "--no-norm-first", "--no-bias"]))
        assert (on.tie_embeddings, on.norm_first, on.bias) == (True, True, True)
        assert (off.tie_embeddings, off.norm_first, off.bias) == (False, False, False)
        assert config_from(parser.parse_args(["--no-tie-embeddings"])) == TransformerConfig()


def test_a_decoder_only_model_prints_its_table_in_a_terminal():
    out = run("-m", "core", "--arch", "decoder-only", "--positional", "rope", "--nhead-kv", "1", "--norm", "rmsnorm",
              "--activation", "swiglu", "--norm-first", "--no-bias")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("arch=decoder-only N=2 M=8 E=16 nhead=2 nhead_kv=1 d_k=8")
    assert "RoPE's rotation table" in out.stdout and "(8, 8)" in out.stdout and "final norm's output" in out.stdout


def test_cli_traces_a_text_and_prints_its_ids_and_vocabulary():
    out = run("-m", "core", "--text", "the cat sat on the mat", "--tokenizer", "word", "--json", "--E", "8")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["config"]["vocab_size"] == 7 and data["config"]["M"] == 11 and data["config"]["E"] == 8
    assert data["rows"][0]["values"] == [[6, 1, 2, 1, 5, 1, 4, 1, 6, 1, 3]]
    assert data["rows"][0]["shape"] == [1, 11] and data["rows"][13]["shape"] == [1, 11, 7]
    assert data["tokens"] == [["the", " ", "cat", " ", "sat", " ", "on", " ", "the", " ", "mat"]]
    assert "values" not in data["rows"][1] and data["weights"].startswith("untrained")


def test_cli_values_carry_every_small_tensor_and_equal_a_python_trace():
    from core import TransformerConfig
    from core.tokens import text_config, tokenize
    from core.trace import trace

    out = run("-m", "core", "--text", "abcab\nba", "--tokenizer", "char", "--target-text", "xyz\nzy", "--json",
              "--values", "--E", "8", "--layers", "1")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    text = tokenize("abcab\nba", "char", target_text="xyz\nzy")
    t = trace(text_config(TransformerConfig(E=8, layers=1), text), text=text)
    for row in data["rows"] + data["extras"]:
        assert ("values" in row) == (row["numel"] <= 4096)
        live = t.value(row["key"])
        expected = torch.tensor(masked_as_inf(row["values"]), dtype=live.dtype)
        torch.testing.assert_close(expected, live)
    assert data["config"]["M_target"] == 3 and data["target_tokens"][0] == ["<start>", "x", "y"]


def masked_as_inf(values):
    """JSON's null back to the -inf of a masked score."""
    return [masked_as_inf(v) for v in values] if isinstance(values, list) else float("-inf") if values is None \
        else values


@pytest.mark.parametrize("args, words", [
    (["--text", ""], "the text has no tokens"),
    (["--text", "\n\n"], "the text has no tokens"),
    (["--text", "hi", "--M", "4"], "--M cannot go with --text"),
    (["--text", "hi", "--vocab-size", "40", "--N", "3"], "--N, --vocab-size cannot go with --text"),
    (["--text", "hi", "--target-text", "yo", "--arch", "decoder-only"], "--target-text is for the encoder-decoder"),
    (["--target-text", "yo"], "--target-text needs --text"),
    (["--text", "hi", "--tokenizer", "bytes"], "--tokenizer: invalid choice"),
])
def test_cli_bad_text_exits_2_with_one_line(args, words):
    out = run("-m", "core", *args)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], out.stderr


@pytest.mark.parametrize("level", ["word", "char"])
def test_cli_hostile_text_never_tracebacks_and_is_cut_with_a_note(level):
    hostile = ("<script>alert(1)</script> \x1b[31mred\x07 \u202eevil\u202c שלום عربى 😀👩‍👩‍👧 \t" * 400)[:10_000]
    out = run("-m", "core", "--text", hostile, "--tokenizer", level, "--E", "8", "--layers", "1")
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr
    assert "cut to 512 tokens a line" in out.stderr
    assert "(1, 512)" in out.stdout  # row 1: one line, cut at 512 tokens
    assert "\x1b" not in out.stdout and "\u202e" not in out.stdout and "\x07" not in out.stdout
    assert "\\x1b" in out.stdout and "\\u202e" in out.stdout  # shown escaped
    data = json.loads(run("-m", "core", "--text", hostile, "--tokenizer", level, "--json", "--E", "8").stdout)
    assert data["config"]["M"] == 512 and len(data["rows"][0]["values"][0]) == 512


def test_the_terminal_table_shows_the_tokens():
    out = run("-m", "core", "--text", "the cat sat", "--arch", "decoder-only")
    assert out.returncode == 0, out.stderr
    assert "(1, 5)" in out.stdout and "'the'=4 ' '=1 'cat'=2 ' '=1 'sat'=3" in out.stdout


def test_the_terminal_shows_the_values_labelled_by_the_tokens():
    out = run("-m", "core", "--text", "the cat sat", "--E", "4", "--layers", "1", "--values")
    assert out.returncode == 0, out.stderr
    assert "row 2, token embedding (1, 5, 4)" in out.stdout
    embedding = out.stdout.split("row 2, token embedding (1, 5, 4)\n")[1].split("\n\n")[0].splitlines()
    assert [line.split()[0] for line in embedding[1:]] == ["'the'", "'", "'cat'", "'", "'sat'"]  # ' ' splits
    assert len(embedding[1].split()) == 1 + 4  # the token, then E values
    assert "row 14, output probabilities (1, 5, 5)" in out.stdout
