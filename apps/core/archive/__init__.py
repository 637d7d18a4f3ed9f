"""Whole-workspace archives (issue 24): the format, the registry of parts, export and restore.

An archive is a zip file of JSON-lines members, one per part (`layers.jsonl`, `items.jsonl`, ...),
and `manifest.json`, written last: the format name and version, the app's version (the last
migration of every app), the source workspace, whether embeddings are in, and per member its rows,
bytes and SHA-256 (of the uncompressed member). Core knows no model of a higher app: each app
registers the parts it owns in its `AppConfig.ready` (`parts.register`), reading and writing only
its own tables; `export.archive_export` and `restore.archive_restore` run them in order. Rows name
other rows by their ids in the source database; a restore maps each to the id its copy got
(`parts.IdMap`), so ids are new and external ids stay. docs/workspace-archive.md describes the format.
"""
