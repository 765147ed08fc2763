// SPDX-License-Identifier: Apache-2.0
// cuGetProcAddress (11.3) / cuGetProcAddress_v2 (12.0). cuGetExportTable: export_tables.cpp.
//
// NVIDIA's cudart reaches the driver only through cuGetProcAddress_v2(name, version, flags)
// (census §3.2, §5.2). The answer is the entry point of the newest ABI of `name` introduced
// at or before `version`: the k-th ABI (in version order) of a name is exported as the plain
// name, then _v2, _v3, … (the PFN_<name>_v<version> typedefs of cudaTypedefs.h, listed in
// api/cuda_proc_versions.def, FG_PROC lines; FG_PROC_ALIAS lines override a symbol name that
// breaks the rule). With CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM the answer is the
// newest per-thread twin (<variant>_ptds / _ptsz, FG_PROC_PT lines) introduced at or before
// `version`, when there is one.
//
// The address handed out is that of the EXPORTED symbol (looked up with dlsym in this
// library), so a caller going through the pointer crosses the same probed entry point as a
// caller linking the name.
#include "driver/common.h"

#include "common/api_ids.h"
#include "common/coverage.h"
#include "common/log.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

using namespace fg;
using namespace fg::drv;

namespace {

struct ProcVersions {
  const char* name;
  const int* versions;  // ascending
  size_t count;
};
// FG_PROC_PT (per-thread twin from a version on) and FG_PROC_ALIAS (a symbol that breaks
// the plain/_v2/_v3 naming rule for one version); each list ends with a null sentinel.
struct ProcSymbol {
  const char* name;
  int version;
  const char* symbol;
};

#define FG_UNPAREN(...) __VA_ARGS__
#define FG_PROC(name, vers) constexpr int kVersions_##name[] = {FG_UNPAREN vers};
#define FG_PROC_PT(name, version, symbol)
#define FG_PROC_ALIAS(name, version, symbol)
#include "cuda_proc_versions.def"
#undef FG_PROC
#undef FG_PROC_PT
#undef FG_PROC_ALIAS

constexpr ProcVersions kProcs[] = {
#define FG_PROC(name, vers) {#name, kVersions_##name, std::size(kVersions_##name)},
#define FG_PROC_PT(name, version, symbol)
#define FG_PROC_ALIAS(name, version, symbol)
#include "cuda_proc_versions.def"
#undef FG_PROC
#undef FG_PROC_PT
#undef FG_PROC_ALIAS
};

constexpr ProcSymbol kPerThread[] = {
#define FG_PROC(name, vers)
#define FG_PROC_PT(name, version, symbol) {#name, version, #symbol},
#define FG_PROC_ALIAS(name, version, symbol)
#include "cuda_proc_versions.def"
#undef FG_PROC
#undef FG_PROC_PT
#undef FG_PROC_ALIAS
    {nullptr, 0, nullptr},
};

constexpr ProcSymbol kAliases[] = {
#define FG_PROC(name, vers)
#define FG_PROC_PT(name, version, symbol)
#define FG_PROC_ALIAS(name, version, symbol) {#name, version, #symbol},
#include "cuda_proc_versions.def"
#undef FG_PROC
#undef FG_PROC_PT
#undef FG_PROC_ALIAS
    {nullptr, 0, nullptr},
};

struct Tables {
  std::unordered_map<std::string_view, const ProcVersions*> procs;
  std::unordered_map<std::string_view, std::vector<const ProcSymbol*>> per_thread;  // ascending versions
  std::unordered_map<std::string_view, std::vector<const ProcSymbol*>> aliases;
  std::unordered_set<std::string_view> exported;  // every libcuda export name
  void* self = nullptr;                           // dlopen handle of this library
};

const Tables& tables() {
  static const Tables* t = [] {
    auto* t = new Tables;
    for (const ProcVersions& p : kProcs) t->procs.emplace(p.name, &p);
    for (const ProcSymbol& p : kPerThread)
      if (p.name) t->per_thread[p.name].push_back(&p);
    for (const ProcSymbol& p : kAliases)
      if (p.name) t->aliases[p.name].push_back(&p);
    for (auto& [name, v] : t->per_thread)
      std::sort(v.begin(), v.end(), [](const ProcSymbol* a, const ProcSymbol* b) { return a->version < b->version; });
    for (size_t i = 0; i < kApiCount; ++i) {
      const ApiInfo& info = api_info(i);
      if (info.family == ApiFamily::Driver) t->exported.emplace(info.name);
    }
    Dl_info dl{};
    if (dladdr(reinterpret_cast<void*>(&tables), &dl) && dl.dli_fname)
      t->self = dlopen(dl.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!t->self) FG_LOG(Warn, Driver, "cuGetProcAddress: cannot reopen this library; using the global scope");
    return t;
  }();
  return *t;
}

// Name of the k-th ABI of a driver entry point (0 = plain).
std::string variant_name(std::string_view base, size_t k) {
  std::string s(base);
  if (k > 0) s += "_v" + std::to_string(k + 1);
  return s;
}

bool has_version_suffix(std::string_view n) {
  if (n.ends_with("_ptds") || n.ends_with("_ptsz")) return true;
  const size_t v = n.rfind("_v");
  if (v == std::string_view::npos || v + 2 >= n.size()) return false;
  for (size_t i = v + 2; i < n.size(); ++i)
    if (n[i] < '0' || n[i] > '9') return false;
  return true;
}

CUresult get_proc(const char* symbol, void** pfn, int cudaVersion, uint64_t flags,
                  CUdriverProcAddressQueryResult* status) {
  if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  if (flags > CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) return CUDA_ERROR_INVALID_VALUE;
  auto not_found = [&](CUdriverProcAddressQueryResult why) {
    if (status) *status = why;
    // A name the real driver would serve but we do not is a gap; asking for an API newer
    // than the requested version is answered the same way by the real driver, and "" is
    // cudart's probe.
    if (*symbol && why == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND) coverage::unresolved_proc(symbol, cudaVersion, flags);
    return CUDA_ERROR_NOT_FOUND;
  };
  const Tables& t = tables();
  const std::string_view name(symbol);
  std::string chosen;
  if (auto it = t.procs.find(name); it != t.procs.end()) {
    const ProcVersions& pv = *it->second;
    size_t k = pv.count;
    for (size_t i = 0; i < pv.count; ++i)
      if (pv.versions[i] <= cudaVersion) k = i;
    if (k == pv.count) return not_found(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    chosen = variant_name(name, k);
    if (auto al = t.aliases.find(name); al != t.aliases.end())
      for (const ProcSymbol* a : al->second)
        if (a->version == pv.versions[k]) chosen = a->symbol;
    // Per-thread default stream: the newest twin introduced at or before the version.
    if (flags == CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) {
      if (auto pt = t.per_thread.find(name); pt != t.per_thread.end())
        for (const ProcSymbol* p : pt->second)
          if (p->version <= cudaVersion) chosen = p->symbol;
    }
  } else if (!name.empty() && !has_version_suffix(name) && t.exported.count(name)) {
    chosen = name;  // exported but absent from the version list: its only ABI
  } else {
    return not_found(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  }
  if (!t.exported.count(chosen)) return not_found(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  void* addr = dlsym(t.self ? t.self : RTLD_DEFAULT, chosen.c_str());
  if (!addr) return not_found(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
  *pfn = addr;
  if (status) *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

}  // namespace

// Both work before cuInit: cudart resolves everything first, then calls cuInit.
extern "C" FG_IMPL CUresult fgimpl_cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, uint64_t flags) {
  return api_noinit([&] { return get_proc(symbol, pfn, cudaVersion, flags, nullptr); });
}

extern "C" FG_IMPL CUresult fgimpl_cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, uint64_t flags,
                                                       CUdriverProcAddressQueryResult* symbolStatus) {
  return api_noinit([&] { return get_proc(symbol, pfn, cudaVersion, flags, symbolStatus); });
}
