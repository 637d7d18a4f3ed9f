"""Experiments: a workspace's question sets asked with two profiles, recall, tokens and latency kept per run.

The pages' counterpart of `eval_locomo`, on the user's own data: the same recall rule (`recall.py`,
which the lab imports), asked through `context_preview` as page runs.
"""
