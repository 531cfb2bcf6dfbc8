#!/usr/bin/env python3
"""The main loop of a compiled kernel in SASS: instructions a pass, registers, spills.

  tools/sass_loop.py [--build DIR] [--entry NAME] [--inner N] [--ops] SPEC.json|'{json}' ...

Each spec is compiled for sm_90a by `DIR/flashjit compile` into a fresh cache in a temporary
directory (the user's cache is not touched). The cubin is read from that cache's kernels.db and
disassembled with nvdisasm, from the CUDA toolkit or from the PyPI package
`nvidia-cuda-nvdisasm`. Every entry's registers and spill bytes are then printed, with the main
loop of `--entry` (default: flashjit_decode). The main loop is the shortest of the entry's loops
(a backward branch to a label) that hold the most HMMA. Its passes are its BAR.SYNC count: one a tile in decode, or kStages where the loop is unrolled by its stages. Loops
inside it with no HMMA (decode's RoPE rows, unrolled by 4 at D 256) are counted --inner times
(default 1: the static length). With --ops it also prints the loop's opcode counts.

No GPU is needed. Session 30 counted decode's loops this way, and session 31 its unrolled
ones (docs/perf/decode.md).
"""
import argparse
import collections
import glob
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile


def find_nvdisasm():
    exe = shutil.which("nvdisasm")
    if exe:
        return exe
    for pattern in ("/usr/local/cuda*/bin/nvdisasm",
                    os.path.join(sys.prefix, "lib/python3*/site-packages/nvidia/cu*/bin/nvdisasm")):
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[-1]
    sys.exit("nvdisasm not found: install the CUDA toolkit, or "
             "`pip install nvidia-cuda-nvdisasm`")


def entry_sass(sass, entry):
    """The lines of one entry's .text section."""
    out, inside = [], False
    for line in sass.splitlines():
        if line.lstrip().startswith(".section") or "//--------------------- .text." in line:
            inside = re.search(r"\.text\.%s([\s,\"]|$)" % re.escape(entry), line) is not None
            continue
        if inside:
            out.append(line)
    return out


def is_instruction(line):
    return re.search(r"/\*[0-9a-f]{4,}\*/", line) is not None


def main_loop(lines, inner):
    """(instructions executed a pass of the loop, passes, opcode counts), or None. The loop: the
    smallest of those with the most HMMA; its inner loops without HMMA count `inner` times."""
    labels = {}
    for i, line in enumerate(lines):
        m = re.match(r"^(\.L_x_\d+):", line.strip())
        if m:
            labels[m.group(1)] = i
    loops = []  # (first line, branch line, HMMA count)
    for i, line in enumerate(lines):
        m = re.search(r"BRA `\((\.L_x_\d+)\)", line)
        if m and labels.get(m.group(1), 1 << 30) < i:
            start = labels[m.group(1)]
            loops.append((start, i, sum("HMMA" in x for x in lines[start:i + 1])))
    if not loops or max(h for _, _, h in loops) == 0:
        return None
    most = max(h for _, _, h in loops)
    start, end, _ = min((l for l in loops if l[2] == most), key=lambda l: l[1] - l[0])
    body = [x for x in lines[start:end + 1] if is_instruction(x)]
    extra = sum(
        sum(is_instruction(x) for x in lines[s:e + 1]) for s, e, h in loops
        if start < s and e < end and h == 0) * (inner - 1)
    ops = collections.Counter()
    for x in body:
        text = re.sub(r"^\s*/\*[0-9a-f]+\*/\s*", "", x).split(";")[0].split()
        if text and text[0].startswith("@"):
            text = text[1:]
        if text:
            ops[text[0].split(".")[0]] += 1
    return len(body) + extra, max(1, ops["BAR"]), ops


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("specs", nargs="+", help="spec files or inline JSON objects")
    ap.add_argument("--build", default="build", help="build directory with the flashjit CLI")
    ap.add_argument("--entry", default="flashjit_decode", help="entry whose loop is counted")
    ap.add_argument("--inner", type=int, default=1,
                    help="times each inner loop without HMMA runs a pass (default 1)")
    ap.add_argument("--ops", action="store_true", help="print the loop's opcode counts")
    args = ap.parse_args()
    cli = os.path.join(args.build, "flashjit")
    if not os.access(cli, os.X_OK):
        sys.exit(f"--build: {cli} is not an executable flashjit CLI")
    nvdisasm = find_nvdisasm()
    for spec in args.specs:
        try:
            text = spec if spec.lstrip().startswith("{") else open(spec).read()
            json.loads(text)  # a clear error for malformed input, before compiling
        except (OSError, ValueError) as e:
            sys.exit(f"spec {spec!r}: not a readable JSON file or object ({e})")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "spec.json")
            with open(path, "w") as f:
                f.write(text)
            env = dict(os.environ, FLASHJIT_CACHE_DIR=os.path.join(tmp, "cache"),
                       FLASHJIT_ARCH="sm_90a")
            run = subprocess.run([cli, "compile", "--spec", path, "--arch", "sm_90a"], env=env,
                                 capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"{spec}: compile failed\n{run.stdout}{run.stderr}")
            db = sqlite3.connect(os.path.join(tmp, "cache", "kernels.db"))
            name, cubin, log = db.execute("select name, cubin, log from kernels").fetchone()
            db.close()
            cubin_path = os.path.join(tmp, "k.cubin")
            with open(cubin_path, "wb") as f:
                f.write(cubin)
            sass = subprocess.run([nvdisasm, "-c", cubin_path], capture_output=True, text=True,
                                  check=True).stdout
        entries = re.findall(r"Compiling entry function '(\w+)'.*?Used (\d+) registers", log,
                             re.S)
        spills = re.findall(r"(\d+) bytes spill stores", log)
        regs = ", ".join(f"{e} {r}" for e, r in entries) or "?"
        loop = main_loop(entry_sass(sass, args.entry), max(1, args.inner))
        if loop is None:
            print(f"{name}: no main loop found in {args.entry}; registers {regs}")
            continue
        n, passes, ops = loop
        spill = max((int(s) for s in spills), default=0)
        print(f"{name}: {args.entry} loop {n} instructions, {passes} pass(es), {n / passes:.0f} a "
              f"pass; registers {regs}; spill stores up to {spill} B")
        if args.ops:
            print("  " + ", ".join(f"{op} {c}" for op, c in ops.most_common()))


if __name__ == "__main__":
    main()
