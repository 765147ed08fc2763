// SPDX-License-Identifier: Apache-2.0
// Atomics on global and shared memory, each with an exact expected value whatever order
// the threads run in:
//   add on int, unsigned, unsigned long long, float, double, __half and __nv_bfloat16 (the
//   floating-point addends are chosen so every partial sum is exact: order cannot matter);
//   sub, exch (the old values returned, plus the final value, are the values stored);
//   CAS on 32 and 64 bits (a lock-free ticket counter: the tickets are a permutation);
//   min/max on int, unsigned, long long, unsigned long long; and/or/xor on 32 and 64 bits;
//   atomicInc/atomicDec with wrap-around (inc: old >= limit ? 0 : old+1; dec: old == 0 ||
//   old > limit ? limit : old-1), whose returned values form a fixed multiset; one thread's
//   sequence of inc/dec at the edges; block- and system-scope variants; a last-block
//   reduction with __threadfence (the CUDA Programming Guide's threadFenceReduction).
#include "check.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <map>
#include <vector>

constexpr int kBlocks = 64, kThreads = 256, kN = kBlocks * kThreads;

__device__ __host__ int hash_of(unsigned t) { return static_cast<int>(t * 2654435761u ^ (t >> 3)); }

struct Globals {
  int add_i;
  unsigned add_u;
  unsigned long long add_ull;
  float add_f;
  double add_d;
  int sub_i;
  int exch;
  int min_i, max_i;
  unsigned min_u, max_u;
  long long min_ll, max_ll;
  unsigned long long min_ull, max_ull;
  unsigned and_u, or_u, xor_u;
  unsigned long long and_ull, or_ull, xor_ull;
  unsigned inc, dec;
  unsigned ticket;
  unsigned long long ticket64;
  int add_system;
  __half add_h;
  __nv_bfloat16 add_bf;
};

struct PerThread {
  int exch_old;
  unsigned inc_old, dec_old, ticket;
  unsigned long long ticket64;
};

__global__ void global_atomics(Globals* g, PerThread* pt) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  int h = hash_of(t);
  atomicAdd(&g->add_i, static_cast<int>(t % 7) - 3);  // result unused: a reduction (red)
  atomicAdd(&g->add_u, t);
  atomicAdd(&g->add_ull, static_cast<unsigned long long>(t) << 20);
  atomicAdd(&g->add_f, static_cast<float>(t % 4) * 0.25f);
  atomicAdd(&g->add_d, t * 0.5);
  atomicSub(&g->sub_i, static_cast<int>(t % 5));
  pt[t].exch_old = atomicExch(&g->exch, static_cast<int>(t) + 1);
  atomicMin(&g->min_i, h);
  atomicMax(&g->max_i, h);
  atomicMin(&g->min_u, static_cast<unsigned>(h));
  atomicMax(&g->max_u, static_cast<unsigned>(h));
  atomicMin(&g->min_ll, static_cast<long long>(h) * 1000003);
  atomicMax(&g->max_ll, static_cast<long long>(h) * 1000003);
  atomicMin(&g->min_ull, static_cast<unsigned long long>(static_cast<unsigned>(h)) << 32 | t);
  atomicMax(&g->max_ull, static_cast<unsigned long long>(static_cast<unsigned>(h)) << 32 | t);
  atomicAnd(&g->and_u, ~(1u << (t % 31)));
  atomicOr(&g->or_u, 1u << (t % 29));
  atomicXor(&g->xor_u, static_cast<unsigned>(h));
  atomicAnd(&g->and_ull, ~(1ull << (t % 50)));
  atomicOr(&g->or_ull, 1ull << (t % 61));
  atomicXor(&g->xor_ull, static_cast<unsigned long long>(static_cast<unsigned>(h)) * static_cast<unsigned>(h));
  pt[t].inc_old = atomicInc(&g->inc, 9);
  pt[t].dec_old = atomicDec(&g->dec, 9);
  // Lock-free ticket counters: retry with the value seen until the swap succeeds.
  unsigned seen = g->ticket, prev;
  while ((prev = atomicCAS(&g->ticket, seen, seen + 1)) != seen) seen = prev;
  pt[t].ticket = seen;
  unsigned long long seen64 = g->ticket64, prev64;
  while ((prev64 = atomicCAS(&g->ticket64, seen64, seen64 + 1)) != seen64) seen64 = prev64;
  pt[t].ticket64 = seen64;
  atomicAdd_system(&g->add_system, 2);
  if (t < 1024) atomicAdd(&g->add_h, __float2half(1.0f));      // 1024: exact in half
  if (t < 128) atomicAdd(&g->add_bf, __float2bfloat16(1.0f));  // 128: exact in bfloat16
}

