// SPDX-License-Identifier: Apache-2.0
// Thread-block clusters (compute capability 9.0; run on an H100 model: run_kernel_tests.py),
// through cooperative_groups::this_cluster():
//   __cluster_dims__(2, 1, 1): each block maps its partner's shared memory (map_shared_rank,
//     before the partner may have started) and reads it between two cluster.sync();
//   cudaLaunchKernelEx with a 2×2×1 cluster attribute on a 4×4 grid: block_rank, num_blocks,
//     dim_blocks, block_index, and rank 0 summing its cluster's four blocks' shared values;
//   a 2-block ping-pong through distributed shared memory, 50 rounds of cluster.sync();
//   the cluster registers of a launch without clusters (every block a cluster of one);
//   last, a block that returns while its partner waits in cluster.sync(): the launch fails
//   (cudaErrorLaunchFailure) where a GPU would hang.
#include "check.h"

#include <cooperative_groups.h>

#include <vector>

namespace cg = cooperative_groups;

constexpr int kThreads = 64;

__global__ void __cluster_dims__(2, 1, 1) partners(int* out) {
  __shared__ int mine[kThreads];
  cg::cluster_group cluster = cg::this_cluster();
  // The partner's address may be had before the partner has started; it is read after the sync.
  const int* theirs = cluster.map_shared_rank(mine, (cluster.block_rank() + 1) % 2);
  mine[threadIdx.x] = static_cast<int>(blockIdx.x) * 100 + static_cast<int>(threadIdx.x);
  cluster.sync();
  out[blockIdx.x * kThreads + threadIdx.x] = theirs[kThreads - 1 - threadIdx.x];
  cluster.sync();  // the partner reads this block's memory until here
}

// Per block: block_rank, num_blocks, dim_blocks.x/.y, block_index.x/.y, and (rank 0) the sum
// of its cluster's blocks' values.
__global__ void shape_and_sum(int* out) {
  __shared__ int value;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) value = static_cast<int>(blockIdx.y * gridDim.x + blockIdx.x) + 1;
  cluster.sync();
  int* o = out + (blockIdx.y * gridDim.x + blockIdx.x) * 6;
  if (threadIdx.x == 0) {
    o[0] = static_cast<int>(cluster.block_rank());
    o[1] = static_cast<int>(cluster.num_blocks());
    o[2] = static_cast<int>(cluster.dim_blocks().x * 10 + cluster.dim_blocks().y);
    o[3] = static_cast<int>(cluster.block_index().x * 10 + cluster.block_index().y);
    int sum = 0;
    if (cluster.block_rank() == 0)
      for (unsigned r = 0; r < cluster.num_blocks(); ++r) sum += *cluster.map_shared_rank(&value, r);
    o[4] = sum;
    o[5] = static_cast<int>(blockIdx.x);
  }
  cluster.sync();
}

// Two blocks pass a counter back and forth: in each round a block sets its own to the
// partner's plus one (the blocks take turns, round parity), with cluster.sync() after each.
__global__ void __cluster_dims__(2, 1, 1) ping_pong(int rounds, int* out) {
  __shared__ int counter;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  if (threadIdx.x == 0) counter = 0;
  cluster.sync();
  int* partner = cluster.map_shared_rank(&counter, rank ^ 1);
  for (int r = 0; r < rounds; ++r) {
    if (threadIdx.x == 0 && static_cast<unsigned>(r % 2) == rank) counter = *partner + 1;
    cluster.sync();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = counter;
  cluster.sync();
}

// block_rank, num_blocks and the cluster's block_index of a launch without clusters.
__global__ void no_cluster(int* out) {
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) {
    out[blockIdx.x * 3 + 0] = static_cast<int>(cluster.block_rank());
    out[blockIdx.x * 3 + 1] = static_cast<int>(cluster.num_blocks());
    out[blockIdx.x * 3 + 2] = static_cast<int>(cluster.block_index().x);
  }
}

