"""Quizzes whose expected answers are computed from the live model for the learner's config.

``bank`` holds every question (one module per topic under ``topics``); ``check`` parses and checks
answers; ``progress`` keeps a learner's attempts as plain JSON, and ``recheck`` marks an imported
file's attempts again against the model. ``python -m quizzes`` prints the answer key for a config.
"""

from .bank import BY_ID, QUESTIONS, TOPICS, answer_key, questions_for
from .check import check, format_answer, parse_number, parse_shape
from .questions import KIND_LABELS, KINDS, Context, Question

__all__ = ["QUESTIONS", "TOPICS", "BY_ID", "answer_key", "questions_for", "check", "format_answer",
           "parse_shape", "parse_number", "Context", "Question", "KINDS", "KIND_LABELS"]