// One thread, inc and dec at their edges: each old value and the value left behind.
__global__ void inc_dec_edges(unsigned* x, unsigned* out) {
  int k = 0;
  *x = 100;
  out[k++] = atomicInc(x, 9);  // 100 >= 9: 0 stored
  out[k++] = *x;
  out[k++] = atomicInc(x, 9);  // 0 -> 1
  out[k++] = *x;
  *x = 9;
  out[k++] = atomicInc(x, 9);  // 9 >= 9: wraps to 0
  out[k++] = *x;
  *x = 0xffffffffu;
  out[k++] = atomicInc(x, 0xffffffffu);  // wraps to 0
  out[k++] = *x;
  *x = 0;
  out[k++] = atomicDec(x, 9);  // 0: limit stored
  out[k++] = *x;
  *x = 50;
  out[k++] = atomicDec(x, 9);  // 50 > 9: limit stored
  out[k++] = *x;
  *x = 3;
  out[k++] = atomicDec(x, 9);  // 3 -> 2
  out[k++] = *x;
  *x = 0;
  out[k++] = atomicInc(x, 0);  // limit 0: always 0
  out[k++] = *x;
}
constexpr int kEdges = 16;

constexpr int kShared = 16;  // results per block of shared_atomics
__device__ __host__ unsigned shared_value(unsigned t, unsigned b) { return t * 40503u + b * 7919u; }

__global__ void shared_atomics(long long* out, unsigned* hist_out) {
  __shared__ int add_i;
  __shared__ float add_f;
  __shared__ double add_d;
  __shared__ unsigned long long add_ull;
  __shared__ unsigned inc, ticket;
  __shared__ int min_i, max_i;
  __shared__ unsigned and_u, or_u, xor_u, exch;
  __shared__ unsigned long long min_ull, max_ull;
  __shared__ unsigned hist[16];
  unsigned t = threadIdx.x, b = blockIdx.x;
  if (t == 0) {
    add_i = 0, add_f = 0, add_d = 0, add_ull = 0, inc = 0, ticket = 0;
    min_i = 0x7fffffff, max_i = -0x7fffffff - 1, and_u = 0xffffffffu, or_u = 0, xor_u = 0, exch = 0;
    min_ull = ~0ull, max_ull = 0;
  }
  if (t < 16) hist[t] = 0;
  __syncthreads();
  unsigned v = shared_value(t, b);
  atomicAdd(&add_i, static_cast<int>(t % 7) - 3 + static_cast<int>(b));
  atomicAdd(&add_f, static_cast<float>(t % 4) * 0.5f);
  atomicAdd(&add_d, t * 0.25);
  atomicAdd(&add_ull, static_cast<unsigned long long>(t + b) << 33);
  atomicInc(&inc, 100);
  unsigned seen = ticket, prev;
  while ((prev = atomicCAS(&ticket, seen, seen + 1)) != seen) seen = prev;
  atomicMin(&min_i, static_cast<int>(v));
  atomicMax(&max_i, static_cast<int>(v));
  atomicAnd(&and_u, ~(1u << ((t + b) % 32)) | (t < 16 ? 0u : 0xffffffffu));
  atomicOr(&or_u, 1u << ((t * 3 + b) % 32) & (t < 200 ? 0xffffffffu : 0u));
  atomicXor(&xor_u, v);
  atomicExch(&exch, t);  // ends as some thread's t
  atomicMin(&min_ull, static_cast<unsigned long long>(v) << 16 | t);
  atomicMax(&max_ull, static_cast<unsigned long long>(v) << 16 | t);
  atomicAdd_block(&hist[v % 16], 1u);
  __syncthreads();
  if (t == 0) {
    long long* o = out + b * kShared;
    o[0] = add_i, o[1] = static_cast<long long>(add_f), o[2] = static_cast<long long>(add_d * 4);
    o[3] = static_cast<long long>(add_ull >> 33), o[4] = inc, o[5] = ticket, o[6] = min_i, o[7] = max_i;
    o[8] = and_u, o[9] = or_u, o[10] = xor_u, o[11] = exch < blockDim.x;
    o[12] = static_cast<long long>(min_ull), o[13] = static_cast<long long>(max_ull);
    o[14] = add_f == static_cast<float>(static_cast<long long>(add_f));  // integral: exact
    o[15] = add_d * 4 == static_cast<double>(static_cast<long long>(add_d * 4));
  }
  if (t < 16) hist_out[b * 16 + t] = hist[t];
}

