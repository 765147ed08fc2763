// fakegpu-run [options] CMD ARGS…: runs a command on the fake GPUs.
//
// Puts the backend's library directory first on LD_LIBRARY_PATH (so libcudart.so.13,
// libcuda.so.1 and libnvidia-ml.so.1 resolve to the fake), optionally preloads it (for
// programs whose RPATH points at NVIDIA's own libraries), sets the FAKEGPU_* variables
// given as options, and execs the command: its exit status is the command's.
#include <CLI/CLI.hpp>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

std::string self_dir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  std::string p(buf);
  return p.substr(0, p.find_last_of('/'));
}

// The build tree keeps the library at build/libfake_gpu.so and the names in build/lib;
// an install keeps them in <libdir>/fakegpu and <libdir>/fakegpu/lib.
std::string find_libdir(std::string* preload) {
  const std::string bin = self_dir();
  const std::string prefix = bin.substr(0, bin.find_last_of('/'));
  for (const std::string& dir : {prefix + "/lib", bin + "/" + FAKEGPU_INSTALL_LIBDIR_FROM_BIN}) {
    std::string lib = dir + "/libcuda.so.1";
    if (::access(lib.c_str(), R_OK) == 0) {
      *preload = dir + "/../libfake_gpu.so";
      return dir;
    }
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Run a command on fake GPUs: CUDA Runtime, CUDA Driver and NVML served by fakegpu.", "fakegpu-run"};
  // CLI11 writes the usage line as "[" + label("OPTIONS") + "]": widen the label so it
  // shows the command that follows.
  app.get_formatter()->label("OPTIONS", "OPTIONS] [--] COMMAND [ARGS...");
  std::string devices, config, report, log, ledger;
  bool isolated = false, strict = false, preload = false;
  app.add_option("-d,--devices", devices, "device list, e.g. 8 or a100-80gb:4,h100-80gb:2 (FAKEGPU_DEVICES)");
  app.add_option("-c,--config", config, "JSON device description file (FAKEGPU_CONFIG)")->check(CLI::ExistingFile);
  app.add_option("-r,--report", report, "report path, %p = pid, or off (FAKEGPU_REPORT)");
  app.add_option("-l,--log", log, "off|error|warn|info|debug|trace (FAKEGPU_LOG)")
      ->check(CLI::IsMember({"off", "error", "warn", "info", "debug", "trace"}));
  app.add_option("--ledger", ledger, "shared device ledger path (FAKEGPU_LEDGER)");
  app.add_flag("-i,--isolated", isolated, "per-process devices instead of host-wide ones (FAKEGPU_ISOLATED=1)");
  app.add_flag("-s,--strict", strict, "abort on the first call the fake does not support (FAKEGPU_STRICT=1)");
  app.add_flag("-p,--preload", preload, "also LD_PRELOAD the backend (programs whose RPATH finds NVIDIA's libraries)");
  // Everything from the first non-option argument on is the command's, options included
  // (prefix_command); nothing of it may be taken as one of ours.
  app.prefix_command();
  app.footer("Example: fakegpu-run -d a100-80gb:2 ./my_cuda_app --batch 64\n"
             "Exit status: the command's; 127 if it cannot be run; 2 for bad options.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::vector<std::string> command = app.remaining();
  if (!command.empty() && command.front() == "--") command.erase(command.begin());
  if (command.empty()) {
    std::fprintf(stderr, "fakegpu-run: no command given\n%s", app.help().c_str());
    return 2;
  }
  if (command.front().size() > 1 && command.front()[0] == '-' && app.remaining().front() != "--") {
    std::fprintf(stderr, "fakegpu-run: unknown option %s (see fakegpu-run --help)\n", command.front().c_str());
    return 2;
  }

  std::string preload_path;
  const std::string libdir = find_libdir(&preload_path);
  if (libdir.empty()) {
    std::fprintf(stderr, "fakegpu-run: cannot find the backend libraries next to %s (expected ../lib/libcuda.so.1 "
                 "or %s/libcuda.so.1); run it from the build tree or an install\n",
                 self_dir().c_str(), FAKEGPU_INSTALL_LIBDIR_FROM_BIN);
    return 127;
  }
  std::string ld = libdir;
  if (const char* old = std::getenv("LD_LIBRARY_PATH"); old && *old) ld += ":" + std::string(old);
  ::setenv("LD_LIBRARY_PATH", ld.c_str(), 1);
  if (preload) {
    std::string pre = preload_path;
    if (const char* old = std::getenv("LD_PRELOAD"); old && *old) pre += ":" + std::string(old);
    ::setenv("LD_PRELOAD", pre.c_str(), 1);
  }
  if (!devices.empty()) ::setenv("FAKEGPU_DEVICES", devices.c_str(), 1);
  if (!config.empty()) ::setenv("FAKEGPU_CONFIG", config.c_str(), 1);
  if (!report.empty()) ::setenv("FAKEGPU_REPORT", report.c_str(), 1);
  if (!log.empty()) ::setenv("FAKEGPU_LOG", log.c_str(), 1);
  if (!ledger.empty()) ::setenv("FAKEGPU_LEDGER", ledger.c_str(), 1);
  if (isolated) ::setenv("FAKEGPU_ISOLATED", "1", 1);
  if (strict) ::setenv("FAKEGPU_STRICT", "1", 1);

  std::vector<char*> args;
  for (auto& a : command) args.push_back(a.data());
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  std::fprintf(stderr, "fakegpu-run: cannot run %s: %s\n", args[0], std::strerror(errno));
  return 127;
}
