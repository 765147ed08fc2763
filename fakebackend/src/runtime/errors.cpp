// SPDX-License-Identifier: Apache-2.0
// Runtime error reporting: cudaGetLastError / cudaPeekAtLastError and the error names and
// strings, which are NVIDIA's own (measured from libcudart.so.13 of the CUDA 13.0 toolkit:
// every value 0..1099 and 10000; anything else is "unrecognized error code").
#include "runtime/common.h"

#include "common/coverage.h"
#include "core/error_texts.h"

using namespace fgapi;

namespace {

// Sorted by code (every code libcudart.so.13 names; the texts are core/error_texts.cpp's).
constexpr fg::CodeName kErrors[] = {
    {0, "cudaSuccess"},
    {1, "cudaErrorInvalidValue"},
    {2, "cudaErrorMemoryAllocation"},
    {3, "cudaErrorInitializationError"},
    {4, "cudaErrorCudartUnloading"},
    {5, "cudaErrorProfilerDisabled"},
    {6, "cudaErrorProfilerNotInitialized"},
    {7, "cudaErrorProfilerAlreadyStarted"},
    {8, "cudaErrorProfilerAlreadyStopped"},
    {9, "cudaErrorInvalidConfiguration"},
    {12, "cudaErrorInvalidPitchValue"},
    {13, "cudaErrorInvalidSymbol"},
    {16, "cudaErrorInvalidHostPointer"},
    {17, "cudaErrorInvalidDevicePointer"},
    {18, "cudaErrorInvalidTexture"},
    {19, "cudaErrorInvalidTextureBinding"},
    {20, "cudaErrorInvalidChannelDescriptor"},
    {21, "cudaErrorInvalidMemcpyDirection"},
    {22, "cudaErrorAddressOfConstant"},
    {23, "cudaErrorTextureFetchFailed"},
    {24, "cudaErrorTextureNotBound"},
    {25, "cudaErrorSynchronizationError"},
    {26, "cudaErrorInvalidFilterSetting"},
    {27, "cudaErrorInvalidNormSetting"},
    {28, "cudaErrorMixedDeviceExecution"},
    {31, "cudaErrorNotYetImplemented"},
    {32, "cudaErrorMemoryValueTooLarge"},
    {34, "cudaErrorStubLibrary"},
    {35, "cudaErrorInsufficientDriver"},
    {36, "cudaErrorCallRequiresNewerDriver"},
    {37, "cudaErrorInvalidSurface"},
    {43, "cudaErrorDuplicateVariableName"},
    {44, "cudaErrorDuplicateTextureName"},
    {45, "cudaErrorDuplicateSurfaceName"},
    {46, "cudaErrorDevicesUnavailable"},
    {49, "cudaErrorIncompatibleDriverContext"},
    {52, "cudaErrorMissingConfiguration"},
    {53, "cudaErrorPriorLaunchFailure"},
    {65, "cudaErrorLaunchMaxDepthExceeded"},
    {66, "cudaErrorLaunchFileScopedTex"},
    {67, "cudaErrorLaunchFileScopedSurf"},
    {68, "cudaErrorSyncDepthExceeded"},
    {69, "cudaErrorLaunchPendingCountExceeded"},
    {98, "cudaErrorInvalidDeviceFunction"},
    {100, "cudaErrorNoDevice"},
    {101, "cudaErrorInvalidDevice"},
    {102, "cudaErrorDeviceNotLicensed"},
    {103, "cudaErrorSoftwareValidityNotEstablished"},
    {127, "cudaErrorStartupFailure"},
    {200, "cudaErrorInvalidKernelImage"},
    {201, "cudaErrorDeviceUninitialized"},
    {205, "cudaErrorMapBufferObjectFailed"},
    {206, "cudaErrorUnmapBufferObjectFailed"},
    {207, "cudaErrorArrayIsMapped"},
    {208, "cudaErrorAlreadyMapped"},
    {209, "cudaErrorNoKernelImageForDevice"},
    {210, "cudaErrorAlreadyAcquired"},
    {211, "cudaErrorNotMapped"},
    {212, "cudaErrorNotMappedAsArray"},
    {213, "cudaErrorNotMappedAsPointer"},
    {214, "cudaErrorECCUncorrectable"},
    {215, "cudaErrorUnsupportedLimit"},
    {216, "cudaErrorDeviceAlreadyInUse"},
    {217, "cudaErrorPeerAccessUnsupported"},
    {218, "cudaErrorInvalidPtx"},
    {219, "cudaErrorInvalidGraphicsContext"},
    {220, "cudaErrorNvlinkUncorrectable"},
    {221, "cudaErrorJitCompilerNotFound"},
    {222, "cudaErrorUnsupportedPtxVersion"},
    {223, "cudaErrorJitCompilationDisabled"},
    {224, "cudaErrorUnsupportedExecAffinity"},
    {225, "cudaErrorUnsupportedDevSideSync"},
    {226, "cudaErrorContained"},
    {300, "cudaErrorInvalidSource"},
    {301, "cudaErrorFileNotFound"},
    {302, "cudaErrorSharedObjectSymbolNotFound"},
    {303, "cudaErrorSharedObjectInitFailed"},
    {304, "cudaErrorOperatingSystem"},
    {400, "cudaErrorInvalidResourceHandle"},
    {401, "cudaErrorIllegalState"},
    {402, "cudaErrorLossyQuery"},
    {500, "cudaErrorSymbolNotFound"},
    {600, "cudaErrorNotReady"},
    {700, "cudaErrorIllegalAddress"},
    {701, "cudaErrorLaunchOutOfResources"},
    {702, "cudaErrorLaunchTimeout"},
    {703, "cudaErrorLaunchIncompatibleTexturing"},
    {704, "cudaErrorPeerAccessAlreadyEnabled"},
    {705, "cudaErrorPeerAccessNotEnabled"},
    {708, "cudaErrorSetOnActiveProcess"},
    {709, "cudaErrorContextIsDestroyed"},
    {710, "cudaErrorAssert"},
    {711, "cudaErrorTooManyPeers"},
    {712, "cudaErrorHostMemoryAlreadyRegistered"},
    {713, "cudaErrorHostMemoryNotRegistered"},
    {714, "cudaErrorHardwareStackError"},
    {715, "cudaErrorIllegalInstruction"},
    {716, "cudaErrorMisalignedAddress"},
    {717, "cudaErrorInvalidAddressSpace"},
    {718, "cudaErrorInvalidPc"},
    {719, "cudaErrorLaunchFailure"},
    {720, "cudaErrorCooperativeLaunchTooLarge"},
    {721, "cudaErrorTensorMemoryLeak"},
    {800, "cudaErrorNotPermitted"},
    {801, "cudaErrorNotSupported"},
    {802, "cudaErrorSystemNotReady"},
    {803, "cudaErrorSystemDriverMismatch"},
    {804, "cudaErrorCompatNotSupportedOnDevice"},
    {805, "cudaErrorMpsConnectionFailed"},
    {806, "cudaErrorMpsRpcFailure"},
    {807, "cudaErrorMpsServerNotReady"},
    {808, "cudaErrorMpsMaxClientsReached"},
    {809, "cudaErrorMpsMaxConnectionsReached"},
    {810, "cudaErrorMpsClientTerminated"},
    {811, "cudaErrorCdpNotSupported"},
    {812, "cudaErrorCdpVersionMismatch"},
    {900, "cudaErrorStreamCaptureUnsupported"},
    {901, "cudaErrorStreamCaptureInvalidated"},
    {902, "cudaErrorStreamCaptureMerge"},
    {903, "cudaErrorStreamCaptureUnmatched"},
    {904, "cudaErrorStreamCaptureUnjoined"},
    {905, "cudaErrorStreamCaptureIsolation"},
    {906, "cudaErrorStreamCaptureImplicit"},
    {907, "cudaErrorCapturedEvent"},
    {908, "cudaErrorStreamCaptureWrongThread"},
    {909, "cudaErrorTimeout"},
    {910, "cudaErrorGraphExecUpdateFailure"},
    {911, "cudaErrorExternalDevice"},
    {912, "cudaErrorInvalidClusterSize"},
    {913, "cudaErrorFunctionNotLoaded"},
    {914, "cudaErrorInvalidResourceType"},
    {915, "cudaErrorInvalidResourceConfiguration"},
    {999, "cudaErrorUnknown"},
    {10000, "cudaErrorApiFailureBase"},
};
static_assert(fg::sorted_by_code(kErrors), "kErrors must be sorted by code");

constexpr const char* kUnrecognized = "unrecognized error code";

}  // namespace

