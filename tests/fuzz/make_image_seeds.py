#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed inputs of fuzz_images (tests/fuzz/corpus/images/seed-*): small ELF cubins
and fat binaries in the layouts core/fatbin.cpp reads (PTX and cubin entries, LZ4- and
Zstandard-compressed payloads, kernels, initialised, zero-initialised, constant and managed
variables), so the fuzzer starts from images that reach every parser rather than from bytes
it would take hours to shape. Compression uses the lz4 and zstd tools (Debian: lz4, zstd).

    python3 tests/fuzz/make_image_seeds.py   # rewrites the seed-* files
"""
import os
import struct
import subprocess

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "images")

EM_CUDA = 190
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_NOBITS = 1, 2, 3, 8
SHF_WRITE, SHF_ALLOC, SHF_EXEC = 1, 2, 4
STT_OBJECT, STT_FUNC, STB_GLOBAL = 1, 2, 1
STO_CUDA_ENTRY, STO_CUDA_MANAGED = 0x10, 0x4


def cubin(kernels, variables, arch=80):
    """An ELF64 EM_CUDA cubin. variables: (name, kind, data or size, managed) with kind
    'init' (.nv.global.init), 'bss' (.nv.global, NOBITS) or 'const' (.nv.constant0)."""
    sections = [("", 0, 0, b"", 0)]  # name, type, flags, data, addr
    init = b"".join(v[2] for v in variables if v[1] == "init")
    const = b"".join(v[2] for v in variables if v[1] == "const")
    bss = sum(v[2] for v in variables if v[1] == "bss")
    text = b"\x00" * 16
    sections.append((".nv.global.init", SHT_PROGBITS, SHF_WRITE | SHF_ALLOC, init, 0))
    sections.append((".nv.constant0", SHT_PROGBITS, SHF_ALLOC, const, 0))
    sections.append((".nv.global", SHT_NOBITS, SHF_WRITE | SHF_ALLOC, b"", 0))
    sections.append((".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXEC, text, 0))
    index = {name: i for i, (name, *_rest) in enumerate(sections)}
    strtab = b"\x00"
    names = {}
    for n in [k for k in kernels] + [v[0] for v in variables]:
        names[n] = len(strtab)
        strtab += n.encode() + b"\x00"
    symtab = b"\x00" * 24
    for k in kernels:
        symtab += struct.pack("<IBBHQQ", names[k], STB_GLOBAL << 4 | STT_FUNC, STO_CUDA_ENTRY, index[".text"], 0, 16)
    offsets = {"init": 0, "const": 0, "bss": 0}
    for name, kind, data, managed in variables:
        size = data if kind == "bss" else len(data)
        sec = {"init": ".nv.global.init", "const": ".nv.constant0", "bss": ".nv.global"}[kind]
        other = STO_CUDA_MANAGED if managed else 0
        symtab += struct.pack("<IBBHQQ", names[name], STB_GLOBAL << 4 | STT_OBJECT, other, index[sec], offsets[kind], size)
        offsets[kind] += size
    sections.append((".strtab", SHT_STRTAB, 0, strtab, 0))
    sections.append((".symtab", SHT_SYMTAB, 0, symtab, 0))
    shstr = b"\x00"
    shnames = []
    for name, *_ in sections:
        shnames.append(len(shstr) if name else 0)
        if name:
            shstr += name.encode() + b"\x00"
    sections.append((".shstrtab", SHT_STRTAB, 0, shstr, 0))
    shnames.append(len(shstr))
    shstr += b".shstrtab\x00"
    sections[-1] = (".shstrtab", SHT_STRTAB, 0, shstr, 0)
    body = b""
    offs = []
    for name, typ, flags, data, _ in sections:
        offs.append(64 + len(body))
        body += data
        body += b"\x00" * (-len(body) % 8)
    shoff = 64 + len(body)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0x33, 7]) + b"\x00" * 7
    header = ident + struct.pack("<HHIQQQIHHHHHH", 2, EM_CUDA, 1, 0, 0, shoff, arch, 64, 0, 0, 64, len(sections),
                                 len(sections) - 1)
    shdrs = b""
    strtab_index = index_of(sections, ".strtab")
    for i, (name, typ, flags, data, addr) in enumerate(sections):
        size = bss if name == ".nv.global" else len(data)
        link = strtab_index if typ == SHT_SYMTAB else 0
        entsize = 24 if typ == SHT_SYMTAB else 0
        shdrs += struct.pack("<IIQQQQIIQQ", shnames[i], typ, flags, addr, offs[i] if i else 0, size, link, 0, 8, entsize)
    return header + body + shdrs


def index_of(sections, wanted):
    return next(i for i, s in enumerate(sections) if s[0] == wanted)


def lz4_block(data):
    """A raw LZ4 block (what LZ4_decompress_safe reads), from the lz4 tool's frame."""
    frame = subprocess.run(["lz4", "-c", "-B4", "--no-frame-crc"], input=data,
                           capture_output=True, check=True).stdout
    assert struct.unpack_from("<I", frame)[0] == 0x184D2204
    flg = frame[4]
    at = 7 + (8 if flg & 0x08 else 0)
    size = struct.unpack_from("<I", frame, at)[0]
    if size & 0x80000000:  # stored uncompressed: make a literals-only block instead
        return literal_block(data)
    return frame[at + 4:at + 4 + size]


