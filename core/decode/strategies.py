"""Decoding strategies, each a short loop over a model's decoder and its KV cache, recording every step.

Legend for the shape comments:
    N sequences   B beams   S samples   M prompt length   t tokens so far   vocab_size tokens

Every strategy starts the same way: one pass over the prompt under the causal mask fills the cache, and each
later pass feeds only the newest token (core.kv_cache). What differs is how the next token is picked:
greedy takes the most likely; beam search keeps the B best partial sequences by total log-probability;
sampling draws from the (filtered) distribution; minimum Bayes risk draws S samples and keeps the one that
agrees most with the others. Teacher forcing, for contrast, needs no loop at all.

An encoder-decoder decodes the same way from its decoder's start tokens (the prompt), given its source
``src``: the encoder runs once, and every step's cross-attention reads that memory.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..model import Transformer, generate_square_subsequent_mask
from .filters import check_sampling, filtered
from .records import Decoding, Record, Step, record, shape_only

MAX_NEW_TOKENS = 256
MAX_BEAMS = 16
MAX_SAMPLES = 32
EARLY_STOPPING = (False, True, "never")
NEG = -1.0e9  # a score no real hypothesis reaches: marks a slot as empty, as Hugging Face does


def check_run(model: Transformer, prompt: Tensor, G: int, src: Tensor | None = None) -> None:
    """Raise ValueError naming what cannot run: the family, the source, the number of new tokens, or the length."""
    if model.decoder is None:
        raise ValueError(f"arch={model.arch!r} has no decoder to generate with; use a decoder-only or an "
                         "encoder-decoder model")
    if (model.encoder is None) != (src is None):
        raise ValueError("an encoder-decoder model decodes from a source (src, (N, M)), a decoder-only one from "
                         "its prompt alone: give src exactly when the model has an encoder")
    if src is not None and (src.ndim != 2 or src.shape[0] != prompt.shape[0]):
        raise ValueError(f"src has shape {tuple(src.shape)}; it must be (N, M) with N = {prompt.shape[0]}")
    if isinstance(G, bool) or not isinstance(G, int) or not 1 <= G <= MAX_NEW_TOKENS:
        raise ValueError(f"max_new_tokens={G!r} must be a whole number from 1 to {MAX_NEW_TOKENS}")
    if prompt.ndim != 2 or prompt.shape[1] < 1:
        raise ValueError(f"the prompt has shape {tuple(prompt.shape)}; it must be (N, M) with at least one token")
    table = model.positional
    if table.kind == "learned" and prompt.shape[1] + G > table.max_len:
        raise ValueError(f"M + max_new_tokens = {prompt.shape[1]} + {G} is longer than the model's {table.max_len} "
                         "learned positions; shorten the prompt or generate fewer tokens")


def prefill(model: Transformer, prompt: Tensor, src: Tensor | None = None
            ) -> tuple[Tensor, list[dict[str, Tensor]], Tensor | None]:
    """One pass over the prompt (N, M) under the causal mask: the next-token logits (N, vocab_size), the cache,
    and for an encoder-decoder the encoder's memory (N, M_src, E), computed once: the source never changes."""
    cache: list[dict[str, Tensor]] = [{} for _ in model.decoder]
    memory = None if src is None else model.encode(src)  # (N, M_src, E)
    mask = generate_square_subsequent_mask(prompt.shape[1])  # (M, M)
    return next_logits(model, prompt, cache, memory, mask), cache, memory


def next_logits(model: Transformer, new: Tensor, cache: list[dict[str, Tensor]], memory: Tensor | None = None,
                mask: Tensor | None = None) -> Tensor:
    """The decoder over the new tokens (N, L), their keys and values joining the cache, then the output layer:
    the last position's logits (N, vocab_size). One new token needs no mask: it may see every cached key."""
    return model.output(model.decode(new, memory, tgt_mask=mask, cache=cache))[:, -1]  # (N, L, vocab_size) -> (N, vocab_size)


def cache_record(cache: list[dict[str, Tensor]], note: str = "") -> Record:
    """The cache's shape (layers, 2, rows, nhead_kv, t, d_k): one K and one V per layer."""
    return shape_only("kv_cache", (len(cache), 2, *cache[0]["k"].shape), note)


def rows_of(memory: Tensor | None, times: int) -> Tensor | None:
    """The memory for ``times`` rows per sequence (beams, samples): each row reads its own sequence's source."""
    return None if memory is None else memory.repeat_interleave(times, dim=0)  # (N*times, M_src, E)


def reorder(cache: list[dict[str, Tensor]], index: Tensor) -> None:
    """Row i of every layer's K and V becomes row index[i]: each surviving beam takes its parent's past."""
    for layer in cache:
        layer["k"] = layer["k"].index_select(0, index)  # (N*B, nhead_kv, t, d_k)
        layer["v"] = layer["v"].index_select(0, index)  # (N*B, nhead_kv, t, d_k)


