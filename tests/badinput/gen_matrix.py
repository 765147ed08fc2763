#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generates the bad-input matrix (tests/badinput/matrix.cpp includes the output).

Inputs:
  * the export lists fakebackend/api/{cuda,cudart,nvml}.def: every exported function, the
    library and version node a client binds it from;
  * the generated prototypes fakebackend/include/fakegpu/{cuda,cudart,nvml}_api.h: every
    parameter's type and name;
  * the symbols of the backend's object files (nm): which names have an implementation (a strong
    fgimpl_<name>) and which are the weak NOT_SUPPORTED stubs of api_table.cpp;
  * tests/badinput/expectations.txt: per-function answers where NVIDIA's reference differs
    from the rule table below, expected failures and exclusions, each with its reason.

Each parameter gets a class from its type and name (out-pointer, handle of a kind, device
ordinal, device pointer, enum, flags, size ...); each class gives the bad values of the matrix
(NULL, a garbage or destroyed handle, an ordinal past the last device, an enum or flag bits
no header defines, sizes 0 / SIZE_MAX / one past the allocation / wrapping the address space)
and the rule table the code each must return. Every other argument is a valid one from the
harness's fixture. Output: one C++ call thunk per function and the table of cases.

Descriptors (structs a call reads, by pointer or by value, or reads and writes) listed in
DESCRIPTORS are passed valid (the harness's make_valid() builds each from the fixture) and each
listed field gets the bad values of its field class, one case per field and value, named
PARAM.FIELD (FIELD_SKIPS leaves out the fields a function's cases cannot reach). OVERRIDES give parameters a valid value the generic one is not (a VMM
reservation, a memset node, a kernel's arguments, a graph node to depend on) and bad values of
their own. A case names one parameter and must reach it: the valid arguments around it are
valid for the call (badinput_matrix --valid lists the functions whose all-valid call is refused,
and the descriptors of another kind, the 4th element of a DESCRIPTORS field, that are).
"""
import argparse
import fnmatch
import re
import subprocess
import sys
from pathlib import Path

# ---- handle types: by-value parameter type -> fixture kind -----------------------------------
HANDLES = {
    "CUcontext": "ctx",
    "CUstream": "stream", "cudaStream_t": "stream",
    "CUevent": "event", "cudaEvent_t": "event",
    "CUmodule": "module",
    "CUfunction": "function", "cudaFunction_t": "function",
    "CUlibrary": "library", "cudaLibrary_t": "library",
    "CUkernel": "kernel", "cudaKernel_t": "kernel",
    "CUgraph": "graph", "cudaGraph_t": "graph",
    "CUgraphNode": "node", "cudaGraphNode_t": "node",
    "CUgraphExec": "exec", "cudaGraphExec_t": "exec",
    "CUmemoryPool": "pool", "cudaMemPool_t": "pool",
    "CUarray": "array", "cudaArray_t": "array", "cudaArray_const_t": "array",
    "CUmipmappedArray": "mipmap", "cudaMipmappedArray_t": "mipmap", "cudaMipmappedArray_const_t": "mipmap",
    "CUuserObject": "userobj", "cudaUserObject_t": "userobj",
    "CUlinkState": "link",
    "CUmemGenericAllocationHandle": "memhandle", "CUmemGenericAllocationHandle_v1": "memhandle",
    "CUtexObject": "texobj", "CUtexObject_v1": "texobj", "cudaTextureObject_t": "texobj",
    "CUsurfObject": "surfobj", "CUsurfObject_v1": "surfobj", "cudaSurfaceObject_t": "surfobj",
    "CUexternalMemory": "extmem", "cudaExternalMemory_t": "extmem",
    "CUexternalSemaphore": "extsem", "cudaExternalSemaphore_t": "extsem",
    "CUgraphicsResource": "gres", "cudaGraphicsResource_t": "gres",
    "CUgreenCtx": "greenctx",
    "CUtexref": "texref", "CUsurfref": "surfref",
    "CUasyncCallbackHandle": "asynccb", "CUlogsCallbackHandle": "logscb",
    "nvmlDevice_t": "nvml_device", "nvmlUnit_t": "nvml_unit", "nvmlEventSet_t": "nvml_eventset",
    "nvmlGpuInstance_t": "nvml_gi", "nvmlComputeInstance_t": "nvml_ci",
}
# Kinds the fixture can also hand out destroyed (created, then destroyed before the calls).
DESTROYABLE = {"ctx", "stream", "event", "module", "function", "library", "kernel", "graph", "node", "exec",
               "pool", "array", "memhandle", "link", "userobj", "nvml_eventset"}
# Integer-valued handles: NVIDIA documents an unknown one as an invalid value, not a handle.
VALUE_HANDLES = {"memhandle", "texobj", "surfobj"}

VALUE_DOC_KINDS = {"graph", "node", "exec", "pool", "userobj"}
VALUE_DOC_RE = re.compile(r"Graph|MemPool|UserObject")

DEVICE_TYPES = {"CUdevice", "CUdevice_v1"}
RUNTIME_DEVICE_NAMES = {"device", "dev", "srcDevice", "dstDevice", "peerDevice", "deviceOrdinal"}
DPTR_TYPES = {"CUdeviceptr", "CUdeviceptr_v2"}
RUNTIME_DPTR_NAMES = {"devPtr", "dptr", "ptr", "dst", "src"}
CALLBACKS = {"CUstreamCallback", "CUhostFn", "cudaHostFn_t", "cudaStreamCallback_t", "CUasyncCallback",
             "CUlogsCallback", "cudaAsyncCallback", "cudaLogsCallback_t", "CUoccupancyB2DSize",
             "cudaStreamCallback_t"}
SCALARS = {"void", "char", "int", "unsigned int", "unsigned", "size_t", "float", "double", "unsigned long long",
           "long long", "unsigned long", "long", "unsigned short", "unsigned char", "short", "cuuint32_t",
           "cuuint64_t", "uint32_t", "uint64_t", "int32_t", "int64_t"}

FAMILY_CODES = {
    # family: code names of the rule table
    "driver": dict(ok="CUDA_SUCCESS", value="CUDA_ERROR_INVALID_VALUE", handle="CUDA_ERROR_INVALID_HANDLE",
                   context="CUDA_ERROR_INVALID_CONTEXT", device="CUDA_ERROR_INVALID_DEVICE",
                   oom="CUDA_ERROR_OUT_OF_MEMORY", stub="CUDA_ERROR_NOT_SUPPORTED"),
    "runtime": dict(ok="cudaSuccess", value="cudaErrorInvalidValue", handle="cudaErrorInvalidResourceHandle",
                    context="cudaErrorInvalidResourceHandle", device="cudaErrorInvalidDevice",
                    oom="cudaErrorMemoryAllocation", stub="cudaErrorNotSupported"),
    "nvml": dict(ok="NVML_SUCCESS", value="NVML_ERROR_INVALID_ARGUMENT", handle="NVML_ERROR_INVALID_ARGUMENT",
                 context="NVML_ERROR_INVALID_ARGUMENT", device="NVML_ERROR_INVALID_ARGUMENT",
                 oom="NVML_ERROR_INSUFFICIENT_SIZE", stub="NVML_ERROR_NOT_SUPPORTED"),
}

ALLOC_RE = re.compile(r"(Alloc|Malloc|MemCreate|AddressReserve|HostRegister|ArrayCreate|Array3DCreate|"
                      r"MallocArray|Malloc3D|MemPoolTrimTo)")
ZERO_OK_RE = re.compile(r"(Memcpy|Memset|memcpy|memset)")

# ---- descriptor fields -------------------------------------------------------------------------------
# Field class -> [(mutation, rule)]. The values come from Fixture::field_value: past_end is the
# valid value plus one unit (the valid descriptors' regions end exactly at their allocation's
# end, so one more byte, row, slice, pitch step or element passes it), small is 1 (under the
# width or the extent's rows), wrap makes the field times its unit wrap the address space (a
# position wraps to one block before its base: the neighbouring allocation).
FIELD_MUTATIONS = {
    "pos": [("past_end", "value"), ("huge", "value"), ("wrap", "value")],
    "pitch": [("small", "value"), ("past_end", "value"), ("huge", "value"), ("wrap", "value")],
    "rows": [("small", "value"), ("past_end", "value"), ("huge", "value"), ("wrap", "value")],
    "extent": [("zero", "ok"), ("past_end", "value"), ("huge", "value"), ("wrap", "value")],
    "dptr": [("garbage", "value")],
    "array": [("garbage", "value"), ("destroyed", "value")],
    "enumf": [("out_of_range", "value")],
    "devicef": [("out_of_range", "device")],
    "elem": [("out_of_range", "value")],
    "count": [("huge", "value")],
    "bytes": [("huge", "oom")],  # the bytes an allocation takes
    "dim": [("zero", "value"), ("huge", "value")],
    "smem": [("huge", "value")],
    "stream": [("garbage", "handle"), ("destroyed", "handle")],
    # opaque handles passed by value (IPC): random bytes, all zero, one of memory freed since
    "opaque": [("garbage", "value"), ("zero", "value"), ("destroyed", "value")],
    "opaque_event": [("garbage", "value")],
    "func": [("null", "value"), ("garbage", "value")],
    "kparams": [("null", "value")],
    "hostfn": [("null", "value")],
    # an array's width (0 is none), and a height or depth (0: a dimension fewer): past the
    # device's texture limits
    "shape": [("zero", "value"), ("huge", "value")],
    "shape0": [("huge", "value")],
    # a resource's bytes, elements or rows (ending at its allocation's end) or a view's extent
    # (the array's): none, one more, SIZE_MAX; span0, the same where the valid value is 0
    "span": [("zero", "value"), ("past_end", "value"), ("huge", "value")],
    "span0": [("past_end", "value"), ("huge", "value")],
    "channels": [("out_of_range", "value")],  # 3: an element has 1, 2 or 4 channels
    "bits": [("out_of_range", "value")],  # a channel's bits
    "level": [("out_of_range", "value")],  # a view's mipmap level or layer, of an array with one
}

# The box every valid copy/memset descriptor describes (matrix.h kBox*): unit names are C++.
_ROW, _SLICE = "kBoxPitch", "kBoxPitch * kBoxRows"


def _copy_side(pre, pos_x, pos_y, pos_z, ptr, pitch, rows, mtype=None, array=None):
    out = [(pos_x, "pos", "1"), (pos_y, "pos", _ROW)]
    if pos_z:
        out.append((pos_z, "pos", _SLICE))
    if mtype:
        out.append((mtype, "enumf", None))
    if array:
        out.append((array, "array", None))
    out += [(ptr, "dptr", None), (pitch, "pitch", "kBoxRows")]
    if rows:
        out.append((rows, "rows", _ROW))
    return out


_M3D = (_copy_side("src", "srcXInBytes", "srcY", "srcZ", "srcDevice", "srcPitch", "srcHeight", "srcMemoryType") +
        _copy_side("dst", "dstXInBytes", "dstY", "dstZ", "dstDevice", "dstPitch", "dstHeight", "dstMemoryType") +
        [("WidthInBytes", "extent", None), ("Height", "extent", _ROW), ("Depth", "extent", _SLICE)])
_M2D = (_copy_side("src", "srcXInBytes", "srcY", None, "srcDevice", "srcPitch", None, "srcMemoryType") +
        _copy_side("dst", "dstXInBytes", "dstY", None, "dstDevice", "dstPitch", None, "dstMemoryType") +
        [("WidthInBytes", "extent", None), ("Height", "extent", _ROW)])
_RT3D = (_copy_side("src", "srcPos.x", "srcPos.y", "srcPos.z", "srcPtr.ptr", "srcPtr.pitch", "srcPtr.ysize",
                    None, "srcArray") +
         _copy_side("dst", "dstPos.x", "dstPos.y", "dstPos.z", "dstPtr.ptr", "dstPtr.pitch", "dstPtr.ysize",
                    None, "dstArray") +
         [("extent.width", "extent", None), ("extent.height", "extent", _ROW), ("extent.depth", "extent", _SLICE)])
_SET = [("dst", "dptr", None), ("pitch", "pitch", "kBoxRows"), ("elementSize", "elem", None),
        ("width", "extent", "kSetElem"), ("height", "extent", _ROW)]
_ACCESS = [("location.type", "enumf", None), ("location.id", "devicef", None), ("flags", "enumf", None)]
_DIMS = ["gridDimX", "gridDimY", "gridDimZ", "blockDimX", "blockDimY", "blockDimZ"]
# A kernel node's launch (the fixture's kernel takes one parameter): driver and runtime shapes.
_KNODE = [("func", "func", None)] + [(d, "dim", None) for d in _DIMS] + [("sharedMemBytes", "smem", None),
                                                                        ("kernelParams", "kparams", None)]
_RT_KNODE = [("func", "func", None)] + [(f"{a}Dim.{c}", "dim", None) for a in ("grid", "block") for c in "xyz"] + \
    [("sharedMemBytes", "smem", None), ("kernelParams", "kparams", None)]
_HNODE = [("fn", "hostfn", None)]
_LOC = [("type", "enumf", None), ("id", "devicef", None)]
_POOL = [("allocType", "enumf", None), ("handleTypes", "enumf", None), ("location.type", "enumf", None),
         ("location.id", "devicef", None)]
# A memory-allocation node (in and out at once: the call writes dptr).
_ALLOC_NODE = [("poolProps." + f, c, u) for f, c, u in _POOL] + [("accessDescCount", "count", None),
                                                                  ("bytesize", "bytes", None)]

# Textures and surfaces. The valid resource is the fixture's array (64 x 8 floats, surface
# access); the linear and pitched memory fields are made bad in a resource of that kind
# instead (the 4th element: the matrix.cpp function that turns the valid descriptor into a
# valid one of that kind first), which covers the fixture's allocation to its end.
_AD = [("Width", "shape", None), ("Height", "shape0", None), ("Format", "enumf", None),
       ("NumChannels", "channels", None)]
_RES_ARRAY = [("resType", "enumf", None), ("res.array.hArray", "array", None), ("flags", "enumf", None)]
_LIN, _P2D = "as_linear_resource", "as_pitch2d_resource"
_DRV_RES = _RES_ARRAY + [
    ("res.linear.devPtr", "dptr", None, _LIN), ("res.linear.format", "enumf", None, _LIN),
    ("res.linear.numChannels", "channels", None, _LIN), ("res.linear.sizeInBytes", "span", None, _LIN),
    ("res.pitch2D.devPtr", "dptr", None, _P2D), ("res.pitch2D.format", "enumf", None, _P2D),
    ("res.pitch2D.numChannels", "channels", None, _P2D), ("res.pitch2D.width", "span", None, _P2D),
    ("res.pitch2D.height", "span", None, _P2D), ("res.pitch2D.pitchInBytes", "pitch", "kTexRows", _P2D)]
_RT_RES = [(p.replace("hArray", "array"), c, u) for p, c, u in _RES_ARRAY] + [
    ("res.linear.devPtr", "dptr", None, _LIN), ("res.linear.desc.x", "bits", None, _LIN),
    ("res.linear.desc.f", "enumf", None, _LIN), ("res.linear.sizeInBytes", "span", None, _LIN),
    ("res.pitch2D.devPtr", "dptr", None, _P2D), ("res.pitch2D.desc.f", "enumf", None, _P2D),
    ("res.pitch2D.width", "span", None, _P2D), ("res.pitch2D.height", "span", None, _P2D),
    ("res.pitch2D.pitchInBytes", "pitch", "kTexRows", _P2D)]
_TEX = [(f"addressMode[{i}]", "enumf", None) for i in range(3)] + [("filterMode", "enumf", None),
                                                                   ("mipmapFilterMode", "enumf", None)]
_VIEW = [("format", "enumf", None), ("width", "span", None), ("height", "span", None), ("depth", "span0", None),
         ("firstMipmapLevel", "level", None), ("lastMipmapLevel", "level", None), ("firstLayer", "level", None),
         ("lastLayer", "level", None)]
# Descriptors that go with an array resource only (a view is of an array): passed NULL, as
# they may be, in the cases that make a field of another resource kind bad.
ARRAY_ONLY = {"CUDA_RESOURCE_VIEW_DESC", "cudaResourceViewDesc"}
# Descriptor fields no case of these functions reaches: (function glob, field path glob). A
# surface is of an array: linear and pitched memory is refused before their fields are read.
FIELD_SKIPS = [("cu*Surf*Create", "res.linear.*"), ("cu*Surf*Create", "res.pitch2D.*"),
               ("cuda*Surface*", "res.linear.*"), ("cuda*Surface*", "res.pitch2D.*")]

# Descriptor type (without fgapi:: and a _vN suffix) -> [(field path, field class, unit[, how])],
# how: a matrix.cpp function (Fixture&, S&) that makes the valid descriptor another valid one
# the field belongs to before the field is made bad.
DESCRIPTORS = {
    "CUDA_MEMCPY3D": _M3D,
    "CUDA_MEMCPY2D": _M2D,
    "cudaMemcpy3DParms": _RT3D + [("kind", "enumf", None)],
    "cudaMemcpy3DPeerParms": _RT3D + [("srcDevice", "devicef", None), ("dstDevice", "devicef", None)],
    "CUDA_MEMSET_NODE_PARAMS": _SET,
    "cudaMemsetParams": _SET,
    "cudaPitchedPtr": [("ptr", "dptr", None), ("pitch", "pitch", "kBoxRows"), ("ysize", "rows", _ROW)],
    "cudaExtent": [("width", "extent", None), ("height", "extent", _ROW), ("depth", "extent", _SLICE)],
    "dim3": [("x", "dim", None), ("y", "dim", None), ("z", "dim", None)],  # a launch's grid or block
    "CUmemAccessDesc": _ACCESS,
    "cudaMemAccessDesc": _ACCESS,
    "CUlaunchConfig": [(d, "dim", None) for d in _DIMS] + [("sharedMemBytes", "smem", None),
                                                          ("hStream", "stream", None), ("numAttrs", "count", None)],
    "cudaLaunchConfig_t": [(f"{a}Dim.{c}", "dim", None) for a in ("grid", "block") for c in "xyz"] +
                          [("dynamicSmemBytes", "smem", None), ("stream", "stream", None), ("numAttrs", "count", None)],
    "CUDA_KERNEL_NODE_PARAMS_v1": _KNODE,
    "CUDA_KERNEL_NODE_PARAMS": _KNODE,  # the _v2 shape
    "cudaKernelNodeParams": _RT_KNODE,
    "CUDA_HOST_NODE_PARAMS": _HNODE,
    "cudaHostNodeParams": _HNODE,
    "CUmemAllocationProp": [("type", "enumf", None), ("requestedHandleTypes", "enumf", None),
                            ("location.type", "enumf", None), ("location.id", "devicef", None)],
    "CUmemPoolProps": _POOL,
    "cudaMemPoolProps": _POOL,
    "CUmemLocation": _LOC,
    "cudaMemLocation": _LOC,
    "CUDA_MEM_ALLOC_NODE_PARAMS": _ALLOC_NODE,
    "cudaMemAllocNodeParams": _ALLOC_NODE,
    # the generic node parameters of cuGraphAddNode and friends: a host node
    "CUgraphNodeParams": [("type", "enumf", None)],
    "cudaGraphNodeParams": [("type", "enumf", None)],
    "CUipcMemHandle": [("", "opaque", None)],
    "cudaIpcMemHandle_t": [("", "opaque", None)],
    "CUipcEventHandle": [("", "opaque_event", None)],
    "cudaIpcEventHandle_t": [("", "opaque_event", None)],
    "CUDA_ARRAY_DESCRIPTOR": _AD,
    "CUDA_ARRAY3D_DESCRIPTOR": _AD + [("Depth", "shape0", None), ("Flags", "enumf", None)],
    "cudaChannelFormatDesc": [("x", "bits", None), ("f", "enumf", None)],
    "CUDA_RESOURCE_DESC": _DRV_RES,
    "cudaResourceDesc": _RT_RES,
    "CUDA_TEXTURE_DESC": _TEX + [("flags", "enumf", None)],
    "cudaTextureDesc": _TEX + [("readMode", "enumf", None)],
    "CUDA_RESOURCE_VIEW_DESC": _VIEW,
    "cudaResourceViewDesc": _VIEW,
}

# Parameters whose generic valid value is no valid one for these calls, and their own bad
# values: (function glob, parameter glob, valid C++ value, [(mutation, C++ value, rule)]). A
# mutation whose value is None drops that generic bad value (one that is the valid value here).
# The VMM fixture (Fixture::vmm): a physical allocation of 2 granules, a free reservation of
# 2 granules (map_va: its second granule), and a reservation of 2 granules whose first is
# mapped with read/write access (mapped_va).
_G = "fx.vmm().gran"
OVERRIDES = [
    ("cuMemMap", "ptr", "fx.vmm().map_va", [("unaligned", "fx.vmm().map_va + 1", "value")]),
    ("cuMemMap", "size", _G, [("past_end", f"2 * {_G}", "value"), ("wrap", f"0 - {_G}", "value"),
                              ("unaligned", f"{_G} + 1", "value"), ("zero", "0", "value")]),
    ("cuMemMap", "offset", "0", [("past_end", f"2 * {_G}", "value"), ("wrap", f"0 - {_G}", "value"),
                                 ("unaligned", "1", "value")]),
    ("cuMemMap", "handle", "fx.vmm().phys", []),
    ("cuMemUnmap", "ptr", "fx.vmm().mapped_va", [("past_end", f"fx.vmm().mapped_va + {_G}", "value"),
                                                 ("unaligned", "fx.vmm().mapped_va + 1", "value")]),
    ("cuMemUnmap", "size", _G, [("past_end", f"2 * {_G}", "value"), ("wrap", f"0 - {_G}", "value"),
                                ("unaligned", f"{_G} / 2", "value"), ("zero", "0", "value")]),
    ("cuMemSetAccess", "ptr", "fx.vmm().mapped_va", [("past_end", f"fx.vmm().mapped_va + {_G}", "value"),
                                                     ("unaligned", "fx.vmm().mapped_va + 1", "value")]),
    ("cuMemSetAccess", "size", _G, [("past_end", f"2 * {_G}", "value"), ("wrap", f"0 - {_G}", "value"),
                                    ("zero", "0", "value")]),
    ("cuMemSetAccess", "count", "1", []),
    ("cuMemAddressReserve", "size", _G, [("wrap", f"0 - {_G}", "oom"), ("unaligned", f"{_G} + 1", "value"),
                                         ("zero", "0", "value")]),
    ("cuMemAddressReserve", "alignment", "0", [("unaligned", "3", "value"), ("wrap", "1ull << 63", "oom")]),
    ("cuMemAddressReserve", "addr", "0", []),
    ("cu*MemsetNodeSetParams", "hNode", "fx.graph_nodes().memset_node", []),
    ("cu*MemcpyNodeSetParams", "hNode", "fx.graph_nodes().memcpy_node", []),
    ("cuda*MemsetNodeSetParams", "node", "fx.graph_nodes().memset_node", []),
    ("cuda*MemcpyNodeSetParams*", "node", "fx.graph_nodes().memcpy_node", []),  # 1-D and symbol forms too
    ("cu*KernelNodeSetParams*", "hNode", "fx.graph_nodes().kernel_node", []),
    ("cu*HostNodeSetParams", "hNode", "fx.graph_nodes().host_node", []),
    ("cuGraphExec*NodeSetParams*", "hGraphExec", "fx.graph_nodes().exec", []),
    ("cuda*KernelNodeSetParams", "node", "fx.graph_nodes().kernel_node", []),
    ("cuda*HostNodeSetParams", "node", "fx.graph_nodes().host_node", []),
    # a node's parameters read back from a node of that kind; enabling is for kernel nodes
    *[(f"cu*{kind}NodeGetParams*", p, f"fx.graph_nodes().{node}", [])
      for kind, node in (("Host", "host_node"), ("Kernel", "kernel_node"), ("Memcpy", "memcpy_node"),
                         ("Memset", "memset_node")) for p in ("hNode", "node")],
    *[(fn, p, f"fx.graph_nodes().{node}", [])
      for fn, node in (("cu*GraphEventRecordNode[GS]etEvent", "record_node"),
                       ("cu*GraphEventWaitNode[GS]etEvent", "wait_node"),
                       ("cu*GraphExecEventRecordNodeSetEvent", "record_node"),
                       ("cu*GraphExecEventWaitNodeSetEvent", "wait_node"),
                       ("cu*GraphChildGraphNodeGetGraph", "child_node"),
                       ("cu*GraphExecChildGraphNodeSetParams", "child_node"),
                       ("cu*GraphMemAllocNodeGetParams", "alloc_node"),
                       ("cu*GraphMemFreeNodeGetParams", "free_node"),
                       ("cuGraphNodeSetParams", "host_node"),  # generic parameters: a host node's
                       ("cudaGraphNodeSetParams", "host_node"),
                       ("cu*GraphExecNodeSetParams", "host_node"))
      for p in ("hNode", "node")],
    *[(fn, p, "fx.graph_nodes().exec", []) for fn in ("cu*GraphExecEvent*NodeSetEvent", "cudaGraphExecNodeSetParams")
      for p in ("hGraphExec", "graphExec")],
    ("cu*GraphAddChildGraphNode", "childGraph", "fx.graph_nodes().clone", []),
    ("cu*GraphNodeFindInClone", "*lonedGraph", "fx.graph_nodes().clone", []),
    # user objects: the runtime and driver take only the no-destructor-sync flag
    ("cu*UserObjectCreate", "flags", "1", [("zero", "0", "value")]),
    ("cudaUserObjectCreate", "ptr", "Fixture::bits(fx.host_bytes())", [("garbage", None, None)]),  # any user data
    ("cu*GraphNode[GS]etEnabled", "hGraphExec", "fx.graph_nodes().exec", []),
    ("cu*GraphNode[GS]etEnabled", "hNode", "fx.graph_nodes().kernel_node", []),
    ("cudaGraphExec*NodeSetParams*", "hGraphExec", "fx.graph_nodes().exec", []),
    # prefetch and advice (both APIs) take managed memory (wrap: from near its end, like every device pointer)
    ("cu*Mem[AP][dr]*", "devPtr", "m == Mut::wrap ? fx.managed + kAllocSize - 1000 : fx.managed", []),
    # advice that takes a location: set the preferred location (3 in both APIs)
    ("cu*MemAdvise*", "advice", "3", []),
    # the runtime's kernels: a kernel handle where a host stub or handle is taken (CUDA 12+;
    # the fixture's registered stub has no code to launch), the stub where only a stub is
    # taken; the kernel's arguments
    *[(fn, "func", "fx.valid[static_cast<int>(Hk::function)]", [])
      for fn in ("cudaLaunch*", "cudaOccupancy*", "cudaFunc*")],
    ("__cudaLaunchKernel*", "kernel", "fx.valid[static_cast<int>(Hk::function)]", []),
    ("__cudaGetKernel", "p1", "fx.host_stub", []),  # (unnamed in the header)
    ("cudaGetKernel", "entryFuncAddr", "fx.host_stub", []),
    ("cudaGetFuncBySymbol", "symbolPtr", "fx.host_stub", []),
    ("*cudaLaunch*", "args", "Fixture::bits(fx.kernel_params)", []),
    # the runtime's __device__ variable, copied to and from device memory (cudaMemcpyDefault)
    ("cuda*Symbol*", "symbol", "fx.symbol", []),
    ("cuda*Symbol*", "kind", "4", []),
    # launches: the kernel's arguments as kernelParams, extra NULL; NULL kernelParams leaves a
    # kernel that takes an argument without it, and an extra besides kernelParams gives them twice
    ("cuLaunch*Kernel*", "kernelParams", "Fixture::bits(fx.kernel_params)", []),
    ("cuLaunch*Kernel*", "extra", "0", [("null", None, None),
                                         ("both", "Fixture::bits(fx.in_zero())", "value")]),
    # managed memory: attached globally (flags 0 is no attachment)
    ("cuMemAllocManaged", "flags", "1", [("zero", "0", "value")]),
    ("cudaMallocManaged", "flags", "1", [("zero", "0", "value")]),
    # a pitched allocation's element size is 4, 8 or 16
    ("cuMemAllocPitch*", "ElementSizeBytes", "4", [("out_of_range", "3", "value")]),
    # a device attribute that exists (1: the maximum threads per block, in both APIs)
    ("cu*DeviceGetAttribute", "attr*", "1", [("zero", "0", "value")]),
    # peer-to-peer: a second device, its context, and (to disable) access enabled first; the
    # P2P attributes start at 1 (the performance rank)
    ("cu*DeviceGetP2PAttribute", "attr*", "1", [("zero", "0", "value")]),
    ("cu*DeviceGetP2PAttribute", "dstDevice", "kPeerDevice", []),
    ("cu*DeviceCanAccessPeer", "peer*", "kPeerDevice", []),
    ("cuCtxEnablePeerAccess", "peerContext", "fx.peer_ctx", []),
    ("cuCtxDisablePeerAccess", "peerContext", "(fx.enable_peer(), fx.peer_ctx)", []),
    ("cudaDeviceEnablePeerAccess", "peerDevice", "kPeerDevice", []),
    ("cudaDeviceDisablePeerAccess", "peerDevice", "(fx.enable_peer(), kPeerDevice)", []),
    # graph dependencies: one node of the fixture's graph (Fixture::edge_nodes; zeros after it,
    # so that a count past one meets a NULL node); an edge to add goes from it to a node that
    # does not depend on it yet, an edge to remove to one that does
    *[(fn, p, "fx.node_list(0)", [("null", "0", "value")])
      for fn in ("cu*GraphAdd*", "cu*GraphRemoveDependencies*", "cu*StreamBeginCaptureToGraph*")
      for p in ("dependencies", "pDependencies", "from")],
    *[(fn, "numDependencies", "1", []) for fn in ("cu*GraphAdd*", "cu*GraphRemoveDependencies*",
                                                  "cu*StreamBeginCaptureToGraph*")],
    ("cu*GraphAddDependencies*", "to", "fx.node_list(2)", [("null", "0", "value")]),
    ("cu*GraphRemoveDependencies*", "to", "fx.node_list(1)", [("null", "0", "value")]),
    ("cu*GraphAddMemAllocNode", "numDependencies", "1", [("huge", "SIZE_MAX", "value")]),  # counts no bytes
    # capture calls that need a capture: a stream capturing (relaxed) into a graph of one
    # node, which becomes the capture's only dependency (flags 1: set)
    *[(fn, p, "fx.capturing_stream()", []) for fn in ("cu*StreamUpdateCaptureDependencies*",
                                                      "cu*StreamEndCapture*") for p in ("hStream", "stream")],
    ("cu*StreamUpdateCaptureDependencies*", "dependencies", "fx.capture_deps()", []),
    ("cu*StreamUpdateCaptureDependencies*", "numDependencies", "1", []),
    ("cu*StreamUpdateCaptureDependencies*", "flags", "1", []),
    # names the fixture's module and library define (kPtx), an entry point that exists
    *[(fn, "name", 'Fixture::bits("add_one")', []) for fn in ("cuModuleGetFunction", "cuLibraryGetKernel")],
    *[(fn, "name", 'Fixture::bits("fx_global")', []) for fn in ("cuModuleGetGlobal*", "cuLibraryGetGlobal")],
    ("cuLibraryGetManaged", "name", 'Fixture::bits("fx_managed")', []),
    ("cuGetProcAddress*", "symbol", 'Fixture::bits("cuInit")', []),
    ("cuGetProcAddress*", "driverVersion", "13000", []),
    # deviceFlags count when flags says so (cudaInitDeviceFlagsAreValid)
    ("cudaInitDevice", "flags", "1", []),
    # a function attribute that may be set (8: the dynamic shared memory limit, both APIs)
    ("cu*FuncSetAttribute", "attr*", "8", []),
    ("cuKernelSetAttribute", "attrib", "8", []),
    # 2-D memsets and copies of rows that fit the allocation: 4 rows (of 8 elements)
    ("cuMemsetD2D*", "Height", "4", []),
    ("cuMemsetD2D*", "Width", "8", []),
    ("cudaMem[cs]*2D*", "height", "4", []),
    # a physical allocation is a multiple of the granularity
    ("cuMemCreate", "size", _G, [("unaligned", f"{_G} + 1", "value")]),
    # host memory: page-locked (asked about, freed) or registered (unregistered); registering
    # takes any host memory (a size past the fixture's allocation is no bad value there)
    *[(fn, p, "fx.pinned", []) for fn in ("cuMemHostGet*", "cudaHostGet*", "cudaFreeHost") for p in ("p", "pHost", "ptr")],
    ("cudaHostUnregister", "ptr", "fx.registered", []),
    ("cudaHostRegister", "ptr", "Fixture::bits(fx.host_bytes())", []),
    ("cudaHostRegister", "size", "kValidSize", [("past_end", None, None)]),
    # VMM: a reservation to free, a mapping to ask about
    ("cuMemAddressFree", "ptr", f"fx.vmm().map_va - {_G}", []),
    ("cuMemAddressFree", "size", f"2 * {_G}", []),
    ("cuMemGetAccess", "ptr", "fx.vmm().mapped_va", []),
    ("cuMemRetainAllocationHandle", "addr", "fx.vmm().mapped_va", []),
    # pointer attributes: the context (1) to read, the synchronous memory operations (6) to set
    ("cuPointerGetAttribute", "attribute", "1", []),
    ("cuPointerSetAttribute", "attribute", "6", []),
    ("cuPointerGetAttributes", "attributes", "Fixture::bits(fx.pointer_attributes)", []),
    ("cuPointerGetAttributes", "data", "Fixture::bits(fx.pointer_data)", []),
    # pools: an attribute that exists (1: reuse following event dependencies), one access
    # descriptor, pinned memory where a location's pool is asked for or set
    ("cu*MemPool[GS]etAttribute", "attr", "1", []),
    ("cu*MemPoolSetAccess", "count", "1", []),
    ("cu*Mem[GS]et*MemPool", "type", "1", []),
    ("cudaDeviceFlushGPUDirectRDMAWrites", "scope", "100", []),  # to the owner
    ("cuCtxDestroy*", "ctx", "fx.own_ctx", []),  # a primary context is not destroyed, it is released
    # loads: the fixture's PTX, as text, a fat binary or a file (one option of value 0 each)
    *[(fn, p, "Fixture::bits(fx.ptx)", []) for fn, p in (("cuModuleLoadData*", "image"), ("cuLibraryLoadData", "code"),
                                                          ("cuLinkAddData*", "data"))],
    ("cuModuleLoadFatBinary", "fatCubin", "Fixture::bits(fx.fatbin)", []),
    *[(fn, p, "Fixture::bits(Fixture::kPtxFile)", []) for fn, p in (("cuModuleLoad", "fname"),
                                                                     ("cuLibraryLoadFromFile", "fileName"),
                                                                     ("cuLinkAddFile*", "path"))],
    *[(fn, "type", "1", []) for fn in ("cuLinkAddData*", "cuLinkAddFile*")],  # CU_JIT_INPUT_PTX
    ("cuLinkAddData*", "size", "std::strlen(fx.ptx) + 1", []),
    # NVML strings: a buffer the answer fits (a byte is too short for any), a UUID that exists
    ("nvml*", "length", "96", [("small", "1", "oom")]),
    ("nvmlDeviceGetHandleByUUID", "uuid", "Fixture::bits(fx.nvml_uuid)", []),
    # attaching managed memory: the whole allocation (length 0), globally
    ("cudaStreamAttachMemAsync*", "devPtr", "m == Mut::wrap ? fx.managed + kAllocSize - 1000 : fx.managed", []),
    ("cudaStreamAttachMemAsync*", "length", "0", []),
    ("cudaStreamAttachMemAsync*", "flags", "1", [("zero", "0", "value")]),
    # arrays: the fixture's array has 8 rows, so the runtime's array copies start at row 1
    # and the 2D ones copy 2 rows (then the linear side's 2 rows, kValidSize apart, stay in
    # its allocation too)
    ("cudaMemcpy*Array*", "hOffset*", "1", []),
    ("cudaMemcpy2D*Array*", "height", "2", []),
    # a view is read back from a texture made with one (Fixture::view_tex)
    ("cu*TexObjectGetResourceViewDesc", "texObject", "fx.view_tex", []),
    ("cudaGetTextureObjectResourceViewDesc", "texObject", "fx.view_tex", []),
]


# Descriptors passed by a non-const pointer that the call reads (and may write into: node
# parameters; a pool's location is only read): as a parameter not named *_out, an in/out
# descriptor; otherwise (a GetParams output) an out-pointer.
INOUT_DESCRIPTORS = {"CUDA_MEM_ALLOC_NODE_PARAMS", "cudaMemAllocNodeParams", "CUgraphNodeParams",
                     "cudaGraphNodeParams", "CUmemLocation", "cudaMemLocation"}


def descriptor_of(typ):
    """The DESCRIPTORS key of a parameter type (const S*, S), or None."""
    t = strip_ns(typ).replace("const ", "").replace("*", "").strip()
    for name in (t, re.sub(r"_v\d+$", "", t)):
        if name in DESCRIPTORS:
            return name
    return None


def split_params(params):
    out, depth, cur = [], 0, ""
    for ch in params:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_header(path):
    """fgimpl declarations: {impl_name: (ret, [(type, name)])} and the header's enum names."""
    text = path.read_text()
    decls = {}
    for m in re.finditer(r"^([^\n;{}()]*?)\bfgimpl_(\w+)\(([^;]*?)\);", text, re.M | re.S):
        ret = " ".join(m.group(1).split())
        params = []
        for i, p in enumerate(split_params(" ".join(m.group(3).split()))):
            if p == "void":
                continue
            typ, name = p, f"p{i}"
            mm = re.match(r"^(.*[\w\*&:])\s+(\w+)$", p) or re.match(r"^(.*\*)\s*(\w+)$", p)
            if mm and mm.group(2) not in ("int", "long", "short", "char", "double", "float", "unsigned", "signed") and \
                    mm.group(1).split()[-1] not in ("const", "struct", "enum", "union"):
                typ, name = mm.group(1).strip(), mm.group(2)
            params.append((typ, name))
        decls[m.group(2)] = (ret, params)
    return decls


def enum_names(paths):
    names = set()
    for p in paths:
        text = p.read_text()
        names |= set(re.findall(r"\benum\s+(?:class\s+)?(\w+)\s*:", text))
        names |= set(re.findall(r"\benum\s+(\w+)\s*\{", text))
    # aliases of enums (using A = B;)
    for _ in range(3):
        for p in paths:
            for a, b in re.findall(r"\busing\s+(\w+)\s*=\s*(\w+)\s*;", p.read_text()):
                if b in names:
                    names.add(a)
    return names


def incomplete_types(paths):
    """Struct types the headers only declare (by-value use impossible)."""
    complete, declared, alias = set(), set(), {}
    for p in paths:
        text = p.read_text()
        complete |= set(re.findall(r"\b(?:struct|union)\s+(\w+)\s*(?:final\s*)?\{", text))
        declared |= set(re.findall(r"\b(?:struct|union)\s+(\w+)\s*;", text))
        for a, b in re.findall(r"\busing\s+(\w+)\s*=\s*(?:struct\s+|union\s+)?(\w+)\s*;", text):
            alias[a] = b
    out = set()
    for name in declared - complete:
        out.add(name)
    for a, b in list(alias.items()):
        seen = 0
        while b in alias and seen < 5:
            b = alias[b]
            seen += 1
        if b in out:
            out.add(a)
    return out


def parse_defs(api):
    funcs = []  # (family, symbol, impl, lib, node, ret)
    for line in (api / "cuda.def").read_text().splitlines():
        m = re.match(r"FG_CUDA(?:_OTHER)?\((\w+)", line)
        if m:
            funcs.append(("driver", m.group(1), m.group(1), "cuda", None, "ERR"))
    for line in (api / "cudart.def").read_text().splitlines():
        m = re.match(r"FG_CUDART\((\w+),\s*(\w+),\s*(\w+)\)", line)
        if not m:
            continue
        name, nodes, ret = m.groups()
        if nodes in ("BOTH", "V13"):
            funcs.append(("runtime", name, name, "cudart", "libcudart.so.13", ret))
        elif nodes == "V12":
            funcs.append(("runtime", name, name, "cudart", "libcudart.so.12", ret))
        else:  # SPLIT: two ABIs
            funcs.append(("runtime", name, name, "cudart", "libcudart.so.13", ret))
            funcs.append(("runtime", name, "v12_" + name, "cudart", "libcudart.so.12", ret))
    for line in (api / "nvml.def").read_text().splitlines():
        m = re.match(r"FG_NVML(?:_OTHER)?\((\w+)(?:,\s*(\w+))?", line)
        if m:
            funcs.append(("nvml", m.group(1), m.group(1), "nvml", None, m.group(2) or "ERR"))
    return funcs


def implemented_names(nm, objects):
    """Names with a strong fgimpl_ definition in the backend's objects (stubs are weak)."""
    strong = set()
    text = subprocess.run([nm, "--defined-only", *objects], check=True, capture_output=True, text=True).stdout
    if True:
        for line in text.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] in ("T", "t") and parts[2].startswith("fgimpl_"):
                strong.add(parts[2][len("fgimpl_"):])
    return strong


def strip_ns(t):
    return t.replace("fgapi::", "").replace("struct ", "").strip()


def classify(family, typ, name, enums):
    """(class, detail) for one parameter."""
    t = strip_ns(typ)
    if "(" in t:
        return ("fn", None)
    if t in HANDLES:
        return ("handle", HANDLES[t])
    if t in DEVICE_TYPES or (family == "runtime" and t == "int" and name in RUNTIME_DEVICE_NAMES):
        return ("device", None)
    if t in DPTR_TYPES:
        return ("dptr", None)
    if t == "CUdeviceptr_v1":
        return ("dptr32", None)
    if family == "runtime" and t in ("void*", "const void*") and name in RUNTIME_DPTR_NAMES:
        return ("dptr", None)
    if t in CALLBACKS:
        return ("fn", None)
    if t.endswith("*"):
        base = t[:-1].strip()  # the pointee
        const = base.endswith(" const") or (base.startswith("const ") and "*" not in base)
        b = re.sub(r"^const\s+|\s+const$", "", base).strip()
        if const:
            if b in ("void", "char"):
                return ("in_raw", b)
            if b in SCALARS or b in HANDLES or b in enums or b.endswith("*") or b in DEVICE_TYPES or b in DPTR_TYPES:
                return ("in_array", None)
            return ("in_struct", None)
        if b == "void":
            return ("voidptr", None)
        if b in CALLBACKS:
            return ("out", None)
        return ("out", None)
    if t == "size_t":
        return ("size", None)
    if re.search(r"flags?$", name, re.I) and t in ("unsigned int", "unsigned", "unsigned long long", "int",
                                                   "cuuint32_t", "cuuint64_t"):
        return ("flags", None)
    if t in enums:
        return ("enumv", None)
    if t in SCALARS:
        return ("scalar", None)
    return ("byval", t)


def mutations(family, fname, params, classes):
    """[(param index, mutation, rule)] for one function."""
    out = []
    has_dptr = any(c[0] == "dptr" for c in classes)
    is_alloc = bool(ALLOC_RE.search(fname))
    for i, ((typ, name), (cls, detail)) in enumerate(zip(params, classes)):
        if cls == "out":
            out.append((i, "null", "value"))
        elif cls == "in_struct":
            out.append((i, "null", "value"))
        elif cls == "handle":
            rule = "context" if detail == "ctx" else "handle"
            # Graph, memory-pool and user-object calls document only the invalid-value code.
            if detail in VALUE_HANDLES or detail in VALUE_DOC_KINDS or VALUE_DOC_RE.search(fname):
                rule = "value"
            out.append((i, "garbage", rule))
            if detail in DESTROYABLE:
                out.append((i, "destroyed", rule))
        elif cls == "device":
            out.append((i, "out_of_range", "device"))
        elif cls in ("dptr", "dptr32"):
            out.append((i, "garbage", "value"))
        elif cls == "enumv":
            out.append((i, "out_of_range", "value"))
        elif cls == "flags":
            out.append((i, "unknown_bits", "value"))
        elif cls == "size":
            out.append((i, "huge", "oom" if is_alloc and not has_dptr else "value"))
            if has_dptr:
                out.append((i, "past_end", "value"))
                out.append((i, "wrap", "value"))
            if ZERO_OK_RE.search(fname) and has_dptr:
                # Nothing to copy or set is a success; a zero pitch under rows is invalid.
                out.append((i, "zero", "value" if "itch" in name else "ok"))
    return out


def load_expectations(path):
    rules = []  # (kind, fn glob, param glob, mutation glob, code or None, reason)
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.split("#", 1)
        reason = line[1].strip() if len(line) > 1 else ""
        f = line[0].split()
        if not f:
            continue
        if f[0] == "exclude" and len(f) == 2:
            rules.append(("exclude", f[1], "*", "*", None, reason))
        elif f[0] in ("expect", "xfail") and len(f) == 5:
            rules.append((f[0], f[1], f[2], f[3], f[4], reason))
        else:
            sys.exit(f"{path}:{n}: expected 'exclude FN # why', 'expect FN PARAM MUTATION CODE # why' "
                     f"or 'xfail FN PARAM MUTATION CODE # why'")
        if not reason:
            sys.exit(f"{path}:{n}: every line gives its reason after '#'")
    return rules


def match(rule, fn, param, mut):
    return fnmatch.fnmatchcase(fn, rule[1]) and fnmatch.fnmatchcase(param, rule[2]) and \
        fnmatch.fnmatchcase(mut, rule[3])


def cxx_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--api", required=True, type=Path)
    ap.add_argument("--include", required=True, type=Path)
    ap.add_argument("--expectations", required=True, type=Path)
    ap.add_argument("--nm", required=True, help="the nm tool")
    ap.add_argument("--objects", nargs="+", required=True, help="the backend's object files")
    ap.add_argument("--out", required=True, type=Path)
    a = ap.parse_args()

    hdr = {fam: parse_header(a.include / f"fakegpu/{h}_api.h")
           for fam, h in (("driver", "cuda"), ("runtime", "cudart"), ("nvml", "nvml"))}
    type_files = [a.include / "fakegpu" / f for f in ("cuda_types.h", "nvml_types.h", "cuda_api.h", "cudart_api.h",
                                                       "nvml_api.h")]
    enums = enum_names(type_files)
    incomplete = incomplete_types(type_files)
    impl = implemented_names(a.nm, a.objects)
    rules = load_expectations(a.expectations)
    used_rules = set()

    thunks, table, excluded = [], [], []
    n_cases = n_field_cases = 0
    used_descs = set()
    for family, sym, implname, lib, node, ret in parse_defs(a.api):
        label = sym if not implname.startswith("v12_") else sym + "@libcudart.so.12"
        if implname not in hdr[family]:
            sys.exit(f"{implname}: no prototype in {family}'s header")
        cret, params = hdr[family][implname]
        reason = None
        for i, r in enumerate(rules):
            if r[0] == "exclude" and fnmatch.fnmatchcase(label, r[1]):
                reason, _ = r[5], used_rules.add(i)
                break
        stub = implname not in impl
        if reason is None and ret != "ERR" and not stub:
            reason = "returns no error code (%s)" % ret
        classes = [classify(family, t, n, enums) for t, n in params]
        if reason is None:
            for (t, n), (c, d) in zip(params, classes):
                if c == "byval" and (d in incomplete or d.split("::")[-1] in incomplete):
                    reason = f"parameter {n} is a {d} by value, which the fake's headers leave undefined"
        if reason is not None:
            excluded.append((label, reason))
            continue
        codes = FAMILY_CODES[family]
        # Per parameter: its descriptor (not for stubs: they answer every case alike) and overrides.
        descs = [None if stub else descriptor_of(t) if c in ("in_struct", "byval") or
                 (c == "out" and descriptor_of(t) in INOUT_DESCRIPTORS and not n.endswith("_out")) else None
                 for (t, n), (c, d) in zip(params, classes)]
        overs = [None] * len(params)
        for i, (t, n) in enumerate(params):
            for o in OVERRIDES:
                if not stub and fnmatch.fnmatchcase(sym, o[0]) and fnmatch.fnmatchcase(n, o[1]):
                    overs[i] = o
        muts = mutations(family, sym, params, classes)
        for i, o in enumerate(overs):
            if o:
                have = {m for idx, m, _ in muts if idx == i}
                drop = {m for m, v, _ in o[3] if v is None}
                muts = [(idx, m, next((r for om, _, r in o[3] if om == m), rule) if idx == i else rule)
                        for idx, m, rule in muts if idx != i or m not in drop]
                muts += [(i, m, r) for m, v, r in o[3] if m not in have and v is not None]
        raw = [(idx, -1, mut, rule, params[idx][1]) for idx, mut, rule in muts]
        for i, dname in enumerate(descs):
            if dname is None:
                continue
            for fi, (path, fcls, unit, *_) in enumerate(DESCRIPTORS[dname]):
                if any(fnmatch.fnmatchcase(sym, g) and fnmatch.fnmatchcase(path, fg) for g, fg in FIELD_SKIPS):
                    continue
                for mut, rule in FIELD_MUTATIONS[fcls]:
                    if mut == "wrap" and fcls != "pos" and unit is None:
                        continue  # no unit to wrap with (a width: huge covers it)
                    raw.append((i, fi, mut, rule, params[i][1] + ("." + path if path else "")))
        cases = []
        for idx, field, mut, rule, pname in raw:
            code, kind, why = codes["stub"] if stub else codes[rule], "expect", ""
            if not stub:
                for ri, r in enumerate(rules):
                    if r[0] in ("expect", "xfail") and match(r, label, pname, mut):
                        code, kind, why = r[4], r[0], r[5]
                        used_rules.add(ri)
                        break
            cases.append((idx, field, mut, code, kind == "xfail", why, pname))
            n_field_cases += field >= 0
        if not cases:
            excluded.append((label, "no parameter the matrix can make bad"))
            continue
        fid = len(thunks)
        # The cases whose field is one of another resource kind (a 4th element in DESCRIPTORS).
        kinds = sorted({(idx, field) for idx, field, *_ in raw if field >= 0 and len(DESCRIPTORS[descs[idx]][field]) > 3})
        other_kind = " || ".join(f"(at == {idx} && field == {field})" for idx, field in kinds)
        # One field of each other kind, for --valid: the field left valid, the descriptor of that kind.
        firsts = {}
        for idx, field in kinds:
            firsts.setdefault((idx, DESCRIPTORS[descs[idx]][field][3]), field)
        variants = ", ".join(f"{{{idx}, {field}, {cxx_string(params[idx][1] + ' ' + h)}}}"
                             for (idx, h), field in sorted(firsts.items()))
        args = []
        for i, ((t, n), (c, d)) in enumerate(zip(params, classes)):
            generic = f"fx.arg<{t}>({i}, Cls::{c}, Hk::{d if c == 'handle' else 'none'}, at, m)"
            if descs[i]:
                used_descs.add(descs[i])
                how = {"in_struct": "desc_ptr", "out": "desc_inout"}.get(c, "desc_val")
                arg = f"fx.{how}<fgapi::{descs[i]}>({i}, at, m, field, mutate_{descs[i]})"
                if descs[i] in ARRAY_ONLY and other_kind:
                    arg = f"({other_kind}) ? nullptr : {arg}"
                args.append(arg)
            elif overs[i]:
                o = overs[i]
                alts = "".join(f"      case Mut::{om}: return Fixture::as<{t}>({ov});\n" for om, ov, _ in o[3]
                               if ov is not None)
                args.append(f"[&]() -> {t} {{\n    if ({i} != at) return Fixture::as<{t}>({o[2]});\n"
                            f"    switch (m) {{\n{alts}      default: return {generic};\n    }}\n  }}()")
            else:
                args.append(generic)
        call = f"fn({', '.join(args)})"
        body = f"return static_cast<long long>({call});" if ret == "ERR" else f"{call}; return 0;"
        sym_node = cxx_string(node) if node else "nullptr"
        thunks.append(
            f"long long thunk_{fid}(Fixture& fx, int at, Mut m, [[maybe_unused]] int field) {{\n"
            f"  using F = decltype(&fgimpl_{implname});\n"
            f"  static const F fn = reinterpret_cast<F>(fx.sym(Lib::{lib}, {cxx_string(sym)}, {sym_node}));\n"
            f"  {body}\n}}\n")
        case_rows = ", ".join(
            f"{{{idx}, Mut::{mut}, fgapi::{code}, {'true' if xf else 'false'}, {cxx_string(pn)}, {field}}}"
            for idx, field, mut, code, xf, _, pn in cases)
        table.append(f"  {{{cxx_string(label)}, Family::{family}, {'true' if stub else 'false'}, thunk_{fid}, "
                     f"{{{case_rows}}}" + (f", {{{variants}}}" if variants else "") + "},")
        n_cases += len(cases)

    unused = [r for i, r in enumerate(rules) if i not in used_rules]
    if unused:
        sys.exit("expectations that match no case (stale?): " +
                 "; ".join(f"{r[0]} {r[1]} {r[2]} {r[3]}" for r in unused))

    with open(a.out, "w") as f:
        f.write("// Generated by tests/badinput/gen_matrix.py. DO NOT EDIT.\n")
        f.write(f"// {len(table)} functions, {n_cases} cases ({n_field_cases} of them descriptor fields); "
                f"{len(excluded)} exports excluded.\n")
        for dname in sorted(used_descs):
            f.write(f"void mutate_{dname}([[maybe_unused]] Fixture& fx, [[maybe_unused]] fgapi::{dname}& s, int field, "
                    f"[[maybe_unused]] Mut m) {{\n  switch (field) {{\n")
            for fi, (path, fcls, unit, *how) in enumerate(DESCRIPTORS[dname]):
                if fcls.startswith("opaque"):
                    stmt = "fx.opaque(&s, sizeof s, m);"
                else:
                    stmt = "".join(f"{h}(fx, s); " for h in how)
                    stmt += (f"Fixture::set(s.{path}, fx.field_value(Fc::{fcls}, m, Fixture::bits(s.{path}), "
                             f"{unit or 1}));")
                f.write(f"    case {fi}: {stmt} break;\n")
            f.write("    default: break;\n  }\n}\n")
        f.write("".join(thunks))
        f.write("const FunctionCases kFunctions[] = {\n" + "\n".join(table) + "\n};\n")
        f.write("const Excluded kExcluded[] = {\n")
        f.write("\n".join(f"  {{{cxx_string(l)}, {cxx_string(r)}}}," for l, r in excluded) or "  {nullptr, nullptr},")
        f.write("\n};\n")


if __name__ == "__main__":
    main()
