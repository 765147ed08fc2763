// SPDX-License-Identifier: Apache-2.0
// fakegpu — our own declarations of the CUDA Runtime and CUDA Driver API types.
//
// Why this file exists
//   The fake backend must build on machines without the CUDA toolkit, yet every
//   struct it fills in and every number it returns crosses into programs that
//   were compiled against NVIDIA's headers. So we declare the types ourselves,
//   in namespace fgapi, with NVIDIA's spellings (fgapi::cudaErrorInvalidValue,
//   fgapi::CUDA_ERROR_INVALID_VALUE, fgapi::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
//   so implementation code reads like the API reference.
//
// What "exact" means here
//   * Every enumerator value equals the CUDA 13.0 header value (driver_types.h,
//     cuda.h; CUDA_VERSION == CUDART_VERSION == 13000). Enumerations listed
//     "complete" carry every enumerator of the 13.0 header, deprecated aliases
//     included, because clients still pass the old names' values.
//   * Every struct has the CUDA 13.0 x86-64 Linux (LP64) size, field offsets
//     and field types. The static_asserts at the end of this file pin the sizes;
//     tests/abi/test_struct_layout.cpp compares sizes, offsets and enumerator
//     values with the real toolkit headers wherever the toolkit is installed.
//   * Enumerations are 4 bytes, like a C enum of these value ranges under GCC.
//     The fixed underlying type also makes `enum X : int` safe to receive from
//     C callers that pass out-of-range values (no UB on load).
//
// ABI traps this file encodes (details in docs and the census, §2):
//   * cudaDeviceProp is 1008 bytes in CUDA 13.0 but 1032 bytes in CUDA 12.x
//     (cudaGetDeviceProperties_v2). Both layouts are declared; the shim must
//     fill the one that matches the symbol it was called through.
//   * Runtime and driver handles are the same objects: cudaStream_t and
//     CUstream are both `CUstream_st*`, cudaEvent_t and CUevent are both
//     `CUevent_st*`, and so on. The struct tags below are NVIDIA's, so a handle
//     obtained from one API can be passed to the other without casts.
//   * cudaStreamLegacy (0x1) and cudaStreamPerThread (0x2) are not pointers to
//     anything; they are sentinels that every stream-taking entry point must
//     recognise before dereferencing a stream handle.
//   * Launch-attribute records are 72 bytes: a 4-byte id, 4 bytes of explicit
//     padding, then a 64-byte value union. Walk arrays of them with this size.
//
// This header is self-contained: it includes only <cstddef> and <cstdint>,
// declares no functions, and defines no macros.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fgapi {

// CUDA_VERSION / CUDART_VERSION of the headers whose layouts and values this
// file reproduces. (Not the version the fake driver reports; see the core.)
inline constexpr int kCudaHeaderVersion = 13000;

// ===========================================================================
// Opaque handle types (shared by the runtime and the driver API)
// ===========================================================================
// Incomplete struct types; the backend defines what the pointers designate.
// The tags are NVIDIA's. Note that NVIDIA uses *different* tags for a few
// runtime/driver pairs (cudaArray vs CUarray_st, CUexternalMemory_st vs
// CUextMemory_st); those pairs are still the same object at run time, but the
// types differ, exactly as in the real headers.
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUlib_st;
struct CUkern_st;
struct CUarray_st;
struct CUmipmappedArray_st;
struct CUtexref_st;
struct CUsurfref_st;
struct CUevent_st;
struct CUstream_st;
struct CUgraphicsResource_st;
struct CUextMemory_st;
struct CUextSemaphore_st;
struct CUgraph_st;
struct CUgraphNode_st;
struct CUgraphExec_st;
struct CUmemPoolHandle_st;
struct CUuserObject_st;
struct CUgraphDeviceUpdatableNode_st;
struct CUasyncCallbackEntry_st;
struct CUgreenCtx_st;
struct CUlinkState_st;
struct CUexternalMemory_st;     // runtime tag for external memory
struct CUexternalSemaphore_st;  // runtime tag for external semaphores
struct cudaArray;
struct cudaMipmappedArray;
struct cudaGraphicsResource;

// --- Driver API handles ----------------------------------------------------
using CUdevice = int;                    // a device ordinal, not a pointer
using CUdeviceptr = unsigned long long;  // 64-bit on LP64 (CUdeviceptr_v2)
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUlibrary = CUlib_st*;
using CUkernel = CUkern_st*;
using CUarray = CUarray_st*;
using CUmipmappedArray = CUmipmappedArray_st*;
using CUtexref = CUtexref_st*;
using CUsurfref = CUsurfref_st*;
using CUevent = CUevent_st*;
using CUstream = CUstream_st*;
using CUgraphicsResource = CUgraphicsResource_st*;
using CUexternalMemory = CUextMemory_st*;
using CUexternalSemaphore = CUextSemaphore_st*;
using CUgraph = CUgraph_st*;
using CUgraphNode = CUgraphNode_st*;
using CUgraphExec = CUgraphExec_st*;
using CUmemoryPool = CUmemPoolHandle_st*;
using CUuserObject = CUuserObject_st*;
using CUgraphDeviceNode = CUgraphDeviceUpdatableNode_st*;
using CUasyncCallbackHandle = CUasyncCallbackEntry_st*;
using CUgreenCtx = CUgreenCtx_st*;
using CUlinkState = CUlinkState_st*;
using CUtexObject = unsigned long long;
using CUsurfObject = unsigned long long;
using CUmemGenericAllocationHandle = unsigned long long;  // not a pointer

// --- Runtime API handles ---------------------------------------------------
using cudaStream_t = CUstream_st*;  // same type as CUstream
using cudaEvent_t = CUevent_st*;    // same type as CUevent
using cudaGraph_t = CUgraph_st*;
using cudaGraphNode_t = CUgraphNode_st*;
using cudaGraphExec_t = CUgraphExec_st*;
using cudaUserObject_t = CUuserObject_st*;
using cudaFunction_t = CUfunc_st*;          // same type as CUfunction
using cudaKernel_t = CUkern_st*;            // same type as CUkernel
using cudaLibrary_t = CUlib_st*;            // same type as CUlibrary
using cudaMemPool_t = CUmemPoolHandle_st*;  // same type as CUmemoryPool
using cudaGraphDeviceNode_t = CUgraphDeviceUpdatableNode_st*;
using cudaExternalMemory_t = CUexternalMemory_st*;
using cudaExternalSemaphore_t = CUexternalSemaphore_st*;
using cudaArray_t = cudaArray*;
using cudaArray_const_t = const cudaArray*;
using cudaMipmappedArray_t = cudaMipmappedArray*;
using cudaMipmappedArray_const_t = const cudaMipmappedArray*;
using cudaGraphicsResource_t = cudaGraphicsResource*;
using cudaGraphConditionalHandle = unsigned long long;
using cudaTextureObject_t = unsigned long long;
using cudaSurfaceObject_t = unsigned long long;

// ===========================================================================
// Runtime API enumerations (driver_types.h, CUDA 13.0) — complete
// ===========================================================================
// cudaError_t: the numbering has gaps on purpose (NVIDIA never reuses a
// retired value), so map errors by name, never by arithmetic or range checks.
// cudaErrorApiFailureBase (10000, deprecated since CUDA 4.1) was the base
// added to unmapped driver codes; production runtimes never return it, and
// neither should we.
enum cudaError_t : int {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInitializationError = 3,
  cudaErrorCudartUnloading = 4,
  cudaErrorProfilerDisabled = 5,
  cudaErrorProfilerNotInitialized = 6,
  cudaErrorProfilerAlreadyStarted = 7,
  cudaErrorProfilerAlreadyStopped = 8,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidPitchValue = 12,
  cudaErrorInvalidSymbol = 13,
  cudaErrorInvalidHostPointer = 16,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidTexture = 18,
  cudaErrorInvalidTextureBinding = 19,
  cudaErrorInvalidChannelDescriptor = 20,
  cudaErrorInvalidMemcpyDirection = 21,
  cudaErrorAddressOfConstant = 22,
  cudaErrorTextureFetchFailed = 23,
  cudaErrorTextureNotBound = 24,
  cudaErrorSynchronizationError = 25,
  cudaErrorInvalidFilterSetting = 26,
  cudaErrorInvalidNormSetting = 27,
  cudaErrorMixedDeviceExecution = 28,
  cudaErrorNotYetImplemented = 31,
  cudaErrorMemoryValueTooLarge = 32,
  cudaErrorStubLibrary = 34,
  cudaErrorInsufficientDriver = 35,
  cudaErrorCallRequiresNewerDriver = 36,
  cudaErrorInvalidSurface = 37,
  cudaErrorDuplicateVariableName = 43,
  cudaErrorDuplicateTextureName = 44,
  cudaErrorDuplicateSurfaceName = 45,
  cudaErrorDevicesUnavailable = 46,
  cudaErrorIncompatibleDriverContext = 49,
  cudaErrorMissingConfiguration = 52,
  cudaErrorPriorLaunchFailure = 53,
  cudaErrorLaunchMaxDepthExceeded = 65,
  cudaErrorLaunchFileScopedTex = 66,
  cudaErrorLaunchFileScopedSurf = 67,
  cudaErrorSyncDepthExceeded = 68,
  cudaErrorLaunchPendingCountExceeded = 69,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorDeviceNotLicensed = 102,
  cudaErrorSoftwareValidityNotEstablished = 103,
  cudaErrorStartupFailure = 127,
  cudaErrorInvalidKernelImage = 200,
  cudaErrorDeviceUninitialized = 201,
  cudaErrorMapBufferObjectFailed = 205,
  cudaErrorUnmapBufferObjectFailed = 206,
  cudaErrorArrayIsMapped = 207,
  cudaErrorAlreadyMapped = 208,
  cudaErrorNoKernelImageForDevice = 209,
  cudaErrorAlreadyAcquired = 210,
  cudaErrorNotMapped = 211,
  cudaErrorNotMappedAsArray = 212,
  cudaErrorNotMappedAsPointer = 213,
  cudaErrorECCUncorrectable = 214,
  cudaErrorUnsupportedLimit = 215,
  cudaErrorDeviceAlreadyInUse = 216,
  cudaErrorPeerAccessUnsupported = 217,
  cudaErrorInvalidPtx = 218,
  cudaErrorInvalidGraphicsContext = 219,
  cudaErrorNvlinkUncorrectable = 220,
  cudaErrorJitCompilerNotFound = 221,
  cudaErrorUnsupportedPtxVersion = 222,
  cudaErrorJitCompilationDisabled = 223,
  cudaErrorUnsupportedExecAffinity = 224,
  cudaErrorUnsupportedDevSideSync = 225,
  cudaErrorContained = 226,
  cudaErrorInvalidSource = 300,
  cudaErrorFileNotFound = 301,
  cudaErrorSharedObjectSymbolNotFound = 302,
  cudaErrorSharedObjectInitFailed = 303,
  cudaErrorOperatingSystem = 304,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorIllegalState = 401,
  cudaErrorLossyQuery = 402,
  cudaErrorSymbolNotFound = 500,
  cudaErrorNotReady = 600,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchTimeout = 702,
  cudaErrorLaunchIncompatibleTexturing = 703,
  cudaErrorPeerAccessAlreadyEnabled = 704,
  cudaErrorPeerAccessNotEnabled = 705,
  cudaErrorSetOnActiveProcess = 708,
  cudaErrorContextIsDestroyed = 709,
  cudaErrorAssert = 710,
  cudaErrorTooManyPeers = 711,
  cudaErrorHostMemoryAlreadyRegistered = 712,
  cudaErrorHostMemoryNotRegistered = 713,
  cudaErrorHardwareStackError = 714,
  cudaErrorIllegalInstruction = 715,
  cudaErrorMisalignedAddress = 716,
  cudaErrorInvalidAddressSpace = 717,
  cudaErrorInvalidPc = 718,
  cudaErrorLaunchFailure = 719,
  cudaErrorCooperativeLaunchTooLarge = 720,
  cudaErrorTensorMemoryLeak = 721,
  cudaErrorNotPermitted = 800,
  cudaErrorNotSupported = 801,
  cudaErrorSystemNotReady = 802,
  cudaErrorSystemDriverMismatch = 803,
  cudaErrorCompatNotSupportedOnDevice = 804,
  cudaErrorMpsConnectionFailed = 805,
  cudaErrorMpsRpcFailure = 806,
  cudaErrorMpsServerNotReady = 807,
  cudaErrorMpsMaxClientsReached = 808,
  cudaErrorMpsMaxConnectionsReached = 809,
  cudaErrorMpsClientTerminated = 810,
  cudaErrorCdpNotSupported = 811,
  cudaErrorCdpVersionMismatch = 812,
  cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorStreamCaptureInvalidated = 901,
  cudaErrorStreamCaptureMerge = 902,
  cudaErrorStreamCaptureUnmatched = 903,
  cudaErrorStreamCaptureUnjoined = 904,
  cudaErrorStreamCaptureIsolation = 905,
  cudaErrorStreamCaptureImplicit = 906,
  cudaErrorCapturedEvent = 907,
  cudaErrorStreamCaptureWrongThread = 908,
  cudaErrorTimeout = 909,
  cudaErrorGraphExecUpdateFailure = 910,
  cudaErrorExternalDevice = 911,
  cudaErrorInvalidClusterSize = 912,
  cudaErrorFunctionNotLoaded = 913,
  cudaErrorInvalidResourceType = 914,
  cudaErrorInvalidResourceConfiguration = 915,
  cudaErrorUnknown = 999,
  cudaErrorApiFailureBase = 10000,
};

