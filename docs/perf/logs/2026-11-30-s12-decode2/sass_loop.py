"""Session 12 round 2: the main loop's SASS length of a cached decode kernel. Extract the cubin
from a gpu-cache (kernels.db, column cubin, by name), disassemble it with nvdisasm (pip package
nvidia-cuda-nvdisasm): nvdisasm -fun flashjit_decode -c NAME.cubin > NAME.sass, then
  python3 sass_loop.py NAME ...
The loop: from the label that the first backward branch after the first HMMA jumps to, to that
branch. Call 1's tree (0a9f211): decode_bf16_e4m3_h128_s4 746, ..._stl 782;
decode_bf16_bf16_h128_s3 2390, ..._stl 2402."""
import re
import sys

for f in sys.argv[1:]:
    lines = open(f + ".sass").read().splitlines()
    labels = {}
    for i, line in enumerate(lines):
        m = re.match(r"^(\.L_x_\d+):", line)
        if m:
            labels[m.group(1)] = i
    first = next(i for i, line in enumerate(lines) if "HMMA" in line)
    for i, line in enumerate(lines):
        m = re.search(r"BRA `\((\.L_x_\d+)\)", line)
        if m and i > first and labels.get(m.group(1), 1 << 30) < first:
            start = labels[m.group(1)]
            n = sum(1 for x in lines[start:i + 1] if re.search(r"/\*[0-9a-f]{4,}\*/", x))
            print(f, "loop lines", start, i, "instructions", n)
            break
