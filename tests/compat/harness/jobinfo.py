#!/usr/bin/env python3
"""Picks fields out of `scontrol -o show job` output (one record per line) for lib.sh.

  jobinfo.py get KEY            value of KEY in the first record ("" if absent)
  jobinfo.py fields KEY...      for each record: "KEY=VALUE ..." for the KEYs asked for, in that
                                order; a KEY the record lacks prints as "KEY=<absent>"

A record is "Key=Value Key=Value ..."; a value runs until the next " Key=" (values may hold
spaces, e.g. Comment=a b, Reason=...). Keys are Slurm's spellings (JobState, ArrayTaskId,
AllocNode:Sid, ...).
"""
import re
import sys

KEY_START = re.compile(r"(?:^|(?<=\s))([A-Za-z][A-Za-z0-9_:/]*)=")


def parse(line):
    out = {}
    starts = list(KEY_START.finditer(line))
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(line)
        key = m.group(1)
        if key not in out:
            out[key] = line[m.end():end].strip()
    return out


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("get", "fields"):
        sys.exit(__doc__)
    records = [parse(l) for l in sys.stdin.read().splitlines() if l.strip()]
    if sys.argv[1] == "get":
        print(records[0].get(sys.argv[2], "") if records else "")
        return
    for r in records:
        print(" ".join(f"{k}={r.get(k, '<absent>')}" for k in sys.argv[2:]))


if __name__ == "__main__":
    main()