enum cudaMemcpyKind : int {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

enum cudaMemoryType : int {
  cudaMemoryTypeUnregistered = 0,
  cudaMemoryTypeHost = 1,
  cudaMemoryTypeDevice = 2,
  cudaMemoryTypeManaged = 3,
};

enum cudaDeviceAttr : int {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxBlockDimX = 2,
  cudaDevAttrMaxBlockDimY = 3,
  cudaDevAttrMaxBlockDimZ = 4,
  cudaDevAttrMaxGridDimX = 5,
  cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxGridDimZ = 7,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrTotalConstantMemory = 9,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMaxPitch = 11,
  cudaDevAttrMaxRegistersPerBlock = 12,
  cudaDevAttrClockRate = 13,
  cudaDevAttrTextureAlignment = 14,
  cudaDevAttrGpuOverlap = 15,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrKernelExecTimeout = 17,
  cudaDevAttrIntegrated = 18,
  cudaDevAttrCanMapHostMemory = 19,
  cudaDevAttrComputeMode = 20,
  cudaDevAttrMaxTexture1DWidth = 21,
  cudaDevAttrMaxTexture2DWidth = 22,
  cudaDevAttrMaxTexture2DHeight = 23,
  cudaDevAttrMaxTexture3DWidth = 24,
  cudaDevAttrMaxTexture3DHeight = 25,
  cudaDevAttrMaxTexture3DDepth = 26,
  cudaDevAttrMaxTexture2DLayeredWidth = 27,
  cudaDevAttrMaxTexture2DLayeredHeight = 28,
  cudaDevAttrMaxTexture2DLayeredLayers = 29,
  cudaDevAttrSurfaceAlignment = 30,
  cudaDevAttrConcurrentKernels = 31,
  cudaDevAttrEccEnabled = 32,
  cudaDevAttrPciBusId = 33,
  cudaDevAttrPciDeviceId = 34,
  cudaDevAttrTccDriver = 35,
  cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrL2CacheSize = 38,
  cudaDevAttrMaxThreadsPerMultiProcessor = 39,
  cudaDevAttrAsyncEngineCount = 40,
  cudaDevAttrUnifiedAddressing = 41,
  cudaDevAttrMaxTexture1DLayeredWidth = 42,
  cudaDevAttrMaxTexture1DLayeredLayers = 43,
  cudaDevAttrMaxTexture2DGatherWidth = 45,
  cudaDevAttrMaxTexture2DGatherHeight = 46,
  cudaDevAttrMaxTexture3DWidthAlt = 47,
  cudaDevAttrMaxTexture3DHeightAlt = 48,
  cudaDevAttrMaxTexture3DDepthAlt = 49,
  cudaDevAttrPciDomainId = 50,
  cudaDevAttrTexturePitchAlignment = 51,
  cudaDevAttrMaxTextureCubemapWidth = 52,
  cudaDevAttrMaxTextureCubemapLayeredWidth = 53,
  cudaDevAttrMaxTextureCubemapLayeredLayers = 54,
  cudaDevAttrMaxSurface1DWidth = 55,
  cudaDevAttrMaxSurface2DWidth = 56,
  cudaDevAttrMaxSurface2DHeight = 57,
  cudaDevAttrMaxSurface3DWidth = 58,
  cudaDevAttrMaxSurface3DHeight = 59,
  cudaDevAttrMaxSurface3DDepth = 60,
  cudaDevAttrMaxSurface1DLayeredWidth = 61,
  cudaDevAttrMaxSurface1DLayeredLayers = 62,
  cudaDevAttrMaxSurface2DLayeredWidth = 63,
  cudaDevAttrMaxSurface2DLayeredHeight = 64,
  cudaDevAttrMaxSurface2DLayeredLayers = 65,
  cudaDevAttrMaxSurfaceCubemapWidth = 66,
  cudaDevAttrMaxSurfaceCubemapLayeredWidth = 67,
  cudaDevAttrMaxSurfaceCubemapLayeredLayers = 68,
  cudaDevAttrMaxTexture1DLinearWidth = 69,
  cudaDevAttrMaxTexture2DLinearWidth = 70,
  cudaDevAttrMaxTexture2DLinearHeight = 71,
  cudaDevAttrMaxTexture2DLinearPitch = 72,
  cudaDevAttrMaxTexture2DMipmappedWidth = 73,
  cudaDevAttrMaxTexture2DMipmappedHeight = 74,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxTexture1DMipmappedWidth = 77,
  cudaDevAttrStreamPrioritiesSupported = 78,
  cudaDevAttrGlobalL1CacheSupported = 79,
  cudaDevAttrLocalL1CacheSupported = 80,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
  cudaDevAttrMaxRegistersPerMultiprocessor = 82,
  cudaDevAttrManagedMemory = 83,
  cudaDevAttrIsMultiGpuBoard = 84,
  cudaDevAttrMultiGpuBoardGroupID = 85,
  cudaDevAttrHostNativeAtomicSupported = 86,
  cudaDevAttrSingleToDoublePrecisionPerfRatio = 87,
  cudaDevAttrPageableMemoryAccess = 88,
  cudaDevAttrConcurrentManagedAccess = 89,
  cudaDevAttrComputePreemptionSupported = 90,
  cudaDevAttrCanUseHostPointerForRegisteredMem = 91,
  cudaDevAttrReserved92 = 92,
  cudaDevAttrReserved93 = 93,
  cudaDevAttrReserved94 = 94,
  cudaDevAttrCooperativeLaunch = 95,
  cudaDevAttrReserved96 = 96,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
  cudaDevAttrCanFlushRemoteWrites = 98,
  cudaDevAttrHostRegisterSupported = 99,
  cudaDevAttrPageableMemoryAccessUsesHostPageTables = 100,
  cudaDevAttrDirectManagedMemAccessFromHost = 101,
  cudaDevAttrMaxBlocksPerMultiprocessor = 106,
  cudaDevAttrMaxPersistingL2CacheSize = 108,
  cudaDevAttrMaxAccessPolicyWindowSize = 109,
  cudaDevAttrReservedSharedMemoryPerBlock = 111,
  cudaDevAttrSparseCudaArraySupported = 112,
  cudaDevAttrHostRegisterReadOnlySupported = 113,
  cudaDevAttrTimelineSemaphoreInteropSupported = 114,
  cudaDevAttrMemoryPoolsSupported = 115,
  cudaDevAttrGPUDirectRDMASupported = 116,
  cudaDevAttrGPUDirectRDMAFlushWritesOptions = 117,
  cudaDevAttrGPUDirectRDMAWritesOrdering = 118,
  cudaDevAttrMemoryPoolSupportedHandleTypes = 119,
  cudaDevAttrClusterLaunch = 120,
  cudaDevAttrDeferredMappingCudaArraySupported = 121,
  cudaDevAttrReserved122 = 122,
  cudaDevAttrReserved123 = 123,
  cudaDevAttrReserved124 = 124,
  cudaDevAttrIpcEventSupport = 125,
  cudaDevAttrMemSyncDomainCount = 126,
  cudaDevAttrReserved127 = 127,
  cudaDevAttrReserved128 = 128,
  cudaDevAttrReserved129 = 129,
  cudaDevAttrNumaConfig = 130,
  cudaDevAttrNumaId = 131,
  cudaDevAttrReserved132 = 132,
  cudaDevAttrMpsEnabled = 133,
  cudaDevAttrHostNumaId = 134,
  cudaDevAttrD3D12CigSupported = 135,
  cudaDevAttrVulkanCigSupported = 138,
  cudaDevAttrGpuPciDeviceId = 139,
  cudaDevAttrGpuPciSubsystemId = 140,
  cudaDevAttrReserved141 = 141,
  cudaDevAttrHostNumaMemoryPoolsSupported = 142,
  cudaDevAttrHostNumaMultinodeIpcSupported = 143,
  cudaDevAttrHostMemoryPoolsSupported = 144,
  cudaDevAttrReserved145 = 145,
  cudaDevAttrOnlyPartialHostNativeAtomicSupported = 147,
  cudaDevAttrMax = 148,
};

enum cudaStreamCaptureStatus : int {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2,
};

enum cudaStreamCaptureMode : int {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2,
};

enum cudaLimit : int {
  cudaLimitStackSize = 0,
  cudaLimitPrintfFifoSize = 1,
  cudaLimitMallocHeapSize = 2,
  cudaLimitDevRuntimeSyncDepth = 3,
  cudaLimitDevRuntimePendingLaunchCount = 4,
  cudaLimitMaxL2FetchGranularity = 5,
  cudaLimitPersistingL2CacheSize = 6,
};

enum cudaFuncCache : int {
  cudaFuncCachePreferNone = 0,
  cudaFuncCachePreferShared = 1,
  cudaFuncCachePreferL1 = 2,
  cudaFuncCachePreferEqual = 3,
};

enum cudaSharedMemConfig : int {
  cudaSharedMemBankSizeDefault = 0,
  cudaSharedMemBankSizeFourByte = 1,
  cudaSharedMemBankSizeEightByte = 2,
};

enum cudaSharedCarveout : int {
  cudaSharedmemCarveoutDefault = -1,
  cudaSharedmemCarveoutMaxShared = 100,
  cudaSharedmemCarveoutMaxL1 = 0,
};

enum cudaComputeMode : int {
  cudaComputeModeDefault = 0,
  cudaComputeModeExclusive = 1,
  cudaComputeModeProhibited = 2,
  cudaComputeModeExclusiveProcess = 3,
};

enum cudaFuncAttribute : int {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9,
  cudaFuncAttributeClusterDimMustBeSet = 10,
  cudaFuncAttributeRequiredClusterWidth = 11,
  cudaFuncAttributeRequiredClusterHeight = 12,
  cudaFuncAttributeRequiredClusterDepth = 13,
  cudaFuncAttributeNonPortableClusterSizeAllowed = 14,
  cudaFuncAttributeClusterSchedulingPolicyPreference = 15,
  cudaFuncAttributeMax = 16,
};

enum cudaMemPoolAttr : int {
  cudaMemPoolReuseFollowEventDependencies = 1,
  cudaMemPoolReuseAllowOpportunistic = 2,
  cudaMemPoolReuseAllowInternalDependencies = 3,
  cudaMemPoolAttrReleaseThreshold = 4,
  cudaMemPoolAttrReservedMemCurrent = 5,
  cudaMemPoolAttrReservedMemHigh = 6,
  cudaMemPoolAttrUsedMemCurrent = 7,
  cudaMemPoolAttrUsedMemHigh = 8,
};

enum cudaMemAllocationType : int {
  cudaMemAllocationTypeInvalid = 0,
  cudaMemAllocationTypePinned = 1,
  cudaMemAllocationTypeManaged = 2,
  cudaMemAllocationTypeMax = 0x7FFFFFFF,
};

enum cudaMemAllocationHandleType : int {
  cudaMemHandleTypeNone = 0x0,
  cudaMemHandleTypePosixFileDescriptor = 0x1,
  cudaMemHandleTypeWin32 = 0x2,
  cudaMemHandleTypeWin32Kmt = 0x4,
  cudaMemHandleTypeFabric = 0x8,
};

enum cudaMemLocationType : int {
  cudaMemLocationTypeInvalid = 0,
  cudaMemLocationTypeNone = 0,
  cudaMemLocationTypeDevice = 1,
  cudaMemLocationTypeHost = 2,
  cudaMemLocationTypeHostNuma = 3,
  cudaMemLocationTypeHostNumaCurrent = 4,
};

enum cudaMemAccessFlags : int {
  cudaMemAccessFlagsProtNone = 0,
  cudaMemAccessFlagsProtRead = 1,
  cudaMemAccessFlagsProtReadWrite = 3,
};

enum cudaMemoryAdvise : int {
  cudaMemAdviseSetReadMostly = 1,
  cudaMemAdviseUnsetReadMostly = 2,
  cudaMemAdviseSetPreferredLocation = 3,
  cudaMemAdviseUnsetPreferredLocation = 4,
  cudaMemAdviseSetAccessedBy = 5,
  cudaMemAdviseUnsetAccessedBy = 6,
};

enum cudaMemRangeAttribute : int {
  cudaMemRangeAttributeReadMostly = 1,
  cudaMemRangeAttributePreferredLocation = 2,
  cudaMemRangeAttributeAccessedBy = 3,
  cudaMemRangeAttributeLastPrefetchLocation = 4,
  cudaMemRangeAttributePreferredLocationType = 5,
  cudaMemRangeAttributePreferredLocationId = 6,
  cudaMemRangeAttributeLastPrefetchLocationType = 7,
  cudaMemRangeAttributeLastPrefetchLocationId = 8,
};

enum cudaDeviceP2PAttr : int {
  cudaDevP2PAttrPerformanceRank = 1,
  cudaDevP2PAttrAccessSupported = 2,
  cudaDevP2PAttrNativeAtomicSupported = 3,
  cudaDevP2PAttrCudaArrayAccessSupported = 4,
  cudaDevP2PAttrOnlyPartialNativeAtomicSupported = 5,
};

enum cudaDeviceNumaConfig : int {
  cudaDeviceNumaConfigNone = 0,
  cudaDeviceNumaConfigNumaNode = 1,
};

enum cudaFlushGPUDirectRDMAWritesOptions : int {
  cudaFlushGPUDirectRDMAWritesOptionHost = 0x1,
  cudaFlushGPUDirectRDMAWritesOptionMemOps = 0x2,
};

enum cudaGPUDirectRDMAWritesOrdering : int {
  cudaGPUDirectRDMAWritesOrderingNone = 0,
  cudaGPUDirectRDMAWritesOrderingOwner = 100,
  cudaGPUDirectRDMAWritesOrderingAllDevices = 200,
};

enum cudaFlushGPUDirectRDMAWritesScope : int {
  cudaFlushGPUDirectRDMAWritesToOwner = 100,
  cudaFlushGPUDirectRDMAWritesToAllDevices = 200,
};

enum cudaFlushGPUDirectRDMAWritesTarget : int {
  cudaFlushGPUDirectRDMAWritesTargetCurrentDevice = 0,
};

enum cudaGetDriverEntryPointFlags : int {
  cudaEnableDefault = 0x0,
  cudaEnableLegacyStream = 0x1,
  cudaEnablePerThreadDefaultStream = 0x2,
};

enum cudaDriverEntryPointQueryResult : int {
  cudaDriverEntryPointSuccess = 0,
  cudaDriverEntryPointSymbolNotFound = 1,
  cudaDriverEntryPointVersionNotSufficent = 2,
};

enum cudaChannelFormatKind : int {
  cudaChannelFormatKindSigned = 0,
  cudaChannelFormatKindUnsigned = 1,
  cudaChannelFormatKindFloat = 2,
  cudaChannelFormatKindNone = 3,
  cudaChannelFormatKindNV12 = 4,
  cudaChannelFormatKindUnsignedNormalized8X1 = 5,
  cudaChannelFormatKindUnsignedNormalized8X2 = 6,
  cudaChannelFormatKindUnsignedNormalized8X4 = 7,
  cudaChannelFormatKindUnsignedNormalized16X1 = 8,
  cudaChannelFormatKindUnsignedNormalized16X2 = 9,
  cudaChannelFormatKindUnsignedNormalized16X4 = 10,
  cudaChannelFormatKindSignedNormalized8X1 = 11,
  cudaChannelFormatKindSignedNormalized8X2 = 12,
  cudaChannelFormatKindSignedNormalized8X4 = 13,
  cudaChannelFormatKindSignedNormalized16X1 = 14,
  cudaChannelFormatKindSignedNormalized16X2 = 15,
  cudaChannelFormatKindSignedNormalized16X4 = 16,
  cudaChannelFormatKindUnsignedBlockCompressed1 = 17,
  cudaChannelFormatKindUnsignedBlockCompressed1SRGB = 18,
  cudaChannelFormatKindUnsignedBlockCompressed2 = 19,
  cudaChannelFormatKindUnsignedBlockCompressed2SRGB = 20,
  cudaChannelFormatKindUnsignedBlockCompressed3 = 21,
  cudaChannelFormatKindUnsignedBlockCompressed3SRGB = 22,
  cudaChannelFormatKindUnsignedBlockCompressed4 = 23,
  cudaChannelFormatKindSignedBlockCompressed4 = 24,
  cudaChannelFormatKindUnsignedBlockCompressed5 = 25,
  cudaChannelFormatKindSignedBlockCompressed5 = 26,
  cudaChannelFormatKindUnsignedBlockCompressed6H = 27,
  cudaChannelFormatKindSignedBlockCompressed6H = 28,
  cudaChannelFormatKindUnsignedBlockCompressed7 = 29,
  cudaChannelFormatKindUnsignedBlockCompressed7SRGB = 30,
  cudaChannelFormatKindUnsignedNormalized1010102 = 31,
};

enum cudaAccessProperty : int {
  cudaAccessPropertyNormal = 0,
  cudaAccessPropertyStreaming = 1,
  cudaAccessPropertyPersisting = 2,
};

enum cudaSynchronizationPolicy : int {
  cudaSyncPolicyAuto = 1,
  cudaSyncPolicySpin = 2,
  cudaSyncPolicyYield = 3,
  cudaSyncPolicyBlockingSync = 4,
};

enum cudaClusterSchedulingPolicy : int {
  cudaClusterSchedulingPolicyDefault = 0,
  cudaClusterSchedulingPolicySpread = 1,
  cudaClusterSchedulingPolicyLoadBalancing = 2,
};

enum cudaLaunchMemSyncDomain : int {
  cudaLaunchMemSyncDomainDefault = 0,
  cudaLaunchMemSyncDomainRemote = 1,
};

enum cudaLaunchAttributeID : int {
  cudaLaunchAttributeIgnore = 0,
  cudaLaunchAttributeAccessPolicyWindow = 1,
  cudaLaunchAttributeCooperative = 2,
  cudaLaunchAttributeSynchronizationPolicy = 3,
  cudaLaunchAttributeClusterDimension = 4,
  cudaLaunchAttributeClusterSchedulingPolicyPreference = 5,
  cudaLaunchAttributeProgrammaticStreamSerialization = 6,
  cudaLaunchAttributeProgrammaticEvent = 7,
  cudaLaunchAttributePriority = 8,
  cudaLaunchAttributeMemSyncDomainMap = 9,
  cudaLaunchAttributeMemSyncDomain = 10,
  cudaLaunchAttributePreferredClusterDimension = 11,
  cudaLaunchAttributeLaunchCompletionEvent = 12,
  cudaLaunchAttributeDeviceUpdatableKernelNode = 13,
  cudaLaunchAttributePreferredSharedMemoryCarveout = 14,
  cudaLaunchAttributeNvlinkUtilCentricScheduling = 16,
};

// NVIDIA spells the runtime error enum tag `cudaError` and the typedef
// `cudaError_t`; both names work here.
using cudaError = cudaError_t;

// ===========================================================================
// Runtime API flag constants and sentinels (driver_types.h #defines)
// ===========================================================================
// cudaHostAlloc / cudaMallocHost flags
inline constexpr unsigned int cudaHostAllocDefault = 0x00;
inline constexpr unsigned int cudaHostAllocPortable = 0x01;
inline constexpr unsigned int cudaHostAllocMapped = 0x02;
inline constexpr unsigned int cudaHostAllocWriteCombined = 0x04;
// cudaHostRegister flags
inline constexpr unsigned int cudaHostRegisterDefault = 0x00;
inline constexpr unsigned int cudaHostRegisterPortable = 0x01;
inline constexpr unsigned int cudaHostRegisterMapped = 0x02;
inline constexpr unsigned int cudaHostRegisterIoMemory = 0x04;
inline constexpr unsigned int cudaHostRegisterReadOnly = 0x08;
// cudaDeviceEnablePeerAccess flags
inline constexpr unsigned int cudaPeerAccessDefault = 0x00;
// cudaStreamCreateWithFlags flags
inline constexpr unsigned int cudaStreamDefault = 0x00;
inline constexpr unsigned int cudaStreamNonBlocking = 0x01;
// cudaEventCreateWithFlags / cudaEventRecordWithFlags / cudaStreamWaitEvent flags
inline constexpr unsigned int cudaEventDefault = 0x00;
inline constexpr unsigned int cudaEventBlockingSync = 0x01;
inline constexpr unsigned int cudaEventDisableTiming = 0x02;
inline constexpr unsigned int cudaEventInterprocess = 0x04;  // requires DisableTiming
inline constexpr unsigned int cudaEventRecordDefault = 0x00;
inline constexpr unsigned int cudaEventRecordExternal = 0x01;
inline constexpr unsigned int cudaEventWaitDefault = 0x00;
inline constexpr unsigned int cudaEventWaitExternal = 0x01;
// cudaSetDeviceFlags / cudaGetDeviceFlags
inline constexpr unsigned int cudaDeviceScheduleAuto = 0x00;
inline constexpr unsigned int cudaDeviceScheduleSpin = 0x01;
inline constexpr unsigned int cudaDeviceScheduleYield = 0x02;
inline constexpr unsigned int cudaDeviceScheduleBlockingSync = 0x04;
inline constexpr unsigned int cudaDeviceBlockingSync = 0x04;  // deprecated alias
inline constexpr unsigned int cudaDeviceScheduleMask = 0x07;
inline constexpr unsigned int cudaDeviceMapHost = 0x08;
inline constexpr unsigned int cudaDeviceLmemResizeToMax = 0x10;
inline constexpr unsigned int cudaDeviceSyncMemops = 0x80;
inline constexpr unsigned int cudaDeviceMask = 0xff;
// cudaMallocArray / cudaMalloc3DArray flags
inline constexpr unsigned int cudaArrayDefault = 0x00;
inline constexpr unsigned int cudaArrayLayered = 0x01;
inline constexpr unsigned int cudaArraySurfaceLoadStore = 0x02;
inline constexpr unsigned int cudaArrayCubemap = 0x04;
inline constexpr unsigned int cudaArrayTextureGather = 0x08;
inline constexpr unsigned int cudaArrayColorAttachment = 0x20;
inline constexpr unsigned int cudaArraySparse = 0x40;
inline constexpr unsigned int cudaArrayDeferredMapping = 0x80;
// cudaIpcOpenMemHandle flags
inline constexpr unsigned int cudaIpcMemLazyEnablePeerAccess = 0x01;
// cudaMallocManaged / cudaStreamAttachMemAsync flags
inline constexpr unsigned int cudaMemAttachGlobal = 0x01;
inline constexpr unsigned int cudaMemAttachHost = 0x02;
inline constexpr unsigned int cudaMemAttachSingle = 0x04;
// cudaOccupancy* flags
inline constexpr unsigned int cudaOccupancyDefault = 0x00;
inline constexpr unsigned int cudaOccupancyDisableCachingOverride = 0x01;
// cudaInitDevice flags
inline constexpr unsigned int cudaInitDeviceFlagsAreValid = 0x01;
// cudaMemPoolProps::usage bit
inline constexpr unsigned short cudaMemPoolCreateUsageHwDecompress = 0x2;
// Device ids with special meaning (cudaMemPrefetchAsync, cudaMemAdvise, ...)
inline constexpr int cudaCpuDeviceId = -1;
inline constexpr int cudaInvalidDeviceId = -2;
// Size of the opaque IPC handles, in bytes.
inline constexpr std::size_t CUDA_IPC_HANDLE_SIZE = 64;

// Stream sentinels. NVIDIA defines these as `((cudaStream_t)0x1)` and
// `((cudaStream_t)0x2)`. They are never valid stream objects: 0x1 names the
// legacy default stream (implicitly synchronizing), 0x2 the per-thread default
// stream. A null stream means "the default stream", which is the legacy
// stream unless the caller was compiled with per-thread default streams
// (then it calls the _ptsz/_ptds entry points instead).
inline constexpr std::uintptr_t cudaStreamLegacyValue = 0x1;
inline constexpr std::uintptr_t cudaStreamPerThreadValue = 0x2;
inline cudaStream_t const cudaStreamLegacy = reinterpret_cast<cudaStream_t>(cudaStreamLegacyValue);
inline cudaStream_t const cudaStreamPerThread = reinterpret_cast<cudaStream_t>(cudaStreamPerThreadValue);

// ===========================================================================
// Runtime API structs (CUDA 13.0 layouts)
// ===========================================================================

// 3-component launch dimension. NVIDIA's dim3 has constructors defaulting
// to 1; ours is a plain aggregate with the same layout and the same
// register-passing class (three unsigned ints, 12 bytes, trivially copyable),
// so it can be received by value in extern "C" shims.
struct dim3 {
  unsigned int x;
  unsigned int y;
  unsigned int z;
};

// Shared by cudaUUID_t and CUuuid (NVIDIA uses one tag for both).
struct CUuuid_st {
  char bytes[16];
};
using CUuuid = CUuuid_st;
using cudaUUID_t = CUuuid_st;

// cudaDeviceProp, CUDA 13.0 layout (1008 bytes). Returned by the CUDA 13
// `cudaGetDeviceProperties`. CUDA 13 removed eight deprecated ints (clockRate,
// deviceOverlap, kernelExecTimeoutEnabled, computeMode, maxTexture1DLinear,
// memoryClockRate, singleToDoublePrecisionPerfRatio,
// cooperativeMultiDeviceLaunch); clients read those with
// cudaDeviceGetAttribute instead. Offsets of interest: multiProcessorCount 384,
// pciBusID 568, reserved 784.
struct cudaDeviceProp {
  char name[256];
  cudaUUID_t uuid;
  char luid[8];
  unsigned int luidDeviceNodeMask;
  std::size_t totalGlobalMem;
  std::size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  std::size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  std::size_t totalConstMem;
  int major;
  int minor;
  std::size_t textureAlignment;
  std::size_t texturePitchAlignment;
  int multiProcessorCount;
  int integrated;
  int canMapHostMemory;
  int maxTexture1D;
  int maxTexture1DMipmap;
  int maxTexture2D[2];
  int maxTexture2DMipmap[2];
  int maxTexture2DLinear[3];
  int maxTexture2DGather[2];
  int maxTexture3D[3];
  int maxTexture3DAlt[3];
  int maxTextureCubemap;
  int maxTexture1DLayered[2];
  int maxTexture2DLayered[3];
  int maxTextureCubemapLayered[2];
  int maxSurface1D;
  int maxSurface2D[2];
  int maxSurface3D[3];
  int maxSurface1DLayered[2];
  int maxSurface2DLayered[3];
  int maxSurfaceCubemap;
  int maxSurfaceCubemapLayered[2];
  std::size_t surfaceAlignment;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int tccDriver;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryBusWidth;
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  int globalL1CacheSupported;
  int localL1CacheSupported;
  std::size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  int hostNativeAtomicSupported;
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int computePreemptionSupported;
  int canUseHostPointerForRegisteredMem;
  int cooperativeLaunch;
  std::size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables;
  int directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  std::size_t reservedSharedMemPerBlock;
  int hostRegisterSupported;
  int sparseCudaArraySupported;
  int hostRegisterReadOnlySupported;
  int timelineSemaphoreInteropSupported;
  int memoryPoolsSupported;
  int gpuDirectRDMASupported;
  unsigned int gpuDirectRDMAFlushWritesOptions;
  int gpuDirectRDMAWritesOrdering;
  unsigned int memoryPoolSupportedHandleTypes;
  int deferredMappingCudaArraySupported;
  int ipcEventSupported;
  int clusterLaunch;
  int unifiedFunctionPointers;
  int deviceNumaConfig;
  int deviceNumaId;
  int mpsEnabled;
  int hostNumaId;
  unsigned int gpuPciDeviceID;
  unsigned int gpuPciSubsystemID;
  int hostNumaMultinodeIpcSupported;
  int reserved[56];
};

// cudaDeviceProp, CUDA 12.4–12.9 layout (1032 bytes): what a CUDA 12 client
// passes to `cudaGetDeviceProperties_v2` (the 12.x headers rename
// cudaGetDeviceProperties to it). It still carries the eight ints CUDA 13
// dropped, so every field from multiProcessorCount on sits at a different
// offset than in cudaDeviceProp (e.g. multiProcessorCount 388, not 384).
// CUDA 12.0–12.3 headers end in `int reserved2[2]; int reserved1[1];
// int reserved[60];` instead of the seven NUMA/PCI/MPS ints + reserved[56];
// the size and every earlier offset are the same, and writing the 12.4 fields
// into a 12.0 caller's reserved area is harmless. No toolkit header for 12.x
// exists on the build machines; the layout is pinned by the static_asserts
// below and tests/abi/test_struct_layout.cpp (values from census §2.1).
struct cudaDeviceProp12 {
  char name[256];
  cudaUUID_t uuid;
  char luid[8];
  unsigned int luidDeviceNodeMask;
  std::size_t totalGlobalMem;
  std::size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  std::size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;  // removed in 13.0
  std::size_t totalConstMem;
  int major;
  int minor;
  std::size_t textureAlignment;
  std::size_t texturePitchAlignment;
  int deviceOverlap;  // removed in 13.0
  int multiProcessorCount;
  int kernelExecTimeoutEnabled;  // removed in 13.0
  int integrated;
  int canMapHostMemory;
  int computeMode;  // removed in 13.0
  int maxTexture1D;
  int maxTexture1DMipmap;
  int maxTexture1DLinear;  // removed in 13.0
  int maxTexture2D[2];
  int maxTexture2DMipmap[2];
  int maxTexture2DLinear[3];
  int maxTexture2DGather[2];
  int maxTexture3D[3];
  int maxTexture3DAlt[3];
  int maxTextureCubemap;
  int maxTexture1DLayered[2];
  int maxTexture2DLayered[3];
  int maxTextureCubemapLayered[2];
  int maxSurface1D;
  int maxSurface2D[2];
  int maxSurface3D[3];
  int maxSurface1DLayered[2];
  int maxSurface2DLayered[3];
  int maxSurfaceCubemap;
  int maxSurfaceCubemapLayered[2];
  std::size_t surfaceAlignment;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int tccDriver;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryClockRate;  // removed in 13.0
  int memoryBusWidth;
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  int globalL1CacheSupported;
  int localL1CacheSupported;
  std::size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  int hostNativeAtomicSupported;
  int singleToDoublePrecisionPerfRatio;  // removed in 13.0
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int computePreemptionSupported;
  int canUseHostPointerForRegisteredMem;
  int cooperativeLaunch;
  int cooperativeMultiDeviceLaunch;  // removed in 13.0
  std::size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables;
  int directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  std::size_t reservedSharedMemPerBlock;
  int hostRegisterSupported;
  int sparseCudaArraySupported;
  int hostRegisterReadOnlySupported;
  int timelineSemaphoreInteropSupported;
  int memoryPoolsSupported;
  int gpuDirectRDMASupported;
  unsigned int gpuDirectRDMAFlushWritesOptions;
  int gpuDirectRDMAWritesOrdering;
  unsigned int memoryPoolSupportedHandleTypes;
  int deferredMappingCudaArraySupported;
  int ipcEventSupported;
  int clusterLaunch;
  int unifiedFunctionPointers;
  int deviceNumaConfig;  // 12.4+; reserved2[0] in 12.0-12.3
  int deviceNumaId;      // 12.4+; reserved2[1]
  int mpsEnabled;        // 12.4+; reserved1[0]
  int hostNumaId;        // 12.4+; reserved[0] in 12.0-12.3
  unsigned int gpuPciDeviceID;
  unsigned int gpuPciSubsystemID;
  int hostNumaMultinodeIpcSupported;
  int reserved[56];
};

// cudaDeviceProp as CUDA releases before 12.0 laid it out: what libcudart.so.12's plain
// cudaGetDeviceProperties (API v3020) receives. It grew from release to release; its first
// 712 bytes (CUDA 10.x) are laid out as cudaDeviceProp12's, and the implementation writes no
// more than that prefix. Declared only, so that the prototype names it.
struct cudaDevicePropLegacy;

// Result of cudaPointerGetAttributes. `reserved` is `long` in NVIDIA's
// header: 8 bytes on LP64, which is what makes the struct 88 bytes.
struct cudaPointerAttributes {
  cudaMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
  long reserved[8];
};

// Result of cudaFuncGetAttributes (144 bytes: 140 + tail padding).
struct cudaFuncAttributes {
  std::size_t sharedSizeBytes;
  std::size_t constSizeBytes;
  std::size_t localSizeBytes;
  int maxThreadsPerBlock;
  int numRegs;
  int ptxVersion;
  int binaryVersion;
  int cacheModeCA;
  int maxDynamicSharedSizeBytes;
  int preferredShmemCarveout;
  int clusterDimMustBeSet;
  int requiredClusterWidth;
  int requiredClusterHeight;
  int requiredClusterDepth;
  int clusterSchedulingPolicyPreference;
  int nonPortableClusterSizeAllowed;
  int reserved[16];
};

// IPC handles: 64 opaque bytes that travel between processes by value.
struct cudaIpcEventHandle_st {
  char reserved[CUDA_IPC_HANDLE_SIZE];
};
using cudaIpcEventHandle_t = cudaIpcEventHandle_st;
struct cudaIpcMemHandle_st {
  char reserved[CUDA_IPC_HANDLE_SIZE];
};
using cudaIpcMemHandle_t = cudaIpcMemHandle_st;
struct cudaMemFabricHandle_st {
  char reserved[CUDA_IPC_HANDLE_SIZE];
};
using cudaMemFabricHandle_t = cudaMemFabricHandle_st;

struct cudaChannelFormatDesc {
  int x;
  int y;
  int z;
  int w;
  cudaChannelFormatKind f;
};

struct cudaExtent {
  std::size_t width;  // bytes for linear memory, elements for arrays
  std::size_t height;
  std::size_t depth;
};

struct cudaPos {
  std::size_t x;
  std::size_t y;
  std::size_t z;
};

struct cudaPitchedPtr {
  void* ptr;
  std::size_t pitch;
  std::size_t xsize;
  std::size_t ysize;
};

struct cudaMemcpy3DParms {
  cudaArray_t srcArray;
  cudaPos srcPos;
  cudaPitchedPtr srcPtr;
  cudaArray_t dstArray;
  cudaPos dstPos;
  cudaPitchedPtr dstPtr;
  cudaExtent extent;
  cudaMemcpyKind kind;
};

// CUDA arrays, textures and surfaces (driver_types.h, texture_types.h). The runtime's and
// the driver's descriptors say the same things in different layouts.
enum cudaTextureAddressMode : int {
  cudaAddressModeWrap = 0,
  cudaAddressModeClamp = 1,
  cudaAddressModeMirror = 2,
  cudaAddressModeBorder = 3,
};
enum cudaTextureFilterMode : int { cudaFilterModePoint = 0, cudaFilterModeLinear = 1 };
enum cudaTextureReadMode : int { cudaReadModeElementType = 0, cudaReadModeNormalizedFloat = 1 };
enum cudaResourceType : int {
  cudaResourceTypeArray = 0,
  cudaResourceTypeMipmappedArray = 1,
  cudaResourceTypeLinear = 2,
  cudaResourceTypePitch2D = 3,
};
// The same numbers as CUresourceViewFormat (cudaResViewFormatNone = 0 … 0x22).
enum cudaResourceViewFormat : int { cudaResViewFormatNone = 0 };

struct cudaResourceDesc {
  cudaResourceType resType;
  union {
    struct {
      cudaArray_t array;
    } array;
    struct {
      cudaMipmappedArray_t mipmap;
    } mipmap;
    struct {
      void* devPtr;
      cudaChannelFormatDesc desc;
      std::size_t sizeInBytes;
    } linear;
    struct {
      void* devPtr;
      cudaChannelFormatDesc desc;
      std::size_t width;
      std::size_t height;
      std::size_t pitchInBytes;
    } pitch2D;
    struct {
      int reserved[32];
    } reserved;
  } res;
  unsigned int flags;  // must be zero
};

struct cudaResourceViewDesc {
  cudaResourceViewFormat format;
  std::size_t width;
  std::size_t height;
  std::size_t depth;
  unsigned int firstMipmapLevel;
  unsigned int lastMipmapLevel;
  unsigned int firstLayer;
  unsigned int lastLayer;
  unsigned int reserved[16];
};

struct cudaTextureDesc {
  cudaTextureAddressMode addressMode[3];
  cudaTextureFilterMode filterMode;
  cudaTextureReadMode readMode;
  int sRGB;
  float borderColor[4];
  int normalizedCoords;
  unsigned int maxAnisotropy;
  cudaTextureFilterMode mipmapFilterMode;
  float mipmapLevelBias;
  float minMipmapLevelClamp;
  float maxMipmapLevelClamp;
  int disableTrilinearOptimization;
  int seamlessCubemap;
};

struct cudaMemcpy3DPeerParms {
  cudaArray_t srcArray;
  cudaPos srcPos;
  cudaPitchedPtr srcPtr;
  int srcDevice;
  cudaArray_t dstArray;
  cudaPos dstPos;
  cudaPitchedPtr dstPtr;
  int dstDevice;
  cudaExtent extent;
};

struct cudaAccessPolicyWindow {
  void* base_ptr;
  std::size_t num_bytes;
  float hitRatio;
  cudaAccessProperty hitProp;
  cudaAccessProperty missProp;
};

struct cudaLaunchMemSyncDomainMap_st {
  unsigned char default_;
  unsigned char remote;
};
using cudaLaunchMemSyncDomainMap = cudaLaunchMemSyncDomainMap_st;

// Value of one launch / stream / graph-node attribute. Always 64 bytes
// (`pad`), whatever member is active; the driver API union below has the same
// members in a different order, which does not change the layout.
union cudaLaunchAttributeValue {
  char pad[64];
  cudaAccessPolicyWindow accessPolicyWindow;
  int cooperative;
  cudaSynchronizationPolicy syncPolicy;
  struct {
    unsigned int x;
    unsigned int y;
    unsigned int z;
  } clusterDim;
  cudaClusterSchedulingPolicy clusterSchedulingPolicyPreference;
  int programmaticStreamSerializationAllowed;
  struct {
    cudaEvent_t event;
    int flags;
    int triggerAtBlockStart;
  } programmaticEvent;
  int priority;
  cudaLaunchMemSyncDomainMap memSyncDomainMap;
  cudaLaunchMemSyncDomain memSyncDomain;
  struct {
    unsigned int x;
    unsigned int y;
    unsigned int z;
  } preferredClusterDim;
  struct {
    cudaEvent_t event;
    int flags;
  } launchCompletionEvent;
  struct {
    int deviceUpdatable;
    cudaGraphDeviceNode_t devNode;
  } deviceUpdatableKernelNode;
  unsigned int sharedMemCarveout;
  unsigned int nvlinkUtilCentricScheduling;
};

// One attribute record: id, 4 bytes of explicit padding (NVIDIA writes it as
// `char pad[8 - sizeof(cudaLaunchAttributeID)]`), then the value at offset 8.
struct cudaLaunchAttribute_st {
  cudaLaunchAttributeID id;
  char pad[8 - sizeof(cudaLaunchAttributeID)];
  cudaLaunchAttributeValue val;
};
using cudaLaunchAttribute = cudaLaunchAttribute_st;

// Argument of cudaLaunchKernelExC.
struct cudaLaunchConfig_st {
  dim3 gridDim;
  dim3 blockDim;
  std::size_t dynamicSmemBytes;
  cudaStream_t stream;
  cudaLaunchAttribute* attrs;  // may be null when numAttrs == 0
  unsigned int numAttrs;
};
using cudaLaunchConfig_t = cudaLaunchConfig_st;

// Memory pools (cudaMemPoolCreate, cudaMallocAsync, ...).
struct cudaMemLocation {
  cudaMemLocationType type;
  int id;  // device ordinal or host NUMA node
};

struct cudaMemAccessDesc {
  cudaMemLocation location;
  cudaMemAccessFlags flags;
};

struct cudaMemPoolProps {
  cudaMemAllocationType allocType;
  cudaMemAllocationHandleType handleTypes;
  cudaMemLocation location;
  void* win32SecurityAttributes;  // must be null on Linux
  std::size_t maxSize;            // 0: system-dependent default
  unsigned short usage;
  unsigned char reserved[54];
};

struct cudaMemPoolPtrExportData {
  unsigned char reserved[64];
};

// Host callbacks. NVIDIA marks them CUDART_CB, which is empty on Linux.
using cudaHostFn_t = void (*)(void* userData);
using cudaStreamCallback_t = void (*)(cudaStream_t stream, cudaError_t status, void* userData);

// ===========================================================================
// Driver API enumerations (cuda.h, CUDA 13.0) — complete
// ===========================================================================
// CUresult vs cudaError_t: many numbers coincide where the meaning matches
// (2 out of memory, 400 invalid handle, 600 not ready), but each enum has
// codes the other lacks (cudaErrorInvalidConfiguration = 9 and
// cudaErrorInsufficientDriver = 35 have no CUresult twin;
// CUDA_ERROR_CONTEXT_ALREADY_CURRENT = 202 has no cudaError_t twin) and a few
// shared numbers carry different names (201: CUDA_ERROR_INVALID_CONTEXT vs
// cudaErrorDeviceUninitialized). Translate with an explicit table, never a cast.
// Flag enums (CUctx_flags, CUstream_flags, ...) use `unsigned int` so they
// combine with the `unsigned int flags` parameters without sign warnings.
enum CUresult : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_PROFILER_DISABLED = 5,
  CUDA_ERROR_PROFILER_NOT_INITIALIZED = 6,
  CUDA_ERROR_PROFILER_ALREADY_STARTED = 7,
  CUDA_ERROR_PROFILER_ALREADY_STOPPED = 8,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER = 36,
  CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_DEVICE_NOT_LICENSED = 102,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_CONTEXT_ALREADY_CURRENT = 202,
  CUDA_ERROR_MAP_FAILED = 205,
  CUDA_ERROR_UNMAP_FAILED = 206,
  CUDA_ERROR_ARRAY_IS_MAPPED = 207,
  CUDA_ERROR_ALREADY_MAPPED = 208,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_ALREADY_ACQUIRED = 210,
  CUDA_ERROR_NOT_MAPPED = 211,
  CUDA_ERROR_NOT_MAPPED_AS_ARRAY = 212,
  CUDA_ERROR_NOT_MAPPED_AS_POINTER = 213,
  CUDA_ERROR_ECC_UNCORRECTABLE = 214,
  CUDA_ERROR_UNSUPPORTED_LIMIT = 215,
  CUDA_ERROR_CONTEXT_ALREADY_IN_USE = 216,
  CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_INVALID_GRAPHICS_CONTEXT = 219,
  CUDA_ERROR_NVLINK_UNCORRECTABLE = 220,
  CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_JIT_COMPILATION_DISABLED = 223,
  CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY = 224,
  CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC = 225,
  CUDA_ERROR_CONTAINED = 226,
  CUDA_ERROR_INVALID_SOURCE = 300,
  CUDA_ERROR_FILE_NOT_FOUND = 301,
  CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND = 302,
  CUDA_ERROR_SHARED_OBJECT_INIT_FAILED = 303,
  CUDA_ERROR_OPERATING_SYSTEM = 304,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_ILLEGAL_STATE = 401,
  CUDA_ERROR_LOSSY_QUERY = 402,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_ILLEGAL_ADDRESS = 700,
  CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
  CUDA_ERROR_LAUNCH_TIMEOUT = 702,
  CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING = 703,
  CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
  CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705,
  CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE = 708,
  CUDA_ERROR_CONTEXT_IS_DESTROYED = 709,
  CUDA_ERROR_ASSERT = 710,
  CUDA_ERROR_TOO_MANY_PEERS = 711,
  CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
  CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713,
  CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
  CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
  CUDA_ERROR_MISALIGNED_ADDRESS = 716,
  CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
  CUDA_ERROR_INVALID_PC = 718,
  CUDA_ERROR_LAUNCH_FAILED = 719,
  CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
  CUDA_ERROR_TENSOR_MEMORY_LEAK = 721,
  CUDA_ERROR_NOT_PERMITTED = 800,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_SYSTEM_NOT_READY = 802,
  CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
  CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
  CUDA_ERROR_MPS_CONNECTION_FAILED = 805,
  CUDA_ERROR_MPS_RPC_FAILURE = 806,
  CUDA_ERROR_MPS_SERVER_NOT_READY = 807,
  CUDA_ERROR_MPS_MAX_CLIENTS_REACHED = 808,
  CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED = 809,
  CUDA_ERROR_MPS_CLIENT_TERMINATED = 810,
  CUDA_ERROR_CDP_NOT_SUPPORTED = 811,
  CUDA_ERROR_CDP_VERSION_MISMATCH = 812,
  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
  CUDA_ERROR_STREAM_CAPTURE_MERGE = 902,
  CUDA_ERROR_STREAM_CAPTURE_UNMATCHED = 903,
  CUDA_ERROR_STREAM_CAPTURE_UNJOINED = 904,
  CUDA_ERROR_STREAM_CAPTURE_ISOLATION = 905,
  CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906,
  CUDA_ERROR_CAPTURED_EVENT = 907,
  CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,
  CUDA_ERROR_TIMEOUT = 909,
  CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910,
  CUDA_ERROR_EXTERNAL_DEVICE = 911,
  CUDA_ERROR_INVALID_CLUSTER_SIZE = 912,
  CUDA_ERROR_FUNCTION_NOT_LOADED = 913,
  CUDA_ERROR_INVALID_RESOURCE_TYPE = 914,
  CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION = 915,
  CUDA_ERROR_KEY_ROTATION = 916,
  CUDA_ERROR_UNKNOWN = 999,
};