@torch.inference_mode()
def greedy(model: Transformer, prompt: Tensor, G: int, eos: int | None = None, src: Tensor | None = None) -> Decoding:
    """Take the most likely token at each step. A row that produced ``eos`` stops; its later slots are padding
    (eos again), left out of ``generated``. ``src`` (N, M_src) is an encoder-decoder's source."""
    check_run(model, prompt, G, src)
    N = prompt.shape[0]
    logits, cache, memory = prefill(model, prompt, src)  # (N, vocab_size)
    done = torch.zeros(N, dtype=torch.bool)  # (N,)
    out, steps = [], []
    for i in range(G):
        token = logits.argmax(-1)  # (N,)
        if eos is not None:
            token = token.masked_fill(done, eos)  # a finished row only pads
        steps.append(Step(i, (record("logits", logits), record("probs", logits.softmax(-1)),
                              record("token", token[:, None]), cache_record(cache))))
        out.append(token)
        done |= token == eos if eos is not None else done
        if bool(done.all()) or i == G - 1:
            break
        logits = next_logits(model, token[:, None], cache, memory)  # (N, 1) -> (N, vocab_size)
    tokens = torch.stack(out, dim=1)  # (N, G)
    return Decoding("greedy", {"max_new_tokens": G, "eos": eos}, prompt.tolist(), tuple(steps),
                    _until_eos(tokens, eos))


def _until_eos(tokens: Tensor, eos: int | None) -> list[list[int]]:
    """Each row's ids up to and including its first eos."""
    rows = []
    for row in tokens.tolist():
        rows.append(row[:row.index(eos) + 1] if eos is not None and eos in row else row)
    return rows


def _check_beams(B: int, length_penalty: float, early_stopping) -> None:
    if isinstance(B, bool) or not isinstance(B, int) or not 1 <= B <= MAX_BEAMS:
        raise ValueError(f"beams={B!r} must be a whole number from 1 to {MAX_BEAMS}")
    if not isinstance(length_penalty, (int, float)) or not -10 <= length_penalty <= 10:
        raise ValueError(f"length_penalty={length_penalty!r} must be a number from -10 to 10; try 1.0 (0 adds no "
                         "penalty, above 0 favours longer hypotheses)")
    if not any(early_stopping is e for e in EARLY_STOPPING):
        raise ValueError(f"early_stopping={early_stopping!r} must be False, True or 'never'")


