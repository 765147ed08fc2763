// SPDX-License-Identifier: Apache-2.0
// Warp-synchronous operations, compared with the host model of the PTX ISA (shfl.sync,
// vote.sync, match.sync, redux.sync, activemask):
//   __shfl_up/down/xor/_sync for widths 8, 16 and 32 with several lane offsets, including
//   offsets that leave the segment (a lane then keeps its own value; xor may read an earlier
//   segment, never a later one), and source lanes outside [0, width) for __shfl_sync;
//   __ballot_sync, __any_sync, __all_sync, __match_any_sync, __match_all_sync,
//   __reduce_{add,min,max,and,or,xor}_sync (compute capability 8.0: built with -arch=sm_80);
//   divergent code: shuffles and ballots over disjoint lane masks in the two sides of a
//   branch, __activemask() in each side, a partial last warp and lanes that exited early;
//   a shuffle-based warp reduction; a shuffle inside a loop the compiler keeps (each round
//   reads what the neighbour lane computed in the round before), on several warps.
// __activemask() is checked for the exact set of lanes in the branch after __syncwarp()
// over that set, which is how every GPU since Volta behaves; the programming model itself
// only promises a subset that contains the calling lane.
#include "check.h"

#include <algorithm>
#include <vector>

constexpr unsigned kFull = 0xffffffffu;

enum Op { kUp, kDown, kXor, kIdx };
struct ShflCase {
  int op, width, arg;
};

__device__ __host__ int lane_value(int lane, int warp) { return lane * 7 + 3 + 1000 * warp; }

// Every case over all threads (2 warps); widths and offsets are run-time values.
__global__ void shuffles(const ShflCase* cases, int ncases, int* out) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int v = lane_value(lane, warp);
  for (int c = 0; c < ncases; ++c) {
    ShflCase k = cases[c];
    int r = 0;
    switch (k.op) {
      case kUp: r = __shfl_up_sync(kFull, v, k.arg, k.width); break;
      case kDown: r = __shfl_down_sync(kFull, v, k.arg, k.width); break;
      case kXor: r = __shfl_xor_sync(kFull, v, k.arg, k.width); break;
      case kIdx: r = __shfl_sync(kFull, v, k.arg, k.width); break;
    }
    out[c * blockDim.x + threadIdx.x] = r;
  }
}

// The PTX ISA's shfl.sync: segment [base, base + width), a lane outside the allowed range
// keeps its own value.
static int shfl_model(const ShflCase& k, int lane, int warp) {
  int base = lane & ~(k.width - 1), last = base + k.width - 1, j = lane;
  switch (k.op) {
    case kUp: j = lane - k.arg >= base ? lane - k.arg : lane; break;
    case kDown: j = lane + k.arg <= last ? lane + k.arg : lane; break;
    case kXor: j = (lane ^ k.arg) <= last ? lane ^ k.arg : lane; break;
    case kIdx: j = base + (k.arg & (k.width - 1)); break;
  }
  return lane_value(j, warp);
}

constexpr int kVotes = 16;
__global__ void votes(unsigned* out) {
  unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned r[kVotes];
  r[0] = __ballot_sync(kFull, lane % 3 == 0);
  r[1] = __ballot_sync(kFull, ((lane + warp) & 4) != 0);
  r[2] = __any_sync(kFull, lane == 17) != 0;
  r[3] = __any_sync(kFull, lane > 40) != 0;
  r[4] = __all_sync(kFull, lane < 32) != 0;
  r[5] = __all_sync(kFull, lane != 5) != 0;
  r[6] = __match_any_sync(kFull, lane % 5);
  r[7] = __match_any_sync(kFull, static_cast<unsigned long long>(lane / 8) << 40 | warp);
  int pred = -1;
  r[8] = __match_all_sync(kFull, 42 + warp, &pred);
  r[9] = pred != 0;
  r[10] = __match_all_sync(kFull, lane / 16, &pred);
  r[11] = pred != 0;
  r[12] = __reduce_add_sync(kFull, lane * lane + warp);
  r[13] = static_cast<unsigned>(
      __reduce_min_sync(kFull, static_cast<int>(lane * 37 % 29) - 14 - static_cast<int>(warp)));
  r[14] = static_cast<unsigned>(
      __reduce_max_sync(kFull, static_cast<int>(lane * 37 % 29) - 14 - static_cast<int>(warp)));
  r[15] = __reduce_and_sync(kFull, ~(1u << lane)) ^ __reduce_or_sync(kFull, 1u << (lane % 8) << warp) ^
          (__reduce_xor_sync(kFull, lane * 0x01010101u) << 1) ^ __reduce_max_sync(kFull, lane * 1000u + warp) ^
          (__reduce_min_sync(kFull, 1000u - lane) << 20);
  for (int k = 0; k < kVotes; ++k) out[threadIdx.x * kVotes + k] = r[k];
}

