"""The pages' counts in words at the extremes a learner reaches by slider or link: one token, one head, one
layer, one expert, one step... each read as "1 token", never "1 tokens". Each app run is checked for every
count it shows, so that few runs cover them all."""

from __future__ import annotations

import json
import re

from core import TransformerConfig
from tests.support.apptest import architecture_summary, explorer_opened, open_page
from tests.support.links import config_link

# A count of one before a plural noun: "1 tokens", "M = 1 positions", "1 K/V heads" ("1+1 layers" is two).
ONE_AND_A_PLURAL = re.compile(r"(?<![\d.,+])\b1 (?:[\w/-]+ )?(?:tokens|steps|heads|experts|positions|layers|sequences|"
                              r"numbers|rows|keys|queries|pairs|dimensions|cells|choices|times|axes|items)\b")
# Everything at one: one sequence of one token, one head, one layer, one expert and a window of one position.
ONES = TransformerConfig(arch="decoder-only", N=1, M=1, E=2, nhead=1, layers=1, vocab_size=2, n_experts=1, top_k=1,
                         window=1)
ONE_HEAD_MLA = TransformerConfig(arch="decoder-only", N=1, M=1, E=8, nhead=1, layers=1, vocab_size=2,
                                 positional="rope", attention="mla")


def page_words(at) -> str:
    """Every sentence the page shows: its text, its charts' descriptions and its widgets' and metrics' help, with
    Markdown's escapes taken out (a link's warnings are escaped)."""
    texts = [e.value for kind in ("markdown", "caption", "success", "info", "warning", "error")
             for e in getattr(at, kind)]
    texts += [json.loads(c.proto.spec).get("description", "") for c in at.get("vega_lite_chart")]
    texts += [m.proto.help for m in at.metric]
    texts += [w.help or "" for w in (*at.selectbox, *at.slider, *at.select_slider)]
    return "\n".join(texts).replace("\\", "")


def assert_counts(at, *right: str) -> None:
    """The page ran, says every one of ``right`` and no count of one with a plural noun."""
    assert not at.exception, at.exception
    words = page_words(at)
    missing = [phrase for phrase in right if phrase not in words]
    assert not missing, (missing, words)
    assert not ONE_AND_A_PLURAL.findall(words), ONE_AND_A_PLURAL.findall(words)


def test_the_explorer_at_one_of_everything_counts_each_in_the_singular():
    at = explorer_opened(open_page("explorer", config_link(ONES) | {"G": "0"}), tab="Architecture", words=True)
    assert_counts(
        at,
        # The KV cache's live check at G = 0: its one step, over one token.
        "Live check: 0 tokens generated with the cache; at its one step its logits equal one pass over all M + G = "
        "1 token without a cache",
        "keeps only the last min(M + G, W) = 1 position.",
        # The figure's parts and its arrows in words.
        "Attention: nhead = 1 head, with its own K and V (MHA)",
        "Window: each query sees the last W = 1 position, in every layer",
        "FFN: 1 ReLU expert; a router picks top_k = 1 for each token",
        "self-attention through a window of W = 1 position",
        "the stack of 1 expert (ReLU,",
        # The routing over one token and one expert.
        "1 token down, 1 expert across, each row summing to 1 over the one expert; each token's top_k = 1 choice is "
        "ringed and numbered. First choice:",
        "a weight for the one expert, summing to 1",
        "**Tokens per expert** over all N·M = 1 token,",
        "Bar chart of the tokens the one expert got in layer 0, 1 choice in all",
        "top_k = 1 of the n_experts = 1 routed expert in each layer with experts",
    )
    assert "1 expert (top 1, d_ff_expert=8), window 1" in architecture_summary(at)
    assert "at every one of the 1 steps" not in page_words(at)

    at.select_slider(key="x_kv_G").set_value(1).run()
    assert_counts(at, "Live check: 1 token generated with the cache; at every one of the 2 steps its logits equal one "
                      "pass over all M + G = 2 tokens without a cache")

    at = explorer_opened(at, tab="Parameters")
    assert_counts(at, "A token runs top_k = 1 of the n_experts = 1 routed expert in its one layer with experts")


def test_latent_attention_with_one_head_says_its_one_head():
    at = explorer_opened(open_page("explorer", config_link(ONE_HEAD_MLA) | {"G": "0"}), tab="Architecture",
                         words=True)
    assert_counts(
        at,
        "a token, shared by its one head, which makes its K and V back from them.",
        "Latent attention: the nhead = 1 head makes its K and V back from one shared latent",
        "(2 · n_h · d_h · layers, with n_h = nhead = 1 head of d_h = 8)",
        "Attention: MLA, nhead = 1 head's K and V made back from one latent",
        "decoder masked multi-head self-attention (MLA, 1 head)",
    )


def test_one_character_a_line_is_one_token_of_one_query_and_one_key():
    at = open_page("attention", {"text": "a\nb", "tokens": "char"})  # N = 2 lines of M = 1 token
    assert_counts(
        at,
        "2 sequences of up to M = 1 character token;",
        "Line 1 of your text is its longest, M = 1 token, so none of its keys is padding",
        "1 query token down by 1 key token across",
        "The mask as a grid of 1 query by 1 key: 0 of the 1 pair is blocked.",
        "N = 2 sequences",
    )