def literal_block(data):
    n = len(data)
    out = bytearray([min(n, 15) << 4])
    if n >= 15:
        rest = n - 15
        while rest >= 255:
            out.append(255)
            rest -= 255
        out.append(rest)
    return bytes(out) + data


def zstd_frame(data):
    return subprocess.run(["zstd", "-c", "-19", "-q"], input=data, capture_output=True, check=True).stdout


def entry(kind, arch, payload, compress=None):
    """A fat binary entry: kind 1 PTX, 2 ELF; compress None, 'lz4' or 'zstd'."""
    flags = 0
    full = 0
    stored = payload
    if compress == "lz4":
        stored, flags, full = lz4_block(payload), 0x2000, len(payload)
    elif compress == "zstd":
        stored, flags, full = zstd_frame(payload), 0x8000, len(payload)
    padded = stored + b"\x00" * (-len(stored) % 8)
    hdr = struct.pack("<HHIQIIIIQQIIQ", kind, 0x0101, 0x40, len(padded), len(stored) if compress else 0, 0, 0, arch,
                      0, flags, 0, 0, full)
    assert len(hdr) == 0x40
    return hdr + padded


def fatbin(entries):
    body = b"".join(entries)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


PTX80 = b""".version 8.0
.target sm_80
.address_size 64
.global .align 4 .u32 counter;
.global .align 4 .f32 scale[2] = {1.5, 0f40000000};
.const .align 8 .b64 table[3] = {1, 0x10, -1};
.global .attribute(.managed) .align 8 .u64 shared_total;
.global .align 2 .b16 halves[4] = {1, 2};
.global .align 8 .f64 ratio = 0d3FF8000000000000;
// a comment with { braces }
.visible .entry scale_kernel(.param .u64 p, .param .f32 s)
{
 ret;
}
.visible .func helper(.param .u32 x)
{
 ret;
}
.entry other_kernel()
{
 ret;
}
"""
PTX90 = PTX80.replace(b"sm_80", b"sm_90").replace(b"other_kernel", b"hopper_kernel")


def main():
    os.makedirs(OUT, exist_ok=True)
    cub80 = cubin(["vec_add", "reduce"], [("g_init", "init", struct.pack("<4I", 1, 2, 3, 4), False),
                                          ("g_zero", "bss", 64, False), ("c_table", "const", b"\x07" * 16, False),
                                          ("m_flag", "init", struct.pack("<Q", 42), True)])
    cub90 = cubin(["vec_add"], [("g_init", "init", struct.pack("<I", 9), False)], arch=90)
    seeds = {
        "seed-cubin-sm80": cub80,
        "seed-cubin-sm90": cub90,
        "seed-fatbin-plain": fatbin([entry(2, 80, cub80), entry(1, 80, PTX80)]),
        "seed-fatbin-lz4": fatbin([entry(2, 80, cub80, "lz4"), entry(1, 90, PTX90, "lz4")]),
        "seed-fatbin-zstd": fatbin([entry(2, 86, cub80, "zstd"), entry(1, 80, PTX80, "zstd")]),
        "seed-fatbin-ptx-only": fatbin([entry(1, 75, PTX80.replace(b"sm_80", b"sm_75")), entry(1, 90, PTX90)]),
        "seed-fatbin-sm90-only": fatbin([entry(2, 90, cub90), entry(1, 90, PTX90, "zstd")]),
        "seed-ptx-sm80": PTX80,
        "seed-ptx-sm90": PTX90,
        "seed-ptx-comments": b"// generated\n/* block\n comment */\n" + PTX80.replace(b".target sm_80", b".target compute_80")
        + b'.file 1 "a{b}.cu"\n',
    }
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
