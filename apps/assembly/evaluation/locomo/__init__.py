"""The LoCoMo development set (`manage.py eval_locomo`): public long conversations, measured as a
client would use the service, beside plain BM25, dense and fused baselines computed in the same run.

The metric is the one defined in `../shared/locomo-dev/README.md`; the data is read from there at
run time and never copied into the repository.
"""
