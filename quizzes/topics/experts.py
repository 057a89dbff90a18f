"""A mixture of experts: what the router gives, the parameters a model holds against the ones a token uses, why
the tokens an expert gets have no fixed shape, what a capacity factor does about it, and the shared experts."""

import math
from functools import partial

from core.config import ATTENTIONS, TransformerConfig
from quizzes.experiments.parts import CAPACITY_FACTOR, moe_hook
from quizzes.questions import ONE_STACK, Context, Question, fixed, row_shape, value, with_experts, with_shared_experts

TOPIC = "Mixture of experts"

# Every question here asks about the experts, whichever attention feeds them (DeepSeek's latent one too).
_ask = partial(Question, topic=TOPIC, families=ONE_STACK, attention=ATTENTIONS, when=with_experts, evidence="routing")


def expert_formula(width: str, c: TransformerConfig) -> str:
    """One FFN of the given width: SwiGLU's three matrices or two, with their biases when the model has them."""
    if c.activation == "swiglu":
        return f"3*E*{width}" + (f" + 2*{width} + E" if c.bias else "")
    return f"2*E*{width}" + (f" + {width} + E" if c.bias else "")


def experts_formula(c: TransformerConfig) -> str:
    return f"(layers - first_dense_layers)*n_experts*({expert_formula('d_ff_expert', c)})"


def shared_formula(c: TransformerConfig) -> str:
    return f"(layers - first_dense_layers)*({expert_formula('n_shared_experts*d_ff_expert', c)})"


def _total(ctx: Context) -> str:
    return f"(It holds {ctx.trace.params['total']:,} parameters in all.)"


_WHY = (
    "The router decides it from the data: how many of the N·M tokens pick an expert depends on what the tokens "
    "are, so the rows an expert gets (T_e) change from one batch to the next.",
    "It is fixed at N·M / n_experts: the router spreads the tokens evenly by construction.",
    "It is fixed at N·M·top_k: every expert reads every token and the router only weights them.",
)
_CAPACITY = (
    f"Every expert gets a fixed number of rows, capacity = ⌈factor · N·M·top_k / n_experts⌉: tokens past an "
    "expert's capacity are dropped from it (they pass on through the residual), and an expert with fewer is padded.",
    "It makes the router pick fewer experts per token, so that top_k · capacity_factor stays below 1.",
    "Nothing to the shapes: it only scales the router's weights by the factor.",
)

