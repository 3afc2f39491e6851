"""Campaign-log exports (Markdown story, JSONL data, printable HTML) and the JSONL import.

- ``api.exports.story``: the story as data (pure; the fold's outcomes turned into sentences);
- ``api.exports.render``: Markdown and HTML as generators of text chunks;
- ``api.exports.jsonl``: the JSONL format, its export and its validating reader;
- ``api.exports.source``: a consistent private copy of a campaign, and the part to export;
- ``api.exports.service``: the entry points used by the CLI (``api.cli.exports``) and HTTP
  (``api.http.exports``).
"""
