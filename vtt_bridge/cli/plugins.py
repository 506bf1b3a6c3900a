"""``vtt-bridge plugins``: what is loaded, and who implements each step, in call order."""

from __future__ import annotations

import json

from ..plugins import make_host


def register(sub) -> None:
    parser = sub.add_parser("plugins", help="list loaded plugins and, per ruleset step, who implements it")
    parser.add_argument("--json", action="store_true", help="print as JSON")
    parser.set_defaults(func=run)


def describe(host) -> dict:
    rulesets = {}
    for ruleset in host.rulesets.values():
        steps = []
        for step in ruleset.all_steps():
            entry = {"step": step.name, "title": step.title, "plugins": host.call_order(f"{ruleset.id}_{step.name}")}
            if step.ask is not None:
                entry["decision"] = step.ask.name
                entry["options_from"] = host.call_order(f"{ruleset.id}_{step.ask.name}_options")
            steps.append(entry)
        rulesets[ruleset.id] = {"title": ruleset.title, "steps": steps}
    return {"plugins": [p.to_dict() for p in host.plugins()], "rulesets": rulesets}


def run(args) -> int:
    host = make_host(plugins=args.plugin)
    info = describe(host)
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print("Plugins:")
    for p in info["plugins"]:
        dist = f"{p['distribution']} {p['version']}" if p["distribution"] else "(not from a distribution)"
        print(f"  {p['name']:24s} {dist:28s} {p['module']}")
    for rid, rs in info["rulesets"].items():
        print(f"\n{rid} — {rs['title']}")
        for step in rs["steps"]:
            extra = f"   asks {step['decision']} (options: {', '.join(step['options_from'])})" if "decision" in step else ""
            print(f"  {step['title']:40s} {' → '.join(step['plugins'])}{extra}")
    return 0
