"""Generated campaigns, cached as JSONL under ``bench/results/cache`` keyed by size and seed.

Generating plays every fact through the real rules (about 1 ms per fact), so a 100k-fact
campaign takes minutes; the cache makes every later run start at once. A cache file is one
line per fact: ``[type, version, payload, meta]``. It is written to a temporary name and
renamed, so an interrupted generation never leaves a half file behind.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench.generator import CampaignGenerator
from domain import facts

RESULTS = Path(__file__).resolve().parent / "results"
CACHE = RESULTS / "cache"
GENERATOR_VERSION = 1  # bump when generator.py changes what it plays

Stored = tuple[str, int, dict[str, Any], dict[str, Any]]  # type, version, payload, meta


def cache_path(size: int, seed: int, cache_dir: Path = CACHE) -> Path:
    return cache_dir / f"stellar-winds-v{GENERATOR_VERSION}-n{size}-s{seed}.jsonl"


def campaign(size: int, seed: int = 1, cache_dir: Path = CACHE, quiet: bool = False) -> list[Stored]:
    """The facts of a generated campaign of ``size`` facts (positions 2..size+1)."""
    path = cache_path(size, seed, cache_dir)
    if path.exists():
        with path.open(encoding="utf-8") as fh:
            return [(t, v, p, m) for t, v, p, m in map(json.loads, fh)]
    began = time.perf_counter()
    if not quiet:
        print(f"  generating a {size:,}-fact campaign (seed {seed}); cached in {path}", file=sys.stderr)
    gen = CampaignGenerator(size, seed)
    out: list[Stored] = [(t, facts.VERSIONS[t], p, m) for t, p, m in gen.facts()]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for item in out:
            fh.write(json.dumps(item, separators=(",", ":")) + "\n")
    tmp.replace(path)
    if not quiet:
        took = time.perf_counter() - began
        print(f"  generated in {took:.1f} s ({took / size * 1e3:.2f} ms per fact)", file=sys.stderr)
    return out
