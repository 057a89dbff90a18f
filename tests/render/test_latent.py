"""render.latent: where one head's K and V came from under multi-head latent attention, with live shapes."""

from __future__ import annotations

from core import trace
from core.config import DEEPSEEK_V2_LITE, TINY_MLA
from render.latent import head_note, latent_note


def test_the_note_names_the_latent_the_rotary_key_and_every_head_s_k_and_v_with_their_live_shapes():
    note = latent_note(TINY_MLA, trace(TINY_MLA).shapes, head=1)
    assert note.startswith("Head 1's K and V were made back from the shared latent, not kept per head.")
    for part in ("c_KV (2, 8, 8), (N, M, kv_lora_rank)", "k_rope (2, 8, 4), (N, M, rope_head_dim)",
                 "8 + 4 = 12 numbers a token", "nope_head_dim = 4", "v_head_dim = 4", "the same for all 2 heads",
                 "K is (2, 2, 8, 8) and V (2, 2, 8, 4)", "1/√8"):
        assert part in note, part


def test_the_note_reads_a_shape_only_pass_alike():
    note = latent_note(DEEPSEEK_V2_LITE, trace(DEEPSEEK_V2_LITE.replace(layers=2, first_dense_layers=1),
                                               shape_only=True).shapes)
    assert note.startswith("Each head's K and V")
    assert "c_KV (1, 4096, 512)" in note and "512 + 64 = 576 numbers" in note and "V (1, 16, 4096, 128)" in note


def test_one_head_s_map_says_its_k_and_v_came_back_from_the_latent():
    assert head_note(TINY_MLA, trace(TINY_MLA).shapes, 1) == (
        "Head 1's K and V were made back from the shared latent c_KV (2, 8, 8) and the rotary key k_rope (2, 8, 4) "
        "every head shares: no K or V of its own was kept. \"K and V from the latent\", below, says how.")
