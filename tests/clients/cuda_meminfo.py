#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Prints what cudaMemGetInfo says about each given device, as JSON: {"DEV": [free, total]}.

Usage: cuda_meminfo.py LIBCUDART DEV...

A CUDA Runtime client through ctypes (as nvitop's libcudart binding and PyTorch's
torch.cuda.mem_get_info do): cudaSetDevice, then cudaMemGetInfo. Standard library only.
"""

import ctypes
import json
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    rt = ctypes.CDLL(argv[1])
    rt.cudaGetErrorName.restype = ctypes.c_char_p
    out = {}
    for dev in argv[2:]:
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        for call, args in (("cudaSetDevice", (ctypes.c_int(int(dev)),)),
                           ("cudaMemGetInfo", (ctypes.byref(free), ctypes.byref(total)))):
            err = getattr(rt, call)(*args)
            if err != 0:
                print(f"{call}: {rt.cudaGetErrorName(err).decode()}", file=sys.stderr)
                return 1
        out[dev] = [free.value, total.value]
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
