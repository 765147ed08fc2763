// SPDX-License-Identifier: Apache-2.0
// Error codes shared by the core (numeric values of the public APIs) and the error type the
// core throws internally. No exception ever crosses an exported function: every shim
// catches and maps to its API's code.
#pragma once
#include <stdexcept>

namespace fg {

// Core-level failure categories; each API maps them to its own codes.
enum class Status : int {
  Ok = 0,
  InvalidValue,    // bad argument (null out-pointer, bad flags, bad size)
  InvalidDevice,   // ordinal out of range
  InvalidContext,  // unknown / destroyed context
  InvalidHandle,   // unknown stream / event / module / function / pool
  InvalidPointer,  // pointer that is not a live allocation (free of unknown / double free)
  OutOfMemory,     // device capacity or address space exhausted
  NotReady,        // async work or event not complete
  NotInitialized,  // driver API before cuInit
  NotFound,        // symbol / name lookup failed
  NotSupported,
  NotPermitted,
  AlreadyMapped,
  ContextIsDestroyed,
  PeerAccessAlreadyEnabled,
  PeerAccessNotEnabled,
  // Stream capture and graphs (core/graph.h); each is the same-named code of both APIs.
  CaptureUnsupported,      // operation not permitted while a stream is capturing
  CaptureInvalidated,      // the capture sequence was invalidated by an earlier error
  CaptureMerge,            // would merge two separate capture sequences
  CaptureUnmatched,        // capture ended on another stream than it began
  CaptureUnjoined,         // a forked stream was not joined back before the end
  CaptureIsolation,        // dependency on uncaptured work in another stream
  CaptureImplicit,         // legacy stream while a blocking stream is capturing
  CapturedEvent,           // event last recorded in a capturing stream
  CaptureWrongThread,      // thread-local/global capture ended from another thread
  IllegalState,            // e.g. ending a capture that was never begun
  GraphExecUpdateFailure,  // executable graph update refused (topology or type changed)
  // Device code images (core/fatbin.h): not a CUDA image, no code for this device, bad PTX.
  InvalidImage,
  NoBinaryForGpu,
  InvalidPtx,
  // Launches (Backend::check_launch): more registers than a block may have, a cluster the
  // device cannot form, a cooperative grid larger than can be resident at once.
  LaunchOutOfResources,
  InvalidClusterSize,
  CooperativeLaunchTooLarge,
  // A kernel's failure (kernels/executor.h), sticky for its context.
  IllegalAddress,
  MisalignedAddress,
  AssertFailed,
  LaunchFailed,
  Unknown,
};

// Thrown only inside the core for conditions that cannot be reported through a return
// value of the current call (e.g. configuration or ledger attach failures at init).
struct FatalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace fg
