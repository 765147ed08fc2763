// SPDX-License-Identifier: Apache-2.0
// Which CUDA Runtime a process runs on, as the backend can see it:
//  - the fake's own libcudart: any cuda* entry point of ours was called;
//  - NVIDIA's runtime over the fake driver: it asked cuGetExportTable for the CUDART
//    interface table, which NVIDIA's runtime (and only it) does before its first call.
//    The object it lives in tells which copy: the program itself (statically linked, nvcc's
//    and CMake's default), a libcudart.so.* (NVIDIA's shared runtime), or another library
//    with its own copy inside (cuBLAS, cuFFT, ...).
// The report lists them ("runtimes"); FAKEGPU_LOG=info logs each at first sight.
// FAKEGPU_RUNTIME=fake|nvidia (set by fakegpu-run --runtime) is the runtime the user asked
// for: the other one showing up is warned about, naming the cause.
#pragma once
#include <atomic>
#include <string>
#include <vector>

namespace fg::runtimes {

struct Seen {
  std::string kind;    // "fake", "nvidia-static", "nvidia-shared", "nvidia-embedded"
  std::string object;  // path of the object the runtime lives in
};

// The fake's runtime served a call (runtime/common.h: rt::api): one relaxed load after the
// first time.
extern std::atomic<bool> g_fake_seen;
void fake_first_use() noexcept;
inline void fake_used() noexcept {
  if (!g_fake_seen.load(std::memory_order_relaxed)) fake_first_use();
}

// NVIDIA's runtime asked for its interface table; caller is a code address inside it.
void nvidia_seen(const void* caller) noexcept;

// What ran, in order of first sight; fake_calls says whether the fake's runtime counted calls
// (the call counters are the complete record: not every entry point goes through rt::api).
std::vector<Seen> snapshot(bool fake_calls);

}  // namespace fg::runtimes
