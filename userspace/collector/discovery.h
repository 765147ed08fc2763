// SPDX-License-Identifier: Apache-2.0
// Finding the CUDA libraries to trace: those a process has mapped (attach -p), the installed
// backend and system CUDA libraries (monitor), and copies that appear while monitoring.
#pragma once
#include <string>
#include <vector>

namespace fgtrace {

// Whether a library file exports CUDA functions fakegpu-trace traces (runtime or driver).
bool is_cuda_library(const std::string& path);
// Whether it is the fake backend (it carries the fakegpu USDT probes).
bool is_fake_backend(const std::string& path);

// CUDA libraries mapped by process `pid` (from /proc/PID/maps and their ELF symbol tables).
// Throws TraceError if the process does not exist.
std::vector<std::string> cuda_libraries_of(int pid);

// The backend next to this executable (build tree or install) and any copy of it in the
// dynamic linker's cache, each once.
std::vector<std::string> default_libraries();

// CUDA libraries mapped by any process on the host right now.
std::vector<std::string> mapped_cuda_libraries();

bool process_exists(int pid);
std::string process_comm(int pid);

}  // namespace fgtrace