// A runtime stub's answer: cudaErrorNotSupported, recorded as the thread's last error.
[[maybe_unused]] const bool g_stub_answer_registered = [] {
  fg::coverage::on_runtime_stub([]() noexcept { return static_cast<int>(fg::rt::ret(cudaErrorNotSupported)); });
  return true;
}();

// No kernel ever faults here, so no error is sticky: reading the last error clears it.
extern "C" FG_IMPL cudaError_t fgimpl_cudaGetLastError() {
  auto& st = fg::thread_state();
  const int e = st.last_error;
  st.last_error = 0;
  return static_cast<cudaError_t>(e);
}

extern "C" FG_IMPL cudaError_t fgimpl_cudaPeekAtLastError() {
  return static_cast<cudaError_t>(fg::thread_state().last_error);
}

extern "C" FG_IMPL const char* fgimpl_cudaGetErrorName(cudaError_t error) {
  const fg::CodeName* e = fg::find_code(kErrors, static_cast<int>(error));
  return e ? e->name : kUnrecognized;
}

extern "C" FG_IMPL const char* fgimpl_cudaGetErrorString(cudaError_t error) {
  const char* text = fg::find_code(kErrors, static_cast<int>(error)) ? fg::error_text(static_cast<int>(error))
                                                                     : nullptr;
  return text ? text : kUnrecognized;
}