// Rank 1 returns at once; rank 0 waits for it in cluster.sync().
__global__ void __cluster_dims__(2, 1, 1) deserter(int* out) {
  cg::cluster_group cluster = cg::this_cluster();
  if (cluster.block_rank() == 1) return;
  cluster.sync();
  out[blockIdx.x] = 1;
}

int main() {
  {
    const int blocks = 8;
    int* d;
    CK(cudaMalloc(&d, blocks * kThreads * sizeof(int)));
    partners<<<blocks, kThreads>>>(d);
    CK_LAUNCH();
    const auto got = kt::from_device(d, blocks * kThreads);
    std::vector<int> want(blocks * kThreads);
    for (int b = 0; b < blocks; ++b)
      for (int t = 0; t < kThreads; ++t) want[b * kThreads + t] = (b ^ 1) * 100 + (kThreads - 1 - t);
    kt::check_array("__cluster_dims__(2,1,1): each block reads its partner's shared memory", got.data(), want.data(),
                    want.size());
    CK(cudaFree(d));
  }
  {
    int* d;
    CK(cudaMalloc(&d, 16 * 6 * sizeof(int)));
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(4, 4);
    config.blockDim = dim3(32);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 2;
    attr[0].val.clusterDim.y = 2;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = 1;
    CK(cudaLaunchKernelEx(&config, shape_and_sum, d));
    CK_LAUNCH();
    const auto got = kt::from_device(d, 16 * 6);
    std::vector<int> want(16 * 6);
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x) {
        int* w = &want[(y * 4 + x) * 6];
        w[0] = (x % 2) + 2 * (y % 2);
        w[1] = 4;
        w[2] = 22;
        w[3] = (x % 2) * 10 + (y % 2);
        w[4] = 0;
        if (w[0] == 0)
          for (int dy = 0; dy < 2; ++dy)
            for (int dx = 0; dx < 2; ++dx) w[4] += (y + dy) * 4 + (x + dx) + 1;
        w[5] = x;
      }
    kt::check_array("cudaLaunchKernelEx 2x2 clusters: rank, size, shape, index, rank 0 sums its cluster", got.data(),
                    want.data(), want.size());
    CK(cudaFree(d));
  }
  {
    const int blocks = 6, rounds = 50;
    int* d;
    CK(cudaMalloc(&d, blocks * sizeof(int)));
    ping_pong<<<blocks, 32>>>(rounds, d);
    CK_LAUNCH();
    const auto got = kt::from_device(d, blocks);
    // Round r: the block of rank r % 2 sets partner + 1, so the counters climb by one a round.
    std::vector<int> want(blocks);
    for (int b = 0; b < blocks; ++b) want[b] = (b % 2 == (rounds - 1) % 2) ? rounds : rounds - 1;
    kt::check_array("2-block ping-pong through distributed shared memory, 50 cluster.sync() rounds", got.data(),
                    want.data(), want.size());
    CK(cudaFree(d));
  }
  {
    int* d;
    CK(cudaMalloc(&d, 3 * 3 * sizeof(int)));
    no_cluster<<<3, 32>>>(d);
    CK_LAUNCH();
    const auto got = kt::from_device(d, 9);
    const std::vector<int> want = {0, 1, 0, 0, 1, 0, 0, 1, 0};
    kt::check_array("a launch without clusters: every block a cluster of one", got.data(), want.data(), want.size());
    CK(cudaFree(d));
  }
  {
    int* d;
    CK(cudaMalloc(&d, 2 * sizeof(int)));
    deserter<<<2, 32>>>(d);
    CK_LAUNCH();
    const cudaError_t e = cudaDeviceSynchronize();
    kt::checkf("a block waiting in cluster.sync() for one that returned: cudaErrorLaunchFailure",
               e == cudaErrorLaunchFailure, "got %s", cudaGetErrorName(e));
  }
  return kt::finish("cluster");
}
