"""Sections more than one page draws: the learner's text box, the tensors' values, experts, the KV cache."""