enum CUdevice_attribute : int {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY = 9,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_MAX_PITCH = 11,
  CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,
  CU_DEVICE_ATTRIBUTE_REGISTERS_PER_BLOCK = 12,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT = 14,
  CU_DEVICE_ATTRIBUTE_GPU_OVERLAP = 15,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT = 17,
  CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
  CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
  CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 20,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH = 21,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH = 22,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT = 23,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH = 24,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT = 25,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH = 26,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH = 27,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT = 28,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS = 29,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_WIDTH = 27,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_HEIGHT = 28,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_NUMSLICES = 29,
  CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT = 30,
  CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS = 31,
  CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
  CU_DEVICE_ATTRIBUTE_TCC_DRIVER = 35,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH = 42,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS = 43,
  CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER = 44,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH = 45,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT = 46,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE = 47,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE = 48,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE = 49,
  CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
  CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT = 51,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH = 52,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH = 53,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS = 54,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH = 55,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH = 56,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT = 57,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH = 58,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT = 59,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH = 60,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH = 61,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS = 62,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH = 63,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT = 64,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS = 65,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH = 66,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH = 67,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS = 68,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH = 69,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH = 70,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT = 71,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH = 72,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH = 73,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT = 74,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH = 77,
  CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED = 78,
  CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED = 79,
  CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED = 80,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
  CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
  CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD = 84,
  CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID = 85,
  CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED = 86,
  CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO = 87,
  CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 88,
  CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
  CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED = 90,
  CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 91,
  CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 = 92,
  CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1 = 93,
  CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1 = 94,
  CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
  CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH = 96,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES = 98,
  CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED = 99,
  CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES = 100,
  CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST = 101,
  CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED = 102,
  CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102,
  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 103,
  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED = 104,
  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED = 105,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
  CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED = 107,
  CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 108,
  CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE = 109,
  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 110,
  CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK = 111,
  CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED = 112,
  CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED = 113,
  CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED = 114,
  CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 116,
  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS = 117,
  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING = 118,
  CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES = 119,
  CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 120,
  CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED = 121,
  CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS = 122,
  CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR = 123,
  CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124,
  CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED = 125,
  CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT = 126,
  CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED = 127,
  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 128,
  CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS = 129,
  CU_DEVICE_ATTRIBUTE_NUMA_CONFIG = 130,
  CU_DEVICE_ATTRIBUTE_NUMA_ID = 131,
  CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED = 132,
  CU_DEVICE_ATTRIBUTE_MPS_ENABLED = 133,
  CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID = 134,
  CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED = 135,
  CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK = 136,
  CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH = 137,
  CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED = 138,
  CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID = 139,
  CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID = 140,
  CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 141,
  CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED = 142,
  CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED = 143,
  CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED = 144,
  CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 145,
  CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED = 146,
  CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED = 147,
  CU_DEVICE_ATTRIBUTE_MAX = 148,
};

