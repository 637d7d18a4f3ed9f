"""Retrieval-quality evaluation: a hand-written conversational set and evidence recall by budget.

`dataset.json` holds multi-session conversations and questions with the turns that answer them;
`runner.evaluate` loads it into a fresh workspace, asks `context_assemble` every question at each
budget, and compares the evidence recall with a recency window and a plain fused baseline.
"""
