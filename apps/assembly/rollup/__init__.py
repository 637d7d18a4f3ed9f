"""Assembly records summed per workspace and time bucket, so the dashboard never scans the records.

`services.rollup_advance` reads the records after the watermark (by id, in batches), adds them to
the bucket rows of `AssemblyRollup` / `AssemblyRollupCount` with one additive upsert per table, and
moves the watermark, all in one transaction under the watermark's row lock (two runners never count
a record twice). Records younger than `SETTLE_SECONDS` wait for the next run: an insert that took an
id earlier but commits later must not fall behind the watermark. The dashboard adds the tail after
the watermark itself (`selectors.records_tail`), with the same `sums.rollup_sums`.

Consumption reports and error-pattern hints come on their own time (a report, an injection, the
failure after it) and have time watermarks: `AssemblyRollupCount` rows of dimension
"consumption" (used / injected packages by report time) and "hints" (injected by injection time,
failed_after by the failure's time, read through `error_patterns.selectors.hint_events`), moved in
the same transaction on every run; a row stamped more than SETTLE_SECONDS before its commit would
fall behind them (the services stamp rows with the time of the write). Rolled-up hints outlive their
pattern (deleting a pattern deletes its injections, not the figures of their days).

`sums.py` adds rows up (no writes), `services.py` moves the watermarks and writes the rollups,
`selectors.py` reads them and the tails for the dashboard.
"""