enum CUpointer_attribute : int {
  CU_POINTER_ATTRIBUTE_CONTEXT = 1,
  CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3,
  CU_POINTER_ATTRIBUTE_HOST_POINTER = 4,
  CU_POINTER_ATTRIBUTE_P2P_TOKENS = 5,
  CU_POINTER_ATTRIBUTE_SYNC_MEMOPS = 6,
  CU_POINTER_ATTRIBUTE_BUFFER_ID = 7,
  CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
  CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE = 10,
  CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
  CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
  CU_POINTER_ATTRIBUTE_MAPPED = 13,
  CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES = 14,
  CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE = 15,
  CU_POINTER_ATTRIBUTE_ACCESS_FLAGS = 16,
  CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE = 17,
  CU_POINTER_ATTRIBUTE_MAPPING_SIZE = 18,
  CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR = 19,
  CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID = 20,
  CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE = 21,
};

enum CUmemorytype : int {
  CU_MEMORYTYPE_HOST = 1,
  CU_MEMORYTYPE_DEVICE = 2,
  CU_MEMORYTYPE_ARRAY = 3,
  CU_MEMORYTYPE_UNIFIED = 4,
};

enum CUctx_flags : unsigned int {
  CU_CTX_SCHED_AUTO = 0x0,
  CU_CTX_SCHED_SPIN = 0x1,
  CU_CTX_SCHED_YIELD = 0x2,
  CU_CTX_SCHED_BLOCKING_SYNC = 0x4,
  CU_CTX_BLOCKING_SYNC = 0x4,
  CU_CTX_SCHED_MASK = 0x7,
  CU_CTX_MAP_HOST = 0x8,
  CU_CTX_LMEM_RESIZE_TO_MAX = 0x10,
  CU_CTX_COREDUMP_ENABLE = 0x20,
  CU_CTX_USER_COREDUMP_ENABLE = 0x40,
  CU_CTX_SYNC_MEMOPS = 0x80,
  CU_CTX_FLAGS_MASK = 0xff,
};

enum CUstream_flags : unsigned int {
  CU_STREAM_DEFAULT = 0x0,
  CU_STREAM_NON_BLOCKING = 0x1,
};

enum CUevent_flags : unsigned int {
  CU_EVENT_DEFAULT = 0x0,
  CU_EVENT_BLOCKING_SYNC = 0x1,
  CU_EVENT_DISABLE_TIMING = 0x2,
  CU_EVENT_INTERPROCESS = 0x4,
};

enum CUevent_record_flags : unsigned int {
  CU_EVENT_RECORD_DEFAULT = 0x0,
  CU_EVENT_RECORD_EXTERNAL = 0x1,
};

enum CUevent_wait_flags : unsigned int {
  CU_EVENT_WAIT_DEFAULT = 0x0,
  CU_EVENT_WAIT_EXTERNAL = 0x1,
};

enum CUfunction_attribute : int {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
  CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_PTX_VERSION = 5,
  CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6,
  CU_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9,
  CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET = 10,
  CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH = 11,
  CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT = 12,
  CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH = 13,
  CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
  CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 15,
  CU_FUNC_ATTRIBUTE_MAX = 16,
};

