// SPDX-License-Identifier: Apache-2.0
// ABI test: fgapi's own CUDA declarations (fakebackend/include/fakegpu/cuda_types.h)
// against NVIDIA's CUDA 13.0 toolkit headers.
//
// For every struct both sides declare: equal size and alignment, and for every
// field of NVIDIA's struct (nested anonymous members included) equal offset,
// equal size and the same kind of type (same arithmetic type; enum vs enum;
// pointer vs pointer; same array extent). For every enumeration we declare:
// 4 bytes, and every enumerator of NVIDIA's 13.0 enum present with the same
// value (a missing enumerator is a compile error, a wrong value a failure).
// For the #define constants: the same values.
//
// Built only where the toolkit is installed (CMake decides). cudaDeviceProp12
// (the CUDA 12.x layout) has no header here; it is compared with the offsets
// measured in research/api-census.md §2.1 instead.
//
// Include order matters: our header comes first, before the toolkit defines
// macros such as `cudaHostAllocMapped` or `CU_STREAM_LEGACY` that would
// otherwise rewrite `fgapi::cudaHostAllocMapped` into `fgapi::0x02`. The
// values of our constants whose names are toolkit macros are captured into
// fg_ours_<name> variables before the toolkit headers are included.

#include "fakegpu/cuda_types.h"

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

// --- our constants whose names the toolkit #defines -------------------------
// clang-format off
#define FG_MACRO_NAMED_CONSTANTS(X) \
    X(cudaHostAllocDefault) X(cudaHostAllocPortable) X(cudaHostAllocMapped) \
    X(cudaHostAllocWriteCombined) X(cudaHostRegisterDefault) X(cudaHostRegisterPortable) \
    X(cudaHostRegisterMapped) X(cudaHostRegisterIoMemory) X(cudaHostRegisterReadOnly) \
    X(cudaPeerAccessDefault) X(cudaStreamDefault) X(cudaStreamNonBlocking) \
    X(cudaEventDefault) X(cudaEventBlockingSync) X(cudaEventDisableTiming) \
    X(cudaEventInterprocess) X(cudaEventRecordDefault) X(cudaEventRecordExternal) \
    X(cudaEventWaitDefault) X(cudaEventWaitExternal) X(cudaDeviceScheduleAuto) \
    X(cudaDeviceScheduleSpin) X(cudaDeviceScheduleYield) X(cudaDeviceScheduleBlockingSync) \
    X(cudaDeviceBlockingSync) X(cudaDeviceScheduleMask) X(cudaDeviceMapHost) \
    X(cudaDeviceLmemResizeToMax) X(cudaDeviceSyncMemops) X(cudaDeviceMask) \
    X(cudaArrayDefault) X(cudaArrayLayered) X(cudaArraySurfaceLoadStore) X(cudaArrayCubemap) \
    X(cudaArrayTextureGather) X(cudaArrayColorAttachment) X(cudaArraySparse) \
    X(cudaArrayDeferredMapping) X(cudaIpcMemLazyEnablePeerAccess) X(cudaMemAttachGlobal) \
    X(cudaMemAttachHost) X(cudaMemAttachSingle) X(cudaOccupancyDefault) \
    X(cudaOccupancyDisableCachingOverride) X(cudaInitDeviceFlagsAreValid) \
    X(cudaMemPoolCreateUsageHwDecompress) X(cudaCpuDeviceId) X(cudaInvalidDeviceId) \
    X(CUDA_IPC_HANDLE_SIZE) X(cudaStreamLegacy) X(cudaStreamPerThread) \
    X(CU_IPC_HANDLE_SIZE) X(CU_MEMHOSTALLOC_PORTABLE) X(CU_MEMHOSTALLOC_DEVICEMAP) \
    X(CU_MEMHOSTALLOC_WRITECOMBINED) X(CU_MEMHOSTREGISTER_PORTABLE) \
    X(CU_MEMHOSTREGISTER_DEVICEMAP) X(CU_MEMHOSTREGISTER_IOMEMORY) \
    X(CU_MEMHOSTREGISTER_READ_ONLY) X(CU_MEM_CREATE_USAGE_TILE_POOL) \
    X(CU_MEM_CREATE_USAGE_HW_DECOMPRESS) X(CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS) \
    X(CU_DEVICE_CPU) X(CU_DEVICE_INVALID) X(CU_STREAM_LEGACY) X(CU_STREAM_PER_THREAD) \
    X(CU_LAUNCH_PARAM_END_AS_INT) X(CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT) \
    X(CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT) X(CU_LAUNCH_PARAM_END) \
    X(CU_LAUNCH_PARAM_BUFFER_POINTER) X(CU_LAUNCH_PARAM_BUFFER_SIZE) \
    X(CUDA_ARRAY3D_LAYERED) X(CUDA_ARRAY3D_SURFACE_LDST) X(CUDA_ARRAY3D_CUBEMAP) \
    X(CUDA_ARRAY3D_TEXTURE_GATHER) X(CUDA_ARRAY3D_DEPTH_TEXTURE) X(CUDA_ARRAY3D_COLOR_ATTACHMENT) \
    X(CUDA_ARRAY3D_SPARSE) X(CUDA_ARRAY3D_DEFERRED_MAPPING) X(CUDA_ARRAY3D_VIDEO_ENCODE_DECODE) \
    X(CU_TRSF_READ_AS_INTEGER) X(CU_TRSF_NORMALIZED_COORDINATES) X(CU_TRSF_SRGB) \
    X(CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION) X(CU_TRSF_SEAMLESS_CUBEMAP)
// clang-format on

namespace {
#define FG_CAPTURE(name) const auto fg_ours_##name = fgapi::name;
FG_MACRO_NAMED_CONSTANTS(FG_CAPTURE)
#undef FG_CAPTURE
}  // namespace

// --- NVIDIA's headers (from here on their macros are live) ------------------
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>

namespace {

// Integer view of an enumerator, integer constant or sentinel pointer.
template <class T>
long long fg_as_int(T v) {
  if constexpr (std::is_pointer_v<T>) {
    return static_cast<long long>(reinterpret_cast<std::uintptr_t>(v));
  } else {
    return static_cast<long long>(v);
  }
}

// "Same kind of type" for a field pair: identical arithmetic types; enum vs
// enum; pointer vs pointer (pointee types live in different namespaces);
// arrays of equal extent and same-kind elements; class vs class, union vs union.
template <class A, class B>
constexpr bool fg_same_kind() {
  if constexpr (std::is_array_v<A> || std::is_array_v<B>) {
    if constexpr (std::is_array_v<A> && std::is_array_v<B>) {
      return std::extent_v<A> == std::extent_v<B> && fg_same_kind<std::remove_extent_t<A>, std::remove_extent_t<B>>();
    } else {
      return false;
    }
  } else if constexpr (std::is_arithmetic_v<A> || std::is_arithmetic_v<B>) {
    return std::is_same_v<std::remove_cv_t<A>, std::remove_cv_t<B>>;
  } else if constexpr (std::is_enum_v<A> || std::is_enum_v<B>) {
    return std::is_enum_v<A> && std::is_enum_v<B>;
  } else if constexpr (std::is_pointer_v<A> || std::is_pointer_v<B>) {
    return std::is_pointer_v<A> && std::is_pointer_v<B> &&
           std::is_const_v<std::remove_pointer_t<A>> == std::is_const_v<std::remove_pointer_t<B>>;
  } else {
    return std::is_class_v<A> == std::is_class_v<B> && std::is_union_v<A> == std::is_union_v<B>;
  }
}

}  // namespace

// ===========================================================================
// Enumerator lists: every enumerator of NVIDIA's CUDA 13.0 enum.
// ===========================================================================
// clang-format off
#define FG_ENUMERATORS_cudaError_t(X) \
    X(cudaSuccess) X(cudaErrorInvalidValue) X(cudaErrorMemoryAllocation) \
    X(cudaErrorInitializationError) X(cudaErrorCudartUnloading) X(cudaErrorProfilerDisabled) \
    X(cudaErrorProfilerNotInitialized) X(cudaErrorProfilerAlreadyStarted) \
    X(cudaErrorProfilerAlreadyStopped) X(cudaErrorInvalidConfiguration) \
    X(cudaErrorInvalidPitchValue) X(cudaErrorInvalidSymbol) X(cudaErrorInvalidHostPointer) \
    X(cudaErrorInvalidDevicePointer) X(cudaErrorInvalidTexture) X(cudaErrorInvalidTextureBinding) \
    X(cudaErrorInvalidChannelDescriptor) X(cudaErrorInvalidMemcpyDirection) \
    X(cudaErrorAddressOfConstant) X(cudaErrorTextureFetchFailed) X(cudaErrorTextureNotBound) \
    X(cudaErrorSynchronizationError) X(cudaErrorInvalidFilterSetting) \
    X(cudaErrorInvalidNormSetting) X(cudaErrorMixedDeviceExecution) X(cudaErrorNotYetImplemented) \
    X(cudaErrorMemoryValueTooLarge) X(cudaErrorStubLibrary) X(cudaErrorInsufficientDriver) \
    X(cudaErrorCallRequiresNewerDriver) X(cudaErrorInvalidSurface) \
    X(cudaErrorDuplicateVariableName) X(cudaErrorDuplicateTextureName) \
    X(cudaErrorDuplicateSurfaceName) X(cudaErrorDevicesUnavailable) \
    X(cudaErrorIncompatibleDriverContext) X(cudaErrorMissingConfiguration) \
    X(cudaErrorPriorLaunchFailure) X(cudaErrorLaunchMaxDepthExceeded) \
    X(cudaErrorLaunchFileScopedTex) X(cudaErrorLaunchFileScopedSurf) X(cudaErrorSyncDepthExceeded) \
    X(cudaErrorLaunchPendingCountExceeded) X(cudaErrorInvalidDeviceFunction) X(cudaErrorNoDevice) \
    X(cudaErrorInvalidDevice) X(cudaErrorDeviceNotLicensed) \
    X(cudaErrorSoftwareValidityNotEstablished) X(cudaErrorStartupFailure) \
    X(cudaErrorInvalidKernelImage) X(cudaErrorDeviceUninitialized) \
    X(cudaErrorMapBufferObjectFailed) X(cudaErrorUnmapBufferObjectFailed) X(cudaErrorArrayIsMapped) \
    X(cudaErrorAlreadyMapped) X(cudaErrorNoKernelImageForDevice) X(cudaErrorAlreadyAcquired) \
    X(cudaErrorNotMapped) X(cudaErrorNotMappedAsArray) X(cudaErrorNotMappedAsPointer) \
    X(cudaErrorECCUncorrectable) X(cudaErrorUnsupportedLimit) X(cudaErrorDeviceAlreadyInUse) \
    X(cudaErrorPeerAccessUnsupported) X(cudaErrorInvalidPtx) X(cudaErrorInvalidGraphicsContext) \
    X(cudaErrorNvlinkUncorrectable) X(cudaErrorJitCompilerNotFound) \
    X(cudaErrorUnsupportedPtxVersion) X(cudaErrorJitCompilationDisabled) \
    X(cudaErrorUnsupportedExecAffinity) X(cudaErrorUnsupportedDevSideSync) X(cudaErrorContained) \
    X(cudaErrorInvalidSource) X(cudaErrorFileNotFound) X(cudaErrorSharedObjectSymbolNotFound) \
    X(cudaErrorSharedObjectInitFailed) X(cudaErrorOperatingSystem) \
    X(cudaErrorInvalidResourceHandle) X(cudaErrorIllegalState) X(cudaErrorLossyQuery) \
    X(cudaErrorSymbolNotFound) X(cudaErrorNotReady) X(cudaErrorIllegalAddress) \
    X(cudaErrorLaunchOutOfResources) X(cudaErrorLaunchTimeout) \
    X(cudaErrorLaunchIncompatibleTexturing) X(cudaErrorPeerAccessAlreadyEnabled) \
    X(cudaErrorPeerAccessNotEnabled) X(cudaErrorSetOnActiveProcess) X(cudaErrorContextIsDestroyed) \
    X(cudaErrorAssert) X(cudaErrorTooManyPeers) X(cudaErrorHostMemoryAlreadyRegistered) \
    X(cudaErrorHostMemoryNotRegistered) X(cudaErrorHardwareStackError) \
    X(cudaErrorIllegalInstruction) X(cudaErrorMisalignedAddress) X(cudaErrorInvalidAddressSpace) \
    X(cudaErrorInvalidPc) X(cudaErrorLaunchFailure) X(cudaErrorCooperativeLaunchTooLarge) \
    X(cudaErrorTensorMemoryLeak) X(cudaErrorNotPermitted) X(cudaErrorNotSupported) \
    X(cudaErrorSystemNotReady) X(cudaErrorSystemDriverMismatch) \
    X(cudaErrorCompatNotSupportedOnDevice) X(cudaErrorMpsConnectionFailed) \
    X(cudaErrorMpsRpcFailure) X(cudaErrorMpsServerNotReady) X(cudaErrorMpsMaxClientsReached) \
    X(cudaErrorMpsMaxConnectionsReached) X(cudaErrorMpsClientTerminated) \
    X(cudaErrorCdpNotSupported) X(cudaErrorCdpVersionMismatch) X(cudaErrorStreamCaptureUnsupported) \
    X(cudaErrorStreamCaptureInvalidated) X(cudaErrorStreamCaptureMerge) \
    X(cudaErrorStreamCaptureUnmatched) X(cudaErrorStreamCaptureUnjoined) \
    X(cudaErrorStreamCaptureIsolation) X(cudaErrorStreamCaptureImplicit) X(cudaErrorCapturedEvent) \
    X(cudaErrorStreamCaptureWrongThread) X(cudaErrorTimeout) X(cudaErrorGraphExecUpdateFailure) \
    X(cudaErrorExternalDevice) X(cudaErrorInvalidClusterSize) X(cudaErrorFunctionNotLoaded) \
    X(cudaErrorInvalidResourceType) X(cudaErrorInvalidResourceConfiguration) X(cudaErrorUnknown) \
    X(cudaErrorApiFailureBase)

