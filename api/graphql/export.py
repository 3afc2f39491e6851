"""``python -m api.graphql.export [PATH]``: write the schema's SDL (default ``schema.graphql``)."""

from __future__ import annotations

import sys
from pathlib import Path

from api.graphql.schema import schema_sdl

if __name__ == "__main__":
    target = Path(
        sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "schema.graphql"
    )
    target.write_text(schema_sdl(), encoding="utf-8")
    print(f"wrote {target}")
