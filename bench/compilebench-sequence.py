#!/usr/bin/env python3
"""Writes compilebench dataset files with compilebench 0.6's counts (after its own
reductions: 21,280 clean files, 6,136 patched, 3,263 compiled-only, 2,573
patched-compiled) and 1- or 2-byte sizes, so that the real compilebench runs in seconds
and prints the sequence of random operations its random.Random(555) makes.

usage: compilebench-sequence.py DATASET_DIR
then:  python3 /path/to/compilebench -D WORKDIR -s DATASET_DIR -i 30 -r 100 -n 2>log
"""
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def write(name, entries):
    with open(os.path.join(out, name), "w") as f:
        for path, size in entries:
            f.write(f"{path} {size}\n")


clean = [(f"d{i % 97}/s{i // 97}/f{i}.c", 1) for i in range(21280)]
# Patched files differ in size from the clean ones, so compilebench keeps all of them.
patched = [(p, 2) for p, _ in clean[:6136]]
objects = [(f"d{i % 97}/s{i // 97}/f{i}.o", 1) for i in range(3263)]
compiled = [(p, 2) for p, _ in objects[:2573]]
write("dataset-unpatched", clean)
write("dataset-patched", clean[6136:] + patched)
write("dataset-unpatched-compiled", clean + objects)
write("dataset-patched-compiled", clean[6136:] + patched + compiled)
