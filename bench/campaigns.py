"""Generated campaigns, cached as JSONL under ``bench/results/cache`` keyed by size and seed.

The key also holds a digest of ``bench/generator.py`` and the fact catalogues (the fact schemas),
so a change to what is played or to the payload shapes regenerates. A change to the rules does
not: a campaign cached under older rules may hold a few facts the current rules refuse, and the
fold orphans those (the benchmarks report the orphan count). ``rm -r bench/results/cache`` forces
a fresh campaign.

Generating plays every fact through the real rules (about 1 ms per fact), so a 100k-fact
campaign takes minutes; the cache makes every later run start at once. A cache file is one
line per fact: ``[type, version, payload, meta]``. It is written to a temporary name and
renamed, so an interrupted generation never leaves a half file behind.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench.generator import CampaignGenerator
from domain.rulesets.stellar_winds.facts import CATALOGUE as facts

RESULTS = Path(__file__).resolve().parent / "results"
CACHE = RESULTS / "cache"
REPO = Path(__file__).resolve().parents[1]
SOURCES = ("bench/generator.py", "domain/core/catalogue.py", "domain/rulesets/stellar_winds/facts.py")

Stored = tuple[str, int, dict[str, Any], dict[str, Any]]  # type, version, payload, meta


def code_digest() -> str:
    """A short digest of the generator and the fact schemas."""
    h = hashlib.sha256()
    for path in (REPO / s for s in SOURCES):
        h.update(path.relative_to(REPO).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:10]


def cache_path(size: int, seed: int, cache_dir: Path = CACHE) -> Path:
    return cache_dir / f"stellar-winds-{code_digest()}-n{size}-s{seed}.jsonl"


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
    out: list[Stored] = [(t, facts.versions[t], p, m) for t, p, m in gen.facts()]
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
