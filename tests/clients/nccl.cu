// SPDX-License-Identifier: Apache-2.0
// NCCL on the fake GPUs: NVIDIA's libnccl over the fake driver and NVML.
//   nccl            ncclCommInitAll over devices 0 and 1 in this process, an all-reduce
//   nccl spawn      one rank per process: this process makes the unique id and runs itself
//                   twice as "nccl rank R ID", one rank on each of devices 0 and 1
// Prints key=value facts (ranks prefix theirs with rankR_); run_client_tests.py checks them.
#include "lib_check.h"

#include <nccl.h>

#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {
constexpr size_t kCount = 1 << 20;  // floats per buffer

int all_in_one_process() {
  ncclComm_t comms[2] = {};
  const int devs[2] = {0, 1};
  FACT_STATUS("init_all", ncclCommInitAll(comms, 2, devs));
  float* buf[2] = {};
  cudaStream_t s[2] = {};
  for (int i = 0; i < 2; ++i) {
    CK(cudaSetDevice(i));
    CK(cudaMalloc(&buf[i], kCount * sizeof(float)));
    CK(cudaStreamCreate(&s[i]));
  }
  FACT_STATUS("group_start", ncclGroupStart());
  for (int i = 0; i < 2; ++i) {
    const std::string key = "all_reduce" + std::to_string(i);
    FACT_STATUS(key.c_str(), ncclAllReduce(buf[i], buf[i], kCount, ncclFloat, ncclSum, comms[i], s[i]));
  }
  FACT_STATUS("group_end", ncclGroupEnd());
  for (int i = 0; i < 2; ++i) {
    CK(cudaSetDevice(i));
    FACT_ERR(("sync" + std::to_string(i)).c_str(), cudaStreamSynchronize(s[i]));
    const std::string key = "used_dev" + std::to_string(i);
    lib_check::print_used(key.c_str());
  }
  FACT_STATUS("bad_data_type",
              ncclAllReduce(buf[0], buf[0], kCount, static_cast<ncclDataType_t>(99), ncclSum, comms[0], s[0]));
  for (int i = 0; i < 2; ++i) FACT_STATUS(("destroy" + std::to_string(i)).c_str(), ncclCommDestroy(comms[i]));
  for (int i = 0; i < 2; ++i) {
    CK(cudaSetDevice(i));
    CK(cudaFree(buf[i]));
    CK(cudaStreamDestroy(s[i]));
    lib_check::print_used(("used_at_exit_dev" + std::to_string(i)).c_str());
  }
  return 0;
}

int one_rank(int rank, const char* hex) {
  ncclUniqueId id{};
  for (size_t i = 0; i < sizeof id.internal; ++i) {
    unsigned v = 0;
    std::sscanf(hex + 2 * i, "%2x", &v);
    id.internal[i] = static_cast<char>(v);
  }
  const std::string p = "rank" + std::to_string(rank) + "_";
  CK(cudaSetDevice(rank));
  ncclComm_t comm = nullptr;
  FACT_STATUS((p + "init").c_str(), ncclCommInitRank(&comm, 2, id, rank));
  float* buf = nullptr;
  cudaStream_t s = nullptr;
  CK(cudaMalloc(&buf, kCount * sizeof(float)));
  CK(cudaStreamCreate(&s));
  FACT_STATUS((p + "all_reduce").c_str(), ncclAllReduce(buf, buf, kCount, ncclFloat, ncclSum, comm, s));
  FACT_ERR((p + "sync").c_str(), cudaStreamSynchronize(s));
  lib_check::print_used((p + "used").c_str());
  FACT_STATUS((p + "destroy").c_str(), ncclCommDestroy(comm));
  CK(cudaFree(buf));
  CK(cudaStreamDestroy(s));
  return 0;
}

int spawn(const char* self) {
  ncclUniqueId id{};
  FACT_STATUS("get_unique_id", ncclGetUniqueId(&id));
  std::string hex;
  char byte[3];
  for (char c : id.internal) {
    std::snprintf(byte, sizeof byte, "%02x", static_cast<unsigned char>(c));
    hex += byte;
  }
  std::fflush(stdout);
  pid_t pids[2];
  for (int r = 0; r < 2; ++r) {
    pids[r] = fork();
    if (pids[r] == 0) {
      const std::string rs = std::to_string(r);
      execl(self, self, "rank", rs.c_str(), hex.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  int ok = 0;
  for (pid_t pid : pids) {
    int st = 0;
    waitpid(pid, &st, 0);
    ok += WIFEXITED(st) && WEXITSTATUS(st) == 0;
  }
  std::printf("ranks_exited_0=%d\n", ok);
  return ok == 2 ? 0 : 1;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "rank") == 0) return one_rank(std::atoi(argv[2]), argv[3]);
  if (argc == 2 && std::strcmp(argv[1], "spawn") == 0) return spawn(argv[0]);
  return all_in_one_process();
}
