#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Validate the API lists of the fake backend (fakebackend/api/*.def).

Checks, for cudart.def, cuda.def, nvml.def and cuda_proc_versions.def:
  * every line is a well-formed entry of its list (comments and, in
    cuda_proc_versions.def, the #ifndef/#define guards are allowed);
  * no name appears twice; lists are sorted by name (byte order);
  * cuda_proc_versions.def: every symbol implied by an FG_PROC line (plain, _v2, _v3, ...
    unless an FG_PROC_ALIAS overrides it) and every FG_PROC_PT symbol exists in cuda.def,
    every cuda.def name is reachable from the table, and the per-thread twin chosen for a
    request is the twin of the variant chosen without the flag;
  * with the census results (default ../shared/research/census-probes/results, or
    --census DIR): every libcudart.so.13 export is a BOTH/SPLIT/V13 name and every V12 name
    is absent from it; every libcuda stub export is in cuda.def and vice versa; every name of
    cudaTypedefs_pfn_versions.txt is in the table with the same versions; every request of
    cudart_getproc_requests_static.txt resolves; the names beyond the stub are GL/EGL/VDPAU
    interop names;
  * the generated prototypes (fakebackend/include/fakegpu/{cuda,cudart,nvml}_api.h, made by
    scripts/gen-api-decls.py) declare exactly the implementations the lists imply:
    fgimpl_<name> for every entry, plus fgimpl_v12_<name> for every SPLIT cudart name;
  * with the toolkit headers (--cuda-include, default /usr/local/cuda/include): every
    PFN_* typedef of cudaGLTypedefs.h / cudaEGLTypedefs.h / cudaVDPAUTypedefs.h (but the
    Windows-only cuWGLGetDevice) is in the table with the same versions;
  * the counts and SPLIT names fakebackend/api/README.md and the lists' headers quote are
    the lists' own.
Prints the counts per list. Exit status 0 when everything holds, 1 otherwise.
Standard library only.
"""
import argparse
import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
CUDART_RE = re.compile(r"FG_CUDART\((%s), (BOTH|V12|V13|SPLIT), (ERR|STR|VOID|PTR|UINT|CHAR|STRUCT)\)" % IDENT)
CUDA_RE = re.compile(r"FG_CUDA\((%s)\)" % IDENT)
CUDA_OTHER_RE = re.compile(r"FG_CUDA_OTHER\((%s), (STR|VOID|PTR|UINT|CHAR|STRUCT)\)" % IDENT)
NVML_RE = re.compile(r"FG_NVML\((%s)\)" % IDENT)
NVML_OTHER_RE = re.compile(r"FG_NVML_OTHER\((%s), (STR|VOID|PTR|UINT|CHAR|STRUCT)\)" % IDENT)
PROC_RE = re.compile(r"FG_PROC\((%s), \((\d+(?:, \d+)*)\)\)" % IDENT)
PROC_PT_RE = re.compile(r"FG_PROC_PT\((%s), (\d+), (%s_(?:ptds|ptsz))\)" % (IDENT, IDENT))
PROC_ALIAS_RE = re.compile(r"FG_PROC_ALIAS\((%s), (\d+), (%s)\)" % (IDENT, IDENT))
GUARD_RE = re.compile(r"#\s*(ifndef|ifdef|define|undef|endif)\b(\s+FG_PROC_(PT|ALIAS)(_DEFAULTED_)?\b.*)?$")

# The graphics interop names (cudaGL.h, cudaEGL.h, cudaVDPAU.h), which the real libcuda.so.1
# exports beyond the toolkit's stub.
INTEROP_RE = re.compile(r"cu(GL|EGL|VDPAU|Graphics(GL|EGL|VDPAU)|GraphicsResourceGetMappedEgl|EventCreateFromEGL)")

errors = []


def err(msg):
    errors.append(msg)


def entry_lines(path):
    """(line number, text) of every non-comment, non-blank line."""
    text = open(path, encoding="utf-8").read()
    # Blank out comments but keep the newlines, so line numbers stay right.
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    for no, line in enumerate(text.split("\n"), 1):
        line = line.strip()
        if line:
            yield no, line


def check_order_and_dups(fname, names):
    seen = set()
    for n in names:
        if n in seen:
            err("%s: duplicate name %s" % (fname, n))
        seen.add(n)
    for a, b in zip(names, names[1:]):
        if a.encode() > b.encode():
            err("%s: not sorted: %s before %s" % (fname, a, b))
            break


def parse_cudart(path):
    rows = []
    for no, line in entry_lines(path):
        m = CUDART_RE.fullmatch(line)
        if not m:
            err("cudart.def:%d: malformed line: %s" % (no, line))
            continue
        rows.append(m.groups())
    check_order_and_dups("cudart.def", [r[0] for r in rows])
    return rows


def parse_simple(path, fname, plain_re, other_re):
    rows = []
    for no, line in entry_lines(path):
        m = plain_re.fullmatch(line)
        if m:
            rows.append((m.group(1), None))
            continue
        m = other_re.fullmatch(line)
        if m:
            rows.append((m.group(1), m.group(2)))
            continue
        err("%s:%d: malformed line: %s" % (fname, no, line))
    check_order_and_dups(fname, [r[0] for r in rows])
    return rows


def parse_proc(path):
    procs, pts, aliases = {}, {}, {}
    order = []
    for no, line in entry_lines(path):
        if line.startswith("#"):
            if not GUARD_RE.fullmatch(line):
                err("cuda_proc_versions.def:%d: unexpected directive: %s" % (no, line))
            continue
        m = PROC_RE.fullmatch(line)
        if m:
            name, vs = m.group(1), [int(v) for v in m.group(2).split(", ")]
            if name in procs:
                err("cuda_proc_versions.def: duplicate FG_PROC %s" % name)
            if vs != sorted(set(vs)):
                err("cuda_proc_versions.def:%d: versions of %s not strictly ascending" % (no, name))
            procs[name] = vs
            order.append(name)
            continue
        m = PROC_PT_RE.fullmatch(line)
        if m:
            name, v, sym = m.group(1), int(m.group(2)), m.group(3)
            if v in dict(pts.get(name, [])):
                err("cuda_proc_versions.def: duplicate FG_PROC_PT %s %d" % (name, v))
            pts.setdefault(name, []).append((v, sym))
            continue
        m = PROC_ALIAS_RE.fullmatch(line)
        if m:
            name, v, sym = m.group(1), int(m.group(2)), m.group(3)
            if (name, v) in aliases:
                err("cuda_proc_versions.def: duplicate FG_PROC_ALIAS %s %d" % (name, v))
            aliases[(name, v)] = sym
            continue
        err("cuda_proc_versions.def:%d: malformed line: %s" % (no, line))
    check_order_and_dups("cuda_proc_versions.def", order)
    for name in list(pts) + [a[0] for a in aliases]:
        if name not in procs:
            err("cuda_proc_versions.def: %s has FG_PROC_PT/ALIAS lines but no FG_PROC line" % name)
    return procs, pts, aliases


def variant_symbol(name, versions, k, aliases):
    """Symbol serving the k-th (0-based) version of name."""
    alias = aliases.get((name, versions[k]))
    if alias:
        return alias
    return name if k == 0 else "%s_v%d" % (name, k + 1)


def resolve(name, version, flags, procs, pts, aliases):
    """The symbol cuGetProcAddress should return, or None."""
    vs = procs.get(name)
    if not vs:
        return None
    ks = [k for k, v in enumerate(vs) if v <= version]
    if not ks:
        return None
    sym = variant_symbol(name, vs, ks[-1], aliases)
    if flags & 2:
        cands = [(v, s) for v, s in pts.get(name, []) if v <= version]
        if cands:
            sym = max(cands)[1]
    return sym


def check_proc(procs, pts, aliases, cuda_names):
    reached = set()
    for name, vs in procs.items():
        for k in range(len(vs)):
            sym = variant_symbol(name, vs, k, aliases)
            reached.add(sym)
            if sym not in cuda_names:
                err("cuda_proc_versions.def: %s version %d implies %s, which cuda.def lacks "
                    "(add FG_PROC_ALIAS)" % (name, vs[k], sym))
        for v, sym in pts.get(name, []):
            reached.add(sym)
            if sym not in cuda_names:
                err("cuda_proc_versions.def: per-thread twin %s of %s is not in cuda.def" % (sym, name))
            if v < vs[0]:
                err("cuda_proc_versions.def: per-thread twin %s (%d) predates %s" % (sym, v, name))
        # The per-thread answer must be the twin of the variant the plain request gets.
        if name in pts:
            bounds = sorted(set(vs + [v for v, _ in pts[name]]))
            for v in bounds:
                plain = resolve(name, v, 0, procs, pts, aliases)
                ptd = resolve(name, v, 2, procs, pts, aliases)
                if ptd != plain and ptd not in (plain + "_ptds", plain + "_ptsz"):
                    err("cuda_proc_versions.def: %s at %d: per-thread answer %s is not the twin of %s"
                        % (name, v, ptd, plain))
    for n in sorted(cuda_names - reached):
        err("cuda_proc_versions.def: cuda.def name %s is not reachable through cuGetProcAddress" % n)


def read_list(path):
    return [l.strip() for l in open(path, encoding="utf-8") if l.strip()]


def check_census(census, cudart, cuda_names, procs, pts, aliases):
    done = []
    p = os.path.join(census, "libcudart_exports.txt")
    if os.path.exists(p):
        exports13 = set()
        for line in read_list(p):
            name, _, node = line.partition("@@")
            if node and node != "libcudart.so.13":
                err("census: unexpected version node in %s" % line)
            if not node and name == "libcudart.so.13":
                continue  # the version-definition symbol itself
            exports13.add(name)
        nodes = {n: node for n, node, _ in cudart}
        for n in sorted(exports13):
            if n not in nodes:
                err("cudart.def: libcudart.so.13 export %s is missing" % n)
            elif nodes[n] == "V12":
                err("cudart.def: %s is exported by libcudart.so.13 but marked V12" % n)
        for n, node in nodes.items():
            if node in ("BOTH", "SPLIT", "V13") and n not in exports13:
                err("cudart.def: %s is %s but libcudart.so.13 does not export it" % (n, node))
        done.append("libcudart.so.13 exports (%d)" % len(exports13))
    p = os.path.join(census, "libcuda_stub_exports.txt")
    if os.path.exists(p):
        stub = set(read_list(p))
        for n in sorted(stub - cuda_names):
            err("cuda.def: libcuda export %s is missing" % n)
        # Beyond the stub: the graphics interop names the real driver exports.
        for n in sorted(cuda_names - stub):
            if not INTEROP_RE.match(n):
                err("cuda.def: %s is neither a libcuda stub export nor a GL/EGL/VDPAU interop name" % n)
        done.append("libcuda stub exports (%d) + interop names (%d)" % (len(stub), len(cuda_names - stub)))
    p = os.path.join(census, "cudaTypedefs_pfn_versions.txt")
    if os.path.exists(p):
        count = 0
        for line in read_list(p):
            name, vs = line.split()
            count += 1
            plain = sorted(int(v) for v in vs.split(",") if v.isdigit())
            pt = sorted(v for v in vs.split(",") if not v.isdigit())
            if procs.get(name) != plain:
                err("cuda_proc_versions.def: %s should be FG_PROC with %s, has %s"
                    % (name, plain, procs.get(name)))
            have = sorted("%d_%s" % (v, s.rsplit("_", 1)[1]) for v, s in pts.get(name, []))
            if have != pt:
                err("cuda_proc_versions.def: per-thread twins of %s: typedefs %s, table %s" % (name, pt, have))
        done.append("cudaTypedefs entries (%d)" % count)
    p = os.path.join(census, "cudart_getproc_requests_static.txt")
    if os.path.exists(p):
        count, unresolved = 0, []
        for line in read_list(p):
            m = re.fullmatch(r'"(.*)" (\d+) (\d+)', line)
            if not m:
                err("census: cannot parse request %s" % line)
                continue
            name, ver, flags = m.group(1), int(m.group(2)), int(m.group(3))
            if not name:
                continue  # cudart's empty-name probe
            count += 1
            sym = resolve(name, ver, flags, procs, pts, aliases)
            if sym is None:
                unresolved.append(name)
            elif sym not in cuda_names:
                err("cuGetProcAddress(%s, %d, %d) -> %s, not in cuda.def" % (name, ver, flags, sym))
            elif flags & 2 and not re.search(r"_pt(ds|sz)$", sym) and pts.get(name):
                err("cuGetProcAddress(%s, %d, 2) -> %s has no per-thread twin" % (name, ver, sym))
        for n in sorted(set(unresolved)):
            err("cudart asks for %s, which the table cannot serve" % n)
        done.append("cudart cuGetProcAddress requests (%d, all resolve)" % count)
    return done


def check_interop_headers(include, procs, pts, cuda_names):
    """Every PFN_* typedef of the toolkit's cudaGLTypedefs.h, cudaEGLTypedefs.h and
    cudaVDPAUTypedefs.h is in the table with the same versions and per-thread twins, and
    every symbol it implies is exported (cuWGLGetDevice, Windows-only, excepted)."""
    vers, pt = {}, {}
    for h in ("cudaGLTypedefs.h", "cudaEGLTypedefs.h", "cudaVDPAUTypedefs.h"):
        text = open(os.path.join(include, h), encoding="utf-8").read()
        for name, ver, suffix in re.findall(r"PFN_(\w+?)_v(\d+)(_ptds|_ptsz)?\b", text):
            if name.startswith("cuWGL"):
                continue
            if suffix:
                pt.setdefault(name, set()).add("%s%s" % (ver, suffix))
            else:
                vers.setdefault(name, set()).add(int(ver))
    for name, vs in sorted(vers.items()):
        if procs.get(name) != sorted(vs):
            err("cuda_proc_versions.def: interop %s should be FG_PROC with %s, has %s" % (name, sorted(vs), procs.get(name)))
        have = sorted("%d_%s" % (v, sym.rsplit("_", 1)[1]) for v, sym in pts.get(name, []))
        if have != sorted(pt.get(name, [])):
            err("cuda_proc_versions.def: per-thread twins of interop %s: typedefs %s, table %s"
                % (name, sorted(pt.get(name, [])), have))
        if not INTEROP_RE.match(name):
            err("check-api-lists.py: INTEROP_RE does not cover %s" % name)
    return "interop typedefs of %s (%d names)" % (include, len(vers))


def check_readme_counts(readme, cudart, cuda, nvml, procs, pts, aliases):
    """The counts and the SPLIT names fakebackend/api/README.md and the lists' headers quote are the lists' own."""
    text = open(readme, encoding="utf-8").read()
    by_node = {k: sum(1 for _, n, _ in cudart if n == k) for k in ("BOTH", "SPLIT", "V13", "V12")}
    want = {
        "cudart.def": "%d: %d BOTH, %d SPLIT, %d V13, %d V12 (`.so.12` exports %d, `.so.13` %d)" % (
            len(cudart), by_node["BOTH"], by_node["SPLIT"], by_node["V13"], by_node["V12"],
            len(cudart) - by_node["V13"], len(cudart) - by_node["V12"]),
        "cuda.def": "| %d |" % len(cuda),
        "nvml.def": "| %d |" % len(nvml),
        "cuda_proc_versions.def": "%d FG_PROC, %d FG_PROC_PT, %d FG_PROC_ALIAS" % (
            len(procs), sum(len(v) for v in pts.values()), len(aliases)),
    }
    rows = {m.group(1): m.group(0) for m in re.finditer(r"^\| `([a-z_]+\.def)` \|.*$", text, flags=re.M)}
    for name, quoted in want.items():
        if name not in rows:
            err("%s: no table row for %s" % (readme, name))
        elif quoted not in rows[name]:
            err("%s: the %s row must say %r (the list's counts)" % (readme, name, quoted))
    api = os.path.dirname(readme)
    for name, pattern, quoted in (
            ("cudart.def", r"Union: [^\n]*", "Union: %d names = %d BOTH + %d SPLIT + %d V13 + %d V12." % (
                len(cudart), by_node["BOTH"], by_node["SPLIT"], by_node["V13"], by_node["V12"])),
            ("cuda.def", r"\d+ names in all\.", "%d names in all." % len(cuda)),
            ("cuda_proc_versions.def", r"for all \d+ names", "for all %d names" % len(procs))):
        found = re.search(pattern, open(os.path.join(api, name), encoding="utf-8").read())
        if not found or found.group(0) != quoted:
            err("%s: its header must say %r (the list's counts)" % (name, quoted))
    m = re.search(r"SPLIT names: (.*?)\. The reasons", text, flags=re.S)
    quoted_split = set()
    for item in re.findall(r"`([A-Za-z0-9_]+)((?:\(_ptsz\))?)`", m.group(1) if m else ""):
        quoted_split.add(item[0])
        if item[1]:
            quoted_split.add(item[0] + "_ptsz")
    split = {n for n, node, _ in cudart if node == "SPLIT"}
    if quoted_split != split:
        err("%s: the SPLIT names it lists differ from cudart.def's: missing %s, not SPLIT %s" % (
            readme, sorted(split - quoted_split), sorted(quoted_split - split)))


def check_api_headers(include, cudart, cuda, nvml):
    """Each generated header declares exactly the fgimpl_ names its list implies."""
    expected = {
        "cuda_api.h": {n for n, _ in cuda},
        "cudart_api.h": {n for n, _, _ in cudart} | {"v12_" + n for n, node, _ in cudart if node == "SPLIT"},
        "nvml_api.h": {n for n, _ in nvml},
    }
    for fname, want in expected.items():
        path = os.path.join(include, fname)
        if not os.path.exists(path):
            err("%s is missing (run scripts/gen-api-decls.py)" % path)
            continue
        text = open(path, encoding="utf-8").read()
        if text.split("\n")[1:2] != ["// Generated by scripts/gen-api-decls.py. DO NOT EDIT."]:
            err("%s: not a generated header (no DO NOT EDIT line)" % fname)
        have = re.findall(r"\bfgimpl_(%s)\(" % IDENT, text)
        for n in sorted(set(n for n in have if have.count(n) > 1)):
            err("%s: fgimpl_%s is declared twice" % (fname, n))
        for n in sorted(want - set(have)):
            err("%s: no prototype for fgimpl_%s (regenerate: scripts/gen-api-decls.py)" % (fname, n))
        for n in sorted(set(have) - want):
            err("%s: fgimpl_%s is not implied by the list" % (fname, n))
    return "generated prototypes (%s)" % ", ".join("%s %d" % (f, len(w)) for f, w in expected.items())


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--api", default=os.path.join(root, "fakebackend", "api"),
                    help="directory of the .def lists (default: %(default)s)")
    ap.add_argument("--census", default=os.path.join(root, "..", "shared", "research",
                                                    "census-probes", "results"),
                    help="census results directory; its checks are skipped when absent")
    ap.add_argument("--include", default=os.path.join(root, "fakebackend", "include", "fakegpu"),
                    help="directory of the generated fakegpu/*_api.h headers (default: %(default)s)")
    ap.add_argument("--cuda-include", default="/usr/local/cuda/include",
                    help="toolkit headers for the interop typedef check; skipped when absent")
    args = ap.parse_args()

    cudart = parse_cudart(os.path.join(args.api, "cudart.def"))
    cuda = parse_simple(os.path.join(args.api, "cuda.def"), "cuda.def", CUDA_RE, CUDA_OTHER_RE)
    nvml = parse_simple(os.path.join(args.api, "nvml.def"), "nvml.def", NVML_RE, NVML_OTHER_RE)
    procs, pts, aliases = parse_proc(os.path.join(args.api, "cuda_proc_versions.def"))
    cuda_names = {n for n, _ in cuda}

    if not any(n == "nvmlErrorString" and r == "STR" for n, r in nvml):
        err("nvml.def: nvmlErrorString must be FG_NVML_OTHER(nvmlErrorString, STR)")
    for n, r in nvml:
        if r and n != "nvmlErrorString":
            err("nvml.def: only nvmlErrorString returns something other than nvmlReturn_t (%s)" % n)

    check_proc(procs, pts, aliases, cuda_names)
    check_readme_counts(os.path.join(args.api, "README.md"), cudart, cuda, nvml, procs, pts, aliases)

    done = [check_api_headers(args.include, cudart, cuda, nvml)]
    if os.path.isdir(args.census):
        done += check_census(os.path.abspath(args.census), cudart, cuda_names, procs, pts, aliases)
    else:
        print("note: census results not found at %s; export-list checks skipped" % args.census)
    if os.path.exists(os.path.join(args.cuda_include, "cudaGLTypedefs.h")):
        done.append(check_interop_headers(args.cuda_include, procs, pts, cuda_names))
    else:
        print("note: cudaGLTypedefs.h not found in %s; interop typedef checks skipped" % args.cuda_include)

    by_node, by_ret = {}, {}
    for _, node, ret in cudart:
        by_node[node] = by_node.get(node, 0) + 1
        by_ret[ret] = by_ret.get(ret, 0) + 1
    n12 = sum(v for k, v in by_node.items() if k != "V13")
    n13 = sum(v for k, v in by_node.items() if k != "V12")
    print("cudart.def: %d names (%s); libcudart.so.12 exports %d, libcudart.so.13 exports %d; RET %s"
          % (len(cudart), ", ".join("%s %d" % (k, by_node.get(k, 0)) for k in ("BOTH", "SPLIT", "V13", "V12")),
             n12, n13, ", ".join("%s %d" % kv for kv in sorted(by_ret.items()))))
    print("cuda.def: %d names (%d FG_CUDA_OTHER)" % (len(cuda), sum(1 for _, r in cuda if r)))
    print("nvml.def: %d names (%d FG_NVML_OTHER)" % (len(nvml), sum(1 for _, r in nvml if r)))
    print("cuda_proc_versions.def: %d FG_PROC (%d with several ABIs), %d FG_PROC_PT, %d FG_PROC_ALIAS"
          % (len(procs), sum(1 for v in procs.values() if len(v) > 1),
             sum(len(v) for v in pts.values()), len(aliases)))
    for d in done:
        print("checked: %s" % d)

    if errors:
        for e in errors:
            print("ERROR: " + e, file=sys.stderr)
        print("%d error(s)" % len(errors), file=sys.stderr)
        return 1
    print("API lists OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