@torch.inference_mode()
def beam_search(model: Transformer, prompt: Tensor, G: int, B: int = 4, length_penalty: float = 1.0,
                early_stopping: bool | str = False, eos: int | None = None, src: Tensor | None = None) -> Decoding:
    """Keep the B best partial sequences of each prompt by their summed log-probabilities.

    Each step scores every beam's every next token, B · vocab_size candidates per sequence, keeps the best 2B
    (so B remain even if up to B of them end), sends those that end (``eos``, or the last step) among the top
    B to the finished hypotheses, scored ``sum log p / length ** length_penalty``, and continues the best B
    others; the cache's rows are reordered to follow them. A sequence stops taking hypotheses once it has B
    and (``early_stopping`` False) no running beam could beat the worst of them at its current length, or
    (True) at once; "never" assumes the longest length when length_penalty > 0. These are Hugging Face
    ``generate``'s rules, so both pick the same ids.
    """
    check_run(model, prompt, G, src)
    _check_beams(B, length_penalty, early_stopping)
    N, M = prompt.shape
    beams = prompt.repeat_interleave(B, dim=0)  # (N*B, M): every prompt B times, one row per beam
    scores = torch.full((N, B), NEG)  # (N, B)
    scores[:, 0] = 0.0  # the B copies are equal: let only the first grow at step 0, or all B would pick alike
    finished: list[list[tuple[float, list[int]]]] = [[] for _ in range(N)]  # per sequence: (score, ids), best first
    open_ = [True] * N  # whether a sequence still takes finished hypotheses
    logits, cache, memory = prefill(model, beams, rows_of(src, B))  # (N*B, vocab_size); memory (N*B, M_src, E)
    V = logits.shape[-1]
    steps = []
    for i in range(G):
        t = beams.shape[1]  # M + i
        logp = torch.log_softmax(logits.float(), dim=-1)  # (N*B, vocab_size)
        candidates = (logp.view(N, B, V) + scores[:, :, None]).view(N, B * V)  # (N, B*vocab_size)
        best, flat = candidates.topk(2 * B, dim=-1)  # (N, 2B)
        parent, token = flat // V, flat % V  # (N, 2B) each: which beam it grows, and by which token
        rows = parent + torch.arange(N)[:, None] * B  # (N, 2B): the parent's row in beams
        grown = torch.cat((beams[rows], token[..., None]), dim=-1)  # (N, 2B, t + 1)
        ends = token == eos if eos is not None else torch.zeros_like(token, dtype=torch.bool)  # (N, 2B)
        ends = ends | (i == G - 1)  # the last step ends every candidate
        length = i + 1  # new tokens in a candidate, eos included
        for n in range(N):
            full = len(finished[n]) == B
            if not open_[n] or (full and early_stopping is True):
                continue
            for rank in range(B):  # only the top B candidates may end; the rest are spares
                if ends[n, rank]:
                    score = float(best[n, rank] / length ** length_penalty)  # float32, as the scores are
                    finished[n] = sorted(finished[n] + [(score, grown[n, rank].tolist())], key=lambda h: -h[0])[:B]
        alive = best + ends.float() * NEG  # (N, 2B): an ended candidate cannot continue
        scores, keep = alive.topk(B, dim=-1)  # (N, B)
        chosen = rows.gather(1, keep).view(-1)  # (N*B,): each new beam's parent row
        beams = grown.gather(1, keep[..., None].expand(-1, -1, t + 1)).view(N * B, t + 1)  # (N*B, t + 1)
        steps.append(Step(i, (
            record("logits", logits), record("log_probs", logp),
            record("candidates", candidates, "every beam's score plus each token's log-probability"),
            record("top_2B_scores", best), record("top_2B_parent", parent), record("top_2B_token", token),
            record("beams", beams, "(N·B, t): the running beams after this step"),
            record("beam_scores", scores, "(N, B): each beam's summed log-probability"),
            record("beam_parent", parent.gather(1, keep), "which beam each new beam grew from"),
            record("reorder_index", chosen, "row i of the cache now holds row index[i]'s past"),
            cache_record(cache, "before the reorder"),
            Record("finished", (N, B), [[[s, ids] for s, ids in hyps] for hyps in finished],
                   "per sequence, up to B ended hypotheses (score, ids), best first"),
        )))
        if i == G - 1:
            break
        reorder(cache, chosen)
        # Stop taking hypotheses once even the best running beam, at today's length, cannot beat the worst one.
        longest = G if early_stopping == "never" and length_penalty > 0 else length
        for n in range(N):
            full = len(finished[n]) == B
            if full and float(scores[n, 0] / longest ** length_penalty) <= finished[n][-1][0]:
                open_[n] = False
        if not any(open_) or (early_stopping is True and all(len(h) == B for h in finished)):
            break
        # The memory needs no reorder: a prompt's B rows hold the same source, and a beam's parent is one of them.
        logits = next_logits(model, beams[:, -1:], cache, memory)  # (N*B, 1) -> (N*B, vocab_size)
    generated = [hyps[0][1][M:] for hyps in finished]
    extras = (Record("finished", (N, B), [[[s, ids[M:]] for s, ids in hyps] for hyps in finished],
                     "each sequence's ended hypotheses, new ids only, best first"),)
    settings = {"max_new_tokens": G, "beams": B, "length_penalty": length_penalty, "early_stopping": early_stopping,
                "eos": eos}
    return Decoding("beam", settings, prompt.tolist(), tuple(steps), generated, extras)


@torch.inference_mode()
def sample(model: Transformer, prompt: Tensor, G: int, temperature: float = 1.0, top_k: int | None = None,
           top_p: float = 1.0, seed: int = 0, eos: int | None = None, src: Tensor | None = None) -> Decoding:
    """Draw each token from the distribution after temperature, top-k and top-p, with a generator seeded by
    ``seed``: the same seed gives the same run, so a link reproduces it."""
    check_run(model, prompt, G, src)
    logits, cache, memory = prefill(model, prompt, src)  # (N, vocab_size)
    check_sampling(temperature, top_k, top_p, logits.shape[-1])
    gen = torch.Generator().manual_seed(seed)
    N = prompt.shape[0]
    done = torch.zeros(N, dtype=torch.bool)  # (N,)
    out, steps = [], []
    for i in range(G):
        stages = filtered(logits.float(), temperature, top_k, top_p)  # each (N, vocab_size)
        token = torch.multinomial(stages["after top-p"], 1, generator=gen)[:, 0]  # (N,)
        if eos is not None:
            token = token.masked_fill(done, eos)
        kept = (stages["after top-p"] > 0).sum(-1)  # (N,)
        steps.append(Step(i, (record("logits", logits), *(record(k, v) for k, v in stages.items()),
                              record("kept", kept, "tokens left to draw from"), record("token", token[:, None]),
                              cache_record(cache))))
        out.append(token)
        done |= token == eos if eos is not None else done
        if bool(done.all()) or i == G - 1:
            break
        logits = next_logits(model, token[:, None], cache, memory)  # (N, 1) -> (N, vocab_size)
    settings = {"max_new_tokens": G, "temperature": temperature, "top_k": top_k, "top_p": top_p, "seed": seed,
                "eos": eos}
    return Decoding("sample", settings, prompt.tolist(), tuple(steps), _until_eos(torch.stack(out, 1), eos))