enum CUfunc_cache : int {
  CU_FUNC_CACHE_PREFER_NONE = 0,
  CU_FUNC_CACHE_PREFER_SHARED = 1,
  CU_FUNC_CACHE_PREFER_L1 = 2,
  CU_FUNC_CACHE_PREFER_EQUAL = 3,
};

enum CUsharedconfig : int {
  CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE = 0,
  CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE = 1,
  CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE = 2,
};

enum CUshared_carveout : int {
  CU_SHAREDMEM_CARVEOUT_DEFAULT = -1,
  CU_SHAREDMEM_CARVEOUT_MAX_SHARED = 100,
  CU_SHAREDMEM_CARVEOUT_MAX_L1 = 0,
};

enum CUcomputemode : int {
  CU_COMPUTEMODE_DEFAULT = 0,
  CU_COMPUTEMODE_PROHIBITED = 2,
  CU_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
};

enum CUjit_option : int {
  CU_JIT_MAX_REGISTERS = 0,
  CU_JIT_THREADS_PER_BLOCK = 1,
  CU_JIT_WALL_TIME = 2,
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_OPTIMIZATION_LEVEL = 7,
  CU_JIT_TARGET_FROM_CUCONTEXT = 8,
  CU_JIT_TARGET = 9,
  CU_JIT_FALLBACK_STRATEGY = 10,
  CU_JIT_GENERATE_DEBUG_INFO = 11,
  CU_JIT_LOG_VERBOSE = 12,
  CU_JIT_GENERATE_LINE_INFO = 13,
  CU_JIT_CACHE_MODE = 14,
  CU_JIT_NEW_SM3X_OPT = 15,
  CU_JIT_FAST_COMPILE = 16,
  CU_JIT_GLOBAL_SYMBOL_NAMES = 17,
  CU_JIT_GLOBAL_SYMBOL_ADDRESSES = 18,
  CU_JIT_GLOBAL_SYMBOL_COUNT = 19,
  CU_JIT_LTO = 20,
  CU_JIT_FTZ = 21,
  CU_JIT_PREC_DIV = 22,
  CU_JIT_PREC_SQRT = 23,
  CU_JIT_FMA = 24,
  CU_JIT_REFERENCED_KERNEL_NAMES = 25,
  CU_JIT_REFERENCED_KERNEL_COUNT = 26,
  CU_JIT_REFERENCED_VARIABLE_NAMES = 27,
  CU_JIT_REFERENCED_VARIABLE_COUNT = 28,
  CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES = 29,
  CU_JIT_POSITION_INDEPENDENT_CODE = 30,
  CU_JIT_MIN_CTA_PER_SM = 31,
  CU_JIT_MAX_THREADS_PER_BLOCK = 32,
  CU_JIT_OVERRIDE_DIRECTIVE_VALUES = 33,
  CU_JIT_SPLIT_COMPILE = 34,
  CU_JIT_NUM_OPTIONS = 35,
};

enum CUjitInputType : int {
  CU_JIT_INPUT_CUBIN = 0,
  CU_JIT_INPUT_PTX = 1,
  CU_JIT_INPUT_FATBINARY = 2,
  CU_JIT_INPUT_OBJECT = 3,
  CU_JIT_INPUT_LIBRARY = 4,
  CU_JIT_INPUT_NVVM = 5,
  CU_JIT_NUM_INPUT_TYPES = 6,
};

enum CUlimit : int {
  CU_LIMIT_STACK_SIZE = 0,
  CU_LIMIT_PRINTF_FIFO_SIZE = 1,
  CU_LIMIT_MALLOC_HEAP_SIZE = 2,
  CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH = 3,
  CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT = 4,
  CU_LIMIT_MAX_L2_FETCH_GRANULARITY = 5,
  CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 6,
  CU_LIMIT_SHMEM_SIZE = 7,
  CU_LIMIT_CIG_ENABLED = 8,
  CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED = 9,
  CU_LIMIT_MAX = 10,
};

enum CUmemAllocationType : int {
  CU_MEM_ALLOCATION_TYPE_INVALID = 0,
  CU_MEM_ALLOCATION_TYPE_PINNED = 1,
  CU_MEM_ALLOCATION_TYPE_MANAGED = 2,
  CU_MEM_ALLOCATION_TYPE_MAX = 0x7FFFFFFF,
};

enum CUmemAllocationHandleType : int {
  CU_MEM_HANDLE_TYPE_NONE = 0x0,
  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 0x1,
  CU_MEM_HANDLE_TYPE_WIN32 = 0x2,
  CU_MEM_HANDLE_TYPE_WIN32_KMT = 0x4,
  CU_MEM_HANDLE_TYPE_FABRIC = 0x8,
  CU_MEM_HANDLE_TYPE_MAX = 0x7FFFFFFF,
};

enum CUmemLocationType : int {
  CU_MEM_LOCATION_TYPE_INVALID = 0,
  CU_MEM_LOCATION_TYPE_NONE = 0,
  CU_MEM_LOCATION_TYPE_DEVICE = 1,
  CU_MEM_LOCATION_TYPE_HOST = 2,
  CU_MEM_LOCATION_TYPE_HOST_NUMA = 3,
  CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT = 4,
  CU_MEM_LOCATION_TYPE_MAX = 0x7FFFFFFF,
};

enum CUmemAccess_flags : int {
  CU_MEM_ACCESS_FLAGS_PROT_NONE = 0,
  CU_MEM_ACCESS_FLAGS_PROT_READ = 1,
  CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3,
  CU_MEM_ACCESS_FLAGS_PROT_MAX = 0x7FFFFFFF,
};

enum CUmemAllocationGranularity_flags : int {
  CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0x0,
  CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 0x1,
};

enum CUmemAllocationCompType : int {
  CU_MEM_ALLOCATION_COMP_NONE = 0,
  CU_MEM_ALLOCATION_COMP_GENERIC = 1,
};

enum CUmemPool_attribute : int {
  CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,
  CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC = 2,
  CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3,
  CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
  CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT = 5,
  CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH = 6,
  CU_MEMPOOL_ATTR_USED_MEM_CURRENT = 7,
  CU_MEMPOOL_ATTR_USED_MEM_HIGH = 8,
};

enum CUmemAttach_flags : unsigned int {
  CU_MEM_ATTACH_GLOBAL = 0x1,
  CU_MEM_ATTACH_HOST = 0x2,
  CU_MEM_ATTACH_SINGLE = 0x4,
};

enum CUmem_advise : int {
  CU_MEM_ADVISE_SET_READ_MOSTLY = 1,
  CU_MEM_ADVISE_UNSET_READ_MOSTLY = 2,
  CU_MEM_ADVISE_SET_PREFERRED_LOCATION = 3,
  CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION = 4,
  CU_MEM_ADVISE_SET_ACCESSED_BY = 5,
  CU_MEM_ADVISE_UNSET_ACCESSED_BY = 6,
};

enum CUmem_range_attribute : int {
  CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY = 1,
  CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION = 2,
  CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY = 3,
  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION = 4,
  CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE = 5,
  CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID = 6,
  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE = 7,
  CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID = 8,
};

enum CUdriverProcAddress_flags : unsigned int {
  CU_GET_PROC_ADDRESS_DEFAULT = 0x0,
  CU_GET_PROC_ADDRESS_LEGACY_STREAM = 0x1,
  CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 0x2,
};

enum CUdriverProcAddressQueryResult : int {
  CU_GET_PROC_ADDRESS_SUCCESS = 0,
  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
};

enum CUmoduleLoadingMode : int {
  CU_MODULE_EAGER_LOADING = 1,
  CU_MODULE_LAZY_LOADING = 2,
};

enum CUstreamCaptureStatus : int {
  CU_STREAM_CAPTURE_STATUS_NONE = 0,
  CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
  CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
};

enum CUstreamCaptureMode : int {
  CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CU_STREAM_CAPTURE_MODE_RELAXED = 2,
};

enum CUexecAffinityType : int {
  CU_EXEC_AFFINITY_TYPE_SM_COUNT = 0,
  CU_EXEC_AFFINITY_TYPE_MAX = 1,
};

enum CUcigDataType : int {
  CIG_DATA_TYPE_D3D12_COMMAND_QUEUE = 1,
  CIG_DATA_TYPE_NV_BLOB = 2,
};

enum CUaccessProperty : int {
  CU_ACCESS_PROPERTY_NORMAL = 0,
  CU_ACCESS_PROPERTY_STREAMING = 1,
  CU_ACCESS_PROPERTY_PERSISTING = 2,
};

enum CUsynchronizationPolicy : int {
  CU_SYNC_POLICY_AUTO = 1,
  CU_SYNC_POLICY_SPIN = 2,
  CU_SYNC_POLICY_YIELD = 3,
  CU_SYNC_POLICY_BLOCKING_SYNC = 4,
};

enum CUclusterSchedulingPolicy : int {
  CU_CLUSTER_SCHEDULING_POLICY_DEFAULT = 0,
  CU_CLUSTER_SCHEDULING_POLICY_SPREAD = 1,
  CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING = 2,
};

enum CUlaunchMemSyncDomain : int {
  CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT = 0,
  CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE = 1,
};

enum CUlaunchAttributeID : int {
  CU_LAUNCH_ATTRIBUTE_IGNORE = 0,
  CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1,
  CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2,
  CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY = 3,
  CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
  CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5,
  CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
  CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT = 7,
  CU_LAUNCH_ATTRIBUTE_PRIORITY = 8,
  CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP = 9,
  CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN = 10,
  CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION = 11,
  CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT = 12,
  CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE = 13,
  CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 14,
  CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING = 16,
};

enum CUdevice_P2PAttribute : int {
  CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK = 1,
  CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED = 2,
  CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED = 3,
  CU_DEVICE_P2P_ATTRIBUTE_ACCESS_ACCESS_SUPPORTED = 4,
  CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED = 4,
  CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED = 5,
};

enum CUipcMem_flags : unsigned int {
  CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 0x1,
};

enum CUoccupancy_flags : unsigned int {
  CU_OCCUPANCY_DEFAULT = 0x0,
  CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE = 0x1,
};

enum CUdeviceNumaConfig : int {
  CU_DEVICE_NUMA_CONFIG_NONE = 0,
  CU_DEVICE_NUMA_CONFIG_NUMA_NODE = 1,
};

enum CUlibraryOption : int {
  CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE = 0,
  CU_LIBRARY_BINARY_IS_PRESERVED = 1,
  CU_LIBRARY_NUM_OPTIONS = 2,
};

enum CUfunctionLoadingState : int {
  CU_FUNCTION_LOADING_STATE_UNLOADED = 0,
  CU_FUNCTION_LOADING_STATE_LOADED = 1,
  CU_FUNCTION_LOADING_STATE_MAX = 2,
};

enum CUDA_POINTER_ATTRIBUTE_ACCESS_FLAGS : int {
  CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE = 0,
  CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ = 1,
  CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE = 3,
};

// Flag values of cuGetProcAddress_v2 (also reachable as enumerators of
// CUdriverProcAddress_flags): CU_GET_PROC_ADDRESS_DEFAULT = 0,
// CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1,
// CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 2 (selects _ptds/_ptsz).

// ===========================================================================
// Driver API constants (cuda.h #defines)
// ===========================================================================
inline constexpr std::size_t CU_IPC_HANDLE_SIZE = 64;

// cuMemHostAlloc flags
inline constexpr unsigned int CU_MEMHOSTALLOC_PORTABLE = 0x01;
inline constexpr unsigned int CU_MEMHOSTALLOC_DEVICEMAP = 0x02;
inline constexpr unsigned int CU_MEMHOSTALLOC_WRITECOMBINED = 0x04;
// cuMemHostRegister flags
inline constexpr unsigned int CU_MEMHOSTREGISTER_PORTABLE = 0x01;
inline constexpr unsigned int CU_MEMHOSTREGISTER_DEVICEMAP = 0x02;
inline constexpr unsigned int CU_MEMHOSTREGISTER_IOMEMORY = 0x04;
inline constexpr unsigned int CU_MEMHOSTREGISTER_READ_ONLY = 0x08;
// CUmemAllocationProp::allocFlags.usage / CUmemPoolProps::usage bits
inline constexpr unsigned short CU_MEM_CREATE_USAGE_TILE_POOL = 0x1;
inline constexpr unsigned short CU_MEM_CREATE_USAGE_HW_DECOMPRESS = 0x2;
inline constexpr unsigned short CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS = 0x2;

// Special device ordinals (cuMemPrefetchAsync, cuMemAdvise).
inline constexpr CUdevice CU_DEVICE_CPU = -1;
inline constexpr CUdevice CU_DEVICE_INVALID = -2;

// Driver-API spellings of the stream sentinels (same values as the runtime's).
inline CUstream const CU_STREAM_LEGACY = reinterpret_cast<CUstream>(cudaStreamLegacyValue);
inline CUstream const CU_STREAM_PER_THREAD = reinterpret_cast<CUstream>(cudaStreamPerThreadValue);

// Markers inside the `extra` array of cuLaunchKernel. The array is a list of
// (key, value) pointer pairs terminated by CU_LAUNCH_PARAM_END; the keys are
// small integers cast to void*, compare them by value.
inline constexpr std::uintptr_t CU_LAUNCH_PARAM_END_AS_INT = 0x00;
inline constexpr std::uintptr_t CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT = 0x01;
inline constexpr std::uintptr_t CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT = 0x02;
inline void* const CU_LAUNCH_PARAM_END = reinterpret_cast<void*>(CU_LAUNCH_PARAM_END_AS_INT);
inline void* const CU_LAUNCH_PARAM_BUFFER_POINTER = reinterpret_cast<void*>(CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT);
inline void* const CU_LAUNCH_PARAM_BUFFER_SIZE = reinterpret_cast<void*>(CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT);

// ===========================================================================
// Driver API structs (CUDA 13.0 layouts; the unversioned typedef names map to
// the newest _vN struct, as in cuda.h)
// ===========================================================================

struct CUipcEventHandle_st {
  char reserved[CU_IPC_HANDLE_SIZE];
};
using CUipcEventHandle = CUipcEventHandle_st;
using CUipcEventHandle_v1 = CUipcEventHandle_st;

struct CUipcMemHandle_st {
  char reserved[CU_IPC_HANDLE_SIZE];
};
using CUipcMemHandle = CUipcMemHandle_st;
using CUipcMemHandle_v1 = CUipcMemHandle_st;

struct CUmemFabricHandle_st {
  unsigned char data[CU_IPC_HANDLE_SIZE];
};
using CUmemFabricHandle = CUmemFabricHandle_st;

// Legacy cuDeviceGetProperties result (all ints, 56 bytes).
struct CUdevprop_st {
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int sharedMemPerBlock;
  int totalConstantMemory;
  int SIMDWidth;
  int memPitch;
  int regsPerBlock;
  int clockRate;
  int textureAlign;
};
using CUdevprop = CUdevprop_st;
using CUdevprop_v1 = CUdevprop_st;

// Execution affinity (cuCtxCreate_v3/_v4, cuCtxGetExecAffinity).
struct CUexecAffinitySmCount_st {
  unsigned int val;
};
using CUexecAffinitySmCount = CUexecAffinitySmCount_st;

struct CUexecAffinityParam_st {
  CUexecAffinityType type;
  union {
    CUexecAffinitySmCount smCount;
  } param;
};
using CUexecAffinityParam = CUexecAffinityParam_st;
using CUexecAffinityParam_v1 = CUexecAffinityParam_st;

struct CUctxCigParam_st {
  CUcigDataType sharedDataType;
  void* sharedData;
};
using CUctxCigParam = CUctxCigParam_st;

// Argument of CUDA 13's cuCtxCreate (= cuCtxCreate_v4). May be null.
// The int is followed by 4 bytes of padding before cigParams (offset 16).
struct CUctxCreateParams_st {
  CUexecAffinityParam* execAffinityParams;
  int numExecAffinityParams;
  CUctxCigParam* cigParams;
};
using CUctxCreateParams = CUctxCreateParams_st;