#define FG_ENUMERATORS_cudaMemcpyKind(X) \
    X(cudaMemcpyHostToHost) X(cudaMemcpyHostToDevice) X(cudaMemcpyDeviceToHost) \
    X(cudaMemcpyDeviceToDevice) X(cudaMemcpyDefault)

#define FG_ENUMERATORS_cudaMemoryType(X) \
    X(cudaMemoryTypeUnregistered) X(cudaMemoryTypeHost) X(cudaMemoryTypeDevice) \
    X(cudaMemoryTypeManaged)

#define FG_ENUMERATORS_cudaDeviceAttr(X) \
    X(cudaDevAttrMaxThreadsPerBlock) X(cudaDevAttrMaxBlockDimX) X(cudaDevAttrMaxBlockDimY) \
    X(cudaDevAttrMaxBlockDimZ) X(cudaDevAttrMaxGridDimX) X(cudaDevAttrMaxGridDimY) \
    X(cudaDevAttrMaxGridDimZ) X(cudaDevAttrMaxSharedMemoryPerBlock) \
    X(cudaDevAttrTotalConstantMemory) X(cudaDevAttrWarpSize) X(cudaDevAttrMaxPitch) \
    X(cudaDevAttrMaxRegistersPerBlock) X(cudaDevAttrClockRate) X(cudaDevAttrTextureAlignment) \
    X(cudaDevAttrGpuOverlap) X(cudaDevAttrMultiProcessorCount) X(cudaDevAttrKernelExecTimeout) \
    X(cudaDevAttrIntegrated) X(cudaDevAttrCanMapHostMemory) X(cudaDevAttrComputeMode) \
    X(cudaDevAttrMaxTexture1DWidth) X(cudaDevAttrMaxTexture2DWidth) \
    X(cudaDevAttrMaxTexture2DHeight) X(cudaDevAttrMaxTexture3DWidth) \
    X(cudaDevAttrMaxTexture3DHeight) X(cudaDevAttrMaxTexture3DDepth) \
    X(cudaDevAttrMaxTexture2DLayeredWidth) X(cudaDevAttrMaxTexture2DLayeredHeight) \
    X(cudaDevAttrMaxTexture2DLayeredLayers) X(cudaDevAttrSurfaceAlignment) \
    X(cudaDevAttrConcurrentKernels) X(cudaDevAttrEccEnabled) X(cudaDevAttrPciBusId) \
    X(cudaDevAttrPciDeviceId) X(cudaDevAttrTccDriver) X(cudaDevAttrMemoryClockRate) \
    X(cudaDevAttrGlobalMemoryBusWidth) X(cudaDevAttrL2CacheSize) \
    X(cudaDevAttrMaxThreadsPerMultiProcessor) X(cudaDevAttrAsyncEngineCount) \
    X(cudaDevAttrUnifiedAddressing) X(cudaDevAttrMaxTexture1DLayeredWidth) \
    X(cudaDevAttrMaxTexture1DLayeredLayers) X(cudaDevAttrMaxTexture2DGatherWidth) \
    X(cudaDevAttrMaxTexture2DGatherHeight) X(cudaDevAttrMaxTexture3DWidthAlt) \
    X(cudaDevAttrMaxTexture3DHeightAlt) X(cudaDevAttrMaxTexture3DDepthAlt) \
    X(cudaDevAttrPciDomainId) X(cudaDevAttrTexturePitchAlignment) \
    X(cudaDevAttrMaxTextureCubemapWidth) X(cudaDevAttrMaxTextureCubemapLayeredWidth) \
    X(cudaDevAttrMaxTextureCubemapLayeredLayers) X(cudaDevAttrMaxSurface1DWidth) \
    X(cudaDevAttrMaxSurface2DWidth) X(cudaDevAttrMaxSurface2DHeight) \
    X(cudaDevAttrMaxSurface3DWidth) X(cudaDevAttrMaxSurface3DHeight) \
    X(cudaDevAttrMaxSurface3DDepth) X(cudaDevAttrMaxSurface1DLayeredWidth) \
    X(cudaDevAttrMaxSurface1DLayeredLayers) X(cudaDevAttrMaxSurface2DLayeredWidth) \
    X(cudaDevAttrMaxSurface2DLayeredHeight) X(cudaDevAttrMaxSurface2DLayeredLayers) \
    X(cudaDevAttrMaxSurfaceCubemapWidth) X(cudaDevAttrMaxSurfaceCubemapLayeredWidth) \
    X(cudaDevAttrMaxSurfaceCubemapLayeredLayers) X(cudaDevAttrMaxTexture1DLinearWidth) \
    X(cudaDevAttrMaxTexture2DLinearWidth) X(cudaDevAttrMaxTexture2DLinearHeight) \
    X(cudaDevAttrMaxTexture2DLinearPitch) X(cudaDevAttrMaxTexture2DMipmappedWidth) \
    X(cudaDevAttrMaxTexture2DMipmappedHeight) X(cudaDevAttrComputeCapabilityMajor) \
    X(cudaDevAttrComputeCapabilityMinor) X(cudaDevAttrMaxTexture1DMipmappedWidth) \
    X(cudaDevAttrStreamPrioritiesSupported) X(cudaDevAttrGlobalL1CacheSupported) \
    X(cudaDevAttrLocalL1CacheSupported) X(cudaDevAttrMaxSharedMemoryPerMultiprocessor) \
    X(cudaDevAttrMaxRegistersPerMultiprocessor) X(cudaDevAttrManagedMemory) \
    X(cudaDevAttrIsMultiGpuBoard) X(cudaDevAttrMultiGpuBoardGroupID) \
    X(cudaDevAttrHostNativeAtomicSupported) X(cudaDevAttrSingleToDoublePrecisionPerfRatio) \
    X(cudaDevAttrPageableMemoryAccess) X(cudaDevAttrConcurrentManagedAccess) \
    X(cudaDevAttrComputePreemptionSupported) X(cudaDevAttrCanUseHostPointerForRegisteredMem) \
    X(cudaDevAttrReserved92) X(cudaDevAttrReserved93) X(cudaDevAttrReserved94) \
    X(cudaDevAttrCooperativeLaunch) X(cudaDevAttrReserved96) \
    X(cudaDevAttrMaxSharedMemoryPerBlockOptin) X(cudaDevAttrCanFlushRemoteWrites) \
    X(cudaDevAttrHostRegisterSupported) X(cudaDevAttrPageableMemoryAccessUsesHostPageTables) \
    X(cudaDevAttrDirectManagedMemAccessFromHost) X(cudaDevAttrMaxBlocksPerMultiprocessor) \
    X(cudaDevAttrMaxPersistingL2CacheSize) X(cudaDevAttrMaxAccessPolicyWindowSize) \
    X(cudaDevAttrReservedSharedMemoryPerBlock) X(cudaDevAttrSparseCudaArraySupported) \
    X(cudaDevAttrHostRegisterReadOnlySupported) X(cudaDevAttrTimelineSemaphoreInteropSupported) \
    X(cudaDevAttrMemoryPoolsSupported) X(cudaDevAttrGPUDirectRDMASupported) \
    X(cudaDevAttrGPUDirectRDMAFlushWritesOptions) X(cudaDevAttrGPUDirectRDMAWritesOrdering) \
    X(cudaDevAttrMemoryPoolSupportedHandleTypes) X(cudaDevAttrClusterLaunch) \
    X(cudaDevAttrDeferredMappingCudaArraySupported) X(cudaDevAttrReserved122) \
    X(cudaDevAttrReserved123) X(cudaDevAttrReserved124) X(cudaDevAttrIpcEventSupport) \
    X(cudaDevAttrMemSyncDomainCount) X(cudaDevAttrReserved127) X(cudaDevAttrReserved128) \
    X(cudaDevAttrReserved129) X(cudaDevAttrNumaConfig) X(cudaDevAttrNumaId) \
    X(cudaDevAttrReserved132) X(cudaDevAttrMpsEnabled) X(cudaDevAttrHostNumaId) \
    X(cudaDevAttrD3D12CigSupported) X(cudaDevAttrVulkanCigSupported) X(cudaDevAttrGpuPciDeviceId) \
    X(cudaDevAttrGpuPciSubsystemId) X(cudaDevAttrReserved141) \
    X(cudaDevAttrHostNumaMemoryPoolsSupported) X(cudaDevAttrHostNumaMultinodeIpcSupported) \
    X(cudaDevAttrHostMemoryPoolsSupported) X(cudaDevAttrReserved145) \
    X(cudaDevAttrOnlyPartialHostNativeAtomicSupported) X(cudaDevAttrMax)

#define FG_ENUMERATORS_cudaStreamCaptureStatus(X) \
    X(cudaStreamCaptureStatusNone) X(cudaStreamCaptureStatusActive) \
    X(cudaStreamCaptureStatusInvalidated)

#define FG_ENUMERATORS_cudaStreamCaptureMode(X) \
    X(cudaStreamCaptureModeGlobal) X(cudaStreamCaptureModeThreadLocal) \
    X(cudaStreamCaptureModeRelaxed)

#define FG_ENUMERATORS_cudaLimit(X) \
    X(cudaLimitStackSize) X(cudaLimitPrintfFifoSize) X(cudaLimitMallocHeapSize) \
    X(cudaLimitDevRuntimeSyncDepth) X(cudaLimitDevRuntimePendingLaunchCount) \
    X(cudaLimitMaxL2FetchGranularity) X(cudaLimitPersistingL2CacheSize)

#define FG_ENUMERATORS_cudaFuncCache(X) \
    X(cudaFuncCachePreferNone) X(cudaFuncCachePreferShared) X(cudaFuncCachePreferL1) \
    X(cudaFuncCachePreferEqual)

#define FG_ENUMERATORS_cudaSharedMemConfig(X) \
    X(cudaSharedMemBankSizeDefault) X(cudaSharedMemBankSizeFourByte) \
    X(cudaSharedMemBankSizeEightByte)

#define FG_ENUMERATORS_cudaSharedCarveout(X) \
    X(cudaSharedmemCarveoutDefault) X(cudaSharedmemCarveoutMaxShared) X(cudaSharedmemCarveoutMaxL1)

#define FG_ENUMERATORS_cudaComputeMode(X) \
    X(cudaComputeModeDefault) X(cudaComputeModeExclusive) X(cudaComputeModeProhibited) \
    X(cudaComputeModeExclusiveProcess)

