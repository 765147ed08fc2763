// SPDX-License-Identifier: Apache-2.0
// Contexts: create (v1/v2/v3/v4 ABIs), destroy, the per-thread stack, primary contexts,
// flags, limits, cache configuration, ids, peer access.
//
// CUDA 13 added cuCtxGetDevice_v2(CUdevice*, CUcontext) and cuCtxSynchronize_v2(CUcontext)
// under new names. Numba binds "<name>_v2" before "<name>" and so calls them with the OLD
// argument lists: the CUcontext argument is whatever sits in the register (census §3.3).
// Both therefore treat any context argument that is not a live context as "the current
// context".
#include "driver/common.h"

#include "core/graph.h"

using namespace fg;
using namespace fg::drv;

namespace {

// CU_CTX_SCHED_MASK | MAP_HOST | LMEM_RESIZE_TO_MAX | COREDUMP_ENABLE | USER_COREDUMP_ENABLE
// | SYNC_MEMOPS; the scheduling part is one of AUTO, SPIN, YIELD, BLOCKING_SYNC.
bool ctx_flags_ok(unsigned flags) noexcept {
  if (flags & ~static_cast<unsigned>(CU_CTX_FLAGS_MASK)) return false;
  const unsigned sched = flags & CU_CTX_SCHED_MASK;
  return sched == CU_CTX_SCHED_AUTO || sched == CU_CTX_SCHED_SPIN || sched == CU_CTX_SCHED_YIELD ||
         sched == CU_CTX_SCHED_BLOCKING_SYNC;
}

CUresult create(Backend& b, CUcontext* pctx, unsigned flags, CUdevice dev) {
  if (!pctx) return CUDA_ERROR_INVALID_VALUE;
  Device* d = nullptr;
  if (CUresult r = device_arg(b, dev, &d)) return r;
  if (!ctx_flags_ok(flags)) return CUDA_ERROR_INVALID_VALUE;
  Context* ctx = nullptr;
  if (CUresult r = to_cu(b.ctx_create(d, flags, &ctx))) return r;
  *pctx = handle_of(ctx);
  return CUDA_SUCCESS;
}

// Execution affinity (SM partitioning) needs MPS/green contexts, which the fake does not
// model: a request for it is answered as a device without that support answers.
CUresult check_affinity(const CUexecAffinityParam* params, int count) {
  if (count < 0 || (count > 0 && !params)) return CUDA_ERROR_INVALID_VALUE;
  return count > 0 ? CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY : CUDA_SUCCESS;
}

CUresult destroy(CUcontext h) {
  return api([&](Backend& b) -> CUresult {
    if (!h) return CUDA_ERROR_INVALID_VALUE;
    return to_cu(b.ctx_destroy(ctx_of(h)));
  });
}

CUresult push(CUcontext h) {
  return api([&](Backend& b) -> CUresult {
    if (!h) return CUDA_ERROR_INVALID_VALUE;
    return to_cu(b.push_current(ctx_of(h)));
  });
}

CUresult pop(CUcontext* pctx) {
  return api([&](Backend& b) -> CUresult {
    void* top = nullptr;
    if (CUresult r = to_cu(b.pop_current(&top))) return r;
    if (pctx) *pctx = static_cast<CUcontext>(top);
    return CUDA_SUCCESS;
  });
}

// Context argument of the CUDA 13 "_v2" calls: a live context, else the current one.
CUresult context_lenient(Backend& b, CUcontext h, Context** out) {
  Context* c = ctx_of(h);
  if (h && b.ctx_valid(c)) {
    *out = c;
    return CUDA_SUCCESS;
  }
  return current(b, out);
}

// A setting of the context, read under its lock.
template <class T>
T locked(Context* c, T Context::*field) {
  std::lock_guard lock(c->mu);
  return c->*field;
}

// Sets one setting of the current context: CUDA_ERROR_INVALID_VALUE unless `valid`.
template <class T>
CUresult set_current(bool valid, T Context::*field, T value) {
  return with_current(valid, [&](Backend&, Context* c) {
    std::lock_guard lock(c->mu);
    c->*field = value;
    return CUDA_SUCCESS;
  });
}

// A limit of the current context: CUDA_ERROR_INVALID_VALUE unless `args_ok` and `limit` is
// known; a limit the device lacks is CUDA_ERROR_UNSUPPORTED_LIMIT.
template <class Call>
CUresult with_limit(bool args_ok, CUlimit limit, Call&& call) {
  const int l = static_cast<int>(limit);
  return with_current(args_ok && l >= 0 && l < CU_LIMIT_MAX, [&](Backend& b, Context* c) {
    const Status s = call(b, c, l);
    return s == Status::NotSupported ? CUDA_ERROR_UNSUPPORTED_LIMIT : to_cu(s);
  });
}

// Synchronizes a context; refused during stream capture (core/graph.h).
CUresult synchronize(Backend& b, Context* c) {
  if (CUresult r = to_cu(graph::check_ctx_sync(c))) return r;
  return to_cu(b.ctx_sync(c));
}

CUresult primary_release(CUdevice dev) {
  return with_handle(true, dev, device_arg, [](Backend& b, Device* d) { return to_cu(b.primary_release(d)); });
}

CUresult primary_reset(CUdevice dev) {
  return with_handle(true, dev, device_arg, [](Backend& b, Device* d) { return to_cu(b.primary_reset(d)); });
}

// v1 (7.0) refuses while the primary context is active; v2 (11.0) applies at once.
CUresult primary_set_flags(CUdevice dev, unsigned flags, bool v2) {
  return with_handle(true, dev, device_arg, [&](Backend&, Device* d) -> CUresult {
    if (!ctx_flags_ok(flags)) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard lock(d->primary_mu);
    const bool active = d->primary && d->primary_refs > 0;
    if (active && !v2) return CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE;
    d->primary_flags = flags;
    if (active) {
      std::lock_guard l2(d->primary->mu);
      d->primary->flags = flags;
    }
    return CUDA_SUCCESS;
  });
}

}  // namespace

