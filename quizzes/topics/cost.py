"""What a model costs: FLOPs per token, 6ND, Adam's bytes, the s² term and FlashAttention, the decode bound,
the weights against the cache at a long context, and a mixture of experts' active and total parameters.
Every answer is read off core.cost (the "cost" experiment), at the learner's sizes where it is parametric."""

from quizzes.experiments.cost import LONG_BATCH, LONG_CONTEXT
from quizzes.questions import DECODER_ONLY, Context, Question, outcome, value

TOPIC = "Cost"


def _active(ctx: Context) -> str:
    return f"(Your model has {ctx.value('cost', 'active'):,} active parameters.)"


def _total(ctx: Context) -> str:
    return f"(Your model has {ctx.value('cost', 'total'):,} parameters.)"


_ADAM = ("4 bytes", "8 bytes", "12 bytes", "16 bytes")
_S2 = ("The attention map, 5·a·s²·b: the softmax's output, its dropout mask and the dropout's output",
       "The linear parts, 34·s·b·h: the inputs the matrix multiplies keep",
       "Neither: both grow in proportion to s")
_FLASH = ("The 5·a·s/h term: the attention map, which the fused kernel never stores and recomputes in backward",
          "The 34 in s·b·h·(34 + 5·a·s/h): the linear parts' saved inputs",
          "The KV cache")
_BIGGER = ("The weights", "The KV cache", "About the same")
_MOE_COMPUTE = ("The active parameters: a token runs only its top-k experts",
                "The total parameters: every expert multiplies every token")
_MOE_MEMORY = ("The active parameters: only the chosen experts are loaded",
               "The total parameters: every expert must be held, since any token may pick it")


def _near(a: float, b: float, rel: float = 0.02) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b))


