"""`vtt-bridge serve` (being written)."""


def register(sub) -> None:
    parser = sub.add_parser("serve", help="(not yet available)")
    parser.set_defaults(func=lambda args: print("not yet available") or 1)
