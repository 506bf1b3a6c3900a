"""The golden records: what every example resolves to, pinned so speed work cannot change a byte.

``tests/engine/golden_records.json.gz`` was captured from main before issue 12's
engine work. Regenerate it only for a change meant to alter records:

    .venv/bin/python tests/engine/golden.py --write
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("golden_records.json.gz")
SEEDS = (0, 1, 2, 3, 5, 8)


def cases() -> list[tuple[str, dict]]:
    """Every exalted2e example as written (scripted dice where it has them) and under a few seeds
    with the rest of the file unchanged; one example of every other ruleset as written."""
    out = []
    for path in sorted((ROOT / "plugins").glob("vtt_*/examples/*.json")):
        data = json.loads(path.read_text())
        name = f"{path.parent.parent.name}/{path.name}"
        out.append((name, data))
        if data["ruleset"] == "exalted2e":
            for seed in SEEDS:
                out.append((f"{name} seed {seed}", {**data, "seed": seed, "dice": None}))
    return out


def records(host) -> dict[str, dict]:
    """Each case's record, and the entries the server sends as the steps finish (advance by advance)."""
    from vtt_bridge.cli.resolve import load_tokens

    out = {}
    for name, data in cases():
        res = host.start(
            data["ruleset"],
            load_tokens(host, data),
            attacker=data["attacker"],
            targets=list(data["targets"]),
            declaration=data.get("declaration", {}),
            seed=data.get("seed"),
            dice=data.get("dice"),
            answers=dict(data.get("answers") or {}),
        )
        live, sent = [], 0
        while res.advance() is not None:  # as the server's worker: the finished steps, then the decision
            trace = res.ctx.trace
            live.append([trace[i].to_dict() for i in range(sent, len(trace) - 1)])
            sent = max(sent, len(trace) - 1)
            res.default("timeout")
        record = dict(res.record)
        # The plugins and versions it ran with (issue 28) name this install, not the rules: left out here.
        assert record.pop("packs")
        out[name] = json.loads(json.dumps({"record": record, "live": live}))
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    from vtt_bridge import make_host

    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    text = json.dumps(records(make_host()), sort_keys=True, separators=(",", ":")) + "\n"
    GOLDEN.write_bytes(gzip.compress(text.encode(), mtime=0))
    print(f"wrote {GOLDEN}")
