"""Decoding: how the next token is picked, and the shapes beam search, sampling, MBR and teacher forcing lay out."""

from quizzes.experiments.decoding import BEAMS, STEPS, TARGET
from quizzes.questions import DECODER_ONLY, Question, fixed, outcome, value

TOPIC = "Decoding"

_B1 = (
    "The same ids: one beam keeps only the best continuation, which is the most likely token each time.",
    "Different ids: even one beam looks ahead and finds a better sequence than greedy.",
    "Different ids: beam search adds a length penalty that greedy has not.",
)
_COLD = (
    "Greedy's ids: dividing by a tiny temperature makes the top token's probability nearly 1.",
    "Uniform random ids: a tiny temperature flattens the distribution.",
    "An error: the logits overflow.",
)
_TOP_P = (
    "More tokens are kept from the flat distribution: it takes more of them to reach p together.",
    "The same number: top-p always keeps a fixed count, as top-k does.",
    "Fewer tokens are kept from the flat distribution.",
)
_REORDER = (
    "Each surviving beam may grow from a different parent, so row i of the cache must hold the past of beam i's "
    "parent: the rows are gathered by the step's beam indices.",
    "To sort the beams by score, which the attention needs.",
    "To free the memory of the beams that were dropped; the order does not matter.",
)
_MBR = (
    "The utility of every pair of samples: entry (i, j) is the unigram F1 of sample i against sample j.",
    "The probability the model gave each sample at each step.",
    "The attention weights between the samples' tokens.",
)


QUESTIONS = (
    Question(
        id="dec-beams-shape", topic=TOPIC, kind="shape", parametric=True, families=DECODER_ONLY,
        expression=lambda cfg: f"(N*{BEAMS}, {cfg.M + STEPS})",  # a shape's dimension is never a sum: M + 3 as a number
        prompt="Beam search with B = 4 beams continues N={N} prompts of M={M} tokens. After 3 generated tokens, what "
               "is the shape of the running beams, one row per beam?",
        answer=value("decoding", "beams_shape"), evidence="decoding",
        explanation="Every prompt gets its own B beams, laid out as rows: N·B rows of the prompt and the tokens so far, "
                    "(N·B, M + t). The model runs them as one batch of N·B sequences.",
    ),
    Question(
        id="dec-candidates-shape", topic=TOPIC, kind="shape", parametric=True, families=DECODER_ONLY,
        expression=f"(N, {BEAMS}*vocab_size)",
        prompt="At each step of that beam search (B = 4, N={N}, vocab_size={vocab_size}), every beam's score is added to "
               "each next token's log-probability. What is the shape of these candidates, one row per prompt?",
        answer=value("decoding", "candidates_shape"), evidence="decoding",
        explanation="Each of a prompt's B beams can grow by any of vocab_size tokens: B·vocab_size candidates per "
                    "prompt, (N, B·vocab_size). Only the best 2B are kept, so that B remain even if some end.",
    ),
    Question(
        id="dec-cache-rows", topic=TOPIC, kind="numeric", parametric=True, unit="count", families=DECODER_ONLY,
        prompt="During that beam search (B = 4, N={N}), how many rows does each layer's KV cache have along its batch "
               "dimension?",
        answer=value("decoding", "cache_rows"), evidence="decoding",
        explanation="One row per running beam: N·B. Each beam has its own past, so each keeps its own keys and values.",
    ),
    Question(
        id="dec-forced-shape", topic=TOPIC, kind="shape", parametric=True, families=DECODER_ONLY,
        expression=lambda cfg: f"(N, {cfg.M + TARGET - 1}, vocab_size)",  # M + T − 1 as a number, as above
        prompt="Teacher forcing reads N={N} prompts of M={M} tokens and a target of T = 5 tokens in one pass, the "
               "target shifted right (its last token is never fed in). What is the shape of that pass's logits, "
               "vocab_size={vocab_size}?",
        answer=value("decoding", "forced_shape"), evidence="decoding",
        explanation="The input is the prompt and the first T − 1 target tokens, M + T − 1 positions, and the causal "
                    "mask lets every position predict its next token at once: (N, M + T − 1, vocab_size). No loop: "
                    "each prediction is made from the true tokens, not the model's own guesses.",
    ),
    Question(
        id="dec-cache-reorder", topic=TOPIC, kind="choice", families=DECODER_ONLY,
        prompt="After each step, beam search reorders the KV cache along its batch dimension. Why?",
        choices=_REORDER, answer=fixed(0, _REORDER), evidence="decoding",
        explanation="The best B candidates may come from any beams: two new beams can share a parent and another parent "
                    "can die. The next step's queries must see their own parent's keys and values, so every layer's K "
                    "and V rows are gathered by the parents' indices (index_select on dimension 0).",
    ),
    Question(
        id="dec-beam1", topic=TOPIC, kind="predict", families=DECODER_ONLY,
        prompt="Predict, then run: beam search with B = 1 (and no end token) against greedy decoding, on the same "
               "prompt. What do they generate?",
        choices=_B1, answer=outcome("decoding", lambda v: 0 if v["beam1_equals_greedy"] else 1, _B1),
        evidence="decoding",
        explanation="With one beam the best candidate is the beam's best next token, its score plus the largest "
                    "log-probability: greedy's choice. The length penalty only rescales finished hypotheses, and with "
                    "one hypothesis there is nothing to rank.",
    ),
    Question(
        id="dec-cold", topic=TOPIC, kind="predict", families=DECODER_ONLY,
        prompt="Predict, then run: sample with temperature 0.00001 (logits divided by it before the softmax). What "
               "does it generate?",
        choices=_COLD, answer=outcome("decoding", lambda v: 0 if v["cold_equals_greedy"] else 1, _COLD),
        evidence="decoding",
        explanation="Dividing the logits by T multiplies their gaps by 1/T: as T → 0 the softmax puts all the mass "
                    "on the largest logit, so sampling becomes greedy decoding.",
    ),
    Question(
        id="dec-top-p", topic=TOPIC, kind="predict", families=DECODER_ONLY,
        prompt="Predict, then run: top-p with p = 0.9 on the same logits made peaked (× 4) and flat (÷ 4). How does "
               "the kept set change?",
        choices=_TOP_P, answer=outcome("decoding", lambda v: 0 if v["kept_flat"] > v["kept_peaked"] else
                                       (1 if v["kept_flat"] == v["kept_peaked"] else 2), _TOP_P),
        evidence="decoding",
        explanation="Top-p keeps the smallest set of most likely tokens whose probabilities reach p together. A "
                    "peaked distribution reaches 0.9 in a few tokens, a flat one needs many: the kept set adapts to "
                    "the model's certainty, where top-k keeps k whatever it is.",
    ),
    Question(
        id="dec-mbr", topic=TOPIC, kind="choice", families=DECODER_ONLY,
        prompt="Minimum Bayes risk decoding draws S samples and fills an (S, S) matrix. What does it hold?",
        choices=_MBR, answer=fixed(0, _MBR), evidence="decoding",
        explanation="Entry (i, j) is a utility: here unigram F1, the tokens two samples share (with repeats) over their "
                    "lengths. The chosen sample has the highest mean utility against the others: the one they agree "
                    "with most, a consensus rather than the single most likely sequence.",
    ),
)
