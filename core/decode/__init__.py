"""Decoding: greedy, beam search, sampling (temperature, top-k, top-p), minimum Bayes risk and, for contrast,
teacher forcing, each over a decoder-only model and its KV cache, with every step's tensors recorded."""

from .filters import filtered, temperature, top_k, top_p
from .records import Decoding, Record, Step
from .strategies import beam_search, greedy, mbr, sample, teacher_forcing, unigram_f1

__all__ = ["Decoding", "Record", "Step", "beam_search", "filtered", "greedy", "mbr", "sample", "teacher_forcing",
           "temperature", "top_k", "top_p", "unigram_f1"]