def test_one_padding_key_is_one_key_and_one_token_line_is_one_token():
    at = open_page("attention", {"text": "ab\na", "tokens": "char", "arch": "encoder-only", "item": "1"})
    assert_counts(at, "Line 1 of your text is 1 token, padded to M = 2 with <pad>: its key 1 is blocked.")
    assert "keys 1 to 1" not in page_words(at)


def test_a_padding_key_past_the_drawn_ones_is_one_key():
    at = open_page("attention", {"text": "a" * 65 + "\n" + "a" * 64, "tokens": "char", "arch": "encoder-only",
                                 "item": "1"})
    assert_counts(at, "This sequence's 1 padding key comes after them, at key 64, hidden from every query",
                  "Line 1 of your text is 64 tokens, padded to M = 65 with <pad>: its key 64 is blocked.",
                  "the mask also hides 1 key past those drawn")


def test_the_traces_one_padded_position_is_the_last_of_them():
    cfg = TransformerConfig(N=2, M=5, E=4, nhead=1, layers=1, vocab_size=10)  # pads the last M // 4 = 1 position
    at = open_page("attention", config_link(cfg) | {"item": "1"})
    assert_counts(at, "The trace pads the last of the M = 5 positions of the last sequence, the batch item shown: "
                      "key 4 is blocked.")
    assert "the last 1 of" not in page_words(at)


def test_one_target_query_over_many_keys():
    cfg = TransformerConfig(N=1, M=96, M_target=1, E=4, nhead=1, layers=1, vocab_size=10)
    at = open_page("attention", config_link(cfg) | {"kind": "cross"})
    assert_counts(at, "Showing the first 1 of 1 query and 64 of 96 keys (capped at 64",
                  "(the first 1 of 1 query and 64 of 96 keys)", "N = 1 sequence")


def test_one_kv_head_one_layer_and_one_batch_item_on_the_attention_page():
    cfg = TransformerConfig(arch="decoder-only", N=1, M=2, E=8, nhead=4, nhead_kv=1, layers=1, vocab_size=10)
    at = open_page("attention", config_link(cfg) | {"layer": "5", "item": "3"})
    assert_counts(
        at,
        "nhead = 4 query heads, nhead_kv = 1 K/V head, so query head h reads",
        "4 query heads in a row, each labelled with the K/V head it reads: 1 K/V head, read by 4 query heads.",
        "1 of the 4 cells is blocked by the mask, marked with a cross",
        "The mask as a grid of 2 queries by 2 keys: 1 of the 4 pairs is blocked.",
        "layer=5 is not among this config's 1 layer, 0; showing layer 0.",
        "item=3 is not among this config's 1 batch item, 0; showing item 0.",
    )


def test_the_positional_page_at_one_dimension_and_one_position():
    cfg = TransformerConfig(arch="decoder-only", N=1, M=1, E=1, nhead=1, layers=1, vocab_size=2, d_ff=4)
    at = open_page("positional", config_link(cfg) | {"dims": "7"})
    assert_counts(
        at,
        "So each position p gets a vector of E = 1 number added to its token embedding.",
        "Heatmap of the sinusoidal positional encoding: 1 position down, 1 embedding dimension across",
        "Heatmap of the cosine similarity between the sinusoidal vector of 1 position,",
        "Line chart of sinusoidal dimension 0 along the positions",
        "is not a list of at most 8 of the page's 1 dimension (0), in digits",
    )


def test_ropes_one_pair_turns_one_radian():
    cfg = TransformerConfig(arch="decoder-only", N=1, M=1, E=2, nhead=1, layers=1, vocab_size=2, positional="rope")
    at = open_page("positional", config_link(cfg))
    assert_counts(at, "Its one pair, pair 0, turns 1 radian a position.",
                  "Heatmap of RoPE's rotation angles: 1 position down, 1 of the 1 pair of d_k = 2 across")
    assert "1 radians" not in page_words(at)

    at = open_page("positional", config_link(cfg.replace(E=512, d_ff=2048)))  # 256 pairs, 64 drawn
    assert_counts(at, "Drawn: the first 1 of M = 1 position and 64 of the 256 pairs (capped")


def test_the_cost_pages_live_check_over_one_word():
    at = open_page("cost", {"N": "1", "M": "1"})
    assert_counts(at, "in one forward pass of the sidebar's batch (N = 1 sequence of M = 1 token)")


def test_a_one_character_prompt_and_a_prompt_cut_by_one():
    at = open_page("decoding", {"prompt": "T", "strategy": "greedy", "G": "1"})
    assert_counts(at, "reads this prompt of M = 1 token:")
    at = open_page("decoding", {"prompt": "To be, or not to be, that is the question", "strategy": "greedy",
                                "G": "24"})  # 41 characters, and room for 64 - 24 = 40
    assert_counts(at, "reads this prompt of M = 40 tokens (its first 1 token left out: the model reads at most 64 "
                      "tokens, G = 24 of them new):")