// cuMemcpy2D* argument (the _v2 layout: CUdeviceptr is 64-bit). Each
// memoryType selects which of Host/Device/Array is meaningful; the others
// may hold garbage and must not be read.
struct CUDA_MEMCPY2D_st {
  std::size_t srcXInBytes;
  std::size_t srcY;
  CUmemorytype srcMemoryType;
  const void* srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  std::size_t srcPitch;
  std::size_t dstXInBytes;
  std::size_t dstY;
  CUmemorytype dstMemoryType;
  void* dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  std::size_t dstPitch;
  std::size_t WidthInBytes;
  std::size_t Height;
};
using CUDA_MEMCPY2D = CUDA_MEMCPY2D_st;
using CUDA_MEMCPY2D_v2 = CUDA_MEMCPY2D_st;

// cuMemcpy3D* argument (_v2 layout). reserved0/reserved1 must be null.
struct CUDA_MEMCPY3D_st {
  std::size_t srcXInBytes;
  std::size_t srcY;
  std::size_t srcZ;
  std::size_t srcLOD;
  CUmemorytype srcMemoryType;
  const void* srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  void* reserved0;
  std::size_t srcPitch;
  std::size_t srcHeight;
  std::size_t dstXInBytes;
  std::size_t dstY;
  std::size_t dstZ;
  std::size_t dstLOD;
  CUmemorytype dstMemoryType;
  void* dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  void* reserved1;
  std::size_t dstPitch;
  std::size_t dstHeight;
  std::size_t WidthInBytes;
  std::size_t Height;
  std::size_t Depth;
};
using CUDA_MEMCPY3D = CUDA_MEMCPY3D_st;
using CUDA_MEMCPY3D_v2 = CUDA_MEMCPY3D_st;

// ---- CUDA arrays, texture and surface objects (cuda.h) ----
// CUarray_format — complete.
enum CUarray_format : int {
  CU_AD_FORMAT_UNSIGNED_INT8 = 0x01,
  CU_AD_FORMAT_UNSIGNED_INT16 = 0x02,
  CU_AD_FORMAT_UNSIGNED_INT32 = 0x03,
  CU_AD_FORMAT_SIGNED_INT8 = 0x08,
  CU_AD_FORMAT_SIGNED_INT16 = 0x09,
  CU_AD_FORMAT_SIGNED_INT32 = 0x0a,
  CU_AD_FORMAT_HALF = 0x10,
  CU_AD_FORMAT_FLOAT = 0x20,
  CU_AD_FORMAT_NV12 = 0xb0,
  CU_AD_FORMAT_UNORM_INT8X1 = 0xc0,
  CU_AD_FORMAT_UNORM_INT8X2 = 0xc1,
  CU_AD_FORMAT_UNORM_INT8X4 = 0xc2,
  CU_AD_FORMAT_UNORM_INT16X1 = 0xc3,
  CU_AD_FORMAT_UNORM_INT16X2 = 0xc4,
  CU_AD_FORMAT_UNORM_INT16X4 = 0xc5,
  CU_AD_FORMAT_SNORM_INT8X1 = 0xc6,
  CU_AD_FORMAT_SNORM_INT8X2 = 0xc7,
  CU_AD_FORMAT_SNORM_INT8X4 = 0xc8,
  CU_AD_FORMAT_SNORM_INT16X1 = 0xc9,
  CU_AD_FORMAT_SNORM_INT16X2 = 0xca,
  CU_AD_FORMAT_SNORM_INT16X4 = 0xcb,
  CU_AD_FORMAT_BC1_UNORM = 0x91,
  CU_AD_FORMAT_BC1_UNORM_SRGB = 0x92,
  CU_AD_FORMAT_BC2_UNORM = 0x93,
  CU_AD_FORMAT_BC2_UNORM_SRGB = 0x94,
  CU_AD_FORMAT_BC3_UNORM = 0x95,
  CU_AD_FORMAT_BC3_UNORM_SRGB = 0x96,
  CU_AD_FORMAT_BC4_UNORM = 0x97,
  CU_AD_FORMAT_BC4_SNORM = 0x98,
  CU_AD_FORMAT_BC5_UNORM = 0x99,
  CU_AD_FORMAT_BC5_SNORM = 0x9a,
  CU_AD_FORMAT_BC6H_UF16 = 0x9b,
  CU_AD_FORMAT_BC6H_SF16 = 0x9c,
  CU_AD_FORMAT_BC7_UNORM = 0x9d,
  CU_AD_FORMAT_BC7_UNORM_SRGB = 0x9e,
  CU_AD_FORMAT_P010 = 0x9f,
  CU_AD_FORMAT_P016 = 0xa1,
  CU_AD_FORMAT_NV16 = 0xa2,
  CU_AD_FORMAT_P210 = 0xa3,
  CU_AD_FORMAT_P216 = 0xa4,
  CU_AD_FORMAT_YUY2 = 0xa5,
  CU_AD_FORMAT_Y210 = 0xa6,
  CU_AD_FORMAT_Y216 = 0xa7,
  CU_AD_FORMAT_AYUV = 0xa8,
  CU_AD_FORMAT_Y410 = 0xa9,
  CU_AD_FORMAT_Y416 = 0xb1,
  CU_AD_FORMAT_Y444_PLANAR8 = 0xb2,
  CU_AD_FORMAT_Y444_PLANAR10 = 0xb3,
  CU_AD_FORMAT_YUV444_8bit_SemiPlanar = 0xb4,
  CU_AD_FORMAT_YUV444_16bit_SemiPlanar = 0xb5,
  CU_AD_FORMAT_UNORM_INT_101010_2 = 0x50,
  CU_AD_FORMAT_MAX = 0x7FFFFFFF,
};
enum CUaddress_mode : int {
  CU_TR_ADDRESS_MODE_WRAP = 0,
  CU_TR_ADDRESS_MODE_CLAMP = 1,
  CU_TR_ADDRESS_MODE_MIRROR = 2,
  CU_TR_ADDRESS_MODE_BORDER = 3,
};
enum CUfilter_mode : int { CU_TR_FILTER_MODE_POINT = 0, CU_TR_FILTER_MODE_LINEAR = 1 };
enum CUresourcetype : int {
  CU_RESOURCE_TYPE_ARRAY = 0,
  CU_RESOURCE_TYPE_MIPMAPPED_ARRAY = 1,
  CU_RESOURCE_TYPE_LINEAR = 2,
  CU_RESOURCE_TYPE_PITCH2D = 3,
};
// CUresourceViewFormat: 0 (none) … 0x22 (BC7); only "none" is named here.
enum CUresourceViewFormat : int { CU_RES_VIEW_FORMAT_NONE = 0 };

// cuArray3DCreate flags (CUDA_ARRAY3D_*) and texture flags (CU_TRSF_*).
inline constexpr unsigned int CUDA_ARRAY3D_LAYERED = 0x01;
inline constexpr unsigned int CUDA_ARRAY3D_SURFACE_LDST = 0x02;
inline constexpr unsigned int CUDA_ARRAY3D_CUBEMAP = 0x04;
inline constexpr unsigned int CUDA_ARRAY3D_TEXTURE_GATHER = 0x08;
inline constexpr unsigned int CUDA_ARRAY3D_DEPTH_TEXTURE = 0x10;
inline constexpr unsigned int CUDA_ARRAY3D_COLOR_ATTACHMENT = 0x20;
inline constexpr unsigned int CUDA_ARRAY3D_SPARSE = 0x40;
inline constexpr unsigned int CUDA_ARRAY3D_DEFERRED_MAPPING = 0x80;
inline constexpr unsigned int CUDA_ARRAY3D_VIDEO_ENCODE_DECODE = 0x100;
inline constexpr unsigned int CU_TRSF_READ_AS_INTEGER = 0x01;
inline constexpr unsigned int CU_TRSF_NORMALIZED_COORDINATES = 0x02;
inline constexpr unsigned int CU_TRSF_SRGB = 0x10;
inline constexpr unsigned int CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION = 0x20;
inline constexpr unsigned int CU_TRSF_SEAMLESS_CUBEMAP = 0x40;

// cuArrayCreate_v2 / cuArrayGetDescriptor_v2.
struct CUDA_ARRAY_DESCRIPTOR_st {
  std::size_t Width;
  std::size_t Height;
  CUarray_format Format;
  unsigned int NumChannels;
};
using CUDA_ARRAY_DESCRIPTOR = CUDA_ARRAY_DESCRIPTOR_st;
using CUDA_ARRAY_DESCRIPTOR_v2 = CUDA_ARRAY_DESCRIPTOR_st;

// cuArray3DCreate_v2 / cuArray3DGetDescriptor_v2.
struct CUDA_ARRAY3D_DESCRIPTOR_st {
  std::size_t Width;
  std::size_t Height;
  std::size_t Depth;
  CUarray_format Format;
  unsigned int NumChannels;
  unsigned int Flags;
};
using CUDA_ARRAY3D_DESCRIPTOR = CUDA_ARRAY3D_DESCRIPTOR_st;
using CUDA_ARRAY3D_DESCRIPTOR_v2 = CUDA_ARRAY3D_DESCRIPTOR_st;

struct CUDA_RESOURCE_DESC_st {
  CUresourcetype resType;
  union {
    struct {
      CUarray hArray;
    } array;
    struct {
      CUmipmappedArray hMipmappedArray;
    } mipmap;
    struct {
      CUdeviceptr devPtr;
      CUarray_format format;
      unsigned int numChannels;
      std::size_t sizeInBytes;
    } linear;
    struct {
      CUdeviceptr devPtr;
      CUarray_format format;
      unsigned int numChannels;
      std::size_t width;
      std::size_t height;
      std::size_t pitchInBytes;
    } pitch2D;
    struct {
      int reserved[32];
    } reserved;
  } res;
  unsigned int flags;  // must be zero
};
using CUDA_RESOURCE_DESC = CUDA_RESOURCE_DESC_st;
using CUDA_RESOURCE_DESC_v1 = CUDA_RESOURCE_DESC_st;

struct CUDA_TEXTURE_DESC_st {
  CUaddress_mode addressMode[3];
  CUfilter_mode filterMode;
  unsigned int flags;  // CU_TRSF_*
  unsigned int maxAnisotropy;
  CUfilter_mode mipmapFilterMode;
  float mipmapLevelBias;
  float minMipmapLevelClamp;
  float maxMipmapLevelClamp;
  float borderColor[4];
  int reserved[12];
};
using CUDA_TEXTURE_DESC = CUDA_TEXTURE_DESC_st;
using CUDA_TEXTURE_DESC_v1 = CUDA_TEXTURE_DESC_st;

struct CUDA_RESOURCE_VIEW_DESC_st {
  CUresourceViewFormat format;
  std::size_t width;
  std::size_t height;
  std::size_t depth;
  unsigned int firstMipmapLevel;
  unsigned int lastMipmapLevel;
  unsigned int firstLayer;
  unsigned int lastLayer;
  unsigned int reserved[16];
};
using CUDA_RESOURCE_VIEW_DESC = CUDA_RESOURCE_VIEW_DESC_st;
using CUDA_RESOURCE_VIEW_DESC_v1 = CUDA_RESOURCE_VIEW_DESC_st;

// cuLaunchCooperativeKernelMultiDevice element.
struct CUDA_LAUNCH_PARAMS_st {
  CUfunction function;
  unsigned int gridDimX;
  unsigned int gridDimY;
  unsigned int gridDimZ;
  unsigned int blockDimX;
  unsigned int blockDimY;
  unsigned int blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  void** kernelParams;
};
using CUDA_LAUNCH_PARAMS = CUDA_LAUNCH_PARAMS_st;
using CUDA_LAUNCH_PARAMS_v1 = CUDA_LAUNCH_PARAMS_st;

struct CUaccessPolicyWindow_st {
  void* base_ptr;
  std::size_t num_bytes;
  float hitRatio;
  CUaccessProperty hitProp;
  CUaccessProperty missProp;
};
using CUaccessPolicyWindow = CUaccessPolicyWindow_st;
using CUaccessPolicyWindow_v1 = CUaccessPolicyWindow_st;

struct CUlaunchMemSyncDomainMap_st {
  unsigned char default_;
  unsigned char remote;
};
using CUlaunchMemSyncDomainMap = CUlaunchMemSyncDomainMap_st;

union CUlaunchAttributeValue_union {
  char pad[64];
  CUaccessPolicyWindow accessPolicyWindow;
  int cooperative;
  CUsynchronizationPolicy syncPolicy;
  struct {
    unsigned int x;
    unsigned int y;
    unsigned int z;
  } clusterDim;
  CUclusterSchedulingPolicy clusterSchedulingPolicyPreference;
  int programmaticStreamSerializationAllowed;
  struct {
    CUevent event;
    int flags;
    int triggerAtBlockStart;
  } programmaticEvent;
  struct {
    CUevent event;
    int flags;
  } launchCompletionEvent;
  int priority;
  CUlaunchMemSyncDomainMap memSyncDomainMap;
  CUlaunchMemSyncDomain memSyncDomain;
  struct {
    unsigned int x;
    unsigned int y;
    unsigned int z;
  } preferredClusterDim;
  struct {
    int deviceUpdatable;
    CUgraphDeviceNode devNode;
  } deviceUpdatableKernelNode;
  unsigned int sharedMemCarveout;
  unsigned int nvlinkUtilCentricScheduling;
};
using CUlaunchAttributeValue = CUlaunchAttributeValue_union;
using CUkernelNodeAttrValue = CUlaunchAttributeValue_union;
using CUstreamAttrValue = CUlaunchAttributeValue_union;

// Same 72-byte record as cudaLaunchAttribute; the driver calls the value
// member `value`, the runtime calls it `val`.
struct CUlaunchAttribute_st {
  CUlaunchAttributeID id;
  char pad[8 - sizeof(CUlaunchAttributeID)];
  CUlaunchAttributeValue value;
};
using CUlaunchAttribute = CUlaunchAttribute_st;

// Argument of cuLaunchKernelEx. Unlike cudaLaunchConfig_t the dimensions are
// seven separate unsigned ints and the shared-memory size is 32-bit.
struct CUlaunchConfig_st {
  unsigned int gridDimX;
  unsigned int gridDimY;
  unsigned int gridDimZ;
  unsigned int blockDimX;
  unsigned int blockDimY;
  unsigned int blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute* attrs;
  unsigned int numAttrs;
};
using CUlaunchConfig = CUlaunchConfig_st;

// Virtual memory management and memory pools.
struct CUmemLocation_st {
  CUmemLocationType type;
  int id;
};
using CUmemLocation = CUmemLocation_st;
using CUmemLocation_v1 = CUmemLocation_st;

struct CUmemAllocationProp_st {
  CUmemAllocationType type;
  CUmemAllocationHandleType requestedHandleTypes;
  CUmemLocation location;
  void* win32HandleMetaData;  // must be null on Linux
  struct {
    unsigned char compressionType;  // a CUmemAllocationCompType value
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;  // CU_MEM_CREATE_USAGE_* bits
    unsigned char reserved[4];
  } allocFlags;
};
using CUmemAllocationProp = CUmemAllocationProp_st;
using CUmemAllocationProp_v1 = CUmemAllocationProp_st;

struct CUmemAccessDesc_st {
  CUmemLocation location;
  CUmemAccess_flags flags;
};
using CUmemAccessDesc = CUmemAccessDesc_st;
using CUmemAccessDesc_v1 = CUmemAccessDesc_st;

struct CUmemPoolProps_st {
  CUmemAllocationType allocType;
  CUmemAllocationHandleType handleTypes;
  CUmemLocation location;
  void* win32SecurityAttributes;  // must be null on Linux
  std::size_t maxSize;
  unsigned short usage;
  unsigned char reserved[54];
};
using CUmemPoolProps = CUmemPoolProps_st;
using CUmemPoolProps_v1 = CUmemPoolProps_st;

struct CUmemPoolPtrExportData_st {
  unsigned char reserved[64];
};
using CUmemPoolPtrExportData = CUmemPoolPtrExportData_st;
using CUmemPoolPtrExportData_v1 = CUmemPoolPtrExportData_st;

// Callbacks. NVIDIA marks them CUDA_CB, which is empty on Linux.
using CUhostFn = void (*)(void* userData);
using CUstreamCallback = void (*)(CUstream hStream, CUresult status, void* userData);
using CUoccupancyB2DSize = std::size_t (*)(int blockSize);