#define FG_ENUMERATORS_cudaFuncAttribute(X) \
    X(cudaFuncAttributeMaxDynamicSharedMemorySize) \
    X(cudaFuncAttributePreferredSharedMemoryCarveout) X(cudaFuncAttributeClusterDimMustBeSet) \
    X(cudaFuncAttributeRequiredClusterWidth) X(cudaFuncAttributeRequiredClusterHeight) \
    X(cudaFuncAttributeRequiredClusterDepth) X(cudaFuncAttributeNonPortableClusterSizeAllowed) \
    X(cudaFuncAttributeClusterSchedulingPolicyPreference) X(cudaFuncAttributeMax)

#define FG_ENUMERATORS_cudaMemPoolAttr(X) \
    X(cudaMemPoolReuseFollowEventDependencies) X(cudaMemPoolReuseAllowOpportunistic) \
    X(cudaMemPoolReuseAllowInternalDependencies) X(cudaMemPoolAttrReleaseThreshold) \
    X(cudaMemPoolAttrReservedMemCurrent) X(cudaMemPoolAttrReservedMemHigh) \
    X(cudaMemPoolAttrUsedMemCurrent) X(cudaMemPoolAttrUsedMemHigh)

#define FG_ENUMERATORS_cudaMemAllocationType(X) \
    X(cudaMemAllocationTypeInvalid) X(cudaMemAllocationTypePinned) X(cudaMemAllocationTypeManaged) \
    X(cudaMemAllocationTypeMax)

#define FG_ENUMERATORS_cudaMemAllocationHandleType(X) \
    X(cudaMemHandleTypeNone) X(cudaMemHandleTypePosixFileDescriptor) X(cudaMemHandleTypeWin32) \
    X(cudaMemHandleTypeWin32Kmt) X(cudaMemHandleTypeFabric)

#define FG_ENUMERATORS_cudaMemLocationType(X) \
    X(cudaMemLocationTypeInvalid) X(cudaMemLocationTypeNone) X(cudaMemLocationTypeDevice) \
    X(cudaMemLocationTypeHost) X(cudaMemLocationTypeHostNuma) X(cudaMemLocationTypeHostNumaCurrent)

#define FG_ENUMERATORS_cudaMemAccessFlags(X) \
    X(cudaMemAccessFlagsProtNone) X(cudaMemAccessFlagsProtRead) X(cudaMemAccessFlagsProtReadWrite)

#define FG_ENUMERATORS_cudaMemoryAdvise(X) \
    X(cudaMemAdviseSetReadMostly) X(cudaMemAdviseUnsetReadMostly) \
    X(cudaMemAdviseSetPreferredLocation) X(cudaMemAdviseUnsetPreferredLocation) \
    X(cudaMemAdviseSetAccessedBy) X(cudaMemAdviseUnsetAccessedBy)

#define FG_ENUMERATORS_cudaMemRangeAttribute(X) \
    X(cudaMemRangeAttributeReadMostly) X(cudaMemRangeAttributePreferredLocation) \
    X(cudaMemRangeAttributeAccessedBy) X(cudaMemRangeAttributeLastPrefetchLocation) \
    X(cudaMemRangeAttributePreferredLocationType) X(cudaMemRangeAttributePreferredLocationId) \
    X(cudaMemRangeAttributeLastPrefetchLocationType) X(cudaMemRangeAttributeLastPrefetchLocationId)

#define FG_ENUMERATORS_cudaDeviceP2PAttr(X) \
    X(cudaDevP2PAttrPerformanceRank) X(cudaDevP2PAttrAccessSupported) \
    X(cudaDevP2PAttrNativeAtomicSupported) X(cudaDevP2PAttrCudaArrayAccessSupported) \
    X(cudaDevP2PAttrOnlyPartialNativeAtomicSupported)

#define FG_ENUMERATORS_cudaDeviceNumaConfig(X) \
    X(cudaDeviceNumaConfigNone) X(cudaDeviceNumaConfigNumaNode)

#define FG_ENUMERATORS_cudaFlushGPUDirectRDMAWritesOptions(X) \
    X(cudaFlushGPUDirectRDMAWritesOptionHost) X(cudaFlushGPUDirectRDMAWritesOptionMemOps)

#define FG_ENUMERATORS_cudaGPUDirectRDMAWritesOrdering(X) \
    X(cudaGPUDirectRDMAWritesOrderingNone) X(cudaGPUDirectRDMAWritesOrderingOwner) \
    X(cudaGPUDirectRDMAWritesOrderingAllDevices)

#define FG_ENUMERATORS_cudaFlushGPUDirectRDMAWritesScope(X) \
    X(cudaFlushGPUDirectRDMAWritesToOwner) X(cudaFlushGPUDirectRDMAWritesToAllDevices)
// clang-format on

#define FG_ENUMERATORS_cudaFlushGPUDirectRDMAWritesTarget(X) X(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice)

// clang-format off
#define FG_ENUMERATORS_cudaGetDriverEntryPointFlags(X) \
    X(cudaEnableDefault) X(cudaEnableLegacyStream) X(cudaEnablePerThreadDefaultStream)

#define FG_ENUMERATORS_cudaDriverEntryPointQueryResult(X) \
    X(cudaDriverEntryPointSuccess) X(cudaDriverEntryPointSymbolNotFound) \
    X(cudaDriverEntryPointVersionNotSufficent)

#define FG_ENUMERATORS_cudaChannelFormatKind(X) \
    X(cudaChannelFormatKindSigned) X(cudaChannelFormatKindUnsigned) X(cudaChannelFormatKindFloat) \
    X(cudaChannelFormatKindNone) X(cudaChannelFormatKindNV12) \
    X(cudaChannelFormatKindUnsignedNormalized8X1) X(cudaChannelFormatKindUnsignedNormalized8X2) \
    X(cudaChannelFormatKindUnsignedNormalized8X4) X(cudaChannelFormatKindUnsignedNormalized16X1) \
    X(cudaChannelFormatKindUnsignedNormalized16X2) X(cudaChannelFormatKindUnsignedNormalized16X4) \
    X(cudaChannelFormatKindSignedNormalized8X1) X(cudaChannelFormatKindSignedNormalized8X2) \
    X(cudaChannelFormatKindSignedNormalized8X4) X(cudaChannelFormatKindSignedNormalized16X1) \
    X(cudaChannelFormatKindSignedNormalized16X2) X(cudaChannelFormatKindSignedNormalized16X4) \
    X(cudaChannelFormatKindUnsignedBlockCompressed1) \
    X(cudaChannelFormatKindUnsignedBlockCompressed1SRGB) \
    X(cudaChannelFormatKindUnsignedBlockCompressed2) \
    X(cudaChannelFormatKindUnsignedBlockCompressed2SRGB) \
    X(cudaChannelFormatKindUnsignedBlockCompressed3) \
    X(cudaChannelFormatKindUnsignedBlockCompressed3SRGB) \
    X(cudaChannelFormatKindUnsignedBlockCompressed4) X(cudaChannelFormatKindSignedBlockCompressed4) \
    X(cudaChannelFormatKindUnsignedBlockCompressed5) X(cudaChannelFormatKindSignedBlockCompressed5) \
    X(cudaChannelFormatKindUnsignedBlockCompressed6H) \
    X(cudaChannelFormatKindSignedBlockCompressed6H) \
    X(cudaChannelFormatKindUnsignedBlockCompressed7) \
    X(cudaChannelFormatKindUnsignedBlockCompressed7SRGB) \
    X(cudaChannelFormatKindUnsignedNormalized1010102)

#define FG_ENUMERATORS_cudaAccessProperty(X) \
    X(cudaAccessPropertyNormal) X(cudaAccessPropertyStreaming) X(cudaAccessPropertyPersisting)

#define FG_ENUMERATORS_cudaSynchronizationPolicy(X) \
    X(cudaSyncPolicyAuto) X(cudaSyncPolicySpin) X(cudaSyncPolicyYield) \
    X(cudaSyncPolicyBlockingSync)

#define FG_ENUMERATORS_cudaClusterSchedulingPolicy(X) \
    X(cudaClusterSchedulingPolicyDefault) X(cudaClusterSchedulingPolicySpread) \
    X(cudaClusterSchedulingPolicyLoadBalancing)

#define FG_ENUMERATORS_cudaLaunchMemSyncDomain(X) \
    X(cudaLaunchMemSyncDomainDefault) X(cudaLaunchMemSyncDomainRemote)

#define FG_ENUMERATORS_cudaLaunchAttributeID(X) \
    X(cudaLaunchAttributeIgnore) X(cudaLaunchAttributeAccessPolicyWindow) \
    X(cudaLaunchAttributeCooperative) X(cudaLaunchAttributeSynchronizationPolicy) \
    X(cudaLaunchAttributeClusterDimension) X(cudaLaunchAttributeClusterSchedulingPolicyPreference) \
    X(cudaLaunchAttributeProgrammaticStreamSerialization) X(cudaLaunchAttributeProgrammaticEvent) \
    X(cudaLaunchAttributePriority) X(cudaLaunchAttributeMemSyncDomainMap) \
    X(cudaLaunchAttributeMemSyncDomain) X(cudaLaunchAttributePreferredClusterDimension) \
    X(cudaLaunchAttributeLaunchCompletionEvent) X(cudaLaunchAttributeDeviceUpdatableKernelNode) \
    X(cudaLaunchAttributePreferredSharedMemoryCarveout) \
    X(cudaLaunchAttributeNvlinkUtilCentricScheduling)

#define FG_ENUMERATORS_CUresult(X) \
    X(CUDA_SUCCESS) X(CUDA_ERROR_INVALID_VALUE) X(CUDA_ERROR_OUT_OF_MEMORY) \
    X(CUDA_ERROR_NOT_INITIALIZED) X(CUDA_ERROR_DEINITIALIZED) X(CUDA_ERROR_PROFILER_DISABLED) \
    X(CUDA_ERROR_PROFILER_NOT_INITIALIZED) X(CUDA_ERROR_PROFILER_ALREADY_STARTED) \
    X(CUDA_ERROR_PROFILER_ALREADY_STOPPED) X(CUDA_ERROR_STUB_LIBRARY) \
    X(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER) X(CUDA_ERROR_DEVICE_UNAVAILABLE) \
    X(CUDA_ERROR_NO_DEVICE) X(CUDA_ERROR_INVALID_DEVICE) X(CUDA_ERROR_DEVICE_NOT_LICENSED) \
    X(CUDA_ERROR_INVALID_IMAGE) X(CUDA_ERROR_INVALID_CONTEXT) X(CUDA_ERROR_CONTEXT_ALREADY_CURRENT) \
    X(CUDA_ERROR_MAP_FAILED) X(CUDA_ERROR_UNMAP_FAILED) X(CUDA_ERROR_ARRAY_IS_MAPPED) \
    X(CUDA_ERROR_ALREADY_MAPPED) X(CUDA_ERROR_NO_BINARY_FOR_GPU) X(CUDA_ERROR_ALREADY_ACQUIRED) \
    X(CUDA_ERROR_NOT_MAPPED) X(CUDA_ERROR_NOT_MAPPED_AS_ARRAY) X(CUDA_ERROR_NOT_MAPPED_AS_POINTER) \
    X(CUDA_ERROR_ECC_UNCORRECTABLE) X(CUDA_ERROR_UNSUPPORTED_LIMIT) \
    X(CUDA_ERROR_CONTEXT_ALREADY_IN_USE) X(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED) \
    X(CUDA_ERROR_INVALID_PTX) X(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT) \
    X(CUDA_ERROR_NVLINK_UNCORRECTABLE) X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND) \
    X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION) X(CUDA_ERROR_JIT_COMPILATION_DISABLED) \
    X(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY) X(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC) \
    X(CUDA_ERROR_CONTAINED) X(CUDA_ERROR_INVALID_SOURCE) X(CUDA_ERROR_FILE_NOT_FOUND) \
    X(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND) X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED) \
    X(CUDA_ERROR_OPERATING_SYSTEM) X(CUDA_ERROR_INVALID_HANDLE) X(CUDA_ERROR_ILLEGAL_STATE) \
    X(CUDA_ERROR_LOSSY_QUERY) X(CUDA_ERROR_NOT_FOUND) X(CUDA_ERROR_NOT_READY) \
    X(CUDA_ERROR_ILLEGAL_ADDRESS) X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) \
    X(CUDA_ERROR_LAUNCH_TIMEOUT) X(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING) \
    X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) X(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED) \
    X(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE) X(CUDA_ERROR_CONTEXT_IS_DESTROYED) X(CUDA_ERROR_ASSERT) \
    X(CUDA_ERROR_TOO_MANY_PEERS) X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) \
    X(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED) X(CUDA_ERROR_HARDWARE_STACK_ERROR) \
    X(CUDA_ERROR_ILLEGAL_INSTRUCTION) X(CUDA_ERROR_MISALIGNED_ADDRESS) \
    X(CUDA_ERROR_INVALID_ADDRESS_SPACE) X(CUDA_ERROR_INVALID_PC) X(CUDA_ERROR_LAUNCH_FAILED) \
    X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) X(CUDA_ERROR_TENSOR_MEMORY_LEAK) \
    X(CUDA_ERROR_NOT_PERMITTED) X(CUDA_ERROR_NOT_SUPPORTED) X(CUDA_ERROR_SYSTEM_NOT_READY) \
    X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) \
    X(CUDA_ERROR_MPS_CONNECTION_FAILED) X(CUDA_ERROR_MPS_RPC_FAILURE) \
    X(CUDA_ERROR_MPS_SERVER_NOT_READY) X(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED) \
    X(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED) X(CUDA_ERROR_MPS_CLIENT_TERMINATED) \
    X(CUDA_ERROR_CDP_NOT_SUPPORTED) X(CUDA_ERROR_CDP_VERSION_MISMATCH) \
    X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) \
    X(CUDA_ERROR_STREAM_CAPTURE_MERGE) X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED) \
    X(CUDA_ERROR_STREAM_CAPTURE_UNJOINED) X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION) \
    X(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) X(CUDA_ERROR_CAPTURED_EVENT) \
    X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD) X(CUDA_ERROR_TIMEOUT) \
    X(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) X(CUDA_ERROR_EXTERNAL_DEVICE) \
    X(CUDA_ERROR_INVALID_CLUSTER_SIZE) X(CUDA_ERROR_FUNCTION_NOT_LOADED) \
    X(CUDA_ERROR_INVALID_RESOURCE_TYPE) X(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION) \
    X(CUDA_ERROR_KEY_ROTATION) X(CUDA_ERROR_UNKNOWN)

