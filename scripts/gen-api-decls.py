#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generate the prototypes of the API implementations (fgimpl_<name>) from NVIDIA's headers.

Writes fakebackend/include/fakegpu/{cuda,cudart,nvml}_api.h: one declaration
`<ret> fgimpl_<name>(<params>);` per entry of cuda.def, cudart.def (plus fgimpl_v12_<name>
for SPLIT names) and nvml.def, with the real prototype of the ABI that the exported symbol
has, spelled with the fgapi:: types of cuda_types.h / nvml_types.h. The API folders include
these headers before their definitions, so a definition whose signature differs is a
"conflicting declaration of C function" error.

Where each prototype comes from:
  * cuda.def: the PFN_<name>_v<version>[_ptds|_ptsz] typedefs of cudaTypedefs.h (older
    versions included: __CUDA_API_VERSION_INTERNAL), cudaProfilerTypedefs.h,
    cudaGLTypedefs.h, cudaEGLTypedefs.h and cudaVDPAUTypedefs.h. Which typedef gives a
    symbol's ABI is read from cuda_proc_versions.def: FG_PROC(name, (v1, v2, ...)) maps
    name / name_v2 / ... to PFN_name_v<v1> / PFN_name_v<v2> / ..., and
    FG_PROC_PT(name, v, sym) maps sym to PFN_name_v<v>_ptds or _ptsz. (cuda.h #defines the
    public names to their newest symbols, so its declarations alone cannot tell the ABIs of
    plain cuMemAlloc and cuMemAlloc_v2 apart.)
  * cudart.def, CUDA 13 ABIs (BOTH, V13, the CUDA 13 side of SPLIT): the declarations of
    cuda_runtime_api.h, cuda_profiler_api.h and cuda_{gl,egl,vdpau}_interop.h, read once as
    they are and once with CUDA_API_PER_THREAD_DEFAULT_STREAM (the _ptds/_ptsz names); the
    compiler-facing entry points from crt/host_runtime.h and crt/device_functions.h; the
    three internal names no header declares from INTERNAL below.
  * cudart.def, CUDA 12 ABIs (V12, fgimpl_v12_<name> of SPLIT): the parameter records of the
    API versions the CUDA 13 toolkit still describes (generated_cuda_runtime_api_meta.h) or
    lists as removed (generated_cudart_removed_meta.h), per CUDA12 below; the 12.x
    cudaDeviceProp layouts become cudaDeviceProp12 / cudaDevicePropLegacy.
  * nvml.def: the declarations of nvml.h (NVML_NO_UNVERSIONED_FUNC_DEFS, so the legacy
    unversioned names keep their own prototypes), with the pre-v3 PCI struct for the legacy
    names that take it (NVML_TYPES below). The CUDA toolkit's nvml component installs nvml.h
    beside the other headers; NVIDIA/go-nvml carries a copy as pkg/nvml/nvml.h.