QUESTIONS = (
    Question(
        id="cost-flops-token", topic=TOPIC, kind="numeric", parametric=True, tolerance=0.02, unit="count",
        prompt="How many FLOPs does your model spend on one token in a forward pass with a context of M={M}, "
               "counting 2 FLOPs (a multiply and an add) for each weight a matrix multiply uses, plus attention's "
               "scores and weighted sums? (within 2%)",
        aside=_active, answer=value("cost", "flops_per_token"), evidence="cost",
        explanation="About 2 · P_active for the weights a token is multiplied by (not the embeddings, which are "
                    "looked up), plus 2 · 2 · layers · M · (nhead · d_k) for the scores q·kᵀ and the weighted sum of "
                    "V over M positions. For a small model the second term, and the embeddings left out, matter; "
                    "for a large one 2 · P is close. FlopCounterMode counts the same on the model's own pass.",
    ),
    Question(
        id="cost-chinchilla", topic=TOPIC, kind="numeric", parametric=True, tolerance=0.02, unit="count",
        prompt="How many training tokens D are compute-optimal for your model, by Chinchilla's rule of thumb? "
               "(within 2%)",
        aside=_active, answer=value("cost", "chinchilla_tokens"), evidence="cost",
        explanation="Hoffmann et al. (2022) found that for a given compute budget the best model sees about 20 "
                    "tokens per parameter: D ≈ 20 · P_active. A 70-billion-parameter model wants 1.4 trillion tokens.",
    ),
    Question(
        id="cost-6nd", topic=TOPIC, kind="numeric", parametric=True, tolerance=0.02, unit="count",
        prompt="How many FLOPs does training your model on its compute-optimal D = 20 · P_active tokens take, by the "
               "usual 6 · N · D? (within 2%)",
        aside=_active, answer=value("cost", "training_flops"), evidence="cost",
        explanation="Each token costs about 2 FLOPs a parameter forward and 4 backward (the gradients of the inputs "
                    "and of the weights): 6 · P_active · D. At 70 billion parameters and 1.4 trillion tokens that is "
                    "5.88e23 FLOPs.",
    ),
    Question(
        id="cost-adam-bytes", topic=TOPIC, kind="choice", choices=_ADAM,
        prompt="Training with mixed-precision Adam, how many bytes does each parameter cost for its weight, its "
               "gradient and the optimizer's state (activations aside)?",
        answer=outcome("cost", lambda v: _ADAM.index(f"{v['adam_bytes']} bytes"), _ADAM), evidence="cost",
        explanation="2 bytes for the bf16 weight, 2 for its bf16 gradient, and 12 for the optimizer: an fp32 master "
                    "copy of the weight, Adam's momentum and its variance, 4 bytes each. 16 in all: full fine-tuning "
                    "of Mixtral-8x7B's 46.7 billion parameters needs 747 GB before a single activation.",
    ),
    Question(
        id="cost-adam-total", topic=TOPIC, kind="numeric", parametric=True, tolerance=0.02, unit="count",
        prompt="So how many bytes do the weights, gradients and mixed-precision Adam state of your model take on one "
               "GPU, without ZeRO? (within 2%)",
        aside=_total, answer=value("cost", "adam_total_bytes"), evidence="cost",
        explanation="16 bytes for every parameter, active or not: every expert of a mixture of experts is trained "
                    "and has its own state. ZeRO divides the optimizer state (stage 1), then the gradients (2), then "
                    "the weights (3) among the data-parallel GPUs.",
    ),
    Question(
        id="cost-s2", topic=TOPIC, kind="choice", choices=_S2,
        prompt="Korthikanti et al. (2022) count a GPT layer's saved activations as s·b·h·(34 + 5·a·s/h) bytes, for "
               "context s, batch b, width h and a heads. Double the context: which part grows four times?",
        answer=outcome("cost", lambda v: 0 if _near(v["map_growth"], 4) else 1 if _near(v["linear_growth"], 4)
                       else 2, _S2), evidence="cost",
        explanation="5·a·s/h times s·b·h is 5·a·s²·b: the attention map holds a score for every pair of positions in "
                    "every head, so it grows with s². The 34·s·b·h of the linear parts grows with s. At long context "
                    "the map dominates.",
    ),
    Question(
        id="cost-flash", topic=TOPIC, kind="choice", choices=_FLASH,
        prompt="Turn FlashAttention on for that layer. Which part of s·b·h·(34 + 5·a·s/h) goes?",
        answer=outcome("cost", lambda v: 0 if v["flash_bytes"] == v["selective_bytes"] < v["none_bytes"] else 1,
                       _FLASH), evidence="cost",
        explanation="FlashAttention computes softmax(q·kᵀ)·V in tiles and keeps only each row's softmax statistics, "
                    "so the M × M weights are never stored: it recomputes them in backward. What is left is 34·s·b·h, "
                    "the same as selective recomputation. Our spelled-out attention keeps the weights, N · nhead · M² "
                    "numbers a layer, which the Cost page's live check shows.",
    ),
    Question(
        id="cost-decode", topic=TOPIC, kind="numeric", parametric=True, tolerance=0.02, unit="count",
        families=DECODER_ONLY,
        prompt="Generating one sequence (batch 1) with a context of M={M} tokens on an H100 SXM (3,350 GB/s), every "
               "step reads all the active bf16 weights and the bf16 KV cache once. What upper bound on tokens a "
               "second does the memory bandwidth set? (within 2%)",
        aside=_active, answer=value("cost", "decode_tokens_s"), evidence="cost",
        explanation="Tokens a second ≤ bandwidth / (bytes read a step) = 3.35e12 / (2 · P_active + cache bytes). At "
                    "batch 1 a decode step is bound by memory, not compute: the GPU's arithmetic waits on reading the "
                    "weights. A bigger batch reads the weights once for many sequences.",
    ),
    Question(
        id="cost-cache-long", topic=TOPIC, kind="numeric", parametric=True, tolerance=0.02, unit="count",
        families=DECODER_ONLY,
        prompt=f"How many bytes does your model's KV cache hold in bf16 for {LONG_BATCH} sequences of {LONG_CONTEXT:,} "
               "tokens each, with layers={layers}, nhead_kv={nhead_kv} and d_k={d_k}? (within 2%)",
        answer=value("cost", "long_cache_bytes"), evidence="cost",
        explanation="layers · 2 (K and V) · nhead_kv · d_k numbers a token, 2 bytes each, for every token of every "
                    "sequence: it grows with the context and the batch, while the weights stay fixed.",
    ),
    Question(
        id="cost-weights-cache", topic=TOPIC, kind="choice", choices=_BIGGER, families=DECODER_ONLY,
        prompt=f"In bf16, with a context of {LONG_CONTEXT:,} tokens and a batch of {LONG_BATCH} sequences, which "
               "takes more memory for your model: its weights, or its KV cache?",
        aside=_total,
        answer=outcome("cost", lambda v: 2 if _near(v["long_weights_bytes"], v["long_cache_bytes"], 0.05)
                       else 0 if v["long_weights_bytes"] > v["long_cache_bytes"] else 1, _BIGGER), evidence="cost",
        explanation="The weights are fixed; the cache grows with every token of every sequence: layers · 2 · "
                    "nhead_kv · d_k numbers a token (fewer with GQA or latent attention, capped by a sliding window). "
                    "At long context and a few sequences the cache of a small or multi-head model outgrows the "
                    "weights; the chart shows both.",
    ),
    Question(
        id="cost-moe-compute", topic=TOPIC, kind="choice", choices=_MOE_COMPUTE,
        prompt="Mixtral-8x7B routes each token to 2 of its 8 experts. Which parameter count sets its FLOPs per token?",
        answer=outcome("cost", lambda v: 0 if abs(v["moe_flops_per_token"] / 2 - v["moe_active"])
                       < abs(v["moe_flops_per_token"] / 2 - v["moe_total"]) else 1, _MOE_COMPUTE), evidence="cost",
        explanation="A token runs its 2 chosen experts and skips the other 6, so its FLOPs are about 2 · P_active "
                    "(12.9 billion active parameters of 46.7 billion): compute like a 13B model.",
    ),
    Question(
        id="cost-moe-memory", topic=TOPIC, kind="choice", choices=_MOE_MEMORY,
        prompt="And which parameter count sets the memory Mixtral-8x7B's weights need?",
        answer=outcome("cost", lambda v: 1 if v["moe_weights_bytes"] == 2 * v["moe_total"] else 0, _MOE_MEMORY),
        evidence="cost",
        explanation="Every token may pick any expert, so every expert must be in memory: 2 bytes × 46.7 billion "
                    "parameters in bf16, about 93 GB. A mixture of experts computes like its active parameters and "
                    "is stored like its total.",
    ),
)