#define FG_ENUMERATORS_CUdevice_attribute(X) \
    X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK) X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X) \
    X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y) X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z) \
    X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X) X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y) \
    X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z) X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK) \
    X(CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK) X(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY) \
    X(CU_DEVICE_ATTRIBUTE_WARP_SIZE) X(CU_DEVICE_ATTRIBUTE_MAX_PITCH) \
    X(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK) X(CU_DEVICE_ATTRIBUTE_REGISTERS_PER_BLOCK) \
    X(CU_DEVICE_ATTRIBUTE_CLOCK_RATE) X(CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT) \
    X(CU_DEVICE_ATTRIBUTE_GPU_OVERLAP) X(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) \
    X(CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT) X(CU_DEVICE_ATTRIBUTE_INTEGRATED) \
    X(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY) X(CU_DEVICE_ATTRIBUTE_COMPUTE_MODE) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH) X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT) X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT) X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_HEIGHT) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_NUMSLICES) \
    X(CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT) X(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS) \
    X(CU_DEVICE_ATTRIBUTE_ECC_ENABLED) X(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID) \
    X(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID) X(CU_DEVICE_ATTRIBUTE_TCC_DRIVER) \
    X(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) X(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE) X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR) \
    X(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT) X(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS) X(CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE) X(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID) \
    X(CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH) X(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT) X(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT) X(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT) \
    X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) \
    X(CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH) \
    X(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR) \
    X(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR) X(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) \
    X(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD) X(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID) \
    X(CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO) \
    X(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS) X(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) \
    X(CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM) \
    X(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1) \
    X(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1) \
    X(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1) \
    X(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH) \
    X(CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH) \
    X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN) \
    X(CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES) X(CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES) \
    X(CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST) \
    X(CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR) \
    X(CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE) \
    X(CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE) \
    X(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK) \
    X(CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) X(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS) \
    X(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING) \
    X(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES) X(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH) \
    X(CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS) \
    X(CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR) X(CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED) X(CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT) \
    X(CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS) X(CU_DEVICE_ATTRIBUTE_NUMA_CONFIG) \
    X(CU_DEVICE_ATTRIBUTE_NUMA_ID) X(CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_MPS_ENABLED) X(CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID) \
    X(CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED) X(CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK) \
    X(CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH) \
    X(CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED) X(CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID) \
    X(CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID) \
    X(CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED) \
    X(CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED) X(CU_DEVICE_ATTRIBUTE_MAX)

#define FG_ENUMERATORS_CUpointer_attribute(X) \
    X(CU_POINTER_ATTRIBUTE_CONTEXT) X(CU_POINTER_ATTRIBUTE_MEMORY_TYPE) \
    X(CU_POINTER_ATTRIBUTE_DEVICE_POINTER) X(CU_POINTER_ATTRIBUTE_HOST_POINTER) \
    X(CU_POINTER_ATTRIBUTE_P2P_TOKENS) X(CU_POINTER_ATTRIBUTE_SYNC_MEMOPS) \
    X(CU_POINTER_ATTRIBUTE_BUFFER_ID) X(CU_POINTER_ATTRIBUTE_IS_MANAGED) \
    X(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) X(CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE) \
    X(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR) X(CU_POINTER_ATTRIBUTE_RANGE_SIZE) \
    X(CU_POINTER_ATTRIBUTE_MAPPED) X(CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES) \
    X(CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE) X(CU_POINTER_ATTRIBUTE_ACCESS_FLAGS) \
    X(CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE) X(CU_POINTER_ATTRIBUTE_MAPPING_SIZE) \
    X(CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR) X(CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID) \
    X(CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE)

#define FG_ENUMERATORS_CUarray_format(X) \
    X(CU_AD_FORMAT_UNSIGNED_INT8) X(CU_AD_FORMAT_UNSIGNED_INT16) X(CU_AD_FORMAT_UNSIGNED_INT32) \
    X(CU_AD_FORMAT_SIGNED_INT8) X(CU_AD_FORMAT_SIGNED_INT16) X(CU_AD_FORMAT_SIGNED_INT32) \
    X(CU_AD_FORMAT_HALF) X(CU_AD_FORMAT_FLOAT) X(CU_AD_FORMAT_NV12) X(CU_AD_FORMAT_UNORM_INT8X1) \
    X(CU_AD_FORMAT_UNORM_INT8X2) X(CU_AD_FORMAT_UNORM_INT8X4) X(CU_AD_FORMAT_UNORM_INT16X1) \
    X(CU_AD_FORMAT_UNORM_INT16X2) X(CU_AD_FORMAT_UNORM_INT16X4) X(CU_AD_FORMAT_SNORM_INT8X1) \
    X(CU_AD_FORMAT_SNORM_INT8X2) X(CU_AD_FORMAT_SNORM_INT8X4) X(CU_AD_FORMAT_SNORM_INT16X1) \
    X(CU_AD_FORMAT_SNORM_INT16X2) X(CU_AD_FORMAT_SNORM_INT16X4) X(CU_AD_FORMAT_BC1_UNORM) \
    X(CU_AD_FORMAT_BC1_UNORM_SRGB) X(CU_AD_FORMAT_BC2_UNORM) X(CU_AD_FORMAT_BC2_UNORM_SRGB) \
    X(CU_AD_FORMAT_BC3_UNORM) X(CU_AD_FORMAT_BC3_UNORM_SRGB) X(CU_AD_FORMAT_BC4_UNORM) \
    X(CU_AD_FORMAT_BC4_SNORM) X(CU_AD_FORMAT_BC5_UNORM) X(CU_AD_FORMAT_BC5_SNORM) \
    X(CU_AD_FORMAT_BC6H_UF16) X(CU_AD_FORMAT_BC6H_SF16) X(CU_AD_FORMAT_BC7_UNORM) \
    X(CU_AD_FORMAT_BC7_UNORM_SRGB) X(CU_AD_FORMAT_P010) X(CU_AD_FORMAT_P016) X(CU_AD_FORMAT_NV16) \
    X(CU_AD_FORMAT_P210) X(CU_AD_FORMAT_P216) X(CU_AD_FORMAT_YUY2) X(CU_AD_FORMAT_Y210) \
    X(CU_AD_FORMAT_Y216) X(CU_AD_FORMAT_AYUV) X(CU_AD_FORMAT_Y410) X(CU_AD_FORMAT_Y416) \
    X(CU_AD_FORMAT_Y444_PLANAR8) X(CU_AD_FORMAT_Y444_PLANAR10) \
    X(CU_AD_FORMAT_YUV444_8bit_SemiPlanar) X(CU_AD_FORMAT_YUV444_16bit_SemiPlanar) \
    X(CU_AD_FORMAT_UNORM_INT_101010_2) X(CU_AD_FORMAT_MAX)

#define FG_ENUMERATORS_CUaddress_mode(X) \
    X(CU_TR_ADDRESS_MODE_WRAP) X(CU_TR_ADDRESS_MODE_CLAMP) X(CU_TR_ADDRESS_MODE_MIRROR) \
    X(CU_TR_ADDRESS_MODE_BORDER)

#define FG_ENUMERATORS_CUfilter_mode(X) \
    X(CU_TR_FILTER_MODE_POINT) X(CU_TR_FILTER_MODE_LINEAR)

#define FG_ENUMERATORS_CUresourcetype(X) \
    X(CU_RESOURCE_TYPE_ARRAY) X(CU_RESOURCE_TYPE_MIPMAPPED_ARRAY) X(CU_RESOURCE_TYPE_LINEAR) \
    X(CU_RESOURCE_TYPE_PITCH2D)

#define FG_ENUMERATORS_cudaTextureAddressMode(X) \
    X(cudaAddressModeWrap) X(cudaAddressModeClamp) X(cudaAddressModeMirror) X(cudaAddressModeBorder)

#define FG_ENUMERATORS_cudaTextureFilterMode(X) \
    X(cudaFilterModePoint) X(cudaFilterModeLinear)

#define FG_ENUMERATORS_cudaTextureReadMode(X) \
    X(cudaReadModeElementType) X(cudaReadModeNormalizedFloat)

#define FG_ENUMERATORS_cudaResourceType(X) \
    X(cudaResourceTypeArray) X(cudaResourceTypeMipmappedArray) X(cudaResourceTypeLinear) \
    X(cudaResourceTypePitch2D)

#define FG_ENUMERATORS_CUmemorytype(X) \
    X(CU_MEMORYTYPE_HOST) X(CU_MEMORYTYPE_DEVICE) X(CU_MEMORYTYPE_ARRAY) X(CU_MEMORYTYPE_UNIFIED)

#define FG_ENUMERATORS_CUctx_flags(X) \
    X(CU_CTX_SCHED_AUTO) X(CU_CTX_SCHED_SPIN) X(CU_CTX_SCHED_YIELD) X(CU_CTX_SCHED_BLOCKING_SYNC) \
    X(CU_CTX_BLOCKING_SYNC) X(CU_CTX_SCHED_MASK) X(CU_CTX_MAP_HOST) X(CU_CTX_LMEM_RESIZE_TO_MAX) \
    X(CU_CTX_COREDUMP_ENABLE) X(CU_CTX_USER_COREDUMP_ENABLE) X(CU_CTX_SYNC_MEMOPS) \
    X(CU_CTX_FLAGS_MASK)

#define FG_ENUMERATORS_CUstream_flags(X) \
    X(CU_STREAM_DEFAULT) X(CU_STREAM_NON_BLOCKING)

#define FG_ENUMERATORS_CUevent_flags(X) \
    X(CU_EVENT_DEFAULT) X(CU_EVENT_BLOCKING_SYNC) X(CU_EVENT_DISABLE_TIMING) \
    X(CU_EVENT_INTERPROCESS)

#define FG_ENUMERATORS_CUevent_record_flags(X) \
    X(CU_EVENT_RECORD_DEFAULT) X(CU_EVENT_RECORD_EXTERNAL)

#define FG_ENUMERATORS_CUevent_wait_flags(X) \
    X(CU_EVENT_WAIT_DEFAULT) X(CU_EVENT_WAIT_EXTERNAL)