Types: struct/enum keywords are dropped, every other non-builtin type name is qualified with
fgapi::, default arguments are dropped. A name the hand-written fgapi headers lack is
declared in the generated header as far as a prototype needs it (a struct incomplete, an
enum opaque, a typedef as NVIDIA's), from NVIDIA's declaration of it.

Usage: scripts/gen-api-decls.py [--cuda-include DIR] [--nvml-header FILE] [--check]
With --check, compares instead of writing and exits 1 when a header is out of date.
Needs a C preprocessor (cc, or $CC). Standard library only otherwise.
"""
import argparse
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
API = os.path.join(ROOT, "fakebackend", "api")
OUT = os.path.join(ROOT, "fakebackend", "include", "fakegpu")


def load_lists_module():
    """scripts/check-api-lists.py, which owns the parsers of the .def lists."""
    path = os.path.join(ROOT, "scripts", "check-api-lists.py")
    spec = importlib.util.spec_from_file_location("check_api_lists", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


lists = load_lists_module()

# The internal runtime entry points no header declares (cudart.def explains each).
INTERNAL = {
    "__cudaRegisterHostVar": ("void", "void **fatCubinHandle, const char *deviceName, char *hostVar, size_t size"),
    "__cudaRegisterUnifiedTable": ("void", "void *, void *, void *, void *, void *"),
    "__cudaGetProcAddress": ("void *", "void"),
}

# CUDA 12 ABIs: libcudart.so.12 symbol -> the parameter record (<record>_params_st) of the API
# version it exports, or the parameter list itself where there is no right record, and the
# types that differ in the 12.x headers. Functions without parameters have no record.
# The removed-API records of cudaStreamGetCaptureInfo(_ptsz)_v10010 list the six parameters
# of _v2: the 12.x headers declare the plain name, which libcudart.so.12 keeps for binaries
# of CUDA 10.1-11.2, with the original three (stream, pCaptureStatus, pId).
PROP12 = {"cudaDeviceProp": "cudaDeviceProp12"}
CAPTURE_INFO_V1 = "cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus, unsigned long long *pId"
CUDA12 = {
    "cudaChooseDevice": ("cudaChooseDevice_v3020", PROP12),
    "cudaEventElapsedTime_v2": ("cudaEventElapsedTime_v12080", {}),
    "cudaGetDeviceProperties": ("cudaGetDeviceProperties_v3020", {"cudaDeviceProp": "cudaDevicePropLegacy"}),
    "cudaGetDeviceProperties_v2": ("cudaGetDeviceProperties_v12000", PROP12),
    "cudaGraphAddDependencies": ("cudaGraphAddDependencies_v10000", {}),
    "cudaGraphAddDependencies_v2": ("cudaGraphAddDependencies_v12030", {}),
    "cudaGraphAddNode": ("cudaGraphAddNode_v12020", {}),
    "cudaGraphAddNode_v2": ("cudaGraphAddNode_v12030", {}),
    "cudaGraphGetEdges": ("cudaGraphGetEdges_v10000", {}),
    "cudaGraphGetEdges_v2": ("cudaGraphGetEdges_v12030", {}),
    "cudaGraphNodeGetDependencies": ("cudaGraphNodeGetDependencies_v10000", {}),
    "cudaGraphNodeGetDependencies_v2": ("cudaGraphNodeGetDependencies_v12030", {}),
    "cudaGraphNodeGetDependentNodes": ("cudaGraphNodeGetDependentNodes_v10000", {}),
    "cudaGraphNodeGetDependentNodes_v2": ("cudaGraphNodeGetDependentNodes_v12030", {}),
    "cudaGraphRemoveDependencies": ("cudaGraphRemoveDependencies_v10000", {}),
    "cudaGraphRemoveDependencies_v2": ("cudaGraphRemoveDependencies_v12030", {}),
    "cudaLaunchCooperativeKernelMultiDevice": ("cudaLaunchCooperativeKernelMultiDevice_v9000", {}),
    "cudaMemAdvise": ("cudaMemAdvise_v8000", {}),
    "cudaMemAdvise_v2": ("cudaMemAdvise_v12020", {}),
    "cudaMemPrefetchAsync": ("cudaMemPrefetchAsync_v8000", {}),
    "cudaMemPrefetchAsync_ptsz": ("cudaMemPrefetchAsync_ptsz_v8000", {}),
    "cudaMemPrefetchAsync_v2": ("cudaMemPrefetchAsync_v12020", {}),
    "cudaMemPrefetchAsync_v2_ptsz": ("cudaMemPrefetchAsync_ptsz_v12020", {}),
    "cudaMemcpy3DBatchAsync": ("cudaMemcpy3DBatchAsync_v12080", {}),
    "cudaMemcpy3DBatchAsync_ptsz": ("cudaMemcpy3DBatchAsync_ptsz_v12080", {}),
    "cudaMemcpyBatchAsync": ("cudaMemcpyBatchAsync_v12080", {}),
    "cudaMemcpyBatchAsync_ptsz": ("cudaMemcpyBatchAsync_ptsz_v12080", {}),
    "cudaRuntimeGetVersion": ("cudaRuntimeGetVersion_v3020", {}),
    "cudaSetDoubleForDevice": ("cudaSetDoubleForDevice_v3020", {}),
    "cudaSetDoubleForHost": ("cudaSetDoubleForHost_v3020", {}),
    "cudaSignalExternalSemaphoresAsync": ("cudaSignalExternalSemaphoresAsync_v10000", {}),
    "cudaSignalExternalSemaphoresAsync_ptsz": ("cudaSignalExternalSemaphoresAsync_ptsz_v10000", {}),
    "cudaSignalExternalSemaphoresAsync_v2": ("cudaSignalExternalSemaphoresAsync_v11020", {}),
    "cudaSignalExternalSemaphoresAsync_v2_ptsz": ("cudaSignalExternalSemaphoresAsync_ptsz_v11020", {}),
    "cudaStreamGetCaptureInfo": ("(" + CAPTURE_INFO_V1 + ")", {}),
    "cudaStreamGetCaptureInfo_ptsz": ("(" + CAPTURE_INFO_V1 + ")", {}),
    "cudaStreamGetCaptureInfo_v2": ("cudaStreamGetCaptureInfo_v2_v11030", {}),
    "cudaStreamGetCaptureInfo_v2_ptsz": ("cudaStreamGetCaptureInfo_v2_ptsz_v11030", {}),
    "cudaStreamGetCaptureInfo_v3": ("cudaStreamGetCaptureInfo_v12030", {}),
    "cudaStreamGetCaptureInfo_v3_ptsz": ("cudaStreamGetCaptureInfo_ptsz_v12030", {}),
    "cudaStreamUpdateCaptureDependencies": ("cudaStreamUpdateCaptureDependencies_v11030", {}),
    "cudaStreamUpdateCaptureDependencies_ptsz": ("cudaStreamUpdateCaptureDependencies_ptsz_v11030", {}),
    "cudaStreamUpdateCaptureDependencies_v2": ("cudaStreamUpdateCaptureDependencies_v12030", {}),
    "cudaStreamUpdateCaptureDependencies_v2_ptsz": ("cudaStreamUpdateCaptureDependencies_ptsz_v12030", {}),
    "cudaThreadExit": ("(void)", {}),
    "cudaThreadGetCacheConfig": ("cudaThreadGetCacheConfig_v3020", {}),
    "cudaThreadGetLimit": ("cudaThreadGetLimit_v3020", {}),
    "cudaThreadSetCacheConfig": ("cudaThreadSetCacheConfig_v3020", {}),
    "cudaThreadSetLimit": ("cudaThreadSetLimit_v3020", {}),
    "cudaThreadSynchronize": ("(void)", {}),
    "cudaWaitExternalSemaphoresAsync": ("cudaWaitExternalSemaphoresAsync_v10000", {}),
    "cudaWaitExternalSemaphoresAsync_ptsz": ("cudaWaitExternalSemaphoresAsync_ptsz_v10000", {}),
    "cudaWaitExternalSemaphoresAsync_v2": ("cudaWaitExternalSemaphoresAsync_v11020", {}),
    "cudaWaitExternalSemaphoresAsync_v2_ptsz": ("cudaWaitExternalSemaphoresAsync_ptsz_v11020", {}),
}

# The legacy NVML ABIs that take a struct older than the one nvml.h now names: the pre-v3
# nvmlPciInfo_t (busId of 16 characters), nvml_types.h's nvmlPciInfoLegacy_t.
PCI_LEGACY = {"nvmlPciInfo_t": "nvmlPciInfoLegacy_t"}
NVML_TYPES = {
    "nvmlDeviceGetNvLinkRemotePciInfo": PCI_LEGACY,
    "nvmlDeviceGetPciInfo": PCI_LEGACY,
    "nvmlDeviceGetPciInfo_v2": PCI_LEGACY,
}

# Types of those CUDA 12 prototypes that the CUDA 13 headers no longer declare (CUDA 12.x
# driver_types.h declares them as structs).
CUDA12_TYPES = "struct cudaExternalSemaphoreSignalParams_v1; struct cudaExternalSemaphoreWaitParams_v1;\n" \
               "struct cudaLaunchParams;\n"

# Minimal window-system headers for the interop typedef headers: only the names they use,
# with the types cuda_types.h gives them.
WINDOW_SYSTEM_STUBS = {
    "GL/gl.h": "typedef unsigned int GLuint; typedef unsigned int GLenum;\n",
    "EGL/egl.h": "typedef int EGLint; typedef void *EGLImageKHR, *EGLStreamKHR, *EGLSyncKHR, *EGLDisplay;\n",
    "EGL/eglext.h": "",
    "vdpau/vdpau.h": "typedef unsigned int VdpDevice, VdpVideoSurface, VdpOutputSurface, VdpFuncId;\n"
                     "typedef int VdpStatus;\n"
                     "typedef VdpStatus VdpGetProcAddress(VdpDevice device, VdpFuncId function_id,\n"
                     "                                    void **function_pointer);\n",
}

# Words that stay as they are; every other identifier in a type is an fgapi:: name.
BUILTIN = {"void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "const", "volatile",
           "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t"}
DROPPED = {"struct", "enum", "union", "extern", "__dv", "CUDARTAPI", "CUDAAPI", "DECLDIR", "__host__", "__device__"}
TOKEN_RE = re.compile(r"\.\.\.|[A-Za-z_]\w*|\d+|\S")


class GenError(Exception):
    pass


def preprocess(cc, includes, header_text, defines=()):
    with tempfile.TemporaryDirectory() as stubs:
        for rel, text in WINDOW_SYSTEM_STUBS.items():
            os.makedirs(os.path.dirname(os.path.join(stubs, rel)), exist_ok=True)
            with open(os.path.join(stubs, rel), "w", encoding="utf-8") as f:
                f.write(text)
        cmd = [cc, "-E", "-P", "-x", "c", "-", "-I" + stubs] + ["-I" + i for i in includes]
        cmd += ["-D" + d for d in defines]
        r = subprocess.run(cmd, input=header_text, capture_output=True, text=True)
        if r.returncode != 0:
            raise GenError("preprocessing failed: %s\n%s" % (" ".join(cmd), r.stderr))
        return r.stdout


def strip_attributes(text):
    """Removes __attribute__((...)) and __declspec(...) (balanced parentheses)."""
    out, i = [], 0
    for m in re.finditer(r"__attribute__|__declspec", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        j = text.index("(", m.end())
        depth = 0
        while True:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
            if depth == 0:
                break
        i = j
    out.append(text[i:])
    return "".join(out)


def statements(text):
    """Top-level statements (split at ';' outside braces), whitespace collapsed."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S)
    text = strip_attributes(text)
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == ";" and depth == 0:
            out.append(" ".join(text[start:i].split()))
            start = i + 1
    return out


def split_top(params):
    parts, depth, cur = [], 0, []
    for c in params:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


FUNC_RE = re.compile(r"(?P<ret>[^()]*?)\b(?P<name>\w+)\s*\((?P<params>.*)\)")
PFN_RE = re.compile(r"typedef\s+(?P<ret>[^()]*?)\s*\(\s*\*\s*(?P<name>PFN_\w+)\s*\)\s*\((?P<params>.*)\)")


def function_decls(text, prefix):
    """name -> (return type, parameter text) of the function declarations in preprocessed C."""
    decls = {}
    for s in statements(text):
        if s.startswith("typedef") or "{" in s:
            continue
        s = re.sub(r"^(?:(?:extern|static|inline|__inline__)\s+)+", "", s)
        m = FUNC_RE.fullmatch(s)
        if m and m.group("name").startswith(prefix):
            decls[m.group("name")] = (m.group("ret"), m.group("params"))
    return decls


def pfn_typedefs(text):
    out = {}
    for s in statements(text):
        m = PFN_RE.fullmatch(s)
        if m:
            out[m.group("name")] = (m.group("ret"), m.group("params"))
    return out


def param_records(text):
    """<record> -> parameter text, from the `typedef struct <record>_params_st {...}` of a
    generated_*_meta.h (fields in declaration order are the parameters)."""
    text = re.sub(r"//[^\n]*", " ", text)
    return {m.group(1): ", ".join(" ".join(f.split()) for f in m.group(2).split(";") if f.strip())
            for m in re.finditer(r"typedef struct (\w+)_params_st\s*\{(.*?)\}\s*\1_params\s*;", text, re.S)}


def raw_decls(path, names):
    """Declarations of `names` in a header that is not C (crt/host_runtime.h: C++ only),
    read as text: the statement from `extern` to the closing parenthesis."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", open(path, encoding="utf-8").read(), flags=re.S)
    out = {}
    for name in names:
        m = re.search(r"extern\s+(?:\"C\"\s+)?([^;{}()]*?)\b%s\s*\(([^;{}]*?)\)\s*;" % re.escape(name), text)
        if m:
            ret = " ".join(t for t in m.group(1).split() if t not in DROPPED)
            out[name] = (ret, re.sub(r"\s*=\s*[^,]*", "", m.group(2)))
    return out


# ---- rendering -------------------------------------------------------------------------

IDENT_RE = re.compile(r"[A-Za-z_]\w*")


def render_type(tokens, types, prefix="fgapi::"):
    words = []
    for t in tokens:
        if t in DROPPED:
            continue
        if IDENT_RE.fullmatch(t) and t not in BUILTIN:
            t = prefix + types.get(t, t)
        words.append(t)
    s = " ".join(words)
    s = re.sub(r"\s+\*", "*", s)
    s = re.sub(r"\(\s+", "(", s)
    s = re.sub(r"\s+\)", ")", s)
    s = re.sub(r"\)\s+\(", ")(", s)
    s = re.sub(r"\s*\[\s*", "[", s)
    s = re.sub(r"\s+\]", "]", s)
    return s


FNPTR_RE = re.compile(r"(?P<ret>[^()]*?)\(\s*\*\s*(?P<name>\w*)\s*\)\s*\((?P<params>.*)\)")


def split_param(p):
    """(type tokens, name, array dimensions) of a parameter that is not a function pointer."""
    tokens = [t for t in TOKEN_RE.findall(p) if t not in DROPPED]
    dims = []
    while tokens and tokens[-1] == "]":
        i = len(tokens) - 1 - tokens[::-1].index("[")
        dims.insert(0, "".join(tokens[i:]))
        tokens = tokens[:i]
    name = ""
    # The last word names the parameter unless it is part of the type (`CUstream`, `unsigned int`).
    kinds = [t for t in tokens[:-1] if t not in ("const", "volatile")]
    if tokens and IDENT_RE.fullmatch(tokens[-1]) and tokens[-1] not in BUILTIN and kinds:
        name = tokens.pop()
    return tokens, name, "".join(dims)


def render_param(p, types, prefix="fgapi::"):
    p = re.sub(r"\s*=.*$", "", p.strip())  # a default argument
    m = FNPTR_RE.fullmatch(p)
    if m:
        inner = ", ".join(render_params(m.group("params"), types, prefix))
        return "%s (*%s)(%s)" % (render_type(TOKEN_RE.findall(m.group("ret")), types, prefix), m.group("name"), inner)
    if p == "...":
        return p
    tokens, name, dims = split_param(p)
    return render_type(tokens, types, prefix) + (" " + name if name else "") + dims


def param_types(params):
    """The type words of a parameter list (names left out), function pointers included."""
    words = []
    for p in split_top(params):
        m = FNPTR_RE.fullmatch(p.strip())
        if m:
            words += TOKEN_RE.findall(m.group("ret")) + param_types(m.group("params"))
        elif p.strip() != "...":
            words += split_param(p)[0]
    return words


def render_params(params, types, prefix="fgapi::"):
    ps = split_top(params)
    if ps == ["void"] or not ps:
        return []
    return [render_param(p, types, prefix) for p in ps]


def render_decl(ret, name, params, types=None):
    types = types or {}
    r = render_type(TOKEN_RE.findall(ret), types)
    head = "%s fgimpl_%s(" % (r, name)
    ps = render_params(params, types)
    line = head + ", ".join(ps) + ");"
    if len(line) <= 120:
        return line
    # Wrap at commas: continuation lines aligned with the first parameter or, where that leaves
    # a parameter too little room, every parameter line indented by 4 below the parenthesis.
    for aligned in (True, False):
        indent = " " * len(head) if aligned else "    "
        lines, cur = ([], head) if aligned else ([head.rstrip()], indent)
        for i, p in enumerate(ps):
            piece = p + (", " if i + 1 < len(ps) else ");")
            if i > 0 and len(cur) + len(piece.rstrip()) > 120:
                lines.append(cur.rstrip())
                cur = indent
            cur += piece
        lines.append(cur.rstrip())
        if all(len(l) <= 120 for l in lines):
            break
    return "\n".join(lines)


# ---- types the fgapi headers lack -------------------------------------------------------

def fgapi_names(header):
    """Names the hand-written types header declares at namespace scope (column 0)."""
    text = open(os.path.join(OUT, header), encoding="utf-8").read()
    return set(re.findall(r"^(?:struct|union|enum(?:\s+class)?)\s+(\w+)", text, re.M)) | \
        set(re.findall(r"^using\s+(\w+)\s*=", text, re.M))


class TypeTable:
    """The type declarations of preprocessed C, and what a prototype needs of them: for a name
    the fgapi headers lack, the fewest declarations that make it usable in a prototype (a
    struct or union is declared, not defined; an enum gets an opaque declaration)."""

    def __init__(self, text, known):
        self.tags = {}     # tag -> struct/union/enum
        self.aliases = {}  # typedef name -> ("tag", tag, stars) | ("type", text) | ("fn", ret, params, pointer)
        self.known = set(known)
        self.out = []
        for s in statements(text):
            self._statement(s)

    def _statement(self, s):
        m = re.fullmatch(r"(typedef\s+)?(struct|union|enum)\s*(\w+)?\s*(\{.*\})?\s*(.*)", s, re.S)
        if m:
            typedef, kind, tag, body, decls = m.groups()
            if not typedef:
                if tag and (body or tag not in self.tags):
                    self.tags[tag] = kind
                return
            if not tag:  # typedef struct {...} N: N names the type
                tag = decls.split(",")[0].strip().lstrip("*").strip()
            if body or tag not in self.tags:
                self.tags[tag] = kind
            for d in split_top(decls):
                d = d.strip()
                stars = len(d) - len(d.lstrip("*"))
                name = d.lstrip("*").strip()
                if IDENT_RE.fullmatch(name) and name != tag:
                    self.aliases[name] = ("tag", tag, stars)
            return
        if not s.startswith("typedef "):
            return
        s = s[len("typedef "):]
        m = FNPTR_RE.fullmatch(s)
        if m:
            self.aliases[m.group("name")] = ("fn", m.group("ret"), m.group("params"), True)
            return
        m = re.fullmatch(r"(?P<ret>[^()]*?)\b(?P<name>\w+)\s*\((?P<params>.*)\)", s)
        if m:
            self.aliases[m.group("name")] = ("fn", m.group("ret"), m.group("params"), False)
            return
        m = re.fullmatch(r"(.*?)\b(\w+)", s)
        if m:
            self.aliases[m.group(2)] = ("type", m.group(1))

    def _canonical_tag(self, name):
        seen = set()
        while name in self.aliases and name not in seen:
            seen.add(name)
            a = self.aliases[name]
            if a[0] == "tag":
                return (a[1], a[2])
            if a[0] == "type" and IDENT_RE.fullmatch(a[1].strip()):
                name = a[1].strip()
                continue
            return None
        return (name, 0) if name in self.tags else None

    def _needs(self, text):
        for t in TOKEN_RE.findall(text):
            if IDENT_RE.fullmatch(t) and t not in BUILTIN and t not in DROPPED:
                self.ensure(t)

    def ensure(self, name):
        if name in self.known:
            return
        self.known.add(name)
        canon = self._canonical_tag(name)
        if canon:
            tag, stars = canon
            same = sorted(n for n in self.known - {name} if self._canonical_tag(n) == (tag, 0))
            if not stars and same and tag not in self.known:
                self.out.append("using %s = %s;" % (name, same[0]))
                return
            kind = self.tags[tag]
            if kind == "enum" and not stars and tag not in self.known:
                # cuda_types.h names an enum by its typedef name (enum CUresult : int).
                self.out.append("enum %s : int;" % name)
                return
            if tag not in self.known or tag == name:
                self.known.add(tag)
                self.out.append("enum %s : int;" % tag if kind == "enum" else "%s %s;" % (kind, tag))
            if tag != name:
                self.out.append("using %s = %s%s;" % (name, tag, "*" * stars))
            return
        a = self.aliases.get(name)
        if a is None:
            raise GenError("type %s is declared neither by the fgapi headers nor by the NVIDIA header" % name)
        if a[0] == "type":
            self._needs(a[1])
            self.out.append("using %s = %s;" % (name, render_type(TOKEN_RE.findall(a[1]), {}, "")))
        else:
            _, ret, params, pointer = a
            self._needs(ret + " " + " ".join(param_types(params)))
            self.out.append("using %s = %s%s(%s);" % (name, render_type(TOKEN_RE.findall(ret), {}, ""),
                                                       " (*)" if pointer else "",
                                                       ", ".join(render_params(params, {}, ""))))

    def declarations_for(self, decls):
        """The declarations the fgapi:: names of `decls` (rendered prototypes) need."""
        for n in sorted(set(re.findall(r"fgapi::(\w+)", "\n".join(decls)))):
            self.ensure(n)
        return self.out


# ---- the three families ----------------------------------------------------------------

def driver_decls(cc, inc):
    text = preprocess(cc, [inc], "".join("#include <%s>\n" % h for h in (
        "cudaTypedefs.h", "cudaProfilerTypedefs.h", "cudaGLTypedefs.h", "cudaEGLTypedefs.h", "cudaVDPAUTypedefs.h")),
        ["__CUDA_API_VERSION_INTERNAL"])
    pfns = pfn_typedefs(text)
    procs, pts, aliases = lists.parse_proc(os.path.join(API, "cuda_proc_versions.def"))
    source = {}
    for name, vs in procs.items():
        for k, v in enumerate(vs):
            source[lists.variant_symbol(name, vs, k, aliases)] = "PFN_%s_v%d" % (name, v)
        for v, sym in pts.get(name, []):
            source[sym] = "PFN_%s_v%d_%s" % (name, v, sym.rsplit("_", 1)[1])
    out = []
    for name, _ in lists.parse_simple(os.path.join(API, "cuda.def"), "cuda.def", lists.CUDA_RE, lists.CUDA_OTHER_RE):
        pfn = source.get(name)
        if pfn not in pfns:
            raise GenError("cuda.def: no PFN typedef for %s (%s)" % (name, pfn))
        out.append(render_decl(pfns[pfn][0], name, pfns[pfn][1]))
    return out, text


def runtime_decls(cc, inc):
    hdr = "".join("#include <%s>\n" % h for h in (
        "cuda_runtime_api.h", "cuda_profiler_api.h", "cuda_gl_interop.h", "cuda_egl_interop.h", "cuda_vdpau_interop.h"))
    text = preprocess(cc, [inc], hdr)
    decls = function_decls(text, "cuda")
    for name, d in function_decls(preprocess(cc, [inc], hdr, ["CUDA_API_PER_THREAD_DEFAULT_STREAM"]), "cuda").items():
        if name in decls and decls[name] != d:
            raise GenError("%s is declared twice, differently" % name)
        decls[name] = d
    rows = lists.parse_cudart(os.path.join(API, "cudart.def"))
    internal = [n for n, _, _ in rows if n.startswith("__") and n not in INTERNAL]
    for h in ("crt/host_runtime.h", "crt/device_functions.h"):
        decls.update(raw_decls(os.path.join(inc, h), internal))
    decls.update(INTERNAL)
    meta = {}
    for h in ("generated_cuda_runtime_api_meta.h", "generated_cudart_removed_meta.h"):
        meta.update(param_records(open(os.path.join(inc, h), encoding="utf-8").read()))

    def cuda12(name):
        record, types = CUDA12[name]
        if record.startswith("("):
            params = record[1:-1]
        elif record in meta:
            params = meta[record]
        else:
            raise GenError("no parameter record %s for the CUDA 12 %s" % (record, name))
        return render_decl("cudaError_t", ("v12_" if name in split else "") + name, params, types)

    split = {n for n, node, _ in rows if node == "SPLIT"}
    out = []
    for name, node, _ in rows:
        if node == "V12":
            if name not in CUDA12:
                raise GenError("cudart.def: no CUDA 12 prototype for %s (add it to CUDA12)" % name)
            out.append(cuda12(name))
            continue
        if name not in decls:
            raise GenError("cudart.def: no declaration of %s in the CUDA 13 headers" % name)
        out.append(render_decl(decls[name][0], name, decls[name][1]))
        if node == "SPLIT":
            if name not in CUDA12:
                raise GenError("cudart.def: no CUDA 12 prototype for SPLIT %s (add it to CUDA12)" % name)
            out.append(cuda12(name))
    unused = set(CUDA12) - {n for n, node, _ in rows if node in ("V12", "SPLIT")}
    if unused:
        raise GenError("CUDA12 names not in cudart.def as V12/SPLIT: %s" % ", ".join(sorted(unused)))
    return out, text + CUDA12_TYPES


def nvml_decls(cc, header):
    text = preprocess(cc, [], open(header, encoding="utf-8").read(), ["NVML_NO_UNVERSIONED_FUNC_DEFS"])
    decls = function_decls(text, "nvml")
    out = []
    for name, _ in lists.parse_simple(os.path.join(API, "nvml.def"), "nvml.def", lists.NVML_RE, lists.NVML_OTHER_RE):
        if name not in decls:
            raise GenError("nvml.def: %s is not declared in %s" % (name, header))
        out.append(render_decl(decls[name][0], name, decls[name][1], NVML_TYPES.get(name)))
    return out, text


PREAMBLE = """\
// SPDX-License-Identifier: Apache-2.0
// Generated by scripts/gen-api-decls.py. DO NOT EDIT.
// Regenerate: python3 scripts/gen-api-decls.py [--cuda-include DIR] [--nvml-header FILE]
// From %(source)s.
//
// %(what)s
//
// Every implementation is defined after these declarations (the API folder's common.h
// includes this file), so a definition whose parameters or return type differ from the real
// prototype fails to compile ("conflicting declaration of C function"). Names without an
// implementation are declared too; api_table.cpp, which defines their NOT_SUPPORTED stubs
// without parameters, does not include this file.
#pragma once

#include "fakegpu/%(types)s"
%(opaque)s
#pragma GCC visibility push(hidden)
extern "C" {

"""

OPAQUE = """
// NVIDIA types that fgapi/%(types)s does not declare, declared here only as far as the
// prototypes need them: a struct or union incomplete, an enum opaque. An implementation that
// reads one needs its definition in %(types)s (NVIDIA's names and tags); the next
// regeneration then leaves it out here.
namespace fgapi {
%(decls)s
}  // namespace fgapi
"""

EPILOGUE = """
}  // extern "C"
#pragma GCC visibility pop
"""

HEADERS = {
    "cuda_api.h": dict(
        source="the CUDA 13.0 cudaTypedefs.h, cudaProfilerTypedefs.h, cudaGLTypedefs.h,\n"
               "// cudaEGLTypedefs.h and cudaVDPAUTypedefs.h, and fakebackend/api/cuda_proc_versions.def",
        what="The CUDA Driver API implementations, one per cuda.def entry, each with the ABI of its\n"
             "// exported symbol: cuda_proc_versions.def ties the symbol to a PFN_<name>_v<version>\n"
             "// typedef (plain cuMemAlloc is the 32-bit v2000 ABI, cuMemAlloc_v2 the v3020 one).",
        types="cuda_types.h"),
    "cudart_api.h": dict(
        source="the CUDA 13.0 cuda_runtime_api.h, cuda_profiler_api.h,\n"
               "// cuda_{gl,egl,vdpau}_interop.h, crt/host_runtime.h, crt/device_functions.h and\n"
               "// generated_cuda{_runtime_api,rt_removed}_meta.h",
        what="The CUDA Runtime API implementations, one per cudart.def entry, plus fgimpl_v12_<name>\n"
             "// (the CUDA 12 ABI) for each SPLIT name. The V12 names and the fgimpl_v12_ ones have the\n"
             "// parameters of the API version libcudart.so.12 exports under that name (the CUDA12\n"
             "// table of the generator); cudaDeviceProp12 and cudaDevicePropLegacy stand for the 12.x\n"
             "// and pre-12.0 layouts of cudaDeviceProp.",
        types="cuda_types.h"),
    "nvml_api.h": dict(
        source="nvml.h (NVML 13), read with NVML_NO_UNVERSIONED_FUNC_DEFS",
        what="The NVML implementations, one per nvml.def entry. The legacy unversioned names\n"
             "// (nvmlInit, nvmlDeviceGetCount, ...) have their own, older prototypes; the ones that\n"
             "// predate the v3 nvmlPciInfo_t take nvmlPciInfoLegacy_t.",
        types="nvml_types.h"),
}


def types_version():
    """The CUDA version whose headers cuda_types.h reproduces (kCudaHeaderVersion)."""
    text = open(os.path.join(OUT, "cuda_types.h"), encoding="utf-8").read()
    return int(re.search(r"kCudaHeaderVersion = (\d+);", text).group(1))


def toolkit_version(inc):
    """CUDA_VERSION of the toolkit headers in inc, or None without them."""
    try:
        m = re.search(r"^#define CUDA_VERSION (\d+)", open(os.path.join(inc, "cuda.h"), encoding="utf-8").read(), re.M)
    except OSError:
        return None
    return int(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cuda-include", default="/usr/local/cuda/include", help="CUDA 13.0 toolkit headers")
    ap.add_argument("--nvml-header", help="NVML 13 nvml.h (default: <cuda-include>/nvml.h)")
    ap.add_argument("--out", default=OUT, help="output directory (default: %(default)s)")
    ap.add_argument("--check", action="store_true",
                    help="compare with the files in --out instead of writing; without the CUDA 13.0 toolkit "
                         "say SKIPPED, without nvml.h leave nvml_api.h unchecked")
    args = ap.parse_args()
    cc = os.environ.get("CC", "cc")
    nvml_header = args.nvml_header or os.path.join(args.cuda_include, "nvml.h")
    version = toolkit_version(args.cuda_include)
    if version != types_version():
        msg = "the prototypes are CUDA %d's; %s has %s" % (types_version(), args.cuda_include,
                                                           "CUDA %d" % version if version else "no cuda.h")
        if args.check:
            print("SKIPPED: " + msg)
            return 0
        print("error: " + msg, file=sys.stderr)
        return 1
    try:
        bodies = {
            "cuda_api.h": driver_decls(cc, args.cuda_include),
            "cudart_api.h": runtime_decls(cc, args.cuda_include),
        }
        if not args.check or os.path.exists(nvml_header):
            bodies["nvml_api.h"] = nvml_decls(cc, nvml_header)
        else:
            print("note: %s not found; nvml_api.h not checked" % nvml_header)
    except (GenError, OSError) as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    if lists.errors:  # what the list parsers found wrong (check-api-lists.py says the same)
        print("error: %s" % "; ".join(lists.errors), file=sys.stderr)
        return 1
    stale = []
    for fname, (decls, c_text) in bodies.items():
        info = dict(HEADERS[fname])
        try:
            types = TypeTable(c_text, fgapi_names(info["types"])).declarations_for(decls)
        except GenError as e:
            print("error: %s: %s" % (fname, e), file=sys.stderr)
            return 1
        info["opaque"] = OPAQUE % dict(info, decls="\n".join(types)) if types else ""
        text = PREAMBLE % info + "\n".join(decls) + "\n" + EPILOGUE
        path = os.path.join(args.out, fname)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if args.check:
            if old != text:
                stale.append(path)
        elif old != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            print("wrote %s (%d declarations)" % (path, len(decls)))
    if stale:
        print("out of date (run scripts/gen-api-decls.py): %s" % ", ".join(stale), file=sys.stderr)
        return 1
    print("%s: %s" % ("up to date" if args.check else "done", ", ".join(bodies)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