// ---- create / destroy ----------------------------------------------------------------------------
// The plain names are the pre-3.2 ABI, identical on LP64 (only the handle semantics changed).
extern "C" FG_IMPL CUresult fgimpl_cuCtxCreate(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  return api([&](Backend& b) { return create(b, pctx, flags, dev); });
}
extern "C" FG_IMPL CUresult fgimpl_cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) {
  return api([&](Backend& b) { return create(b, pctx, flags, dev); });
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxCreate_v3(CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams,
                                                  unsigned int flags, CUdevice dev) {
  return api([&](Backend& b) -> CUresult {
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    Device* d = nullptr;  // the device and flags are checked before the affinity request
    if (CUresult r = device_arg(b, dev, &d)) return r;
    if (!ctx_flags_ok(flags)) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = check_affinity(paramsArray, numParams)) return r;
    return create(b, pctx, flags, dev);
  });
}

// CUDA 13's cuCtxCreate: (CUcontext*, CUctxCreateParams* /*may be NULL*/, flags, dev).
extern "C" FG_IMPL CUresult fgimpl_cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* ctxCreateParams,
                                                  unsigned int flags, CUdevice dev) {
  return api([&](Backend& b) -> CUresult {
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (ctxCreateParams) {
      if (ctxCreateParams->execAffinityParams && ctxCreateParams->cigParams) return CUDA_ERROR_INVALID_VALUE;
      if (CUresult r = check_affinity(ctxCreateParams->execAffinityParams, ctxCreateParams->numExecAffinityParams))
        return r;
      if (ctxCreateParams->cigParams) return CUDA_ERROR_NOT_SUPPORTED;  // CUDA-in-graphics needs a graphics API
    }
    return create(b, pctx, flags, dev);
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxDestroy(CUcontext ctx) { return destroy(ctx); }
extern "C" FG_IMPL CUresult fgimpl_cuCtxDestroy_v2(CUcontext ctx) { return destroy(ctx); }

// ---- the context stack ---------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuCtxPushCurrent(CUcontext ctx) { return push(ctx); }
extern "C" FG_IMPL CUresult fgimpl_cuCtxPushCurrent_v2(CUcontext ctx) { return push(ctx); }
extern "C" FG_IMPL CUresult fgimpl_cuCtxPopCurrent(CUcontext* pctx) { return pop(pctx); }
extern "C" FG_IMPL CUresult fgimpl_cuCtxPopCurrent_v2(CUcontext* pctx) { return pop(pctx); }

extern "C" FG_IMPL CUresult fgimpl_cuCtxSetCurrent(CUcontext ctx) {
  return api([&](Backend& b) -> CUresult {
    Context* c = ctx_of(ctx);
    if (ctx && !c) return CUDA_ERROR_INVALID_CONTEXT;  // NULL pops; any other value must name a context
    return to_cu(b.set_current(c));
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxGetCurrent(CUcontext* pctx) {
  return api([&](Backend& b) -> CUresult {
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = handle_of(b.current_ctx());
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxGetDevice(CUdevice* device) {
  return query_current(device, [](Context* c) { return c->dev->ordinal; });
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxGetDevice_v2(CUdevice* device, CUcontext ctx) {
  return query_handle(device, ctx, context_lenient, [](Context* c) { return c->dev->ordinal; });
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxSynchronize(void) { return with_current(true, synchronize); }

extern "C" FG_IMPL CUresult fgimpl_cuCtxSynchronize_v2(CUcontext ctx) {
  return with_handle(true, ctx, context_lenient, synchronize);
}

// ---- flags, limits, configuration ----------------------------------------------------------------
// The current context's settings are read and written under its lock.
extern "C" FG_IMPL CUresult fgimpl_cuCtxGetFlags(unsigned int* flags) {
  return query_current(flags, [](Context* c) { return locked(c, &Context::flags); });
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxSetFlags(unsigned int flags) {
  return set_current(ctx_flags_ok(flags), &Context::flags, flags);
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxGetLimit(size_t* pvalue, CUlimit limit) {
  return with_limit(pvalue != nullptr, limit, [&](Backend& b, Context* c, int l) { return b.ctx_limit(c, l, pvalue); });
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxSetLimit(CUlimit limit, size_t value) {
  return with_limit(true, limit, [&](Backend& b, Context* c, int l) { return b.ctx_set_limit(c, l, value); });
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxGetCacheConfig(CUfunc_cache* pconfig) {
  return query_current(pconfig,
                       [](Context* c) { return static_cast<CUfunc_cache>(locked(c, &Context::cache_config)); });
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxSetCacheConfig(CUfunc_cache config) {
  return set_current(cache_config_ok(config), &Context::cache_config, static_cast<int>(config));
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxGetSharedMemConfig(CUsharedconfig* pConfig) {
  return query_current(pConfig,
                       [](Context* c) { return static_cast<CUsharedconfig>(locked(c, &Context::shmem_config)); });
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxSetSharedMemConfig(CUsharedconfig config) {
  return set_current(shmem_config_ok(config), &Context::shmem_config, static_cast<int>(config));
}

// Contexts made through the v2+ entry points report API version 3020, as the real driver does.
extern "C" FG_IMPL CUresult fgimpl_cuCtxGetApiVersion(CUcontext ctx, unsigned int* version) {
  return query_handle(version, ctx, context_or_current, [](Context*) { return 3020; });
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxGetId(CUcontext ctx, unsigned long long* ctxId) {
  return query_handle(ctxId, ctx, context_or_current, [](Context* c) { return c->id; });
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  return with_current(true, [&](Backend&, Context* ctx) {
    const bool prio = ctx->dev->model.attributes[attr::STREAM_PRIORITIES_SUPPORTED] != 0;
    if (leastPriority) *leastPriority = 0;
    if (greatestPriority) *greatestPriority = prio ? -5 : 0;
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxResetPersistingL2Cache(void) {
  return with_current(true, [](Backend&, Context*) { return CUDA_SUCCESS; });
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxGetExecAffinity(CUexecAffinityParam* pExecAffinity, CUexecAffinityType type) {
  const bool args_ok = pExecAffinity && static_cast<int>(type) == CU_EXEC_AFFINITY_TYPE_SM_COUNT;
  return with_current(args_ok, [&](Backend&, Context* ctx) {
    pExecAffinity->type = CU_EXEC_AFFINITY_TYPE_SM_COUNT;
    pExecAffinity->param.smCount.val = static_cast<unsigned>(ctx->dev->model.sm_count);
    return CUDA_SUCCESS;
  });
}

// ---- peer access ---------------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int Flags) {
  return with_current(Flags == 0, [&](Backend& b, Context* cur) -> CUresult {
    Context* peer = nullptr;
    if (CUresult r = context_arg(b, peerContext, &peer)) return r;
    if (peer->dev == cur->dev) return CUDA_ERROR_INVALID_DEVICE;
    if (!peer_capable(cur->dev, peer->dev)) return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    std::lock_guard lock(cur->mu);
    if (!cur->peers.insert(peer->dev->ordinal).second) return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuCtxDisablePeerAccess(CUcontext peerContext) {
  return with_current(true, [&](Backend& b, Context* cur) -> CUresult {
    Context* peer = nullptr;
    if (CUresult r = context_arg(b, peerContext, &peer)) return r;
    std::lock_guard lock(cur->mu);
    if (cur->peers.erase(peer->dev->ordinal) == 0) return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    return CUDA_SUCCESS;
  });
}

// ---- primary contexts ----------------------------------------------------------------------------
extern "C" FG_IMPL CUresult fgimpl_cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
  return with_handle(pctx != nullptr, dev, device_arg, [&](Backend& b, Device* d) -> CUresult {
    Context* ctx = nullptr;
    if (CUresult r = to_cu(b.primary_retain(d, &ctx))) return r;
    *pctx = handle_of(ctx);
    return CUDA_SUCCESS;
  });
}

extern "C" FG_IMPL CUresult fgimpl_cuDevicePrimaryCtxRelease(CUdevice dev) { return primary_release(dev); }
extern "C" FG_IMPL CUresult fgimpl_cuDevicePrimaryCtxRelease_v2(CUdevice dev) { return primary_release(dev); }
extern "C" FG_IMPL CUresult fgimpl_cuDevicePrimaryCtxReset(CUdevice dev) { return primary_reset(dev); }
extern "C" FG_IMPL CUresult fgimpl_cuDevicePrimaryCtxReset_v2(CUdevice dev) { return primary_reset(dev); }
extern "C" FG_IMPL CUresult fgimpl_cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
  return primary_set_flags(dev, flags, false);
}
extern "C" FG_IMPL CUresult fgimpl_cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) {
  return primary_set_flags(dev, flags, true);
}

extern "C" FG_IMPL CUresult fgimpl_cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
  return with_handle(flags && active, dev, device_arg, [&](Backend&, Device* d) {
    std::lock_guard lock(d->primary_mu);
    *flags = d->primary_flags;
    *active = d->primary && d->primary_refs > 0 ? 1 : 0;
    return CUDA_SUCCESS;
  });
}
