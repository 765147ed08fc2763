// SPDX-License-Identifier: Apache-2.0
// CUDA Driver API interprocess events (cuIpcGetEventHandle / cuIpcOpenEventHandle): the
// handle of an event created with CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING opens in
// another process as an event whose completion is the original's, whichever process records
// it (core/event_ipc.h). The peer is this test binary run as a helper case; the two sides
// take turns through files in a temporary directory, and a record is held back behind a
// host function that waits for the other side, so "not ready" is observed, not guessed.
#include "backend/driver_test.h"

namespace drvtest::sig {
CUresult cuIpcGetEventHandle(CUipcEventHandle*, CUevent);
CUresult cuIpcOpenEventHandle(CUevent*, CUipcEventHandle);
}  // namespace drvtest::sig

using namespace drvtest;

namespace {

// Host function: waits until the file named by its argument exists.
void wait_for_go(void* path) { wait_for_file(*static_cast<std::string*>(path)); }

// Records `ev` on a new stream behind a host function that waits for the file `go` (which
// must outlive the record); returns the stream.
CUstream hold_back_record(CUevent ev, std::string& go) {
  CUstream s = nullptr;
  CU_OK(CU(cuStreamCreate)(&s, CU_STREAM_NON_BLOCKING));
  CU_OK(CU(cuLaunchHostFunc)(s, wait_for_go, &go));
  CU_OK(CU(cuEventRecord)(ev, s));
  return s;
}

// One side's turn to record: `ev` is held back as above, the file `recorded` tells the other
// side, and the record completes once the other side has published `go`.
void record_for_peer(CUevent ev, std::string& go, const std::string& recorded) {
  const CUstream s = hold_back_record(ev, go);
  publish_file(recorded, "1");
  CU_OK(CU(cuEventSynchronize)(ev));
  CU_OK(CU(cuStreamSynchronize)(s));
  CU_OK(CU(cuStreamDestroy_v2)(s));
}

// A record of `ev` is held back until `go` exists: `ev`, and a stream waiting on it, stay
// pending until this side publishes `go`; then both complete.
void release_held_record(CUevent ev, const std::string& go) {
  CU_EQ(CUDA_ERROR_NOT_READY, CU(cuEventQuery)(ev));
  CUstream waiter = nullptr;
  CU_OK(CU(cuStreamCreate)(&waiter, CU_STREAM_NON_BLOCKING));
  CU_OK(CU(cuStreamWaitEvent)(waiter, ev, 0));
  CU_EQ(CUDA_ERROR_NOT_READY, CU(cuStreamQuery)(waiter));
  publish_file(go, "1");
  CU_OK(CU(cuEventSynchronize)(ev));
  CU_OK(CU(cuEventQuery)(ev));
  CU_OK(CU(cuStreamSynchronize)(waiter));
  CU_OK(CU(cuStreamQuery)(waiter));
  CU_OK(CU(cuStreamDestroy_v2)(waiter));
}

}  // namespace