// threadFenceReduction: every block writes its partial sum; the last block to finish (the
// one whose atomicInc returns gridDim.x - 1) adds them up. atomicInc wraps the counter back
// to 0 for the next launch.
__device__ unsigned g_blocks_done = 0;
__global__ void fence_reduce(const int* in, long long* partial, long long* total) {
  __shared__ long long s[256];
  __shared__ bool last;
  unsigned t = threadIdx.x;
  s[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (unsigned stride = 128; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) {
    partial[blockIdx.x] = s[0];
    __threadfence();
    last = atomicInc(&g_blocks_done, gridDim.x - 1) == gridDim.x - 1;
  }
  __syncthreads();
  if (last && t == 0) {
    long long sum = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) sum += const_cast<volatile long long*>(partial)[b];
    *total = sum;
  }
}

int main() {
  // ---- global memory, 16384 threads
  Globals init{};
  init.sub_i = 1000000;
  init.min_i = 0x7fffffff, init.max_i = -0x7fffffff - 1;
  init.min_u = 0xffffffffu, init.max_u = 0;
  init.min_ll = 0x7fffffffffffffffLL, init.max_ll = -0x7fffffffffffffffLL - 1;
  init.min_ull = ~0ull, init.max_ull = 0;
  init.and_u = 0xffffffffu, init.and_ull = ~0ull;
  init.dec = 5;
  init.ticket64 = 1ull << 40;
  init.add_h = __float2half(0.0f);
  init.add_bf = __float2bfloat16(0.0f);
  Globals* dg;
  PerThread* dpt;
  CK(cudaMalloc(&dg, sizeof(Globals)));
  CK(cudaMalloc(&dpt, kN * sizeof(PerThread)));
  CK(cudaMemcpy(dg, &init, sizeof(Globals), cudaMemcpyHostToDevice));
  global_atomics<<<kBlocks, kThreads>>>(dg, dpt);
  CK_LAUNCH();
  Globals g;
  std::vector<PerThread> pt(kN);
  CK(cudaMemcpy(&g, dg, sizeof(Globals), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(pt.data(), dpt, kN * sizeof(PerThread), cudaMemcpyDeviceToHost));
  CK(cudaFree(dg));
  CK(cudaFree(dpt));

  Globals w = init;
  std::vector<unsigned> inc_seq, dec_seq;
  for (unsigned t = 0; t < kN; ++t) {
    int h = hash_of(t);
    w.add_i += static_cast<int>(t % 7) - 3;
    w.add_u += t;
    w.add_ull += static_cast<unsigned long long>(t) << 20;
    w.add_f += static_cast<float>(t % 4) * 0.25f;
    w.add_d += t * 0.5;
    w.sub_i -= static_cast<int>(t % 5);
    w.min_i = std::min(w.min_i, h), w.max_i = std::max(w.max_i, h);
    w.min_u = std::min(w.min_u, static_cast<unsigned>(h)), w.max_u = std::max(w.max_u, static_cast<unsigned>(h));
    long long ll = static_cast<long long>(h) * 1000003;
    w.min_ll = std::min(w.min_ll, ll), w.max_ll = std::max(w.max_ll, ll);
    unsigned long long ull = static_cast<unsigned long long>(static_cast<unsigned>(h)) << 32 | t;
    w.min_ull = std::min(w.min_ull, ull), w.max_ull = std::max(w.max_ull, ull);
    w.and_u &= ~(1u << (t % 31));
    w.or_u |= 1u << (t % 29);
    w.xor_u ^= static_cast<unsigned>(h);
    w.and_ull &= ~(1ull << (t % 50));
    w.or_ull |= 1ull << (t % 61);
    w.xor_ull ^= static_cast<unsigned long long>(static_cast<unsigned>(h)) * static_cast<unsigned>(h);
    inc_seq.push_back(w.inc);
    w.inc = w.inc >= 9 ? 0 : w.inc + 1;
    dec_seq.push_back(w.dec);
    w.dec = (w.dec == 0 || w.dec > 9) ? 9 : w.dec - 1;
  }
  kt::check_eq("global atomicAdd int (red)", g.add_i, w.add_i);
  kt::check_eq("global atomicAdd unsigned", g.add_u, w.add_u);
  kt::check_eq("global atomicAdd unsigned long long", g.add_ull, w.add_ull);
  kt::check_eq("global atomicAdd float (exact partial sums)", g.add_f, w.add_f);
  kt::check_eq("global atomicAdd double (exact partial sums)", g.add_d, w.add_d);
  kt::check_eq("global atomicSub int", g.sub_i, w.sub_i);
  kt::check_eq("global atomicMin int", g.min_i, w.min_i);
  kt::check_eq("global atomicMax int", g.max_i, w.max_i);
  kt::check_eq("global atomicMin unsigned", g.min_u, w.min_u);
  kt::check_eq("global atomicMax unsigned", g.max_u, w.max_u);
  kt::check_eq("global atomicMin long long", g.min_ll, w.min_ll);
  kt::check_eq("global atomicMax long long", g.max_ll, w.max_ll);
  kt::check_eq("global atomicMin unsigned long long", g.min_ull, w.min_ull);
  kt::check_eq("global atomicMax unsigned long long", g.max_ull, w.max_ull);
  kt::check_eq("global atomicAnd unsigned", g.and_u, w.and_u);
  kt::check_eq("global atomicOr unsigned", g.or_u, w.or_u);
  kt::check_eq("global atomicXor unsigned", g.xor_u, w.xor_u);
  kt::check_eq("global atomicAnd unsigned long long", g.and_ull, w.and_ull);
  kt::check_eq("global atomicOr unsigned long long", g.or_ull, w.or_ull);
  kt::check_eq("global atomicXor unsigned long long", g.xor_ull, w.xor_ull);
  kt::check_eq("global atomicInc final (limit 9)", g.inc, w.inc);
  kt::check_eq("global atomicDec final (limit 9, from 5)", g.dec, w.dec);
  kt::check_eq("global atomicCAS 32-bit ticket counter final", g.ticket, static_cast<unsigned>(kN));
  kt::check_eq("global atomicCAS 64-bit ticket counter final", g.ticket64, (1ull << 40) + kN);
  kt::check_eq("global atomicAdd_system int", g.add_system, 2 * kN);
  kt::check_eq("global atomicAdd __half (1024 x 1.0)", __half2float(g.add_h), 1024.0f);
  kt::check_eq("global atomicAdd __nv_bfloat16 (128 x 1.0)", __bfloat162float(g.add_bf), 128.0f);
  {
    // Exchange: the old values returned plus the value left are the initial 0 and every t+1.
    std::vector<int> seen;
    for (auto& p : pt) seen.push_back(p.exch_old);
    seen.push_back(g.exch);
    std::sort(seen.begin(), seen.end());
    std::vector<int> want(kN + 1);
    for (int i = 0; i <= kN; ++i) want[i] = i;
    kt::check_array("global atomicExch: old values + final = all values stored", seen.data(), want.data(), want.size());
  }
  {
    std::vector<unsigned> got_inc, got_dec, got_t;
    std::vector<unsigned long long> got_t64;
    for (auto& p : pt) got_inc.push_back(p.inc_old), got_dec.push_back(p.dec_old), got_t.push_back(p.ticket);
    for (auto& p : pt) got_t64.push_back(p.ticket64);
    std::sort(got_inc.begin(), got_inc.end());
    std::sort(got_dec.begin(), got_dec.end());
    std::sort(got_t.begin(), got_t.end());
    std::sort(got_t64.begin(), got_t64.end());
    std::sort(inc_seq.begin(), inc_seq.end());
    std::sort(dec_seq.begin(), dec_seq.end());
    kt::check_array("global atomicInc: multiset of old values", got_inc.data(), inc_seq.data(), kN);
    kt::check_array("global atomicDec: multiset of old values", got_dec.data(), dec_seq.data(), kN);
    std::vector<unsigned> perm(kN);
    std::vector<unsigned long long> perm64(kN);
    for (int i = 0; i < kN; ++i) perm[i] = i, perm64[i] = (1ull << 40) + i;
    kt::check_array("global atomicCAS 32-bit: tickets are a permutation", got_t.data(), perm.data(), kN);
    kt::check_array("global atomicCAS 64-bit: tickets are a permutation", got_t64.data(), perm64.data(), kN);
  }

  // ---- one thread at the edges of inc/dec
  {
    unsigned *dx, *dout;
    CK(cudaMalloc(&dx, sizeof(unsigned)));
    CK(cudaMalloc(&dout, kEdges * sizeof(unsigned)));
    inc_dec_edges<<<1, 1>>>(dx, dout);
    CK_LAUNCH();
    unsigned got[kEdges];
    CK(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
    CK(cudaFree(dx));
    CK(cudaFree(dout));
    const unsigned want[kEdges] = {100, 0, 0, 1, 9, 0, 0xffffffffu, 0, 0, 9, 50, 9, 3, 2, 0, 0};
    kt::check_array("atomicInc/atomicDec edge cases (old, stored)", got, want, kEdges);
  }

  // ---- shared memory, 32 blocks x 256 threads
  {
    const int blocks = 32, threads = 256;
    long long* dout;
    unsigned* dhist;
    CK(cudaMalloc(&dout, blocks * kShared * sizeof(long long)));
    CK(cudaMalloc(&dhist, blocks * 16 * sizeof(unsigned)));
    shared_atomics<<<blocks, threads>>>(dout, dhist);
    CK_LAUNCH();
    std::vector<long long> got(blocks * kShared), want(blocks * kShared);
    std::vector<unsigned> ghist(blocks * 16), whist(blocks * 16, 0);
    CK(cudaMemcpy(got.data(), dout, got.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(ghist.data(), dhist, ghist.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CK(cudaFree(dout));
    CK(cudaFree(dhist));
    for (unsigned b = 0; b < blocks; ++b) {
      long long add_i = 0, add_f2 = 0, add_d4 = 0, add_ull = 0;
      int mn = 0x7fffffff, mx = -0x7fffffff - 1;
      unsigned and_u = 0xffffffffu, or_u = 0, xor_u = 0, inc = 0;
      unsigned long long mnu = ~0ull, mxu = 0;
      for (unsigned t = 0; t < threads; ++t) {
        unsigned v = shared_value(t, b);
        add_i += static_cast<int>(t % 7) - 3 + static_cast<int>(b);
        add_f2 += t % 4;  // in halves
        add_d4 += t;      // in quarters
        add_ull += t + b;
        inc = inc >= 100 ? 0 : inc + 1;
        mn = std::min(mn, static_cast<int>(v)), mx = std::max(mx, static_cast<int>(v));
        and_u &= ~(1u << ((t + b) % 32)) | (t < 16 ? 0u : 0xffffffffu);
        or_u |= 1u << ((t * 3 + b) % 32) & (t < 200 ? 0xffffffffu : 0u);
        xor_u ^= v;
        unsigned long long k = static_cast<unsigned long long>(v) << 16 | t;
        mnu = std::min(mnu, k), mxu = std::max(mxu, k);
        whist[b * 16 + v % 16]++;
      }
      long long* o = &want[b * kShared];
      o[0] = add_i, o[1] = add_f2 / 2, o[2] = add_d4, o[3] = add_ull, o[4] = inc, o[5] = threads;
      o[6] = mn, o[7] = mx, o[8] = and_u, o[9] = or_u, o[10] = xor_u, o[11] = 1;
      o[12] = static_cast<long long>(mnu), o[13] = static_cast<long long>(mxu), o[14] = 1, o[15] = 1;
    }
    const char* names[kShared] = {"shared atomicAdd int",
                                  "shared atomicAdd float",
                                  "shared atomicAdd double",
                                  "shared atomicAdd unsigned long long",
                                  "shared atomicInc (limit 100, 256 times)",
                                  "shared atomicCAS ticket counter",
                                  "shared atomicMin int",
                                  "shared atomicMax int",
                                  "shared atomicAnd",
                                  "shared atomicOr",
                                  "shared atomicXor",
                                  "shared atomicExch leaves a stored value",
                                  "shared atomicMin unsigned long long",
                                  "shared atomicMax unsigned long long",
                                  "shared atomicAdd float: integral",
                                  "shared atomicAdd double: multiple of 1/4"};
    for (int k = 0; k < kShared; ++k) {
      std::vector<long long> gk(blocks), wk(blocks);
      for (int b = 0; b < blocks; ++b) gk[b] = got[b * kShared + k], wk[b] = want[b * kShared + k];
      kt::check_array(names[k], gk.data(), wk.data(), blocks);
    }
    kt::check_array("shared atomicAdd_block histogram", ghist.data(), whist.data(), ghist.size());
  }

  // ---- last-block reduction with __threadfence, twice (the counter wraps back to 0)
  {
    const int blocks = 50, n = blocks * 256;
    std::vector<int> in(n);
    kt::Rng rng(3);
    long long want_total = 0;
    std::vector<long long> want_partial(blocks, 0);
    for (int i = 0; i < n; ++i) {
      in[i] = static_cast<int>(rng.u32() % 20001) - 10000;
      want_partial[i / 256] += in[i];
      want_total += in[i];
    }
    int* din;
    long long *dpart, *dtotal;
    CK(cudaMalloc(&din, n * sizeof(int)));
    CK(cudaMalloc(&dpart, blocks * sizeof(long long)));
    CK(cudaMalloc(&dtotal, 2 * sizeof(long long)));
    CK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    fence_reduce<<<blocks, 256>>>(din, dpart, dtotal);
    CK_LAUNCH();
    fence_reduce<<<blocks, 256>>>(din, dpart, dtotal + 1);
    CK_LAUNCH();
    long long totals[2];
    std::vector<long long> partial(blocks);
    unsigned done = 1;
    CK(cudaMemcpy(totals, dtotal, sizeof totals, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(partial.data(), dpart, blocks * sizeof(long long), cudaMemcpyDeviceToHost));
    CK(cudaMemcpyFromSymbol(&done, g_blocks_done, sizeof done));
    CK(cudaFree(din));
    CK(cudaFree(dpart));
    CK(cudaFree(dtotal));
    kt::check_array("__threadfence last-block reduction: partials", partial.data(), want_partial.data(), blocks);
    kt::check_eq("__threadfence last-block reduction: total (launch 1)", totals[0], want_total);
    kt::check_eq("__threadfence last-block reduction: total (launch 2)", totals[1], want_total);
    kt::check_eq("__threadfence last-block reduction: counter wrapped to 0", done, 0u);
  }
  return kt::finish("atomics");
}