#define FG_ENUMERATORS_CUfunction_attribute(X) \
    X(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) X(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) \
    X(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES) X(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES) \
    X(CU_FUNC_ATTRIBUTE_NUM_REGS) X(CU_FUNC_ATTRIBUTE_PTX_VERSION) \
    X(CU_FUNC_ATTRIBUTE_BINARY_VERSION) X(CU_FUNC_ATTRIBUTE_CACHE_MODE_CA) \
    X(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) \
    X(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) \
    X(CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET) X(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH) \
    X(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT) X(CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH) \
    X(CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) \
    X(CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE) X(CU_FUNC_ATTRIBUTE_MAX)

#define FG_ENUMERATORS_CUfunc_cache(X) \
    X(CU_FUNC_CACHE_PREFER_NONE) X(CU_FUNC_CACHE_PREFER_SHARED) X(CU_FUNC_CACHE_PREFER_L1) \
    X(CU_FUNC_CACHE_PREFER_EQUAL)

#define FG_ENUMERATORS_CUsharedconfig(X) \
    X(CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE) X(CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE) \
    X(CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE)

#define FG_ENUMERATORS_CUshared_carveout(X) \
    X(CU_SHAREDMEM_CARVEOUT_DEFAULT) X(CU_SHAREDMEM_CARVEOUT_MAX_SHARED) \
    X(CU_SHAREDMEM_CARVEOUT_MAX_L1)

#define FG_ENUMERATORS_CUcomputemode(X) \
    X(CU_COMPUTEMODE_DEFAULT) X(CU_COMPUTEMODE_PROHIBITED) X(CU_COMPUTEMODE_EXCLUSIVE_PROCESS)

#define FG_ENUMERATORS_CUjit_option(X) \
    X(CU_JIT_MAX_REGISTERS) X(CU_JIT_THREADS_PER_BLOCK) X(CU_JIT_WALL_TIME) \
    X(CU_JIT_INFO_LOG_BUFFER) X(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES) X(CU_JIT_ERROR_LOG_BUFFER) \
    X(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) X(CU_JIT_OPTIMIZATION_LEVEL) \
    X(CU_JIT_TARGET_FROM_CUCONTEXT) X(CU_JIT_TARGET) X(CU_JIT_FALLBACK_STRATEGY) \
    X(CU_JIT_GENERATE_DEBUG_INFO) X(CU_JIT_LOG_VERBOSE) X(CU_JIT_GENERATE_LINE_INFO) \
    X(CU_JIT_CACHE_MODE) X(CU_JIT_NEW_SM3X_OPT) X(CU_JIT_FAST_COMPILE) \
    X(CU_JIT_GLOBAL_SYMBOL_NAMES) X(CU_JIT_GLOBAL_SYMBOL_ADDRESSES) X(CU_JIT_GLOBAL_SYMBOL_COUNT) \
    X(CU_JIT_LTO) X(CU_JIT_FTZ) X(CU_JIT_PREC_DIV) X(CU_JIT_PREC_SQRT) X(CU_JIT_FMA) \
    X(CU_JIT_REFERENCED_KERNEL_NAMES) X(CU_JIT_REFERENCED_KERNEL_COUNT) \
    X(CU_JIT_REFERENCED_VARIABLE_NAMES) X(CU_JIT_REFERENCED_VARIABLE_COUNT) \
    X(CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES) X(CU_JIT_POSITION_INDEPENDENT_CODE) \
    X(CU_JIT_MIN_CTA_PER_SM) X(CU_JIT_MAX_THREADS_PER_BLOCK) X(CU_JIT_OVERRIDE_DIRECTIVE_VALUES) \
    X(CU_JIT_SPLIT_COMPILE) X(CU_JIT_NUM_OPTIONS)

#define FG_ENUMERATORS_CUjitInputType(X) \
    X(CU_JIT_INPUT_CUBIN) X(CU_JIT_INPUT_PTX) X(CU_JIT_INPUT_FATBINARY) X(CU_JIT_INPUT_OBJECT) \
    X(CU_JIT_INPUT_LIBRARY) X(CU_JIT_INPUT_NVVM) X(CU_JIT_NUM_INPUT_TYPES)

#define FG_ENUMERATORS_CUlimit(X) \
    X(CU_LIMIT_STACK_SIZE) X(CU_LIMIT_PRINTF_FIFO_SIZE) X(CU_LIMIT_MALLOC_HEAP_SIZE) \
    X(CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH) X(CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT) \
    X(CU_LIMIT_MAX_L2_FETCH_GRANULARITY) X(CU_LIMIT_PERSISTING_L2_CACHE_SIZE) \
    X(CU_LIMIT_SHMEM_SIZE) X(CU_LIMIT_CIG_ENABLED) X(CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED) \
    X(CU_LIMIT_MAX)

#define FG_ENUMERATORS_CUmemAllocationType(X) \
    X(CU_MEM_ALLOCATION_TYPE_INVALID) X(CU_MEM_ALLOCATION_TYPE_PINNED) \
    X(CU_MEM_ALLOCATION_TYPE_MANAGED) X(CU_MEM_ALLOCATION_TYPE_MAX)

#define FG_ENUMERATORS_CUmemAllocationHandleType(X) \
    X(CU_MEM_HANDLE_TYPE_NONE) X(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) \
    X(CU_MEM_HANDLE_TYPE_WIN32) X(CU_MEM_HANDLE_TYPE_WIN32_KMT) X(CU_MEM_HANDLE_TYPE_FABRIC) \
    X(CU_MEM_HANDLE_TYPE_MAX)

#define FG_ENUMERATORS_CUmemLocationType(X) \
    X(CU_MEM_LOCATION_TYPE_INVALID) X(CU_MEM_LOCATION_TYPE_NONE) X(CU_MEM_LOCATION_TYPE_DEVICE) \
    X(CU_MEM_LOCATION_TYPE_HOST) X(CU_MEM_LOCATION_TYPE_HOST_NUMA) \
    X(CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT) X(CU_MEM_LOCATION_TYPE_MAX)

#define FG_ENUMERATORS_CUmemAccess_flags(X) \
    X(CU_MEM_ACCESS_FLAGS_PROT_NONE) X(CU_MEM_ACCESS_FLAGS_PROT_READ) \
    X(CU_MEM_ACCESS_FLAGS_PROT_READWRITE) X(CU_MEM_ACCESS_FLAGS_PROT_MAX)

#define FG_ENUMERATORS_CUmemAllocationGranularity_flags(X) \
    X(CU_MEM_ALLOC_GRANULARITY_MINIMUM) X(CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)

#define FG_ENUMERATORS_CUmemAllocationCompType(X) \
    X(CU_MEM_ALLOCATION_COMP_NONE) X(CU_MEM_ALLOCATION_COMP_GENERIC)

#define FG_ENUMERATORS_CUmemPool_attribute(X) \
    X(CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES) X(CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC) \
    X(CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES) X(CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) \
    X(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) X(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) \
    X(CU_MEMPOOL_ATTR_USED_MEM_CURRENT) X(CU_MEMPOOL_ATTR_USED_MEM_HIGH)

#define FG_ENUMERATORS_CUmemAttach_flags(X) \
    X(CU_MEM_ATTACH_GLOBAL) X(CU_MEM_ATTACH_HOST) X(CU_MEM_ATTACH_SINGLE)

#define FG_ENUMERATORS_CUmem_advise(X) \
    X(CU_MEM_ADVISE_SET_READ_MOSTLY) X(CU_MEM_ADVISE_UNSET_READ_MOSTLY) \
    X(CU_MEM_ADVISE_SET_PREFERRED_LOCATION) X(CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION) \
    X(CU_MEM_ADVISE_SET_ACCESSED_BY) X(CU_MEM_ADVISE_UNSET_ACCESSED_BY)

#define FG_ENUMERATORS_CUmem_range_attribute(X) \
    X(CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY) X(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION) \
    X(CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY) X(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION) \
    X(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE) \
    X(CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID) \
    X(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE) \
    X(CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID)

#define FG_ENUMERATORS_CUdriverProcAddress_flags(X) \
    X(CU_GET_PROC_ADDRESS_DEFAULT) X(CU_GET_PROC_ADDRESS_LEGACY_STREAM) \
    X(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)

#define FG_ENUMERATORS_CUdriverProcAddressQueryResult(X) \
    X(CU_GET_PROC_ADDRESS_SUCCESS) X(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND) \
    X(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT)

#define FG_ENUMERATORS_CUmoduleLoadingMode(X) \
    X(CU_MODULE_EAGER_LOADING) X(CU_MODULE_LAZY_LOADING)

#define FG_ENUMERATORS_CUstreamCaptureStatus(X) \
    X(CU_STREAM_CAPTURE_STATUS_NONE) X(CU_STREAM_CAPTURE_STATUS_ACTIVE) \
    X(CU_STREAM_CAPTURE_STATUS_INVALIDATED)

#define FG_ENUMERATORS_CUstreamCaptureMode(X) \
    X(CU_STREAM_CAPTURE_MODE_GLOBAL) X(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) \
    X(CU_STREAM_CAPTURE_MODE_RELAXED)

#define FG_ENUMERATORS_CUexecAffinityType(X) \
    X(CU_EXEC_AFFINITY_TYPE_SM_COUNT) X(CU_EXEC_AFFINITY_TYPE_MAX)

#define FG_ENUMERATORS_CUcigDataType(X) \
    X(CIG_DATA_TYPE_D3D12_COMMAND_QUEUE) X(CIG_DATA_TYPE_NV_BLOB)

#define FG_ENUMERATORS_CUaccessProperty(X) \
    X(CU_ACCESS_PROPERTY_NORMAL) X(CU_ACCESS_PROPERTY_STREAMING) X(CU_ACCESS_PROPERTY_PERSISTING)

#define FG_ENUMERATORS_CUsynchronizationPolicy(X) \
    X(CU_SYNC_POLICY_AUTO) X(CU_SYNC_POLICY_SPIN) X(CU_SYNC_POLICY_YIELD) \
    X(CU_SYNC_POLICY_BLOCKING_SYNC)

#define FG_ENUMERATORS_CUclusterSchedulingPolicy(X) \
    X(CU_CLUSTER_SCHEDULING_POLICY_DEFAULT) X(CU_CLUSTER_SCHEDULING_POLICY_SPREAD) \
    X(CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING)

#define FG_ENUMERATORS_CUlaunchMemSyncDomain(X) \
    X(CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT) X(CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE)

#define FG_ENUMERATORS_CUlaunchAttributeID(X) \
    X(CU_LAUNCH_ATTRIBUTE_IGNORE) X(CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW) \
    X(CU_LAUNCH_ATTRIBUTE_COOPERATIVE) X(CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY) \
    X(CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) \
    X(CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE) \
    X(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION) \
    X(CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT) X(CU_LAUNCH_ATTRIBUTE_PRIORITY) \
    X(CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP) X(CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN) \
    X(CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION) \
    X(CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT) \
    X(CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE) \
    X(CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT) \
    X(CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING)

#define FG_ENUMERATORS_CUdevice_P2PAttribute(X) \
    X(CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK) X(CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED) \
    X(CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED) \
    X(CU_DEVICE_P2P_ATTRIBUTE_ACCESS_ACCESS_SUPPORTED) \
    X(CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED) \
    X(CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED)

#define FG_ENUMERATORS_CUipcMem_flags(X) \
    X(CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)

#define FG_ENUMERATORS_CUoccupancy_flags(X) \
    X(CU_OCCUPANCY_DEFAULT) X(CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)

#define FG_ENUMERATORS_CUdeviceNumaConfig(X) \
    X(CU_DEVICE_NUMA_CONFIG_NONE) X(CU_DEVICE_NUMA_CONFIG_NUMA_NODE)

#define FG_ENUMERATORS_CUlibraryOption(X) \
    X(CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE) X(CU_LIBRARY_BINARY_IS_PRESERVED) \
    X(CU_LIBRARY_NUM_OPTIONS)

#define FG_ENUMERATORS_CUfunctionLoadingState(X) \
    X(CU_FUNCTION_LOADING_STATE_UNLOADED) X(CU_FUNCTION_LOADING_STATE_LOADED) \
    X(CU_FUNCTION_LOADING_STATE_MAX)

#define FG_ENUMERATORS_CUDA_POINTER_ATTRIBUTE_ACCESS_FLAGS(X) \
    X(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE) X(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ) \
    X(CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE)

