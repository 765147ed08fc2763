// SPDX-License-Identifier: Apache-2.0
// Child processes and files of the backend tests (driver_test.h and runtime_api.h use them):
// a test case of this binary run again in a fresh process with its own environment, and the
// temporary files such a child writes or reads.
#pragma once
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace backend_test {

// Starts test case `name` of this binary in a fresh process, with this process's environment
// and `env` (KEY=value entries, each replacing any KEY already set); returns its pid, or -1.
inline pid_t spawn_case(const std::string& name, const std::vector<std::string>& env) {
  std::vector<std::string> vars;
  for (char** e = environ; *e; ++e) vars.emplace_back(*e);
  for (const auto& kv : env) {
    const std::string key = kv.substr(0, kv.find('=') + 1);
    std::erase_if(vars, [&](const std::string& v) { return v.rfind(key, 0) == 0; });
    vars.push_back(kv);
  }
  std::vector<char*> envp;
  for (auto& v : vars) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::string self = "/proc/self/exe", case_name = name;
  char* argv[] = {self.data(), case_name.data(), nullptr};
  pid_t pid = -1;
  if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv, envp.data()) != 0) return -1;
  return pid;
}

// The exit status of a spawned case (0 = it passed; Catch2 counts failed assertions), 128 +
// the signal that ended it, or -1 when there is no such child.
inline int wait_case(pid_t pid) {
  int status = 0;
  if (pid <= 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A fresh empty file under /tmp whose name starts with `prefix`; its path, or "" on failure.
inline std::string temp_file(const std::string& prefix) {
  std::string path = "/tmp/" + prefix + "XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) return "";
  close(fd);
  return path;
}

}  // namespace backend_test