constexpr int kDiv = 5;
// 64 threads: divergent branches with their own masks.
__global__ void divergent(unsigned* out) {
  unsigned lane = threadIdx.x & 31;
  int v = lane_value(lane, threadIdx.x >> 5);
  unsigned r[kDiv];
  if (lane & 1)
    r[0] = __shfl_xor_sync(0xaaaaaaaau, v, 2);
  else
    r[0] = __shfl_xor_sync(0x55555555u, v, 6);
  if (lane < 16)
    r[1] = __ballot_sync(0x0000ffffu, lane & 1);
  else
    r[1] = __ballot_sync(0xffff0000u, lane % 4 == 0);
  if (lane % 2 == 0) {
    __syncwarp(0x55555555u);
    r[2] = __activemask();
  } else {
    __syncwarp(0xaaaaaaaau);
    r[2] = __activemask();
  }
  // A three-way split, each part summing its lanes' values with shuffles over its own mask.
  unsigned part = lane % 3, mask = 0;
  for (int l = 0; l < 32; ++l)
    if (static_cast<unsigned>(l) % 3 == part) mask |= 1u << l;
  if (part == 0)
    r[3] = __reduce_add_sync(mask, static_cast<unsigned>(v));
  else if (part == 1)
    r[3] = __reduce_max_sync(mask, static_cast<unsigned>(v));
  else
    r[3] = __shfl_sync(mask, v, 2);  // lane 2 belongs to part 2
  r[4] = __match_any_sync(kFull, part);
  for (int k = 0; k < kDiv; ++k) out[threadIdx.x * kDiv + k] = r[k];
}

// Block of 40 threads: the second warp has lanes 0..7 only. In the first warp lanes 20 and
// above return at once; vote.sync waits only for the non-exited lanes of its mask.
__global__ void partial_and_exited(unsigned* out) {
  unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (warp == 0 && lane >= 20) return;
  unsigned sync_mask = warp == 0 ? 0x000fffffu : 0x000000ffu;
  __syncwarp(sync_mask);
  out[threadIdx.x * 3 + 0] = __activemask();
  out[threadIdx.x * 3 + 1] = __ballot_sync(kFull, 1);
  // The last lane's source is an exited or absent lane: undefined, so not kept.
  unsigned down = __shfl_down_sync(sync_mask, lane * 10, 1);
  out[threadIdx.x * 3 + 2] = lane == (warp == 0 ? 19u : 7u) ? 0xabcdu : down;
}

// 1024 threads: each warp sums its 32 values with __shfl_down_sync, lane 0 writes.
__global__ void warp_sum(const int* in, int* out) {
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(kFull, v, off);
  if ((threadIdx.x & 31) == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
}

// Blocks that run as loops over their threads split at barriers and warp operations: every
// warp operation below is reached by whole warps together.
// A block reduction through shared memory, finished by the first warp's shuffles under
// `threadIdx.x < 32` (1-D blocks, a power of two from 64 threads).
__global__ void block_reduce(const int* in, int* sums) {
  extern __shared__ int part[];
  const unsigned t = threadIdx.x;
  int v = in[blockIdx.x * blockDim.x + t];
  part[t] = v;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride >= 32; stride >>= 1) {
    if (t < stride) part[t] = v = v + part[t + stride];
    __syncthreads();
  }
  if (t < 32) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(kFull, v, off);
    if (t == 0) sums[blockIdx.x] = v;
  }
}

// Warp operations under `threadIdx.x < 32` in 2-D blocks, over the lanes a ballot found there:
// when blockDim.x is not a multiple of 32 a warp spans two rows and only some of its lanes
// take part.
constexpr int kCols = 4;
__global__ void first_columns(const int* in, unsigned* out) {
  const unsigned t = threadIdx.x + blockDim.x * threadIdx.y;
  const int v = in[t];
  const unsigned lanes = __ballot_sync(kFull, threadIdx.x < 32);
  unsigned r[kCols] = {0, 0, 0, 0};
  if (threadIdx.x < 32) {
    r[0] = __reduce_add_sync(lanes, static_cast<unsigned>(v));
    r[1] = static_cast<unsigned>(__shfl_sync(lanes, v, __ffs(lanes) - 1));
    r[2] = __ballot_sync(lanes, v > 0);
    r[3] = __match_any_sync(lanes, v & 3);
  }
  for (int k = 0; k < kCols; ++k) out[t * kCols + k] = r[k];
}