// ===========================================================================
// CUDA graphs and stream capture (driver_types.h, cuda.h, CUDA 13.0)
// ===========================================================================
// Runtime and driver share the node-type, update-result and edge layouts; the
// parameter structs differ (dim3 vs three unsigned ints, void* vs CUdeviceptr,
// a context in the driver's v2 forms). The plain driver names keep the oldest
// ABI (CUDA_KERNEL_NODE_PARAMS_v1 behind cuGraphAddKernelNode), the _v2 entry
// points take the newer structs.
using cuuint64_t = std::uint64_t;  // cuda.h: uint64_t (unsigned long on LP64)
using CUgraphConditionalHandle = cuuint64_t;

enum cudaGraphNodeType : int {
  cudaGraphNodeTypeKernel = 0x00,
  cudaGraphNodeTypeMemcpy = 0x01,
  cudaGraphNodeTypeMemset = 0x02,
  cudaGraphNodeTypeHost = 0x03,
  cudaGraphNodeTypeGraph = 0x04,
  cudaGraphNodeTypeEmpty = 0x05,
  cudaGraphNodeTypeWaitEvent = 0x06,
  cudaGraphNodeTypeEventRecord = 0x07,
  cudaGraphNodeTypeExtSemaphoreSignal = 0x08,
  cudaGraphNodeTypeExtSemaphoreWait = 0x09,
  cudaGraphNodeTypeMemAlloc = 0x0a,
  cudaGraphNodeTypeMemFree = 0x0b,
  cudaGraphNodeTypeConditional = 0x0d,
  cudaGraphNodeTypeCount = 0x0e,
};

enum cudaGraphExecUpdateResult : int {
  cudaGraphExecUpdateSuccess = 0x0,
  cudaGraphExecUpdateError = 0x1,
  cudaGraphExecUpdateErrorTopologyChanged = 0x2,
  cudaGraphExecUpdateErrorNodeTypeChanged = 0x3,
  cudaGraphExecUpdateErrorFunctionChanged = 0x4,
  cudaGraphExecUpdateErrorParametersChanged = 0x5,
  cudaGraphExecUpdateErrorNotSupported = 0x6,
  cudaGraphExecUpdateErrorUnsupportedFunctionChange = 0x7,
  cudaGraphExecUpdateErrorAttributesChanged = 0x8,
};

enum cudaGraphInstantiateResult : int {
  cudaGraphInstantiateSuccess = 0,
  cudaGraphInstantiateError = 1,
  cudaGraphInstantiateInvalidStructure = 2,
  cudaGraphInstantiateNodeOperationNotSupported = 3,
  cudaGraphInstantiateMultipleDevicesNotSupported = 4,
  cudaGraphInstantiateConditionalHandleUnused = 5,
};

enum cudaGraphInstantiateFlags : unsigned int {
  cudaGraphInstantiateFlagAutoFreeOnLaunch = 1,
  cudaGraphInstantiateFlagUpload = 2,
  cudaGraphInstantiateFlagDeviceLaunch = 4,
  cudaGraphInstantiateFlagUseNodePriority = 8,
};

enum cudaGraphDebugDotFlags : unsigned int {
  cudaGraphDebugDotFlagsVerbose = 1u << 0,
  cudaGraphDebugDotFlagsKernelNodeParams = 1u << 2,
  cudaGraphDebugDotFlagsMemcpyNodeParams = 1u << 3,
  cudaGraphDebugDotFlagsMemsetNodeParams = 1u << 4,
  cudaGraphDebugDotFlagsHostNodeParams = 1u << 5,
  cudaGraphDebugDotFlagsEventNodeParams = 1u << 6,
  cudaGraphDebugDotFlagsExtSemasSignalNodeParams = 1u << 7,
  cudaGraphDebugDotFlagsExtSemasWaitNodeParams = 1u << 8,
  cudaGraphDebugDotFlagsKernelNodeAttributes = 1u << 9,
  cudaGraphDebugDotFlagsHandles = 1u << 10,
  cudaGraphDebugDotFlagsConditionalNodeParams = 1u << 15,
};

enum cudaStreamUpdateCaptureDependenciesFlags : unsigned int {
  cudaStreamAddCaptureDependencies = 0x0,
  cudaStreamSetCaptureDependencies = 0x1,
};

enum cudaUserObjectFlags : unsigned int {
  cudaUserObjectNoDestructorSync = 0x1,
};

enum cudaUserObjectRetainFlags : unsigned int {
  cudaGraphUserObjectMove = 0x1,
};

enum cudaGraphDependencyType : int {
  cudaGraphDependencyTypeDefault = 0,
  cudaGraphDependencyTypeProgrammatic = 1,
};

enum cudaGraphChildGraphNodeOwnership : int {
  cudaGraphChildGraphOwnershipClone = 0,
  cudaGraphChildGraphOwnershipMove = 1,
};

enum cudaGraphMemAttributeType : int {
  cudaGraphMemAttrUsedMemCurrent = 0x0,
  cudaGraphMemAttrUsedMemHigh = 0x1,
  cudaGraphMemAttrReservedMemCurrent = 0x2,
  cudaGraphMemAttrReservedMemHigh = 0x3,
};

enum cudaGraphConditionalNodeType : int {
  cudaGraphCondTypeIf = 0,
  cudaGraphCondTypeWhile = 1,
  cudaGraphCondTypeSwitch = 2,
};

struct cudaKernelNodeParams {
  void* func;  // host stub or cudaKernel_t
  dim3 gridDim;
  dim3 blockDim;
  unsigned int sharedMemBytes;
  void** kernelParams;
  void** extra;
};

struct cudaKernelNodeParamsV2 {
  void* func;
  dim3 gridDim;
  dim3 blockDim;
  unsigned int sharedMemBytes;
  void** kernelParams;
  void** extra;
};

struct cudaMemsetParams {
  void* dst;
  std::size_t pitch;  // unused when height == 1
  unsigned int value;
  unsigned int elementSize;  // 1, 2 or 4
  std::size_t width;         // in elements
  std::size_t height;
};

struct cudaMemsetParamsV2 {
  void* dst;
  std::size_t pitch;
  unsigned int value;
  unsigned int elementSize;
  std::size_t width;
  std::size_t height;
};

struct cudaHostNodeParams {
  cudaHostFn_t fn;
  void* userData;
};

struct cudaHostNodeParamsV2 {
  cudaHostFn_t fn;
  void* userData;
};

struct cudaMemcpyNodeParams {
  int flags;  // must be 0
  int reserved[3];
  cudaMemcpy3DParms copyParams;
};

struct cudaMemAllocNodeParams {
  cudaMemPoolProps poolProps;  // handleTypes must be cudaMemHandleTypeNone
  const cudaMemAccessDesc* accessDescs;
  std::size_t accessDescCount;
  std::size_t bytesize;
  void* dptr;  // out
};

struct cudaMemAllocNodeParamsV2 {
  cudaMemPoolProps poolProps;
  const cudaMemAccessDesc* accessDescs;
  std::size_t accessDescCount;
  std::size_t bytesize;
  void* dptr;
};

struct cudaMemFreeNodeParams {
  void* dptr;
};

struct cudaChildGraphNodeParams {
  cudaGraph_t graph;
  cudaGraphChildGraphNodeOwnership ownership;
};

struct cudaEventRecordNodeParams {
  cudaEvent_t event;
};

struct cudaEventWaitNodeParams {
  cudaEvent_t event;
};

struct cudaConditionalNodeParams {
  cudaGraphConditionalHandle handle;
  cudaGraphConditionalNodeType type;
  unsigned int size;
  cudaGraph_t* phGraph_out;
};

// cudaGraphAddNode / cudaGraphNodeSetParams: 256 bytes, a 232-byte union.
struct cudaGraphNodeParams {
  cudaGraphNodeType type;
  int reserved0[3];
  union {
    long long reserved1[29];
    cudaKernelNodeParamsV2 kernel;
    cudaMemcpyNodeParams memcpy;
    cudaMemsetParamsV2 memset;
    cudaHostNodeParamsV2 host;
    cudaChildGraphNodeParams graph;
    cudaEventWaitNodeParams eventWait;
    cudaEventRecordNodeParams eventRecord;
    cudaMemAllocNodeParamsV2 alloc;
    cudaMemFreeNodeParams free;
    cudaConditionalNodeParams conditional;
  };
  long long reserved2;
};

struct cudaGraphEdgeData_st {
  unsigned char from_port;
  unsigned char to_port;
  unsigned char type;  // cudaGraphDependencyType
  unsigned char reserved[5];
};
using cudaGraphEdgeData = cudaGraphEdgeData_st;

struct cudaGraphInstantiateParams_st {
  unsigned long long flags;
  cudaStream_t uploadStream;
  cudaGraphNode_t errNode_out;
  cudaGraphInstantiateResult result_out;
};
using cudaGraphInstantiateParams = cudaGraphInstantiateParams_st;

struct cudaGraphExecUpdateResultInfo_st {
  cudaGraphExecUpdateResult result;
  cudaGraphNode_t errorNode;
  cudaGraphNode_t errorFromNode;
};
using cudaGraphExecUpdateResultInfo = cudaGraphExecUpdateResultInfo_st;

enum CUgraphNodeType : int {
  CU_GRAPH_NODE_TYPE_KERNEL = 0,
  CU_GRAPH_NODE_TYPE_MEMCPY = 1,
  CU_GRAPH_NODE_TYPE_MEMSET = 2,
  CU_GRAPH_NODE_TYPE_HOST = 3,
  CU_GRAPH_NODE_TYPE_GRAPH = 4,
  CU_GRAPH_NODE_TYPE_EMPTY = 5,
  CU_GRAPH_NODE_TYPE_WAIT_EVENT = 6,
  CU_GRAPH_NODE_TYPE_EVENT_RECORD = 7,
  CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL = 8,
  CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT = 9,
  CU_GRAPH_NODE_TYPE_MEM_ALLOC = 10,
  CU_GRAPH_NODE_TYPE_MEM_FREE = 11,
  CU_GRAPH_NODE_TYPE_BATCH_MEM_OP = 12,
  CU_GRAPH_NODE_TYPE_CONDITIONAL = 13,
};

enum CUgraphExecUpdateResult : int {
  CU_GRAPH_EXEC_UPDATE_SUCCESS = 0x0,
  CU_GRAPH_EXEC_UPDATE_ERROR = 0x1,
  CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED = 0x2,
  CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED = 0x3,
  CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED = 0x4,
  CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED = 0x5,
  CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED = 0x6,
  CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE = 0x7,
  CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED = 0x8,
};

enum CUgraphInstantiateResult : int {
  CUDA_GRAPH_INSTANTIATE_SUCCESS = 0,
  CUDA_GRAPH_INSTANTIATE_ERROR = 1,
  CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE = 2,
  CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED = 3,
  CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED = 4,
  CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED = 5,
};

enum CUgraphInstantiate_flags : unsigned int {
  CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH = 1,
  CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD = 2,
  CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH = 4,
  CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY = 8,
};

enum CUgraphDebugDot_flags : unsigned int {
  CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE = 1u << 0,
  CU_GRAPH_DEBUG_DOT_FLAGS_RUNTIME_TYPES = 1u << 1,
  CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_PARAMS = 1u << 2,
  CU_GRAPH_DEBUG_DOT_FLAGS_MEMCPY_NODE_PARAMS = 1u << 3,
  CU_GRAPH_DEBUG_DOT_FLAGS_MEMSET_NODE_PARAMS = 1u << 4,
  CU_GRAPH_DEBUG_DOT_FLAGS_HOST_NODE_PARAMS = 1u << 5,
  CU_GRAPH_DEBUG_DOT_FLAGS_EVENT_NODE_PARAMS = 1u << 6,
  CU_GRAPH_DEBUG_DOT_FLAGS_EXT_SEMAS_SIGNAL_NODE_PARAMS = 1u << 7,
  CU_GRAPH_DEBUG_DOT_FLAGS_EXT_SEMAS_WAIT_NODE_PARAMS = 1u << 8,
  CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_ATTRIBUTES = 1u << 9,
  CU_GRAPH_DEBUG_DOT_FLAGS_HANDLES = 1u << 10,
  CU_GRAPH_DEBUG_DOT_FLAGS_MEM_ALLOC_NODE_PARAMS = 1u << 11,
  CU_GRAPH_DEBUG_DOT_FLAGS_MEM_FREE_NODE_PARAMS = 1u << 12,
  CU_GRAPH_DEBUG_DOT_FLAGS_BATCH_MEM_OP_NODE_PARAMS = 1u << 13,
  CU_GRAPH_DEBUG_DOT_FLAGS_EXTRA_TOPO_INFO = 1u << 14,
  CU_GRAPH_DEBUG_DOT_FLAGS_CONDITIONAL_NODE_PARAMS = 1u << 15,
};

enum CUstreamUpdateCaptureDependencies_flags : unsigned int {
  CU_STREAM_ADD_CAPTURE_DEPENDENCIES = 0x0,
  CU_STREAM_SET_CAPTURE_DEPENDENCIES = 0x1,
};

enum CUuserObject_flags : unsigned int {
  CU_USER_OBJECT_NO_DESTRUCTOR_SYNC = 1,
};

enum CUuserObjectRetain_flags : unsigned int {
  CU_GRAPH_USER_OBJECT_MOVE = 1,
};

enum CUgraphDependencyType : int {
  CU_GRAPH_DEPENDENCY_TYPE_DEFAULT = 0,
  CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC = 1,
};

enum CUgraphChildGraphNodeOwnership : int {
  CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE = 0,
  CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE = 1,
};

enum CUgraphMem_attribute : int {
  CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT = 0,
  CU_GRAPH_MEM_ATTR_USED_MEM_HIGH = 1,
  CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT = 2,
  CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH = 3,
};

enum CUgraphConditionalNodeType : int {
  CU_GRAPH_COND_TYPE_IF = 0,
  CU_GRAPH_COND_TYPE_WHILE = 1,
  CU_GRAPH_COND_TYPE_SWITCH = 2,
};

struct CUDA_KERNEL_NODE_PARAMS_st {  // v1: the plain cuGraph*KernelNode* entry points
  CUfunction func;
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  void** kernelParams;
  void** extra;
};
using CUDA_KERNEL_NODE_PARAMS_v1 = CUDA_KERNEL_NODE_PARAMS_st;

struct CUDA_KERNEL_NODE_PARAMS_v2_st {  // the _v2 entry points (CUDA_KERNEL_NODE_PARAMS)
  CUfunction func;
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  void** kernelParams;
  void** extra;
  CUkernel kern;  // used when func is null
  CUcontext ctx;  // with kern; null: the current context
};
using CUDA_KERNEL_NODE_PARAMS_v2 = CUDA_KERNEL_NODE_PARAMS_v2_st;
using CUDA_KERNEL_NODE_PARAMS = CUDA_KERNEL_NODE_PARAMS_v2_st;

struct CUDA_KERNEL_NODE_PARAMS_v3_st {  // CUgraphNodeParams::kernel
  CUfunction func;
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  void** kernelParams;
  void** extra;
  CUkernel kern;
  CUcontext ctx;
};
using CUDA_KERNEL_NODE_PARAMS_v3 = CUDA_KERNEL_NODE_PARAMS_v3_st;

struct CUDA_MEMSET_NODE_PARAMS_st {
  CUdeviceptr dst;
  std::size_t pitch;
  unsigned int value;
  unsigned int elementSize;
  std::size_t width;
  std::size_t height;
};
using CUDA_MEMSET_NODE_PARAMS_v1 = CUDA_MEMSET_NODE_PARAMS_st;
using CUDA_MEMSET_NODE_PARAMS = CUDA_MEMSET_NODE_PARAMS_st;

struct CUDA_MEMSET_NODE_PARAMS_v2_st {
  CUdeviceptr dst;
  std::size_t pitch;
  unsigned int value;
  unsigned int elementSize;
  std::size_t width;
  std::size_t height;
  CUcontext ctx;
};
using CUDA_MEMSET_NODE_PARAMS_v2 = CUDA_MEMSET_NODE_PARAMS_v2_st;

struct CUDA_HOST_NODE_PARAMS_st {
  CUhostFn fn;
  void* userData;
};
using CUDA_HOST_NODE_PARAMS_v1 = CUDA_HOST_NODE_PARAMS_st;
using CUDA_HOST_NODE_PARAMS = CUDA_HOST_NODE_PARAMS_st;

struct CUDA_HOST_NODE_PARAMS_v2_st {
  CUhostFn fn;
  void* userData;
};
using CUDA_HOST_NODE_PARAMS_v2 = CUDA_HOST_NODE_PARAMS_v2_st;

