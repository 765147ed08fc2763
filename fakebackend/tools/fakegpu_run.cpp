// SPDX-License-Identifier: Apache-2.0
// fakegpu-run [options] CMD ARGS…: runs a command on the fake GPUs.
//
// Puts the backend's library directory first on LD_LIBRARY_PATH (so libcudart.so.13,
// libcuda.so.1 and libnvidia-ml.so.1 resolve to the fake), picks the CUDA Runtime
// (--runtime), sets the FAKEGPU_* variables given as options, and execs the command: its
// exit status is the command's.
//
// --runtime auto    whatever the program finds: the fake's libcudart from our directory
//                   (LD_LIBRARY_PATH comes before a DT_RUNPATH), NVIDIA's where an old-style
//                   DT_RPATH (searched before LD_LIBRARY_PATH) finds it, NVIDIA's static copy.
// --runtime fake    LD_PRELOAD the backend: its cuda* symbols win even where a DT_RPATH
//                   loads NVIDIA's libcudart too. A statically linked runtime cannot be
//                   replaced: the backend warns, naming the program (core/runtimes.cpp).
// --runtime nvidia  NVIDIA's libcudart.so.13 directory in front of ours. It must hold no
//                   libcuda.so.1 / libnvidia-ml.so.1: those would replace the fake driver.
// Both set FAKEGPU_RUNTIME, the backend's cue to warn when the other runtime shows up.
#include <CLI/CLI.hpp>

#include <sys/stat.h>

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

bool readable(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// The directory holding NVIDIA's libcudart.so.13, from --cudart (the library or its
// directory), else $CUDA_HOME/lib64, else /usr/local/cuda/lib64. Empty + *why on failure.
std::string find_nvidia_cudart(const std::string& option, const std::string& fake_lib, std::string* why) {
  std::vector<std::string> dirs;
  if (!option.empty()) {
    struct stat st {};
    if (::stat(option.c_str(), &st) != 0) {
      *why = "--cudart " + option + ": no such file or directory";
      return {};
    }
    dirs.push_back(S_ISDIR(st.st_mode) ? option : option.substr(0, option.find_last_of('/') + 1));
    if (dirs.back().empty()) dirs.back() = ".";
  } else {
    if (const char* home = std::getenv("CUDA_HOME"); home && *home) dirs.push_back(std::string(home) + "/lib64");
    dirs.push_back("/usr/local/cuda/lib64");
  }
  for (std::string dir : dirs) {
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    const std::string lib = dir + "/libcudart.so.13";
    if (!readable(lib)) continue;
    if (same_file(lib, fake_lib)) {
      *why = lib + " is the fake's own runtime, not NVIDIA's";
      return {};
    }
    // Everything in this directory comes before ours: it must not bring a driver or NVML.
    for (const char* shadow : {"libcuda.so.1", "libnvidia-ml.so.1"})
      if (readable(dir + "/" + shadow)) {
        *why = dir + " also holds " + shadow +
               ", which would replace the fake's; point --cudart at a directory "
               "with NVIDIA's libcudart.so.13 and without it";
        return {};
      }
    return dir;
  }
  std::string tried;
  for (const std::string& d : dirs) tried += (tried.empty() ? "" : ", ") + d + "/libcudart.so.13";
  *why = "NVIDIA's libcudart.so.13 not found (tried " + tried +
         "); install the CUDA toolkit, set CUDA_HOME or "
         "give --cudart PATH";
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Run a command on fake GPUs: CUDA Runtime, CUDA Driver and NVML served by fakegpu.", "fakegpu-run"};
  // CLI11 writes the usage line as "[" + label("OPTIONS") + "]": widen the label so it
  // shows the command that follows.
  app.get_formatter()->label("OPTIONS", "OPTIONS] [--] COMMAND [ARGS...");
  std::string devices, config, report, log, ledger, runtime = "auto", cudart;
  bool isolated = false, strict = false, preload = false;
  app.add_option("-d,--devices", devices, "device list, e.g. 8 or a100-80gb:4,h100-80gb:2 (FAKEGPU_DEVICES)");
  app.add_option("-c,--config", config, "JSON device description file (FAKEGPU_CONFIG)")->check(CLI::ExistingFile);
  app.add_option("-r,--report", report, "report path, %p = pid, or off (FAKEGPU_REPORT)");
  app.add_option("-l,--log", log, "off|error|warn|info|debug|trace (FAKEGPU_LOG)")
      ->check(CLI::IsMember({"off", "error", "warn", "info", "debug", "trace"}));
  app.add_option("--ledger", ledger, "shared device ledger path (FAKEGPU_LEDGER)");
  app.add_flag("-i,--isolated", isolated, "per-process devices instead of host-wide ones (FAKEGPU_ISOLATED=1)");
  app.add_flag("-s,--strict", strict, "abort on the first call the fake does not support (FAKEGPU_STRICT=1)");
  app.add_option("--runtime", runtime,
                 "auto: what the program finds; fake: LD_PRELOAD the fake's, also over NVIDIA's found through "
                 "an RPATH (a statically linked one cannot be replaced); nvidia: NVIDIA's libcudart.so.13 "
                 "first (FAKEGPU_RUNTIME)")
      ->check(CLI::IsMember({"auto", "fake", "nvidia"}));
  app.add_option("--cudart", cudart,
                 "NVIDIA's libcudart.so.13 or its directory for --runtime nvidia (default $CUDA_HOME/lib64, "
                 "/usr/local/cuda/lib64)");
  app.add_flag("-p,--preload", preload, "also LD_PRELOAD the backend (same as --runtime fake)");
  // Everything from the first non-option argument on is the command's, options included
  // (prefix_command); nothing of it may be taken as one of ours.
  app.prefix_command();
  app.footer(
      "Example: fakegpu-run -d a100-80gb:2 ./my_cuda_app --batch 64\n"
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
    std::fprintf(stderr,
                 "fakegpu-run: cannot find the backend libraries next to %s (expected ../lib/libcuda.so.1 "
                 "or %s/libcuda.so.1); run it from the build tree or an install\n",
                 self_dir().c_str(), FAKEGPU_INSTALL_LIBDIR_FROM_BIN);
    return 127;
  }
  if (preload && runtime == "nvidia") {
    std::fprintf(stderr,
                 "fakegpu-run: --preload (the fake's runtime) contradicts --runtime nvidia (see fakegpu-run --help)\n");
    return 2;
  }
  if (preload) runtime = "fake";
  std::string ld = libdir;
  if (runtime == "nvidia") {
    std::string why;
    const std::string dir = find_nvidia_cudart(cudart, preload_path, &why);
    if (dir.empty()) {
      std::fprintf(stderr, "fakegpu-run: --runtime nvidia: %s\n", why.c_str());
      return 127;
    }
    ld = dir + ":" + ld;
  } else if (!cudart.empty()) {
    std::fprintf(stderr, "fakegpu-run: --cudart is for --runtime nvidia (see fakegpu-run --help)\n");
    return 2;
  }
  if (const char* old = std::getenv("LD_LIBRARY_PATH"); old && *old) ld += ":" + std::string(old);
  ::setenv("LD_LIBRARY_PATH", ld.c_str(), 1);
  if (runtime == "auto")
    ::unsetenv("FAKEGPU_RUNTIME");
  else
    ::setenv("FAKEGPU_RUNTIME", runtime.c_str(), 1);
  if (runtime == "fake") {
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
