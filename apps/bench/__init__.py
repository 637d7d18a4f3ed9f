"""The lab: benchmarks and evaluations of the product, apart from it (ARCHITECTURE.md, "Apps").

Every `bench_*` and `eval_*` command and `redaction_eval` live here with their code. The app sits at
the top of the dependency levels: it imports what it measures, and nothing imports it.
"""
