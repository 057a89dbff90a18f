"""The position-wise feed-forward ("dense") layers: one per block, each with its own weights."""

from quizzes.questions import WITH_ENCODER, Question, dense_first_layer, outcome, row_shape, value

TOPIC = "Dense layers in each block"

_SAME = (
    "Same shapes, separate tensors with different values: every block has its own FFN.",
    "One FFN shared by every block: the same tensor.",
    "Different shapes: each block's FFN has its own width.",
)
_WHERE = (
    "After the FFN: its output goes through a nonlinear activation.",
    "Between its two linear layers: ReLU acts on the d_ff-wide hidden layer, and the FFN's output is linear.",
    "Nowhere: the FFN is purely linear.",
)
_POSITIONS = ("Only that position's output", "Every position's output", "No output at all")


def _nonlinearity(v: dict) -> int:
    """Read the answer off a live FFN: a hidden layer with no negatives has been through a ReLU; an
    output with negatives has not been through one since."""
    if v["hidden_negative_fraction"] == 0 and v["output_negative_fraction"] > 0:
        return 1
    return 0 if v["output_negative_fraction"] == 0 else 2


def _reach(v: dict) -> int:
    """Which choice the probe's counts pick: every output if other positions moved, else the nudged one
    alone, or none."""
    if v["positions_changed"] > int(v["nudged_position_moved"]):
        return 1
    return 0 if v["nudged_position_moved"] else 2


QUESTIONS = (
    Question(
        id="ffn-different", topic=TOPIC, kind="predict",
        prompt="Predict, then run: compare layer 0's FFN weights with layer 1's.",
        choices=_SAME,
        answer=outcome("ffn_layers", lambda v: 2 if not v["same_shape"] else (1 if v["same_tensor"] else 0), _SAME),
        evidence="ffn_layers",
        explanation="Every layer is built from the same recipe, so the shapes agree, but each owns its "
                    "parameters: different random values at the start, different learned values after training.",
    ),
    Question(
        id="ffn-hidden", topic=TOPIC,
        families=WITH_ENCODER, when=lambda c: c.activation == "relu" and dense_first_layer(c), kind="shape",
        parametric=True,
        prompt="What is the shape of the FFN's hidden layer (after the first linear layer and ReLU) in the first "
               "encoder layer?",
        answer=row_shape("ffn_hidden"), evidence="pass_shapes",
        explanation="The first layer widens every position from E to d_ff: (N, M, d_ff).",
    ),
    Question(
        id="ffn-linear1", topic=TOPIC, kind="shape", parametric=True, expression="(d_ff, E)",
        prompt="In PyTorch's (out_features, in_features) order, what is the shape of the FFN's first weight matrix?",
        answer=value("ffn_layers", "linear1_shape_layer0"), evidence="ffn_layers",
        explanation="nn.Linear(E, d_ff) stores its weight as (d_ff, E); y = x @ W.T + b.",
    ),
    Question(
        id="ffn-input-width", topic=TOPIC, kind="numeric", parametric=True, expression="E",
        prompt="How many numbers does the FFN read for each position (its input width)?",
        answer=value("ffn_layers", "input_width"), evidence="ffn_layers",
        explanation="The FFN reads the whole E-wide vector of a position, not one head's slice of E/nhead; the "
                    "heads were already concatenated and mixed by W^O.",
    ),
    Question(
        id="ffn-activation", topic=TOPIC, when=lambda c: c.activation == "relu", kind="choice",
        prompt="Where is the FFN's nonlinearity?",
        choices=_WHERE, answer=outcome("ffn_layers", _nonlinearity, _WHERE), evidence="ffn_layers",
        explanation="Linear, ReLU, Linear. The live hidden layer has no negative entries; the output has plenty, "
                    "because nothing nonlinear follows the second linear layer before the residual add.",
    ),
    Question(
        id="ffn-params", topic=TOPIC,
        when=lambda c: c.activation != "swiglu" and c.bias,
        kind="numeric", parametric=True, unit="count", expression="2*E*d_ff + d_ff + E",
        prompt="How many parameters does one FFN have at E={E}, d_ff={d_ff}?",
        answer=value("ffn_layers", "params_per_ffn"), evidence="ffn_layers",
        explanation="E × d_ff + d_ff for the first layer, d_ff × E + E for the second: 2·E·d_ff + d_ff + E.",
    ),
    Question(
        id="ffn-position-wise", topic=TOPIC, kind="predict",
        prompt="Predict, then run: change the FFN's input at one position only. Which outputs change?",
        choices=_POSITIONS,
        answer=outcome("ffn_layers", _reach, _POSITIONS),
        evidence="ffn_layers",
        explanation="The same two-layer network is applied to each position separately; mixing between positions "
                    "happens only in attention.",
    ),
)