TEST_CASE("driver: interprocess event handles in one process", "[driver]") {
  Ctx ctx(0);
  CUevent plain = nullptr, ipc = nullptr;
  CU_OK(CU(cuEventCreate)(&plain, CU_EVENT_DISABLE_TIMING));
  CU_OK(CU(cuEventCreate)(&ipc, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  CUevent timing_ipc = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuEventCreate)(&timing_ipc, CU_EVENT_INTERPROCESS));  // must not time
  CUipcEventHandle h;
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuIpcGetEventHandle)(nullptr, ipc));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuIpcGetEventHandle)(&h, nullptr));
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuIpcGetEventHandle)(&h, plain));  // not interprocess
  CU_OK(CU(cuIpcGetEventHandle)(&h, ipc));
  CUipcEventHandle again;
  CU_OK(CU(cuIpcGetEventHandle)(&again, ipc));
  CHECK(std::memcmp(&h, &again, sizeof h) == 0);  // one event, one handle
  // Never recorded: complete, as on a real GPU.
  CU_OK(CU(cuEventQuery)(ipc));
  CU_OK(CU(cuEventSynchronize)(ipc));
  // Opening in the process that made it: invalid context, as the real driver answers.
  CUevent opened = nullptr;
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuIpcOpenEventHandle)(&opened, h));
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuIpcOpenEventHandle)(nullptr, h));
  CUipcEventHandle junk;
  std::memset(&junk, 0, sizeof junk);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuIpcOpenEventHandle)(&opened, junk));
  std::memset(&junk, 0x5C, sizeof junk);
  CU_EQ(CUDA_ERROR_INVALID_VALUE, CU(cuIpcOpenEventHandle)(&opened, junk));
  CHECK(opened == nullptr);
  // Records work as on any event; a record held back behind a host function is pending.
  const std::string dir = temp_dir();
  std::string go = dir + "/go";
  const CUstream s = hold_back_record(ipc, go);
  release_held_record(ipc, go);
  CU_OK(CU(cuStreamDestroy_v2)(s));
  CU_OK(CU(cuEventDestroy_v2)(ipc));
  CU_OK(CU(cuEventDestroy_v2)(plain));
  std::remove(go.c_str());
  rmdir(dir.c_str());
  // No current context: opening needs one.
  clear_stack();
  CU_EQ(CUDA_ERROR_INVALID_CONTEXT, CU(cuIpcOpenEventHandle)(&opened, h));
}

// Peer of the next case (process A): makes the event and takes turns with the opener.
TEST_CASE("driver helper: IPC event exporter", "[.][driver-helper]") {
  const std::string dir = peer_dir();
  Ctx ctx(0);
  CUevent ev = nullptr;
  CU_OK(CU(cuEventCreate)(&ev, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  CUipcEventHandle h;
  CU_OK(CU(cuIpcGetEventHandle)(&h, ev));
  publish_file(dir + "/handle", to_hex(&h, sizeof h));
  // Turn 1: A records behind a host function that waits for B's "go1".
  REQUIRE(wait_for_file(dir + "/opened"));
  std::string go1 = dir + "/go1";
  record_for_peer(ev, go1, dir + "/recorded_a");
  // Turn 2: B records the opened event, held back until A says "go2"; A sees it pending.
  REQUIRE(wait_for_file(dir + "/recorded_b"));
  release_held_record(ev, dir + "/go2");
  REQUIRE(wait_for_file(dir + "/done"));
  CU_OK(CU(cuEventDestroy_v2)(ev));
}

TEST_CASE("driver: interprocess events across processes", "[driver]") {
  Ctx ctx(0);
  const Peer peer("driver helper: IPC event exporter");
  const auto h = peer.await_hex<CUipcEventHandle>("handle");
  CUevent ev = nullptr;
  CU_OK(CU(cuIpcOpenEventHandle)(&ev, h));
  REQUIRE(ev != nullptr);
  CU_OK(CU(cuEventQuery)(ev));  // never recorded: complete
  // The opened event times nothing ("behaves like an event created with DISABLE_TIMING").
  float ms = 0;
  CU_EQ(CUDA_ERROR_INVALID_HANDLE, CU(cuEventElapsedTime)(&ms, ev, ev));
  // Its handle is the same handle.
  CUipcEventHandle again;
  CU_OK(CU(cuIpcGetEventHandle)(&again, ev));
  CHECK(std::memcmp(&h, &again, sizeof h) == 0);
  publish_file(peer.path("opened"), "1");
  // Turn 1: A's record is pending until we say go1.
  REQUIRE(wait_for_file(peer.path("recorded_a")));
  release_held_record(ev, peer.path("go1"));
  // Turn 2: we record the opened event behind a host function that waits for A's go2 (A says
  // it once it has seen the record pending).
  std::string go2 = peer.path("go2");
  record_for_peer(ev, go2, peer.path("recorded_b"));
  peer.finish();
  CU_OK(CU(cuEventDestroy_v2)(ev));
}
