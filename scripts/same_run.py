#!/usr/bin/env python3
"""same_run.py A B - whether two results folders (RESULTS roots, each with
<machine>/<suite>/*.json) hold the same run: the same machines, suites and
configuration files, the same implementations in each with the same
statuses, and TABLES.md (made by tables.py) of the same shape, numbers
aside. It is what a run split into shards (or over the GPUs of a host) and
merged must give. The figures themselves are left to `pcbench compare`.
Prints what differs; exit 0 same, 1 not (stdlib only)."""
import glob
import json
import os
import re
import sys


def entries(root):
    """{machine/suite/file: {impl: status}} of a results root."""
    out = {}
    for path in sorted(glob.glob(os.path.join(root, "*", "*", "*.json"))):
        rel = os.path.relpath(path, root)
        if rel.split(os.sep)[1] in ("logs", "instructions", "peers"):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                d = json.load(f)
        except (OSError, ValueError) as e:
            out[rel] = {"(unreadable)": str(e)}
            continue
        out[rel] = {e.get("impl", "?"): e.get("status", "?") for e in d.get("results", [])}
    return out


def shape(root):
    """TABLES.md with every number masked: the tables' rows, columns and words."""
    path = os.path.join(root, "TABLES.md")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"\d{4}-\d\d-\d\d[T ][\d:]+Z?", "DATE", text)
    text = re.sub(r"\b[0-9a-f]{7,40}(\+dirty)?\b", "HASH", text)
    text = re.sub(r"from \S*/<machine>", "from RESULTS/<machine>", text)  # where it was
    text = text.replace("~", "")  # short of the noise target: the samples', not the run's
    return re.sub(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?", "N", text)


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    a, b = argv[1], argv[2]
    ea, eb = entries(a), entries(b)
    problems = []
    for rel in sorted(set(ea) | set(eb)):
        if rel not in ea or rel not in eb:
            problems.append("%s: only in %s" % (rel, a if rel in ea else b))
            continue
        for impl in sorted(set(ea[rel]) | set(eb[rel])):
            sa, sb = ea[rel].get(impl, "(absent)"), eb[rel].get(impl, "(absent)")
            if sa != sb:
                problems.append("%s %s: %s in %s, %s in %s" % (rel, impl, sa, a, sb, b))
    ta, tb = shape(a), shape(b)
    if (ta is None) != (tb is None):
        problems.append("TABLES.md: in one folder only")
    elif ta is not None and ta != tb:
        la, lb = ta.splitlines(), tb.splitlines()
        first = next((i for i in range(min(len(la), len(lb))) if la[i] != lb[i]),
                     min(len(la), len(lb)))
        problems.append("TABLES.md: another shape from line %d (%s | %s)" % (
            first + 1, la[first] if first < len(la) else "(end)",
            lb[first] if first < len(lb) else "(end)"))
    figures = sum(len(v) for v in ea.values())
    if problems:
        print("\n".join(problems))
        print("not the same run: %d difference%s" % (len(problems), "" if len(problems) == 1 else "s"))
        return 1
    print("the same run: %d configuration files, %d entries, their statuses equal%s" % (
        len(ea), figures, ", TABLES.md of one shape" if ta is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
