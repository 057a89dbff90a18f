"""Skip (residual) connections: why every sub-layer sits inside one."""

from quizzes.experiments.layers import SKIP_POSITIONS
from quizzes.questions import (PAPER, WITH_ENCODER, Question, compare, fixed, outcome, paper_layer, paper_norms,
                               value)

TOPIC = "Skip connections"

_WHY = (
    "To add a nonlinearity between the sub-layers.",
    "To save parameters: the skip path replaces a weight matrix.",
    "The skip path adds the sub-layer's input back to its output, so the input and the gradient always have a "
    "route around the sub-layer's weight matrices; a deep stack still trains, and each sub-layer only has to "
    "learn a change to its input.",
    "Because ReLU sets negative values to zero, and adding the input puts them back.",
)
_GRAD = ("Smaller than with the skips", "Larger than with the skips", "About the same")
_LIKENESS = ("Less like its input than with the skips", "More like its input than with the skips",
             "About as much")

QUESTIONS = (
    Question(
        id="skip-why", topic=TOPIC, when=paper_norms, kind="choice",
        prompt="Why does every attention and FFN sub-layer sit inside LayerNorm(x + sublayer(x))?",
        choices=_WHY, answer=fixed(2, _WHY), evidence="residual_ablation",
        explanation="With x + f(x), the derivative always contains the identity, so the signal that reaches "
                    "the embeddings does not have to pass through every weight matrix. In this post-norm model "
                    "(the paper's) it still passes through each LayerNorm, so it is not carried unchanged; "
                    "pre-norm models, LayerNorm inside the branch, keep a clean identity path. Without the skips, "
                    "each layer must rebuild all of its input from scratch.",
    ),
    Question(
        id="skip-gradient", topic=TOPIC, families=WITH_ENCODER, when=paper_layer, kind="predict",
        prompt="Predict, then run: remove the skip paths from the encoder's stack (layers={layers}). The "
               "gradient norm that reaches the embeddings becomes...",
        choices=_GRAD,
        answer=outcome("residual_ablation", lambda v: compare(v["grad_without_skips"], v["grad_with_skips"]), _GRAD),
        evidence="residual_ablation",
        explanation="Without skips, the gradient reaches the embeddings only through every sub-layer's Jacobian, "
                    "one after another, and such a product tends to shrink (or blow up) with depth. A skip adds the "
                    "identity to each sub-layer's Jacobian, so one route passes no weight matrix; in this post-norm "
                    "model it still passes every LayerNorm, so it is not a clean copy. Each LayerNorm also rescales "
                    "what reaches it, skips or not, so without them the norm need not shrink at these depths: for "
                    "most random weights it comes out smaller, but for some about the same or larger; it can come "
                    "out either way round at any depth from 1 layer, most often at a wide E (above 16). Which one your "
                    "run gives depends on its random weights, not on a rule. The chart shows several depths; the "
                    f"run uses {SKIP_POSITIONS} positions whatever M is.",
    ),
    Question(
        id="skip-output", topic=TOPIC, families=WITH_ENCODER, when=paper_layer, kind="predict",
        prompt="Predict, then run: without skip paths, how much does the output of the encoder's stack "
               "(layers={layers}) still resemble the input, position by position (cosine similarity)?",
        choices=_LIKENESS,
        answer=outcome("residual_ablation",
                       lambda v: compare(v["cosine_without_skips"], v["cosine_with_skips"]), _LIKENESS),
        evidence="residual_ablation",
        explanation="With skips each layer adds a change to its input, so the input is still inside the output: "
                    "the cosine starts near 1 and falls as layers add up (in this post-norm model each LayerNorm "
                    "rescales the sum, and the input fades). Without them each layer rebuilds its output from its "
                    "sub-layers alone, and the token's own direction is usually gone after one layer. The run uses "
                    f"{SKIP_POSITIONS} positions whatever M is: over a single position attention has nothing to mix, "
                    "and the token's direction could last without the skips. So from 1 to 8 layers the output with "
                    "skips is the more like its input at E = 5 and above. At the narrowest widths (E of 4 or "
                    "less, where a LayerNorm keeps little of its input) both can end up low by 8 layers, and past "
                    "8 layers at any width; then either may come out higher.",
    ),
    Question(
        id="skip-count", topic=TOPIC,
        families=PAPER, when=paper_norms, kind="numeric", parametric=True, expression="5*layers",
        prompt="How many residual additions (each followed by a LayerNorm) does the whole model have with "
               "layers={layers} in the encoder and in the decoder?",
        answer=value("parameter_counts", "number_of_layer_norms"), evidence="parameter_counts",
        explanation="Two per encoder layer (attention, FFN) and three per decoder layer (masked self-attention, "
                    "cross-attention, FFN): 5 per pair of layers. Counted on the live module tree. PyTorch's "
                    "nn.Transformer has 5·layers + 2 LayerNorms: it ends each stack with one more, which follows "
                    "no addition.",
    ),
)
