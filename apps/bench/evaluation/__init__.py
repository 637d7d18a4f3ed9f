"""Retrieval quality: evidence recall of assembled contexts by budget, beside same-run baselines.

One harness, two sets: the hand-written set (`handwritten.py`, `dataset.json`, `eval_retrieval`) and
the LoCoMo development set (`locomo.py`, `eval_locomo`), each read into the same types (`data.py`).
`load.py` writes a set into a fresh workspace through the service's write path (or finds one kept
earlier), `ask.py` asks every question at every budget through `context_assemble` and packs the
baselines (`baselines.py`) on the same turns, `apps/experiments/recall.py` scores them (the pages'
experiments use the same rule), `report.py` prints one report;
`command.py` is both commands.
"""
