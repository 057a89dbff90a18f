"""RNN against Transformer: time, recurrence, and where order comes from."""

from quizzes.questions import PAPER, Question, added_positions, fixed, outcome, row_shape

TOPIC = "RNN vs. Transformer"

_RECURRENCE = (
    "Both read one token at a time; the Transformer only swaps the hidden state for attention.",
    "The RNN carries a hidden state from one position to the next, so it needs one step per token; "
    "the encoder handles every position in the same pass and carries no state along the sequence.",
    "The Transformer loops over its layers the way an RNN loops over time, passing a hidden state between tokens.",
    "The RNN sees all positions at once; the Transformer has to loop over them.",
)
_REACH = (
    "Only outputs at positions j and later",
    "Only outputs at positions j and earlier",
    "Every output position",
    "Only the output at position j",
)
_PATTERN_TO_REACH = {"lower": 0, "upper": 1, "full": 2, "diagonal": 3}
_ORDER = (
    "From the positional encoding added to the token embeddings; attention itself ignores order.",
    "From the attention weights, which favour nearby tokens.",
    "From a hidden state passed along the sequence, as in an RNN.",
    "From the causal mask, which is applied in the encoder too.",
)
_SHUFFLE = (
    "The outputs are shuffled in exactly the same way and are otherwise unchanged.",
    "The outputs change in some other way, because attention knows where each token was.",
)

QUESTIONS = (
    Question(
        id="rnn-recurrence", topic=TOPIC, families=PAPER, kind="choice",
        prompt="How do an RNN (say a GRU or LSTM) and the Transformer's encoder handle time?",
        choices=_RECURRENCE, answer=fixed(1, _RECURRENCE), evidence="dependency_maps",
        explanation="A recurrent network must finish step t before step t+1 because step t+1 reads its hidden "
                    "state. Self-attention computes every position's output from all inputs with matrix "
                    "products, in one pass per layer; the layers run one after another, the positions do not.",
    ),
    Question(
        id="rnn-steps", topic=TOPIC, families=PAPER, kind="numeric", parametric=True, expression="M",
        prompt="A one-layer GRU reads one source sequence of M={M} tokens. How many sequential steps does it take "
               "to produce its last output?",
        answer=lambda ctx: row_shape("input_tokens")(ctx)[1], evidence="dependency_maps",
        explanation="One step per position: the hidden state at position t is needed before position t+1 can be "
                    "computed, so the work cannot be spread across positions.",
    ),
    Question(
        id="rnn-map", topic=TOPIC, families=PAPER, kind="predict",
        prompt="Predict, then run: in a GRU, you nudge the input at position j. Which outputs move?",
        choices=_REACH, answer=outcome("dependency_maps", lambda v: _PATTERN_TO_REACH[v["rnn_pattern"]], _REACH),
        evidence="dependency_maps",
        explanation="Information flows forwards through the hidden state only, so input j can reach position j "
                    "and everything after it, never anything before: a lower-triangular influence map.",
    ),
    Question(
        id="rnn-encoder-map", topic=TOPIC, families=PAPER, kind="predict",
        prompt="Predict, then run: in one of our encoder layers (no mask), you nudge the input at position j. "
               "Which outputs move?",
        choices=_REACH,
        answer=outcome("dependency_maps", lambda v: _PATTERN_TO_REACH[v["encoder_pattern"]], _REACH),
        evidence="dependency_maps",
        explanation="Every query attends to every key in the encoder, so one changed input reaches all positions "
                    "in a single layer: the influence map is full (a one-token sequence is measured at two "
                    "positions: one position's map would fit every choice).",
    ),
    Question(
        id="rnn-decoder-map", topic=TOPIC, families=PAPER, kind="predict",
        prompt="Predict, then run: in a decoder layer with the causal mask, you nudge the target input at "
               "position j. Which outputs move?",
        choices=_REACH,
        answer=outcome("dependency_maps", lambda v: _PATTERN_TO_REACH[v["decoder_pattern"]], _REACH),
        evidence="dependency_maps",
        explanation="The mask gives the decoder the same reach as an RNN (position j and later), yet in training, "
                    "where the whole target is known, it still computes all positions at once: causality without "
                    "recurrence. Generating text is another matter: each new token must be produced before it can "
                    "be read, so the decoder then runs one position at a time. The map is over the target's "
                    "M_target positions (a one-token target is measured at two).",
    ),
    Question(
        id="rnn-order", topic=TOPIC, families=PAPER, when=added_positions, kind="choice",
        prompt="Where does the Transformer's encoder get the order of the tokens from?",
        choices=_ORDER, answer=fixed(0, _ORDER), evidence="permutation",
        explanation="Attention and the position-wise FFN treat the sequence as a set: reorder the inputs and the "
                    "outputs are reordered the same way. Adding a position vector to each embedding is what "
                    "makes 'the same token at another place' look different.",
    ),
    Question(
        id="rnn-shuffle", topic=TOPIC, families=PAPER, kind="predict",
        prompt="Predict, then run: feed an encoder layer a sequence with no positional encoding, then the same "
               "sequence reversed. What happens to the outputs?",
        choices=_SHUFFLE,
        answer=outcome("permutation", lambda v: 0 if v["order_blind_without_positions"] else 1, _SHUFFLE),
        evidence="permutation",
        explanation="Without positions, the layer is permutation-equivariant: the reversed input gives the "
                    "reversed output, to rounding. With sinusoids added, the outputs change in other ways too (with a "
                    "single token there is nothing to reorder, and nothing changes).",
    ),
    Question(
        id="rnn-gru-shape", topic=TOPIC, families=PAPER, kind="shape", parametric=True,
        prompt="The same batch as the encoder's input, shape (N, M, E) = ({N}, {M}, {E}), goes into "
               "nn.GRU(E, E, batch_first=True). What shape is its output (every time step)?",
        answer=row_shape("summed_embedding"), evidence="dependency_maps",
        explanation="A batch-first GRU returns one hidden vector of width E per position, like the encoder does: "
                    "the shapes match, the way they are computed does not. The evidence runs a real "
                    "nn.GRU(E, E, batch_first=True) at your sizes. When they are too large for that, it runs "
                    "at smaller ones, and the note under the evidence works out the shape at your sizes from "
                    "that run.",
    ),
)