def unigram_f1(a: list[int], b: list[int]) -> float:
    """Unigram F1, the utility MBR uses here: how many tokens two continuations share, counted with repeats
    (a token twice in each counts twice), as 2 · shared / (len(a) + len(b)); 1 for identical bags of tokens,
    0 for none in common (and 1 for two empty ones)."""
    if not a and not b:
        return 1.0
    remaining = list(b)
    shared = 0
    for token in a:
        if token in remaining:
            remaining.remove(token)
            shared += 1
    return 2 * shared / (len(a) + len(b))


@torch.inference_mode()
def mbr(model: Transformer, prompt: Tensor, G: int, S: int = 8, temperature: float = 1.0, top_k: int | None = None,
        top_p: float = 1.0, seed: int = 0, eos: int | None = None, src: Tensor | None = None) -> Decoding:
    """Minimum Bayes risk: draw S samples per prompt, fill an (S, S) matrix with the unigram F1 of every pair,
    and keep the sample whose mean utility against the other S - 1 is highest (the least risky: the one the
    others agree with most); a tie goes to the earlier sample."""
    if isinstance(S, bool) or not isinstance(S, int) or not 2 <= S <= MAX_SAMPLES:
        raise ValueError(f"samples={S!r} must be a whole number from 2 to {MAX_SAMPLES}")
    N = prompt.shape[0]
    drawn = sample(model, prompt.repeat_interleave(S, dim=0), G, temperature, top_k, top_p, seed, eos,
                   None if src is None else src.repeat_interleave(S, dim=0))  # N*S rows
    matrices, chosen, generated = [], [], []
    for n in range(N):
        group = drawn.generated[n * S:(n + 1) * S]
        U = torch.tensor([[unigram_f1(a, b) for b in group] for a in group])  # (S, S), symmetric, 1 on the diagonal
        expected = (U.sum(1) - U.diagonal()) / (S - 1)  # (S,): mean utility against the others
        best = int(expected.argmax())
        matrices.append(U)
        chosen.append(best)
        generated.append(group[best])
    extras = (record("utility", torch.stack(matrices), "(N, S, S): unigram F1 of sample i against sample j"),
              Record("samples", (N * S,), drawn.generated, "every sample's new ids, S per sequence"),
              Record("chosen", (N,), chosen, "per sequence, the sample with the highest mean utility"))
    settings = dict(drawn.settings, samples=S)
    return Decoding("mbr", settings, prompt.tolist(), drawn.steps, generated, extras)


@torch.inference_mode()
def teacher_forcing(model: Transformer, prompt: Tensor, target: Tensor, src: Tensor | None = None) -> Decoding:
    """One pass over the prompt and the target shifted right, no loop: the logits at every position at once.

    The input is prompt + target[:-1] (N, M + T - 1); its last T positions predict the T target tokens, each
    from the true tokens before it, not from the model's own guesses. Training works this way.
    """
    if target.ndim != 2 or target.shape[0] != prompt.shape[0] or target.shape[1] < 1:
        raise ValueError(f"target has shape {tuple(target.shape)}; it must be (N, T) with N = {prompt.shape[0]}")
    check_run(model, prompt, target.shape[1], src)
    M, T = prompt.shape[1], target.shape[1]
    inputs = torch.cat((prompt, target[:, :-1]), dim=1)  # (N, M + T - 1)
    logits = model(src, inputs, tgt_mask=generate_square_subsequent_mask(inputs.shape[1]))  # (N, M + T - 1, vocab_size)
    predicting = logits[:, M - 1:]  # (N, T, vocab_size): position M - 1 + j predicts target j
    loss = torch.nn.functional.cross_entropy(predicting.transpose(1, 2), target)  # mean over N and T
    step = Step(0, (record("inputs", inputs, "the prompt and the target shifted right"),
                    record("logits", logits, "(N, M + T - 1, vocab_size): every position in one pass"),
                    record("argmax", predicting.argmax(-1), "what the model would pick at each target position"),
                    record("target", target), record("loss", loss, "mean cross-entropy over the target")))
    return Decoding("teacher_forcing", {"target_length": T}, prompt.tolist(), (step,), predicting.argmax(-1).tolist())
