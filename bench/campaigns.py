"""Generated campaigns, cached on disk as the product's JSONL exports.

``cached(size, seed)`` returns the path of
``bench/.cache/stellar-winds-g<GENERATOR_VERSION>-s<seed>-n<size>.jsonl`` (gitignored),
generating it first if it is missing. The file is written by the product's exporter
(:func:`api.exports.jsonl.export_lines`: header, one line per fact, trailer with its
SHA-256), so ``chronicle import FILE`` reads it as it is; a sidecar ``.json`` holds the
generator's statistics (facts, corrections, orphans, seconds).

Generating plays every fact through the real rules (``Ledger.prepare``), and the fold is
superlinear today, so a 300k-fact campaign takes many minutes (bench/README.md says how long);
the cache makes every later run start at once. The key is the seed, the size and
``bench.generator.GENERATOR_VERSION``: bump the version when the generator changes what it
plays. A rules change does not regenerate: a cached campaign may then hold a few facts the
current rules refuse, and the fold orphans those (the fold figures report the orphan count).
``rm -r bench/.cache`` forces fresh campaigns. Files are written under a temporary name and
renamed, so an interrupted generation never leaves half a file.

Loading into a store (:func:`read`, used by ``bench.work load``) checks the trailer's count and
checksum but does not fold every fact again: the file was made by the fold. ``chronicle
import`` (which does) is measured as a figure of its own (bench/fig_exports.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from api.exports import jsonl
from api.exports.source import CampaignSource
from bench.generator import GENERATOR_VERSION, CampaignGenerator

BENCH = Path(__file__).resolve().parent
CACHE = BENCH / ".cache"
RESULTS = BENCH / "results"
HEADER = {"name": "Bench", "ruleset": "stellar-winds", "flags": {}, "meta": {}}

Stored = tuple[str, int, dict[str, Any], dict[str, Any]]  # type, version, payload, meta


def cache_path(size: int, seed: int, cache_dir: Path = CACHE) -> Path:
    return cache_dir / f"stellar-winds-g{GENERATOR_VERSION}-s{seed}-n{size}.jsonl"


def cached(size: int, seed: int = 1, cache_dir: Path = CACHE, quiet: bool = False) -> Path:
    """The JSONL export of a generated campaign of ``size`` facts, made if missing."""
    path = cache_path(size, seed, cache_dir)
    if path.exists():
        return path
    began = time.perf_counter()
    if not quiet:
        print(f"  generating a {size:,}-fact campaign (seed {seed}) into {path}", file=sys.stderr, flush=True)
    gen = CampaignGenerator(size, seed)
    for _ in gen.facts():
        pass
    source = CampaignSource(HEADER["name"], HEADER["ruleset"], {}, {}, gen.ledger)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for line in jsonl.export_lines(source):
            fh.write(line)
    took = time.perf_counter() - began
    stats = {
        "facts": len(gen.ledger.entries),
        "seed": seed,
        "generator_version": GENERATOR_VERSION,
        "corrections": gen.stats.corrections,
        "orphaning_corrections": gen.stats.orphaning,
        "orphans": len(gen.ledger.orphans),
        "refused_candidates": gen.stats.refused,
        "by_type": gen.stats.by_type,
        "seconds": round(took, 1),
    }
    path.with_suffix(".json").write_text(json.dumps(stats, indent=1) + "\n")
    tmp.replace(path)
    if not quiet:
        print(
            f"  generated in {took:.1f} s: {stats['corrections']} corrections, {stats['orphans']} orphans",
            file=sys.stderr,
            flush=True,
        )
    return path


def stats(path: Path) -> dict[str, Any]:
    """The generator's statistics for a cached campaign (empty if the sidecar is missing)."""
    side = path.with_suffix(".json")
    return json.loads(side.read_text()) if side.exists() else {}


def read(path: Path, limit: int | None = None) -> tuple[dict[str, Any], list[Stored]]:
    """The header and the facts of a cached export (the first ``limit`` facts if given).

    Checks the trailer (count and SHA-256) when reading the whole file; facts are not folded.
    """
    digest = hashlib.sha256()
    header: dict[str, Any] | None = None
    out: list[Stored] = []
    with path.open("rb") as fh:
        for raw in fh:
            obj = json.loads(raw)
            if header is None:
                header = obj
            elif obj.get("trailer") is True:
                if obj["facts"] != len(out) or obj["sha256"] != digest.hexdigest():
                    raise ValueError(f"{path}: trailer does not match (damaged cache file; delete it)")
                break
            else:
                out.append((obj["type"], obj["version"], obj["payload"], obj["meta"]))
                if limit is not None and len(out) >= limit:
                    break
            digest.update(raw)
    if header is None:
        raise ValueError(f"{path}: empty cache file")
    return header, out