// __activemask() and a shuffle in a block's partial last warp, lanes exchanging through shared
// memory around __syncwarp(), in code the whole block runs (1-D and 2-D blocks of any size).
constexpr int kWhole = 3;
__global__ void whole_warps(const int* in, unsigned* out) {
  extern __shared__ int mine[];
  const unsigned n = blockDim.x * blockDim.y;
  const unsigned t = threadIdx.x + blockDim.x * threadIdx.y, lane = t & 31;
  const int v = in[blockIdx.x * n + t];
  unsigned* o = out + (blockIdx.x * n + t) * kWhole;
  const unsigned active = __activemask();
  const int down = __shfl_down_sync(active, v, 4);
  o[0] = active;
  // A source lane that exists nowhere is undefined: not kept.
  o[1] = lane + 4 <= 31 && !(active >> (lane + 4) & 1) ? 0xabcdu : static_cast<unsigned>(down);
  mine[t] = v;
  __syncwarp(active);
  o[2] = (t ^ 1) < n ? static_cast<unsigned>(mine[t ^ 1]) : 0xabcdu;
}

// `rounds` rounds of v = (neighbour's v) + 100 * round, the neighbour lane (t + 1) mod 32 of a
// full warp; the loop is not unrolled, so each lane meets its warp at the same shuffle again.
__global__ void shuffle_loop(int* out, int rounds) {
  int v = static_cast<int>(threadIdx.x);
#pragma unroll 1
  for (int i = 0; i < rounds; ++i) v = __shfl_sync(kFull, v, (threadIdx.x + 1) & 31) + 100 * i;
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

static unsigned popcount_mask(unsigned lanes_pred[32]) {
  unsigned m = 0;
  for (int l = 0; l < 32; ++l)
    if (lanes_pred[l]) m |= 1u << l;
  return m;
}

int main() {
  // ---- shuffles
  std::vector<ShflCase> cases;
  for (int width : {8, 16, 32}) {
    for (int d : {1, 3, width / 2, width - 1}) {
      cases.push_back({kUp, width, d});
      cases.push_back({kDown, width, d});
    }
    for (int m : {1, 2, 5, width / 2, width - 1, width < 32 ? width : 31, 24})  // m >= width: other segments
      cases.push_back({kXor, width, m});
    for (int s : {0, 3, width - 1, width + 2, 37, -1}) cases.push_back({kIdx, width, s});
  }
  const int threads = 64, nc = static_cast<int>(cases.size());
  ShflCase* dcases;
  int* dout;
  CK(cudaMalloc(&dcases, nc * sizeof(ShflCase)));
  CK(cudaMalloc(&dout, nc * threads * sizeof(int)));
  CK(cudaMemcpy(dcases, cases.data(), nc * sizeof(ShflCase), cudaMemcpyHostToDevice));
  shuffles<<<1, threads>>>(dcases, nc, dout);
  CK_LAUNCH();
  std::vector<int> got(nc * threads);
  CK(cudaMemcpy(got.data(), dout, got.size() * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaFree(dcases));
  CK(cudaFree(dout));
  const char* op_names[] = {"__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__shfl_sync"};
  for (int c = 0; c < nc; ++c) {
    std::vector<int> want(threads);
    for (int t = 0; t < threads; ++t) want[t] = shfl_model(cases[c], t & 31, t >> 5);
    char name[96];
    std::snprintf(name, sizeof name, "%s width %d, %s %d", op_names[cases[c].op], cases[c].width,
                  cases[c].op == kIdx   ? "srcLane"
                  : cases[c].op == kXor ? "laneMask"
                                        : "delta",
                  cases[c].arg);
    kt::check_array(name, &got[c * threads], want.data(), threads);
  }

  // ---- votes, match, reduce (2 warps)
  {
    unsigned* d;
    CK(cudaMalloc(&d, threads * kVotes * sizeof(unsigned)));
    votes<<<1, threads>>>(d);
    CK_LAUNCH();
    std::vector<unsigned> g(threads * kVotes);
    CK(cudaMemcpy(g.data(), d, g.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    const char* names[kVotes] = {"__ballot_sync(lane%3==0)",
                                 "__ballot_sync((lane+warp)&4)",
                                 "__any_sync(lane==17)",
                                 "__any_sync(lane>40)",
                                 "__all_sync(lane<32)",
                                 "__all_sync(lane!=5)",
                                 "__match_any_sync(lane%5)",
                                 "__match_any_sync(64-bit value)",
                                 "__match_all_sync(uniform) mask",
                                 "__match_all_sync(uniform) pred",
                                 "__match_all_sync(non-uniform) mask",
                                 "__match_all_sync(non-uniform) pred",
                                 "__reduce_add_sync",
                                 "__reduce_min_sync(int)",
                                 "__reduce_max_sync(int)",
                                 "__reduce_and/or/xor/min/max_sync(unsigned)"};
    std::vector<unsigned> w(threads * kVotes);
    for (unsigned warp = 0; warp < 2; ++warp) {
      unsigned p0[32], p1[32];
      unsigned add = 0, and_ = kFull, or_ = 0, xor_ = 0, umax = 0, umin = kFull;
      int smin = 1 << 30, smax = -(1 << 30);
      for (unsigned l = 0; l < 32; ++l) {
        p0[l] = l % 3 == 0;
        p1[l] = ((l + warp) & 4) != 0;
        add += l * l + warp;
        int s = static_cast<int>(l * 37 % 29) - 14 - static_cast<int>(warp);
        smin = s < smin ? s : smin;
        smax = s > smax ? s : smax;
        and_ &= ~(1u << l);
        or_ |= 1u << (l % 8) << warp;
        xor_ ^= l * 0x01010101u;
        umax = l * 1000u + warp > umax ? l * 1000u + warp : umax;
        umin = 1000u - l < umin ? 1000u - l : umin;
      }
      for (unsigned l = 0; l < 32; ++l) {
        unsigned* r = &w[(warp * 32 + l) * kVotes];
        r[0] = popcount_mask(p0);
        r[1] = popcount_mask(p1);
        r[2] = 1, r[3] = 0, r[4] = 1, r[5] = 0;
        unsigned m5 = 0, m8 = 0;
        for (unsigned o = 0; o < 32; ++o) {
          if (o % 5 == l % 5) m5 |= 1u << o;
          if (o / 8 == l / 8) m8 |= 1u << o;
        }
        r[6] = m5, r[7] = m8;
        r[8] = kFull, r[9] = 1, r[10] = 0, r[11] = 0;
        r[12] = add;
        r[13] = static_cast<unsigned>(smin);
        r[14] = static_cast<unsigned>(smax);
        r[15] = and_ ^ or_ ^ (xor_ << 1) ^ umax ^ (umin << 20);
      }
    }
    for (int k = 0; k < kVotes; ++k) {
      std::vector<unsigned> gk(threads), wk(threads);
      for (int t = 0; t < threads; ++t) gk[t] = g[t * kVotes + k], wk[t] = w[t * kVotes + k];
      kt::check_array(names[k], gk.data(), wk.data(), threads);
    }
  }

  // ---- divergent code
  {
    unsigned* d;
    CK(cudaMalloc(&d, threads * kDiv * sizeof(unsigned)));
    divergent<<<1, threads>>>(d);
    CK_LAUNCH();
    std::vector<unsigned> g(threads * kDiv), w(threads * kDiv, 0);
    CK(cudaMemcpy(g.data(), d, g.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    for (int t = 0; t < threads; ++t) {
      unsigned lane = t & 31, warp = t >> 5, *r = &w[t * kDiv];
      r[0] = static_cast<unsigned>(lane_value(lane ^ ((lane & 1) ? 2 : 6), warp));
      r[1] = lane < 16 ? 0x0000aaaau : 0x11110000u;
      r[2] = lane % 2 == 0 ? 0x55555555u : 0xaaaaaaaau;
      unsigned part = lane % 3, mask = 0, sum = 0;
      for (unsigned l = 0; l < 32; ++l)
        if (l % 3 == part) mask |= 1u << l, sum += static_cast<unsigned>(lane_value(l, warp));
      r[3] = part == 0   ? sum
             : part == 1 ? static_cast<unsigned>(lane_value(31, warp))  // the largest lane of part 1
                         : static_cast<unsigned>(lane_value(2, warp));
      r[4] = mask;
    }
    const char* names[kDiv] = {"divergent __shfl_xor_sync over disjoint masks",
                               "divergent __ballot_sync over disjoint masks", "__activemask() in each branch",
                               "three-way split: __reduce_add/max_sync, __shfl_sync per part",
                               "__match_any_sync after the split"};
    for (int k = 0; k < kDiv; ++k) {
      std::vector<unsigned> gk(threads), wk(threads);
      for (int t = 0; t < threads; ++t) gk[t] = g[t * kDiv + k], wk[t] = w[t * kDiv + k];
      kt::check_array(names[k], gk.data(), wk.data(), threads);
    }
  }

  // ---- partial warp and exited lanes
  {
    unsigned* d;
    CK(cudaMalloc(&d, 40 * 3 * sizeof(unsigned)));
    CK(cudaMemset(d, 0xee, 40 * 3 * sizeof(unsigned)));
    partial_and_exited<<<1, 40>>>(d);
    CK_LAUNCH();
    std::vector<unsigned> g(40 * 3), w(40 * 3, 0xeeeeeeeeu);
    CK(cudaMemcpy(g.data(), d, g.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    for (unsigned t = 0; t < 40; ++t) {
      unsigned lane = t & 31, warp = t >> 5;
      if (warp == 0 && lane >= 20) continue;  // exited: never written
      unsigned m = warp == 0 ? 0x000fffffu : 0x000000ffu, last = warp == 0 ? 19 : 7;
      w[t * 3] = m;
      w[t * 3 + 1] = m;
      w[t * 3 + 2] = lane < last ? (lane + 1) * 10 : 0xabcdu;
    }
    kt::check_array("partial warp and exited lanes: activemask, ballot, shfl_down", g.data(), w.data(), g.size());
  }

  // ---- warp reduction
  {
    const int blocks = 32, bt = 1024, n = blocks * bt;
    std::vector<int> in(n);
    kt::Rng rng(5);
    for (int& v : in) v = static_cast<int>(rng.u32() % 100001) - 50000;
    int *din, *dout2;
    CK(cudaMalloc(&din, n * sizeof(int)));
    CK(cudaMalloc(&dout2, n / 32 * sizeof(int)));
    CK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    warp_sum<<<blocks, bt>>>(din, dout2);
    CK_LAUNCH();
    std::vector<int> g(n / 32), w(n / 32, 0);
    CK(cudaMemcpy(g.data(), dout2, g.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaFree(din));
    CK(cudaFree(dout2));
    for (int i = 0; i < n; ++i) w[i / 32] += in[i];
    kt::check_array("warp shuffle reduction (1024 warps)", g.data(), w.data(), g.size());
  }
  // ---- whole warps meeting in blocks run as loops
  for (int bt : {64, 256, 1024}) {
    const int blocks = 24, n = blocks * bt;
    std::vector<int> in(n);
    kt::Rng rng(bt);
    for (int& v : in) v = static_cast<int>(rng.u32() % 100001) - 50000;
    int *din, *dsums;
    CK(cudaMalloc(&din, n * sizeof(int)));
    CK(cudaMalloc(&dsums, blocks * sizeof(int)));
    CK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    block_reduce<<<blocks, bt, bt * sizeof(int)>>>(din, dsums);
    CK_LAUNCH();
    std::vector<int> g(blocks), w(blocks, 0);
    CK(cudaMemcpy(g.data(), dsums, blocks * sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaFree(din));
    CK(cudaFree(dsums));
    for (int i = 0; i < n; ++i) w[i / bt] += in[i];
    char name[96];
    std::snprintf(name, sizeof name, "block reduction, shared memory then shuffles under tid < 32 (%d threads)", bt);
    kt::check_array(name, g.data(), w.data(), blocks);
  }
  for (const dim3 b : {dim3(64, 3), dim3(32, 5), dim3(96), dim3(100), dim3(48, 2), dim3(40, 3)}) {
    const unsigned n = b.x * b.y;
    std::vector<int> in(n);
    kt::Rng rng(n + b.x);
    for (int& v : in) v = static_cast<int>(rng.u32() % 201) - 100;
    int* din;
    unsigned* dout;
    CK(cudaMalloc(&din, n * sizeof(int)));
    CK(cudaMalloc(&dout, n * kCols * sizeof(unsigned)));
    CK(cudaMemcpy(din, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    first_columns<<<1, b>>>(din, dout);
    CK_LAUNCH();
    std::vector<unsigned> g(n * kCols), w(n * kCols, 0);
    CK(cudaMemcpy(g.data(), dout, g.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CK(cudaFree(din));
    CK(cudaFree(dout));
    for (unsigned t = 0; t < n; ++t) {
      if (t % b.x >= 32) continue;
      const unsigned base = t & ~31u;
      unsigned group = 0, sum = 0, ballot = 0;
      for (unsigned l = 0; l < 32 && base + l < n; ++l)
        if ((base + l) % b.x < 32) group |= 1u << l;
      for (unsigned l = 0; l < 32; ++l)
        if (group >> l & 1) {
          sum += static_cast<unsigned>(in[base + l]);
          if (in[base + l] > 0) ballot |= 1u << l;
        }
      unsigned same = 0;
      for (unsigned l = 0; l < 32; ++l)
        if ((group >> l & 1) && (in[base + l] & 3) == (in[t] & 3)) same |= 1u << l;
      unsigned* r = &w[t * kCols];
      r[0] = sum;
      r[1] = static_cast<unsigned>(in[base + __builtin_ctz(group)]);
      r[2] = ballot;
      r[3] = same;
    }
    char name[112];
    std::snprintf(name, sizeof name, "reduce/shfl/ballot/match under threadIdx.x < 32, block (%u,%u)", b.x, b.y);
    kt::check_array(name, g.data(), w.data(), g.size());
  }
  for (const dim3 b : {dim3(40), dim3(100), dim3(1024), dim3(20, 3)}) {
    const int blocks = 5;
    const unsigned n = b.x * b.y, total = blocks * n;
    std::vector<int> in(total);
    kt::Rng rng(n);
    for (int& v : in) v = static_cast<int>(rng.u32() % 100001) - 50000;
    int* din;
    unsigned* dout;
    CK(cudaMalloc(&din, total * sizeof(int)));
    CK(cudaMalloc(&dout, total * kWhole * sizeof(unsigned)));
    CK(cudaMemcpy(din, in.data(), total * sizeof(int), cudaMemcpyHostToDevice));
    whole_warps<<<blocks, b, n * sizeof(int)>>>(din, dout);
    CK_LAUNCH();
    std::vector<unsigned> g(total * kWhole), w(total * kWhole);
    CK(cudaMemcpy(g.data(), dout, g.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CK(cudaFree(din));
    CK(cudaFree(dout));
    for (unsigned blk = 0; blk < static_cast<unsigned>(blocks); ++blk)
      for (unsigned t = 0; t < n; ++t) {
        const unsigned lane = t & 31, present = std::min(32u, n - (t & ~31u));
        const int* v = &in[blk * n];
        unsigned* r = &w[(blk * n + t) * kWhole];
        r[0] = present == 32 ? kFull : (1u << present) - 1;
        r[1] = lane + 4 > 31        ? static_cast<unsigned>(v[t])
               : lane + 4 < present ? static_cast<unsigned>(v[t + 4])
                                    : 0xabcdu;
        r[2] = (t ^ 1) < n ? static_cast<unsigned>(v[t ^ 1]) : 0xabcdu;
      }
    char name[112];
    std::snprintf(name, sizeof name, "activemask, shfl_down, __syncwarp exchange in whole warps, block (%u,%u)", b.x,
                  b.y);
    kt::check_array(name, g.data(), w.data(), g.size());
  }
  {
    const int blocks = 3, threads = 128, rounds = 7;
    int* dout;
    CK(cudaMalloc(&dout, blocks * threads * sizeof(int)));
    shuffle_loop<<<blocks, threads>>>(dout, rounds);
    CK_LAUNCH();
    std::vector<int> g(blocks * threads), w(blocks * threads);
    CK(cudaMemcpy(g.data(), dout, g.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CK(cudaFree(dout));
    for (int warp = 0; warp < blocks * threads / 32; ++warp) {
      int v[32];
      for (int l = 0; l < 32; ++l) v[l] = (warp * 32) % threads + l;
      for (int i = 0; i < rounds; ++i) {
        int next[32];
        for (int l = 0; l < 32; ++l) next[l] = v[(l + 1) & 31] + 100 * i;
        std::copy(next, next + 32, v);
      }
      std::copy(v, v + 32, &w[warp * 32]);
    }
    kt::check_array("__shfl_sync in a loop kept rolled: 7 rounds, 3 blocks of 4 warps", g.data(), w.data(), g.size());
  }
  return kt::finish("warp");
}