#define FG_RUNTIME_ENUM_TYPES(X) \
    X(cudaError_t) X(cudaMemcpyKind) X(cudaMemoryType) X(cudaDeviceAttr) X(cudaStreamCaptureStatus) \
    X(cudaStreamCaptureMode) X(cudaLimit) X(cudaFuncCache) X(cudaSharedMemConfig) \
    X(cudaSharedCarveout) X(cudaComputeMode) X(cudaFuncAttribute) X(cudaMemPoolAttr) \
    X(cudaMemAllocationType) X(cudaMemAllocationHandleType) X(cudaMemLocationType) \
    X(cudaMemAccessFlags) X(cudaMemoryAdvise) X(cudaMemRangeAttribute) X(cudaDeviceP2PAttr) \
    X(cudaDeviceNumaConfig) X(cudaFlushGPUDirectRDMAWritesOptions) \
    X(cudaGPUDirectRDMAWritesOrdering) X(cudaFlushGPUDirectRDMAWritesScope) \
    X(cudaFlushGPUDirectRDMAWritesTarget) X(cudaGetDriverEntryPointFlags) \
    X(cudaDriverEntryPointQueryResult) X(cudaChannelFormatKind) X(cudaAccessProperty) \
    X(cudaSynchronizationPolicy) X(cudaClusterSchedulingPolicy) X(cudaLaunchMemSyncDomain) \
    X(cudaLaunchAttributeID) X(cudaTextureAddressMode) X(cudaTextureFilterMode) X(cudaTextureReadMode) \
    X(cudaResourceType)

#define FG_DRIVER_ENUM_TYPES(X) \
    X(CUresult) X(CUdevice_attribute) X(CUpointer_attribute) X(CUmemorytype) X(CUctx_flags) \
    X(CUstream_flags) X(CUevent_flags) X(CUevent_record_flags) X(CUevent_wait_flags) \
    X(CUfunction_attribute) X(CUfunc_cache) X(CUsharedconfig) X(CUshared_carveout) X(CUcomputemode) \
    X(CUjit_option) X(CUjitInputType) X(CUlimit) X(CUmemAllocationType) \
    X(CUmemAllocationHandleType) X(CUmemLocationType) X(CUmemAccess_flags) \
    X(CUmemAllocationGranularity_flags) X(CUmemAllocationCompType) X(CUmemPool_attribute) \
    X(CUmemAttach_flags) X(CUmem_advise) X(CUmem_range_attribute) X(CUdriverProcAddress_flags) \
    X(CUdriverProcAddressQueryResult) X(CUmoduleLoadingMode) X(CUstreamCaptureStatus) \
    X(CUstreamCaptureMode) X(CUexecAffinityType) X(CUcigDataType) X(CUaccessProperty) \
    X(CUsynchronizationPolicy) X(CUclusterSchedulingPolicy) X(CUlaunchMemSyncDomain) \
    X(CUlaunchAttributeID) X(CUdevice_P2PAttribute) X(CUipcMem_flags) X(CUoccupancy_flags) \
    X(CUdeviceNumaConfig) X(CUlibraryOption) X(CUfunctionLoadingState) \
    X(CUDA_POINTER_ATTRIBUTE_ACCESS_FLAGS) X(CUarray_format) X(CUaddress_mode) X(CUfilter_mode) \
    X(CUresourcetype)
// clang-format on

