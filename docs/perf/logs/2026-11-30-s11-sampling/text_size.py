#!/usr/bin/env python3
"""The .text size of every cubin in a flashjit cache (kernels.db): name, SASS bytes, instructions
(16 bytes each on sm_90), registers, spills, cubin_sha256 and the SHA-256 of the .text sections. Usage: text_size.py CACHE_DIR [filter]"""
import hashlib, os, sqlite3, struct, sys

def text_bytes(elf):
    # ELF64: section headers; sum the sizes of .text.* sections.
    shoff = struct.unpack_from('<Q', elf, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', elf, 0x3A)
    def sh(i):
        return struct.unpack_from('<IIQQQQIIQQ', elf, shoff + i * shentsize)
    stroff = sh(shstrndx)[4]
    out, h = {}, hashlib.sha256()
    for i in range(shnum):
        name_off, typ, _, _, off, size = sh(i)[:6]
        end = elf.index(b'\0', stroff + name_off)
        name = elf[stroff + name_off:end].decode()
        if name.startswith('.text'):
            out[name] = size
            h.update(elf[off:off + size])
    return out, h.hexdigest()

db = sqlite3.connect(os.path.join(sys.argv[1], 'kernels.db'))
flt = sys.argv[2] if len(sys.argv) > 2 else ''
for name, cubin, sha, regs, spill in db.execute(
        'select name, cubin, cubin_sha256, registers, spill_bytes from kernels order by name'):
    if flt not in name:
        continue
    t, text_sha = text_bytes(bytes(cubin))
    total = sum(t.values())
    print(f'{name}  text {total} B ({total // 16} instr) in {len(t)} fn  regs {regs}  '
          f'spill {spill}  cubin_sha256 {sha[:16]}  text_sha256 {text_sha[:16]}')