QUESTIONS = (
    _ask(id="moe-router-shape", kind="shape", parametric=True,
         prompt="The router of the first layer with experts scores every token against each of the n_experts="
                "{n_experts} experts. With N={N} sequences of M={M} tokens, what is the shape of its output, the "
                "router logits?",
         answer=row_shape("router_logits"),
         explanation="The router is one E × n_experts matrix with no bias: (N, M, E) @ (E, n_experts) gives a score "
                     "for every token and expert, (N, M, n_experts). Softmax over the last axis makes them "
                     "probabilities, and the top_k largest pick the token's experts, (N, M, top_k)."),
    _ask(id="moe-top-k-shape", kind="shape", parametric=True,
         prompt="Each token goes to its top_k={top_k} best experts of n_experts={n_experts}. What is the shape of "
                "the chosen experts' ids, for N={N} sequences of M={M} tokens?",
         answer=row_shape("top_k_experts"),
         explanation="topk over the router's last axis keeps top_k ids per token, best first: (N, M, top_k), and as "
                     "many weights beside them. Unlike what follows, this shape is fixed: every token picks exactly "
                     "top_k experts."),
    _ask(id="moe-active", kind="numeric", parametric=True, unit="count", aside=_total,
         prompt="With n_experts={n_experts} experts per layer with experts and top_k={top_k} of them per token, how "
                "many parameters does one token's pass use?",
         answer=lambda ctx: ctx.trace.active_params,
         explanation="A token runs top_k of the n_experts routed experts in each layer with experts, and everything "
                     "else (embeddings, attention, router, shared experts, the dense layers): the total less "
                     "(n_experts − top_k) experts a layer. That is what its compute follows; the memory must still "
                     "hold the total. Counted on the model: Mixtral-8x7B holds 46.7B and uses 12.9B."),
    _ask(id="moe-experts-params", kind="numeric", parametric=True, unit="count", expression=experts_formula,
         prompt="How many parameters do the routed experts hold, over the layers={layers} layers less the "
                "first_dense_layers={first_dense_layers} dense ones (n_experts={n_experts} experts of width "
                "d_ff_expert={d_ff_expert}, E={E})?",
         answer=lambda ctx: ctx.trace.params["experts"],
         explanation="Each expert is an FFN of width d_ff_expert: 3·E·d_ff_expert weights for SwiGLU (gate, up, "
                     "down), 2·E·d_ff_expert for ReLU or GELU, plus biases where the model has them. There are "
                     "n_experts in each layer with experts. They are most of a mixture's parameters, though a token "
                     "uses only top_k of them a layer."),
    _ask(id="moe-slots", kind="numeric", parametric=True, expression="N*M*top_k",
         prompt="In one layer with experts, how many (token, expert) choices does the router make for N={N} "
                "sequences of M={M} tokens with top_k={top_k}, that is, how many rows do all the experts read "
                "together?",
         answer=lambda ctx: math.prod(ctx.trace.shapes[moe_hook(ctx.cfg, "top_k_experts")]),
         explanation="Every token picks top_k experts, so the experts together read N·M·top_k rows, however they "
                     "split them: the sum of the tokens per expert. Evenly spread, each would get N·M·top_k / "
                     "n_experts; the chart shows how a real pass split them."),
    _ask(id="moe-no-fixed-shape", kind="choice", choices=_WHY, answer=fixed(0, _WHY),
         prompt="Why does no tensor shape say how many tokens expert 0 reads, while every other shape of the pass "
                "is fixed by the config?",
         explanation="The router's choice depends on the tokens' values. The count per expert, T_e, is the one shape "
                     "in the model that only a real pass can say; a shape-only pass (the meta device) has no values "
                     "and gives each expert the even share instead. The chart counts them in a real pass, against "
                     "the even share."),
    _ask(id="moe-capacity", kind="choice", choices=_CAPACITY, answer=fixed(0, _CAPACITY),
         prompt="Switch Transformer and GShard give each expert a capacity factor. What does it do to the tokens "
                "an expert reads?",
         explanation="A capacity of ⌈factor · N·M·top_k / n_experts⌉ rows makes every expert's input a fixed "
                     "(capacity, E), which accelerators want: overflowing tokens are dropped from that expert (the "
                     "residual carries them on unchanged) and empty rows are padding. A factor above 1 (1.25 is "
                     "usual) drops fewer. Mixtral and DeepSeek-V3 run without one and drop no token."),
    _ask(id="moe-capacity-rows", kind="numeric", parametric=True,
         prompt=f"With a capacity factor of {CAPACITY_FACTOR}, how many rows would each expert get for N={{N}} "
                f"sequences of M={{M}} tokens, top_k={{top_k}} and n_experts={{n_experts}}?",
         answer=value("routing", "capacity"),
         explanation=f"capacity = ⌈{CAPACITY_FACTOR} · N·M·top_k / n_experts⌉: the even share with a quarter more "
                     "room, rounded up. The chart counts a real pass's tokens per expert against it: the "
                     "experts over it would drop their extra tokens."),
    _ask(id="moe-shared-params", kind="numeric", parametric=True, unit="count", when=with_shared_experts,
         expression=shared_formula,
         prompt="Every token also passes through n_shared_experts={n_shared_experts} shared expert(s) of width "
                "d_ff_expert={d_ff_expert}, unweighted. How many parameters do the shared experts hold over all "
                "layers with experts?",
         answer=lambda ctx: ctx.trace.params["shared experts"],
         explanation="n_shared_experts FFNs of width d_ff_expert that every token reads are one FFN of width "
                     "n_shared_experts · d_ff_expert (Hugging Face builds them so): its weights are counted once "
                     "per layer with experts, and all of them are active for every token. DeepSeek keeps them for "
                     "what every token needs, so the routed experts can specialise."),
    _ask(id="moe-shared-output", kind="shape", parametric=True, when=with_shared_experts,
         prompt="What is the shape of the shared experts' output in the first layer with experts, for N={N} "
                "sequences of M={M} tokens?",
         answer=row_shape("shared_expert_output"),
         explanation="The shared experts read every token, not a routed subset: (N, M, E) in and out, like a dense "
                     "FFN, added to the routed experts' weighted sum. Only the routed experts' inputs, (T_e, E), "
                     "depend on the data."),
)