// One row per enumerator; checked in a loop so the test compiles quickly and a
// failure names the enumerator.
struct FgEnumeratorRow {
  const char* name;
  long long ours;
  long long theirs;
};
#define FG_ENUMERATOR_ROW(name) FgEnumeratorRow{#name, fg_as_int(fgapi::name), fg_as_int(::name)},
#define FG_CHECK_ENUM(type)                                                    \
  {                                                                            \
    INFO("enum " #type);                                                       \
    CHECK(sizeof(fgapi::type) == sizeof(::type));                              \
    const FgEnumeratorRow rows[] = {FG_ENUMERATORS_##type(FG_ENUMERATOR_ROW)}; \
    for (const FgEnumeratorRow& row : rows) {                                  \
      INFO("enumerator " << row.name);                                         \
      CHECK(row.ours == row.theirs);                                           \
    }                                                                          \
  }

TEST_CASE("Runtime API enumerations match CUDA 13.0 driver_types.h", "[abi]"){FG_RUNTIME_ENUM_TYPES(FG_CHECK_ENUM)}

TEST_CASE("Driver API enumerations match CUDA 13.0 cuda.h", "[abi]"){FG_DRIVER_ENUM_TYPES(FG_CHECK_ENUM)}

TEST_CASE("Error enumerations: spot checks the backend relies on", "[abi]") {
  // Redundant with the full lists above; kept so a failure names the
  // values that matter most to clients in plain words.
  CHECK(fgapi::cudaSuccess == 0);
  CHECK(fgapi::cudaErrorInvalidValue == 1);
  CHECK(fgapi::cudaErrorMemoryAllocation == 2);
  CHECK(fgapi::cudaErrorInsufficientDriver == 35);
  CHECK(fgapi::cudaErrorNoDevice == 100);
  CHECK(fgapi::cudaErrorInvalidDevice == 101);
  CHECK(fgapi::cudaErrorNotReady == 600);
  CHECK(fgapi::cudaErrorNotSupported == 801);
  CHECK(fgapi::cudaErrorUnknown == 999);
  CHECK(fgapi::CUDA_SUCCESS == 0);
  CHECK(fgapi::CUDA_ERROR_INVALID_VALUE == 1);
  CHECK(fgapi::CUDA_ERROR_OUT_OF_MEMORY == 2);
  CHECK(fgapi::CUDA_ERROR_NOT_INITIALIZED == 3);
  CHECK(fgapi::CUDA_ERROR_INVALID_CONTEXT == 201);
  CHECK(fgapi::CUDA_ERROR_NOT_FOUND == 500);
  CHECK(fgapi::CUDA_ERROR_NOT_SUPPORTED == 801);
  CHECK(fgapi::CUDA_ERROR_UNKNOWN == 999);
  CHECK(fgapi::cudaDevAttrMax == 148);
  CHECK(fgapi::CU_DEVICE_ATTRIBUTE_MAX == 148);
}

// ===========================================================================
// #define constants and sentinels
// ===========================================================================
#define FG_CHECK_CONSTANT(name) CHECK(fg_as_int(fg_ours_##name) == fg_as_int(name));

TEST_CASE("Flag constants and sentinels match the toolkit #defines", "[abi]") {
  FG_MACRO_NAMED_CONSTANTS(FG_CHECK_CONSTANT)
  CHECK(fgapi::kCudaHeaderVersion == CUDA_VERSION);
  CHECK(fgapi::kCudaHeaderVersion == CUDART_VERSION);
}

// ===========================================================================
// Scalar typedefs and handles
// ===========================================================================
TEST_CASE("Scalar typedefs, handles and callbacks match", "[abi]") {
  STATIC_REQUIRE(std::is_same_v<fgapi::CUdevice, ::CUdevice>);
  STATIC_REQUIRE(std::is_same_v<fgapi::CUdeviceptr, ::CUdeviceptr>);
  STATIC_REQUIRE(std::is_same_v<fgapi::CUmemGenericAllocationHandle, ::CUmemGenericAllocationHandle>);
  STATIC_REQUIRE(std::is_same_v<fgapi::CUtexObject, ::CUtexObject>);
  STATIC_REQUIRE(std::is_same_v<fgapi::CUsurfObject, ::CUsurfObject>);
  STATIC_REQUIRE(std::is_same_v<fgapi::cudaGraphConditionalHandle, ::cudaGraphConditionalHandle>);
  STATIC_REQUIRE(std::is_same_v<fgapi::cudaHostFn_t, ::cudaHostFn_t>);
  STATIC_REQUIRE(std::is_same_v<fgapi::CUhostFn, ::CUhostFn>);
  STATIC_REQUIRE(std::is_same_v<fgapi::CUoccupancyB2DSize, ::CUoccupancyB2DSize>);
  STATIC_REQUIRE(sizeof(fgapi::cudaStreamCallback_t) == sizeof(::cudaStreamCallback_t));
  STATIC_REQUIRE(sizeof(fgapi::CUstreamCallback) == sizeof(::CUstreamCallback));
  // Runtime and driver handles are one type on both sides.
  STATIC_REQUIRE(std::is_same_v<::cudaStream_t, ::CUstream>);
  STATIC_REQUIRE(std::is_same_v<fgapi::cudaStream_t, fgapi::CUstream>);
  STATIC_REQUIRE(std::is_same_v<::cudaEvent_t, ::CUevent>);
  STATIC_REQUIRE(std::is_same_v<fgapi::cudaEvent_t, fgapi::CUevent>);
  STATIC_REQUIRE(std::is_same_v<::cudaMemPool_t, ::CUmemoryPool>);
  STATIC_REQUIRE(std::is_same_v<fgapi::cudaMemPool_t, fgapi::CUmemoryPool>);
  STATIC_REQUIRE(std::is_same_v<::cudaGraph_t, ::CUgraph>);
  STATIC_REQUIRE(std::is_same_v<fgapi::cudaGraph_t, fgapi::CUgraph>);
  STATIC_REQUIRE(std::is_same_v<::cudaGraphExec_t, ::CUgraphExec>);
  STATIC_REQUIRE(std::is_same_v<fgapi::cudaGraphExec_t, fgapi::CUgraphExec>);
  STATIC_REQUIRE(std::is_same_v<::cudaKernel_t, ::CUkernel>);
  STATIC_REQUIRE(std::is_same_v<fgapi::cudaKernel_t, fgapi::CUkernel>);
  STATIC_REQUIRE(std::is_same_v<::cudaFunction_t, ::CUfunction>);
  STATIC_REQUIRE(std::is_same_v<fgapi::cudaFunction_t, fgapi::CUfunction>);
  STATIC_REQUIRE(std::is_same_v<::cudaLibrary_t, ::CUlibrary>);
  STATIC_REQUIRE(std::is_same_v<fgapi::cudaLibrary_t, fgapi::CUlibrary>);
  STATIC_REQUIRE(std::is_same_v<::cudaUUID_t, ::CUuuid>);
  STATIC_REQUIRE(std::is_same_v<fgapi::cudaUUID_t, fgapi::CUuuid>);
}

// ===========================================================================
// Struct layouts
// ===========================================================================
// Field lists: every member of NVIDIA's struct, nested anonymous members as
// `outer.inner`.
// clang-format off
#define FG_FIELDS_dim3(X) \
    X(x) X(y) X(z)

#define FG_FIELDS_cudaUUID_t(X) \
    X(bytes)

#define FG_FIELDS_cudaDeviceProp(X) \
    X(name) X(uuid) X(luid) X(luidDeviceNodeMask) X(totalGlobalMem) X(sharedMemPerBlock) \
    X(regsPerBlock) X(warpSize) X(memPitch) X(maxThreadsPerBlock) X(maxThreadsDim) X(maxGridSize) \
    X(totalConstMem) X(major) X(minor) X(textureAlignment) X(texturePitchAlignment) \
    X(multiProcessorCount) X(integrated) X(canMapHostMemory) X(maxTexture1D) X(maxTexture1DMipmap) \
    X(maxTexture2D) X(maxTexture2DMipmap) X(maxTexture2DLinear) X(maxTexture2DGather) \
    X(maxTexture3D) X(maxTexture3DAlt) X(maxTextureCubemap) X(maxTexture1DLayered) \
    X(maxTexture2DLayered) X(maxTextureCubemapLayered) X(maxSurface1D) X(maxSurface2D) \
    X(maxSurface3D) X(maxSurface1DLayered) X(maxSurface2DLayered) X(maxSurfaceCubemap) \
    X(maxSurfaceCubemapLayered) X(surfaceAlignment) X(concurrentKernels) X(ECCEnabled) X(pciBusID) \
    X(pciDeviceID) X(pciDomainID) X(tccDriver) X(asyncEngineCount) X(unifiedAddressing) \
    X(memoryBusWidth) X(l2CacheSize) X(persistingL2CacheMaxSize) X(maxThreadsPerMultiProcessor) \
    X(streamPrioritiesSupported) X(globalL1CacheSupported) X(localL1CacheSupported) \
    X(sharedMemPerMultiprocessor) X(regsPerMultiprocessor) X(managedMemory) X(isMultiGpuBoard) \
    X(multiGpuBoardGroupID) X(hostNativeAtomicSupported) X(pageableMemoryAccess) \
    X(concurrentManagedAccess) X(computePreemptionSupported) X(canUseHostPointerForRegisteredMem) \
    X(cooperativeLaunch) X(sharedMemPerBlockOptin) X(pageableMemoryAccessUsesHostPageTables) \
    X(directManagedMemAccessFromHost) X(maxBlocksPerMultiProcessor) X(accessPolicyMaxWindowSize) \
    X(reservedSharedMemPerBlock) X(hostRegisterSupported) X(sparseCudaArraySupported) \
    X(hostRegisterReadOnlySupported) X(timelineSemaphoreInteropSupported) X(memoryPoolsSupported) \
    X(gpuDirectRDMASupported) X(gpuDirectRDMAFlushWritesOptions) X(gpuDirectRDMAWritesOrdering) \
    X(memoryPoolSupportedHandleTypes) X(deferredMappingCudaArraySupported) X(ipcEventSupported) \
    X(clusterLaunch) X(unifiedFunctionPointers) X(deviceNumaConfig) X(deviceNumaId) X(mpsEnabled) \
    X(hostNumaId) X(gpuPciDeviceID) X(gpuPciSubsystemID) X(hostNumaMultinodeIpcSupported) \
    X(reserved)

#define FG_FIELDS_cudaPointerAttributes(X) \
    X(type) X(device) X(devicePointer) X(hostPointer) X(reserved)

#define FG_FIELDS_cudaFuncAttributes(X) \
    X(sharedSizeBytes) X(constSizeBytes) X(localSizeBytes) X(maxThreadsPerBlock) X(numRegs) \
    X(ptxVersion) X(binaryVersion) X(cacheModeCA) X(maxDynamicSharedSizeBytes) \
    X(preferredShmemCarveout) X(clusterDimMustBeSet) X(requiredClusterWidth) \
    X(requiredClusterHeight) X(requiredClusterDepth) X(clusterSchedulingPolicyPreference) \
    X(nonPortableClusterSizeAllowed) X(reserved)

#define FG_FIELDS_cudaIpcEventHandle_t(X) \
    X(reserved)

#define FG_FIELDS_cudaIpcMemHandle_t(X) \
    X(reserved)

#define FG_FIELDS_cudaMemFabricHandle_t(X) \
    X(reserved)

#define FG_FIELDS_cudaChannelFormatDesc(X) \
    X(x) X(y) X(z) X(w) X(f)

#define FG_FIELDS_cudaExtent(X) \
    X(width) X(height) X(depth)

#define FG_FIELDS_cudaPos(X) \
    X(x) X(y) X(z)

#define FG_FIELDS_cudaPitchedPtr(X) \
    X(ptr) X(pitch) X(xsize) X(ysize)

#define FG_FIELDS_cudaMemcpy3DParms(X) \
    X(srcArray) X(srcPos) X(srcPtr) X(dstArray) X(dstPos) X(dstPtr) X(extent) X(kind)

#define FG_FIELDS_cudaMemcpy3DPeerParms(X) \
    X(srcArray) X(srcPos) X(srcPtr) X(srcDevice) X(dstArray) X(dstPos) X(dstPtr) X(dstDevice) \
    X(extent)

#define FG_FIELDS_cudaResourceDesc(X) \
    X(resType) X(res.array.array) X(res.mipmap.mipmap) X(res.linear.devPtr) X(res.linear.desc) \
    X(res.linear.sizeInBytes) X(res.pitch2D.devPtr) X(res.pitch2D.desc) X(res.pitch2D.width) \
    X(res.pitch2D.height) X(res.pitch2D.pitchInBytes) X(res.reserved.reserved) X(flags)

#define FG_FIELDS_cudaResourceViewDesc(X) \
    X(format) X(width) X(height) X(depth) X(firstMipmapLevel) X(lastMipmapLevel) X(firstLayer) \
    X(lastLayer) X(reserved)

#define FG_FIELDS_cudaTextureDesc(X) \
    X(addressMode) X(filterMode) X(readMode) X(sRGB) X(borderColor) X(normalizedCoords) \
    X(maxAnisotropy) X(mipmapFilterMode) X(mipmapLevelBias) X(minMipmapLevelClamp) \
    X(maxMipmapLevelClamp) X(disableTrilinearOptimization) X(seamlessCubemap)

#define FG_FIELDS_cudaAccessPolicyWindow(X) \
    X(base_ptr) X(num_bytes) X(hitRatio) X(hitProp) X(missProp)

#define FG_FIELDS_cudaLaunchMemSyncDomainMap(X) \
    X(default_) X(remote)

#define FG_FIELDS_cudaLaunchAttributeValue(X) \
    X(pad) X(accessPolicyWindow) X(cooperative) X(syncPolicy) X(clusterDim) X(clusterDim.x) \
    X(clusterDim.y) X(clusterDim.z) X(clusterSchedulingPolicyPreference) \
    X(programmaticStreamSerializationAllowed) X(programmaticEvent) X(programmaticEvent.event) \
    X(programmaticEvent.flags) X(programmaticEvent.triggerAtBlockStart) X(priority) \
    X(memSyncDomainMap) X(memSyncDomain) X(preferredClusterDim) X(preferredClusterDim.x) \
    X(preferredClusterDim.y) X(preferredClusterDim.z) X(launchCompletionEvent) \
    X(launchCompletionEvent.event) X(launchCompletionEvent.flags) X(deviceUpdatableKernelNode) \
    X(deviceUpdatableKernelNode.deviceUpdatable) X(deviceUpdatableKernelNode.devNode) \
    X(sharedMemCarveout) X(nvlinkUtilCentricScheduling)

#define FG_FIELDS_cudaLaunchAttribute(X) \
    X(id) X(pad) X(val)

#define FG_FIELDS_cudaLaunchConfig_t(X) \
    X(gridDim) X(blockDim) X(dynamicSmemBytes) X(stream) X(attrs) X(numAttrs)

#define FG_FIELDS_cudaMemLocation(X) \
    X(type) X(id)

#define FG_FIELDS_cudaMemAccessDesc(X) \
    X(location) X(flags)

#define FG_FIELDS_cudaMemPoolProps(X) \
    X(allocType) X(handleTypes) X(location) X(win32SecurityAttributes) X(maxSize) X(usage) \
    X(reserved)

#define FG_FIELDS_cudaMemPoolPtrExportData(X) \
    X(reserved)

#define FG_FIELDS_CUuuid(X) \
    X(bytes)

#define FG_FIELDS_CUipcEventHandle(X) \
    X(reserved)

#define FG_FIELDS_CUipcMemHandle(X) \
    X(reserved)

#define FG_FIELDS_CUmemFabricHandle(X) \
    X(data)

#define FG_FIELDS_CUdevprop(X) \
    X(maxThreadsPerBlock) X(maxThreadsDim) X(maxGridSize) X(sharedMemPerBlock) \
    X(totalConstantMemory) X(SIMDWidth) X(memPitch) X(regsPerBlock) X(clockRate) X(textureAlign)

#define FG_FIELDS_CUexecAffinitySmCount(X) \
    X(val)

#define FG_FIELDS_CUexecAffinityParam(X) \
    X(type) X(param) X(param.smCount)

#define FG_FIELDS_CUctxCigParam(X) \
    X(sharedDataType) X(sharedData)

#define FG_FIELDS_CUctxCreateParams(X) \
    X(execAffinityParams) X(numExecAffinityParams) X(cigParams)

#define FG_FIELDS_CUDA_MEMCPY2D(X) \
    X(srcXInBytes) X(srcY) X(srcMemoryType) X(srcHost) X(srcDevice) X(srcArray) X(srcPitch) \
    X(dstXInBytes) X(dstY) X(dstMemoryType) X(dstHost) X(dstDevice) X(dstArray) X(dstPitch) \
    X(WidthInBytes) X(Height)

#define FG_FIELDS_CUDA_MEMCPY3D(X) \
    X(srcXInBytes) X(srcY) X(srcZ) X(srcLOD) X(srcMemoryType) X(srcHost) X(srcDevice) X(srcArray) \
    X(reserved0) X(srcPitch) X(srcHeight) X(dstXInBytes) X(dstY) X(dstZ) X(dstLOD) X(dstMemoryType) \
    X(dstHost) X(dstDevice) X(dstArray) X(reserved1) X(dstPitch) X(dstHeight) X(WidthInBytes) \
    X(Height) X(Depth)

#define FG_FIELDS_CUDA_ARRAY_DESCRIPTOR(X) \
    X(Width) X(Height) X(Format) X(NumChannels)

#define FG_FIELDS_CUDA_ARRAY3D_DESCRIPTOR(X) \
    X(Width) X(Height) X(Depth) X(Format) X(NumChannels) X(Flags)

#define FG_FIELDS_CUDA_RESOURCE_DESC(X) \
    X(resType) X(res.array.hArray) X(res.mipmap.hMipmappedArray) X(res.linear.devPtr) \
    X(res.linear.format) X(res.linear.numChannels) X(res.linear.sizeInBytes) X(res.pitch2D.devPtr) \
    X(res.pitch2D.format) X(res.pitch2D.numChannels) X(res.pitch2D.width) X(res.pitch2D.height) \
    X(res.pitch2D.pitchInBytes) X(res.reserved.reserved) X(flags)

#define FG_FIELDS_CUDA_TEXTURE_DESC(X) \
    X(addressMode) X(filterMode) X(flags) X(maxAnisotropy) X(mipmapFilterMode) X(mipmapLevelBias) \
    X(minMipmapLevelClamp) X(maxMipmapLevelClamp) X(borderColor) X(reserved)

#define FG_FIELDS_CUDA_RESOURCE_VIEW_DESC(X) \
    X(format) X(width) X(height) X(depth) X(firstMipmapLevel) X(lastMipmapLevel) X(firstLayer) \
    X(lastLayer) X(reserved)

#define FG_FIELDS_CUDA_LAUNCH_PARAMS(X) \
    X(function) X(gridDimX) X(gridDimY) X(gridDimZ) X(blockDimX) X(blockDimY) X(blockDimZ) \
    X(sharedMemBytes) X(hStream) X(kernelParams)

#define FG_FIELDS_CUaccessPolicyWindow(X) \
    X(base_ptr) X(num_bytes) X(hitRatio) X(hitProp) X(missProp)

#define FG_FIELDS_CUlaunchMemSyncDomainMap(X) \
    X(default_) X(remote)

#define FG_FIELDS_CUlaunchAttributeValue(X) \
    X(pad) X(accessPolicyWindow) X(cooperative) X(syncPolicy) X(clusterDim) X(clusterDim.x) \
    X(clusterDim.y) X(clusterDim.z) X(clusterSchedulingPolicyPreference) \
    X(programmaticStreamSerializationAllowed) X(programmaticEvent) X(programmaticEvent.event) \
    X(programmaticEvent.flags) X(programmaticEvent.triggerAtBlockStart) X(launchCompletionEvent) \
    X(launchCompletionEvent.event) X(launchCompletionEvent.flags) X(priority) X(memSyncDomainMap) \
    X(memSyncDomain) X(preferredClusterDim) X(preferredClusterDim.x) X(preferredClusterDim.y) \
    X(preferredClusterDim.z) X(deviceUpdatableKernelNode) \
    X(deviceUpdatableKernelNode.deviceUpdatable) X(deviceUpdatableKernelNode.devNode) \
    X(sharedMemCarveout) X(nvlinkUtilCentricScheduling)

#define FG_FIELDS_CUlaunchAttribute(X) \
    X(id) X(pad) X(value)

#define FG_FIELDS_CUlaunchConfig(X) \
    X(gridDimX) X(gridDimY) X(gridDimZ) X(blockDimX) X(blockDimY) X(blockDimZ) X(sharedMemBytes) \
    X(hStream) X(attrs) X(numAttrs)

#define FG_FIELDS_CUmemLocation(X) \
    X(type) X(id)

#define FG_FIELDS_CUmemAllocationProp(X) \
    X(type) X(requestedHandleTypes) X(location) X(win32HandleMetaData) X(allocFlags) \
    X(allocFlags.compressionType) X(allocFlags.gpuDirectRDMACapable) X(allocFlags.usage) \
    X(allocFlags.reserved)

#define FG_FIELDS_CUmemAccessDesc(X) \
    X(location) X(flags)

#define FG_FIELDS_CUmemPoolProps(X) \
    X(allocType) X(handleTypes) X(location) X(win32SecurityAttributes) X(maxSize) X(usage) \
    X(reserved)

#define FG_FIELDS_CUmemPoolPtrExportData(X) \
    X(reserved)
// clang-format on

// One row per field; checked in a loop so the test compiles quickly and a
// failure names the struct and the field.
struct FgFieldRow {
  const char* name;
  std::size_t oursOffset;
  std::size_t theirsOffset;
  std::size_t oursSize;
  std::size_t theirsSize;
  bool sameKind;
};
#define FG_FIELD_ROW(F)                         \
  FgFieldRow{#F,                                \
             offsetof(Ours, F),                 \
             offsetof(Theirs, F),               \
             sizeof(std::declval<Ours&>().F),   \
             sizeof(std::declval<Theirs&>().F), \
             fg_same_kind<decltype(std::declval<Ours&>().F), decltype(std::declval<Theirs&>().F)>()},

#define FG_CHECK_STRUCT(OURS, THEIRS)                           \
  {                                                             \
    using Ours = fgapi::OURS;                                   \
    using Theirs = ::THEIRS;                                    \
    INFO("struct " #OURS);                                      \
    STATIC_REQUIRE(std::is_standard_layout_v<Ours>);            \
    CHECK(sizeof(Ours) == sizeof(Theirs));                      \
    CHECK(alignof(Ours) == alignof(Theirs));                    \
    const FgFieldRow rows[] = {FG_FIELDS_##OURS(FG_FIELD_ROW)}; \
    for (const FgFieldRow& row : rows) {                        \
      INFO("field " << row.name);                               \
      CHECK(row.oursOffset == row.theirsOffset);                \
      CHECK(row.oursSize == row.theirsSize);                    \
      CHECK(row.sameKind);                                      \
    }                                                           \
  }

TEST_CASE("Struct sizes and field offsets match CUDA 13.0", "[abi]") {
  FG_CHECK_STRUCT(dim3, dim3);
  FG_CHECK_STRUCT(cudaUUID_t, cudaUUID_t);
  FG_CHECK_STRUCT(cudaDeviceProp, cudaDeviceProp);
  FG_CHECK_STRUCT(cudaPointerAttributes, cudaPointerAttributes);
  FG_CHECK_STRUCT(cudaFuncAttributes, cudaFuncAttributes);
  FG_CHECK_STRUCT(cudaIpcEventHandle_t, cudaIpcEventHandle_t);
  FG_CHECK_STRUCT(cudaIpcMemHandle_t, cudaIpcMemHandle_t);
  FG_CHECK_STRUCT(cudaMemFabricHandle_t, cudaMemFabricHandle_t);
  FG_CHECK_STRUCT(cudaChannelFormatDesc, cudaChannelFormatDesc);
  FG_CHECK_STRUCT(cudaExtent, cudaExtent);
  FG_CHECK_STRUCT(cudaPos, cudaPos);
  FG_CHECK_STRUCT(cudaPitchedPtr, cudaPitchedPtr);
  FG_CHECK_STRUCT(cudaMemcpy3DParms, cudaMemcpy3DParms);
  FG_CHECK_STRUCT(cudaMemcpy3DPeerParms, cudaMemcpy3DPeerParms);
  FG_CHECK_STRUCT(cudaResourceDesc, cudaResourceDesc);
  FG_CHECK_STRUCT(cudaResourceViewDesc, cudaResourceViewDesc);
  FG_CHECK_STRUCT(cudaTextureDesc, cudaTextureDesc);
  FG_CHECK_STRUCT(cudaAccessPolicyWindow, cudaAccessPolicyWindow);
  FG_CHECK_STRUCT(cudaLaunchMemSyncDomainMap, cudaLaunchMemSyncDomainMap);
  FG_CHECK_STRUCT(cudaLaunchAttributeValue, cudaLaunchAttributeValue);
  FG_CHECK_STRUCT(cudaLaunchAttribute, cudaLaunchAttribute);
  FG_CHECK_STRUCT(cudaLaunchConfig_t, cudaLaunchConfig_t);
  FG_CHECK_STRUCT(cudaMemLocation, cudaMemLocation);
  FG_CHECK_STRUCT(cudaMemAccessDesc, cudaMemAccessDesc);
  FG_CHECK_STRUCT(cudaMemPoolProps, cudaMemPoolProps);
  FG_CHECK_STRUCT(cudaMemPoolPtrExportData, cudaMemPoolPtrExportData);
  FG_CHECK_STRUCT(CUuuid, CUuuid);
  FG_CHECK_STRUCT(CUipcEventHandle, CUipcEventHandle);
  FG_CHECK_STRUCT(CUipcMemHandle, CUipcMemHandle);
  FG_CHECK_STRUCT(CUmemFabricHandle, CUmemFabricHandle);
  FG_CHECK_STRUCT(CUdevprop, CUdevprop);
  FG_CHECK_STRUCT(CUexecAffinitySmCount, CUexecAffinitySmCount);
  FG_CHECK_STRUCT(CUexecAffinityParam, CUexecAffinityParam);
  FG_CHECK_STRUCT(CUctxCigParam, CUctxCigParam);
  FG_CHECK_STRUCT(CUctxCreateParams, CUctxCreateParams);
  FG_CHECK_STRUCT(CUDA_MEMCPY2D, CUDA_MEMCPY2D);
  FG_CHECK_STRUCT(CUDA_MEMCPY3D, CUDA_MEMCPY3D);
  FG_CHECK_STRUCT(CUDA_ARRAY_DESCRIPTOR, CUDA_ARRAY_DESCRIPTOR);
  FG_CHECK_STRUCT(CUDA_ARRAY3D_DESCRIPTOR, CUDA_ARRAY3D_DESCRIPTOR);
  FG_CHECK_STRUCT(CUDA_RESOURCE_DESC, CUDA_RESOURCE_DESC);
  FG_CHECK_STRUCT(CUDA_TEXTURE_DESC, CUDA_TEXTURE_DESC);
  FG_CHECK_STRUCT(CUDA_RESOURCE_VIEW_DESC, CUDA_RESOURCE_VIEW_DESC);
  FG_CHECK_STRUCT(CUDA_LAUNCH_PARAMS, CUDA_LAUNCH_PARAMS);
  FG_CHECK_STRUCT(CUaccessPolicyWindow, CUaccessPolicyWindow);
  FG_CHECK_STRUCT(CUlaunchMemSyncDomainMap, CUlaunchMemSyncDomainMap);
  FG_CHECK_STRUCT(CUlaunchAttributeValue, CUlaunchAttributeValue);
  FG_CHECK_STRUCT(CUlaunchAttribute, CUlaunchAttribute);
  FG_CHECK_STRUCT(CUlaunchConfig, CUlaunchConfig);
  FG_CHECK_STRUCT(CUmemLocation, CUmemLocation);
  FG_CHECK_STRUCT(CUmemAllocationProp, CUmemAllocationProp);
  FG_CHECK_STRUCT(CUmemAccessDesc, CUmemAccessDesc);
  FG_CHECK_STRUCT(CUmemPoolProps, CUmemPoolProps);
  FG_CHECK_STRUCT(CUmemPoolPtrExportData, CUmemPoolPtrExportData);
}

TEST_CASE("Struct sizes quoted in the census hold", "[abi]") {
  // research/api-census.md §2.1/§2.2, measured with the 13.0 toolkit.
  CHECK(sizeof(fgapi::cudaDeviceProp) == 1008);
  CHECK(offsetof(fgapi::cudaDeviceProp, multiProcessorCount) == 384);
  CHECK(sizeof(fgapi::cudaPointerAttributes) == 88);
  CHECK(sizeof(fgapi::cudaFuncAttributes) == 144);
  CHECK(sizeof(fgapi::cudaIpcMemHandle_t) == 64);
  CHECK(sizeof(fgapi::cudaChannelFormatDesc) == 20);
  CHECK(sizeof(fgapi::dim3) == 12);
  CHECK(sizeof(fgapi::cudaLaunchConfig_t) == 56);
  CHECK(sizeof(fgapi::cudaLaunchAttribute) == 72);
  CHECK(sizeof(fgapi::cudaMemPoolProps) == 88);
  CHECK(sizeof(fgapi::cudaMemLocation) == 8);
  CHECK(sizeof(fgapi::CUuuid) == 16);
  CHECK(sizeof(fgapi::CUctxCreateParams) == 24);
  CHECK(sizeof(fgapi::CUDA_MEMCPY2D) == 128);
  CHECK(sizeof(fgapi::CUDA_MEMCPY3D) == 200);
  CHECK(sizeof(fgapi::CUDA_LAUNCH_PARAMS) == 56);
  CHECK(sizeof(fgapi::CUlaunchConfig) == 56);
  CHECK(sizeof(fgapi::CUlaunchAttribute) == 72);
  CHECK(sizeof(fgapi::CUmemAllocationProp) == 32);
  CHECK(sizeof(fgapi::CUmemLocation) == 8);
  CHECK(sizeof(fgapi::CUipcMemHandle) == 64);
  CHECK(sizeof(fgapi::CUdevprop) == 56);
}

// ===========================================================================
// cudaDeviceProp12: the CUDA 12.4-12.9 layout behind cudaGetDeviceProperties_v2
// ===========================================================================
TEST_CASE("cudaDeviceProp12 matches the measured CUDA 12.x layout", "[abi]") {
  using P12 = fgapi::cudaDeviceProp12;
  // census-probes/results/abi_cuda12_layout.txt
  CHECK(sizeof(P12) == 1032);
  CHECK(offsetof(P12, name) == 0);
  CHECK(offsetof(P12, uuid) == 256);
  CHECK(offsetof(P12, totalGlobalMem) == 288);
  CHECK(offsetof(P12, sharedMemPerBlock) == 296);
  CHECK(offsetof(P12, warpSize) == 308);
  CHECK(offsetof(P12, maxThreadsPerBlock) == 320);
  CHECK(offsetof(P12, clockRate) == 348);
  CHECK(offsetof(P12, totalConstMem) == 352);
  CHECK(offsetof(P12, major) == 360);
  CHECK(offsetof(P12, minor) == 364);
  CHECK(offsetof(P12, multiProcessorCount) == 388);
  CHECK(offsetof(P12, integrated) == 396);
  CHECK(offsetof(P12, computeMode) == 404);
  CHECK(offsetof(P12, pciBusID) == 584);
  CHECK(offsetof(P12, pciDeviceID) == 588);
  CHECK(offsetof(P12, pciDomainID) == 592);
  CHECK(offsetof(P12, memoryClockRate) == 608);
  CHECK(offsetof(P12, memoryBusWidth) == 612);
  CHECK(offsetof(P12, l2CacheSize) == 616);
  CHECK(offsetof(P12, maxThreadsPerMultiProcessor) == 624);
  CHECK(offsetof(P12, sharedMemPerMultiprocessor) == 640);
  CHECK(offsetof(P12, regsPerMultiprocessor) == 648);
  CHECK(offsetof(P12, managedMemory) == 652);
  CHECK(offsetof(P12, sharedMemPerBlockOptin) == 696);
  CHECK(offsetof(P12, maxBlocksPerMultiProcessor) == 712);
  CHECK(offsetof(P12, memoryPoolsSupported) == 744);
  CHECK(offsetof(P12, unifiedFunctionPointers) == 776);
  CHECK(offsetof(P12, hostNumaId) == 792);
  CHECK(offsetof(P12, gpuPciDeviceID) == 796);
  CHECK(offsetof(P12, hostNumaMultinodeIpcSupported) == 804);
  CHECK(offsetof(P12, reserved) == 808);
  // census §2.1: luid / luidDeviceNodeMask are at 272 / 280 in both layouts.
  CHECK(offsetof(P12, luid) == 272);
  CHECK(offsetof(P12, luidDeviceNodeMask) == 280);

  // The prefix up to maxGridSize is shared with CUDA 13.0; check it against
  // the real 13.0 header too.
  CHECK(offsetof(P12, luid) == offsetof(::cudaDeviceProp, luid));
  CHECK(offsetof(P12, memPitch) == offsetof(::cudaDeviceProp, memPitch));
  CHECK(offsetof(P12, maxThreadsDim) == offsetof(::cudaDeviceProp, maxThreadsDim));
  CHECK(offsetof(P12, maxGridSize) == offsetof(::cudaDeviceProp, maxGridSize));
  CHECK(offsetof(P12, totalConstMem) == offsetof(::cudaDeviceProp, totalConstMem));
}