struct CUDA_MEMCPY_NODE_PARAMS_st {
  int flags;  // must be 0
  int reserved;
  CUcontext copyCtx;
  CUDA_MEMCPY3D copyParams;
};
using CUDA_MEMCPY_NODE_PARAMS = CUDA_MEMCPY_NODE_PARAMS_st;

struct CUDA_MEM_ALLOC_NODE_PARAMS_v1_st {
  CUmemPoolProps poolProps;
  const CUmemAccessDesc* accessDescs;
  std::size_t accessDescCount;
  std::size_t bytesize;
  CUdeviceptr dptr;  // out
};
using CUDA_MEM_ALLOC_NODE_PARAMS_v1 = CUDA_MEM_ALLOC_NODE_PARAMS_v1_st;
using CUDA_MEM_ALLOC_NODE_PARAMS = CUDA_MEM_ALLOC_NODE_PARAMS_v1_st;

struct CUDA_MEM_ALLOC_NODE_PARAMS_v2_st {
  CUmemPoolProps poolProps;
  const CUmemAccessDesc* accessDescs;
  std::size_t accessDescCount;
  std::size_t bytesize;
  CUdeviceptr dptr;
};
using CUDA_MEM_ALLOC_NODE_PARAMS_v2 = CUDA_MEM_ALLOC_NODE_PARAMS_v2_st;

struct CUDA_MEM_FREE_NODE_PARAMS_st {
  CUdeviceptr dptr;
};
using CUDA_MEM_FREE_NODE_PARAMS = CUDA_MEM_FREE_NODE_PARAMS_st;

struct CUDA_CHILD_GRAPH_NODE_PARAMS_st {
  CUgraph graph;
  CUgraphChildGraphNodeOwnership ownership;
};
using CUDA_CHILD_GRAPH_NODE_PARAMS = CUDA_CHILD_GRAPH_NODE_PARAMS_st;

struct CUDA_EVENT_RECORD_NODE_PARAMS_st {
  CUevent event;
};
using CUDA_EVENT_RECORD_NODE_PARAMS = CUDA_EVENT_RECORD_NODE_PARAMS_st;

struct CUDA_EVENT_WAIT_NODE_PARAMS_st {
  CUevent event;
};
using CUDA_EVENT_WAIT_NODE_PARAMS = CUDA_EVENT_WAIT_NODE_PARAMS_st;

struct CUDA_CONDITIONAL_NODE_PARAMS {
  CUgraphConditionalHandle handle;
  CUgraphConditionalNodeType type;
  unsigned int size;
  CUgraph* phGraph_out;
  CUcontext ctx;
};

// cuGraphAddNode / cuGraphNodeSetParams: 256 bytes, a 232-byte union.
struct CUgraphNodeParams_st {
  CUgraphNodeType type;
  int reserved0[3];
  union {
    long long reserved1[29];
    CUDA_KERNEL_NODE_PARAMS_v3 kernel;
    CUDA_MEMCPY_NODE_PARAMS memcpy;
    CUDA_MEMSET_NODE_PARAMS_v2 memset;
    CUDA_HOST_NODE_PARAMS_v2 host;
    CUDA_CHILD_GRAPH_NODE_PARAMS graph;
    CUDA_EVENT_WAIT_NODE_PARAMS eventWait;
    CUDA_EVENT_RECORD_NODE_PARAMS eventRecord;
    CUDA_MEM_ALLOC_NODE_PARAMS_v2 alloc;
    CUDA_MEM_FREE_NODE_PARAMS free;
    CUDA_CONDITIONAL_NODE_PARAMS conditional;
  };
  long long reserved2;
};
using CUgraphNodeParams = CUgraphNodeParams_st;

struct CUgraphEdgeData_st {
  unsigned char from_port;
  unsigned char to_port;
  unsigned char type;  // CUgraphDependencyType
  unsigned char reserved[5];
};
using CUgraphEdgeData = CUgraphEdgeData_st;

struct CUDA_GRAPH_INSTANTIATE_PARAMS_st {
  cuuint64_t flags;
  CUstream hUploadStream;
  CUgraphNode hErrNode_out;
  CUgraphInstantiateResult result_out;
};
using CUDA_GRAPH_INSTANTIATE_PARAMS = CUDA_GRAPH_INSTANTIATE_PARAMS_st;

struct CUgraphExecUpdateResultInfo_st {
  CUgraphExecUpdateResult result;
  CUgraphNode errorNode;
  CUgraphNode errorFromNode;
};
using CUgraphExecUpdateResultInfo_v1 = CUgraphExecUpdateResultInfo_st;
using CUgraphExecUpdateResultInfo = CUgraphExecUpdateResultInfo_st;

// ===========================================================================
// Layout pins (x86-64 Linux, LP64). A failure here means a field was added,
// dropped or retyped; fix the struct, do not adjust the number.
// ===========================================================================
static_assert(sizeof(void*) == 8 && sizeof(long) == 8, "fgapi layouts are written for LP64 (x86-64 / aarch64 Linux)");

// Enumerations are 4 bytes, like NVIDIA's C enums.
static_assert(sizeof(cudaError_t) == 4 && sizeof(CUresult) == 4);
static_assert(sizeof(cudaDeviceAttr) == 4 && sizeof(CUdevice_attribute) == 4);
static_assert(sizeof(cudaMemcpyKind) == 4 && sizeof(CUmemorytype) == 4);
static_assert(sizeof(cudaLaunchAttributeID) == 4 && sizeof(CUlaunchAttributeID) == 4);

// Scalar handle types.
static_assert(sizeof(CUdevice) == 4);
static_assert(sizeof(CUdeviceptr) == 8);
static_assert(sizeof(CUmemGenericAllocationHandle) == 8);

// Runtime structs.
static_assert(sizeof(dim3) == 12);
static_assert(sizeof(cudaUUID_t) == 16);
static_assert(sizeof(cudaDeviceProp) == 1008);
static_assert(offsetof(cudaDeviceProp, multiProcessorCount) == 384);
static_assert(offsetof(cudaDeviceProp, pciBusID) == 568);
static_assert(offsetof(cudaDeviceProp, reserved) == 784);
static_assert(sizeof(cudaDeviceProp12) == 1032);
static_assert(offsetof(cudaDeviceProp12, clockRate) == 348);
static_assert(offsetof(cudaDeviceProp12, multiProcessorCount) == 388);
static_assert(offsetof(cudaDeviceProp12, pciBusID) == 584);
static_assert(offsetof(cudaDeviceProp12, memoryClockRate) == 608);
static_assert(offsetof(cudaDeviceProp12, memoryPoolsSupported) == 744);
static_assert(offsetof(cudaDeviceProp12, hostNumaId) == 792);
static_assert(offsetof(cudaDeviceProp12, hostNumaMultinodeIpcSupported) == 804);
static_assert(offsetof(cudaDeviceProp12, reserved) == 808);
static_assert(sizeof(cudaPointerAttributes) == 88);
static_assert(offsetof(cudaPointerAttributes, hostPointer) == 16);
static_assert(sizeof(cudaFuncAttributes) == 144);
static_assert(sizeof(cudaIpcEventHandle_t) == 64);
static_assert(sizeof(cudaIpcMemHandle_t) == 64);
static_assert(sizeof(cudaMemFabricHandle_t) == 64);
static_assert(sizeof(cudaChannelFormatDesc) == 20);
static_assert(sizeof(cudaExtent) == 24);
static_assert(sizeof(cudaPos) == 24);
static_assert(sizeof(cudaPitchedPtr) == 32);
static_assert(sizeof(cudaMemcpy3DParms) == 160);
static_assert(sizeof(cudaMemcpy3DPeerParms) == 168);
static_assert(sizeof(cudaAccessPolicyWindow) == 32);
static_assert(sizeof(cudaLaunchMemSyncDomainMap) == 2);
static_assert(sizeof(cudaLaunchAttributeValue) == 64);
static_assert(sizeof(cudaLaunchAttribute) == 72);
static_assert(offsetof(cudaLaunchAttribute, val) == 8);
static_assert(sizeof(cudaLaunchConfig_t) == 56);
static_assert(sizeof(cudaMemLocation) == 8);
static_assert(sizeof(cudaMemAccessDesc) == 12);
static_assert(sizeof(cudaMemPoolProps) == 88);
static_assert(sizeof(cudaMemPoolPtrExportData) == 64);
static_assert(sizeof(cudaResourceDesc) == 144 && offsetof(cudaResourceDesc, res.linear.sizeInBytes) == 40);
static_assert(sizeof(cudaTextureDesc) == 72 && sizeof(cudaResourceViewDesc) == 112);

// Driver structs.
static_assert(sizeof(CUuuid) == 16);
static_assert(sizeof(CUipcEventHandle) == 64);
static_assert(sizeof(CUipcMemHandle) == 64);
static_assert(sizeof(CUmemFabricHandle) == 64);
static_assert(sizeof(CUdevprop) == 56);
static_assert(sizeof(CUexecAffinitySmCount) == 4);
static_assert(sizeof(CUexecAffinityParam) == 8);
static_assert(sizeof(CUctxCigParam) == 16);
static_assert(sizeof(CUctxCreateParams) == 24);
static_assert(offsetof(CUctxCreateParams, cigParams) == 16);
static_assert(sizeof(CUDA_MEMCPY2D) == 128);
static_assert(sizeof(CUDA_MEMCPY3D) == 200);
static_assert(sizeof(CUDA_LAUNCH_PARAMS) == 56);
static_assert(sizeof(CUDA_ARRAY_DESCRIPTOR) == 24 && sizeof(CUDA_ARRAY3D_DESCRIPTOR) == 40);
static_assert(sizeof(CUDA_RESOURCE_DESC) == 144 && offsetof(CUDA_RESOURCE_DESC, flags) == 136);
static_assert(sizeof(CUDA_TEXTURE_DESC) == 104 && offsetof(CUDA_TEXTURE_DESC, borderColor) == 40);
static_assert(sizeof(CUDA_RESOURCE_VIEW_DESC) == 112);
static_assert(sizeof(CUaccessPolicyWindow) == 32);
static_assert(sizeof(CUlaunchMemSyncDomainMap) == 2);
static_assert(sizeof(CUlaunchAttributeValue) == 64);
static_assert(sizeof(CUlaunchAttribute) == 72);
static_assert(offsetof(CUlaunchAttribute, value) == 8);
static_assert(sizeof(CUlaunchConfig) == 56);
static_assert(offsetof(CUlaunchConfig, hStream) == 32);
static_assert(sizeof(CUmemLocation) == 8);
static_assert(sizeof(CUmemAllocationProp) == 32);
static_assert(sizeof(CUmemAccessDesc) == 12);
static_assert(sizeof(CUmemPoolProps) == 88);
static_assert(sizeof(CUmemPoolPtrExportData) == 64);

// Graph structs.
static_assert(sizeof(cudaKernelNodeParams) == 56 && sizeof(cudaKernelNodeParamsV2) == 56);
static_assert(sizeof(cudaMemsetParams) == 40 && sizeof(cudaHostNodeParams) == 16);
static_assert(sizeof(cudaMemcpyNodeParams) == 176);
static_assert(sizeof(cudaMemAllocNodeParams) == 120);
static_assert(sizeof(cudaGraphNodeParams) == 256);
static_assert(sizeof(cudaGraphEdgeData) == 8);
static_assert(sizeof(cudaGraphInstantiateParams) == 32);
static_assert(sizeof(cudaGraphExecUpdateResultInfo) == 24);
static_assert(sizeof(CUDA_KERNEL_NODE_PARAMS_v1) == 56 && sizeof(CUDA_KERNEL_NODE_PARAMS_v2) == 72);
static_assert(sizeof(CUDA_MEMSET_NODE_PARAMS_v1) == 40 && sizeof(CUDA_MEMSET_NODE_PARAMS_v2) == 48);
static_assert(sizeof(CUDA_MEMCPY_NODE_PARAMS) == 216);
static_assert(sizeof(CUDA_MEM_ALLOC_NODE_PARAMS) == 120);
static_assert(sizeof(CUgraphNodeParams) == 256);
static_assert(sizeof(CUDA_GRAPH_INSTANTIATE_PARAMS) == 32);
static_assert(sizeof(CUgraphExecUpdateResultInfo) == 24);

// Values the backend relies on directly.
static_assert(cudaDevAttrMax == 148 && CU_DEVICE_ATTRIBUTE_MAX == 148);
static_assert(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT == 16 && CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == 75 &&
              CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR == 76);
static_assert(CU_GET_PROC_ADDRESS_DEFAULT == 0 && CU_GET_PROC_ADDRESS_LEGACY_STREAM == 1 &&
              CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM == 2);

// ===========================================================================
// Graphics interop (cudaGL.h, cudaEGL.h, cudaVDPAU.h and the runtime's
// cuda_gl_interop.h / cuda_egl_interop.h / cuda_vdpau_interop.h): only what the
// fake's entry points name. The window-system handles are their own headers' types
// (GLuint/GLenum: unsigned int; EGL handles: void*; VDPAU handles: uint32_t).
// ===========================================================================
using GLuint = unsigned int;
using GLenum = unsigned int;
using EGLint = int32_t;
using EGLImageKHR = void*;
using EGLStreamKHR = void*;
using EGLSyncKHR = void*;
using VdpDevice = uint32_t;
using VdpVideoSurface = uint32_t;
using VdpOutputSurface = uint32_t;
using VdpGetProcAddress = int(uint32_t device, uint32_t function_id, void** function_pointer);

enum CUGLDeviceList {
  CU_GL_DEVICE_LIST_ALL = 0x01,
  CU_GL_DEVICE_LIST_CURRENT_FRAME = 0x02,
  CU_GL_DEVICE_LIST_NEXT_FRAME = 0x03,
};
enum cudaGLDeviceList {
  cudaGLDeviceListAll = 1,
  cudaGLDeviceListCurrentFrame = 2,
  cudaGLDeviceListNextFrame = 3,
};
// CUgraphicsRegisterFlags / cudaGraphicsRegisterFlags: the defined bits.
inline constexpr unsigned CU_GRAPHICS_REGISTER_FLAGS_ALL = 0x1 | 0x2 | 0x4 | 0x8;
// CUgraphicsMapResourceFlags / cudaGraphicsMapFlags: 0 none, 1 read-only, 2 write-discard.
inline constexpr unsigned CU_GRAPHICS_MAP_RESOURCE_FLAGS_MAX = 2;

struct CUeglStreamConnection_st;
using CUeglStreamConnection = CUeglStreamConnection_st*;
// cudaEGL.h: CUeglFrame (MAX_PLANES 3); the enum members are ints.
struct CUeglFrame_st {
  union {
    CUarray pArray[3];
    void* pPitch[3];
  } frame;
  unsigned int width, height, depth, pitch, planeCount, numChannels;
  int frameType;       // CUeglFrameType
  int eglColorFormat;  // CUeglColorFormat
  int cuFormat;        // CUarray_format
};
using CUeglFrame = CUeglFrame_st;
using CUeglFrame_v1 = CUeglFrame_st;
static_assert(sizeof(CUeglFrame) == 64);  // 3 pointers, 9 four-byte fields, padded to 8
// cuda_egl_interop.h: the runtime's frame (CUDA_EGL_MAX_PLANES 3), which
// cudaEGLStreamProducerPresentFrame takes by value. The fake never fills one, so the two
// enumerations are declared without their members. Sizes measured with the 13.0 header.
enum cudaEglFrameType : int;
enum cudaEglColorFormat : int;
struct cudaEglPlaneDesc_st {
  unsigned int width, height, depth, pitch, numChannels;
  cudaChannelFormatDesc channelDesc;
  unsigned int reserved[4];
};
using cudaEglPlaneDesc = cudaEglPlaneDesc_st;
struct cudaEglFrame_st {
  union {
    cudaArray_t pArray[3];
    cudaPitchedPtr pPitch[3];
  } frame;
  cudaEglPlaneDesc planeDesc[3];
  unsigned int planeCount;
  cudaEglFrameType frameType;
  cudaEglColorFormat eglColorFormat;
};
using cudaEglFrame = cudaEglFrame_st;
static_assert(sizeof(cudaEglPlaneDesc) == 56);
static_assert(sizeof(cudaEglFrame) == 280 && offsetof(cudaEglFrame, planeCount) == 264);
using cudaEglStreamConnection = CUeglStreamConnection;

}  // namespace fgapi
