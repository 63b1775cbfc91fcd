#include "shardscope/profiler/workflow/engine_launch.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>

extern char** environ;

namespace shardscope::profiler {

namespace {
namespace fs = std::filesystem;

constexpr std::size_t kStderrTailLines = 40;

// Follows one launched process group: reads its stdout and stderr line by
// line and escalates a cancel from SIGUSR1 to SIGTERM and SIGKILL.
class LaunchFollower {
 public:
  LaunchFollower(pid_t pid, int out_fd, int err_fd, const EngineLaunchCallbacks& callbacks,
                 const std::atomic<bool>* cancel, const EngineLaunchOptions& options)
      : pid_(pid), fds_{out_fd, err_fd}, callbacks_(callbacks), cancel_(cancel), options_(options) {}

  EngineLaunchOutcome run() {
    while (fds_[0] >= 0 || fds_[1] >= 0) {
      escalateCancel();
      followFile();
      pollfd p[2] = {{fds_[0], POLLIN, 0}, {fds_[1], POLLIN, 0}};  // a negative fd is ignored
      if (poll(p, 2, 200) <= 0) continue;                          // a timeout, or EINTR
      for (int i = 0; i < 2; ++i)
        if (fds_[i] >= 0 && p[i].revents != 0) readFrom(i);
    }
    followFile();
    if (!file_buffer_.empty()) handleLine(file_buffer_);
    if (file_fd_ >= 0) close(file_fd_);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    out_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return out_;
  }

 private:
  void escalateCancel() {
    if (cancel_ != nullptr && cancel_->load() && !out_.cancelled) {
      out_.cancelled = true;
      cancel_sent_ = std::chrono::steady_clock::now();
      stop(0, SIGUSR1);
    }
    if (!out_.cancelled) return;
    const auto waited = std::chrono::steady_clock::now() - cancel_sent_;
    if (escalation_ == 0 && waited > std::chrono::seconds(30)) {
      escalation_ = 1;
      stop(1, SIGTERM);
    } else if (escalation_ == 1 && waited > std::chrono::seconds(45)) {
      escalation_ = 2;
      stop(2, SIGKILL);
    }
  }

  void stop(int escalation, int sig) {
    if (options_.cancel_action) return options_.cancel_action(escalation);
    kill(-pid_, sig);
  }

  // Reads what the followed file gained since the last look (it may not exist yet).
  void followFile() {
    if (options_.follow_file.empty()) return;
    if (file_fd_ < 0) file_fd_ = open(options_.follow_file.c_str(), O_RDONLY | O_CLOEXEC);
    if (file_fd_ < 0) return;
    char chunk[4096];
    for (ssize_t got; (got = read(file_fd_, chunk, sizeof chunk)) > 0;) {
      file_buffer_.append(chunk, static_cast<std::size_t>(got));
      std::size_t start = 0;
      for (std::size_t nl; (nl = file_buffer_.find('\n', start)) != std::string::npos; start = nl + 1)
        handleLine(file_buffer_.substr(start, nl - start));
      file_buffer_.erase(0, start);
    }
  }

  void readFrom(int i) {
    char chunk[4096];
    const ssize_t got = read(fds_[i], chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) return;
    if (got <= 0) {  // end of the stream (or an error: the same for us)
      if (!buffers_[i].empty()) line(i, buffers_[i]);
      buffers_[i].clear();
      close(fds_[i]);
      fds_[i] = -1;
      return;
    }
    std::string& buffer = buffers_[i];
    buffer.append(chunk, static_cast<std::size_t>(got));
    std::size_t start = 0;
    for (std::size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1)
      line(i, buffer.substr(start, nl - start));
    buffer.erase(0, start);
  }

  void line(int stream, const std::string& text) {
    if (stream == 0) return handleLine(text);
    out_.stderr_tail.push_back(text);
    if (out_.stderr_tail.size() > kStderrTailLines) out_.stderr_tail.erase(out_.stderr_tail.begin());
    if (callbacks_.error_output) {
      callbacks_.error_output(text);
    } else {
      const std::string l = text + "\n";
      (void)!write(STDERR_FILENO, l.data(), l.size());
    }
  }

  void handleLine(const std::string& line) {
    std::istringstream in(line);
    std::string word;
    in >> word;
    if (word == "run") {
      long long id = 0;
      if (in >> id && id > 0) out_.run = core::store::RunId{id};
      return;
    }
    if (word == "step") {
      long long step = -1;
      std::vector<double> ms;
      if (in >> step) {
        for (double v = 0; in >> v;) ms.push_back(v);
        if (in.eof() && !ms.empty()) {
          if (callbacks_.step) callbacks_.step(step, ms);
          return;
        }
      }
      in.clear();
    }
    if (word == "progress") {
      unsigned long long done = 0, total = 0;
      if (in >> done >> total) {
        std::string what;
        std::getline(in >> std::ws, what);
        if (what.empty()) what = "step " + std::to_string(done) + " of " + std::to_string(total);
        if (callbacks_.progress) callbacks_.progress(done, total, what);
        return;
      }
    }
    if (callbacks_.output) callbacks_.output(line);
  }

  pid_t pid_;
  int fds_[2];  // stdout, stderr; -1 once closed
  const EngineLaunchCallbacks& callbacks_;
  const std::atomic<bool>* cancel_;
  const EngineLaunchOptions& options_;
  EngineLaunchOutcome out_;
  int file_fd_ = -1;  // the followed file, once it exists
  std::string file_buffer_;
  std::string buffers_[2];
  std::chrono::steady_clock::time_point cancel_sent_{};
  int escalation_ = 0;  // 0 SIGUSR1 sent, 1 SIGTERM sent, 2 SIGKILL sent
};
}  // namespace

bool runningAsRoot() { return geteuid() == 0; }

std::vector<std::string> launcherCommand(const std::optional<std::string>& launcher, std::uint32_t world_size,
                                         bool as_root) {
  std::string text = launcher.value_or("mpirun -np {N}");
  if (!launcher && world_size > std::max(1u, std::thread::hardware_concurrency())) text += " --oversubscribe";
  if (!launcher && as_root) text += " --allow-run-as-root";
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) {
    for (std::size_t p; (p = w.find("{N}")) != std::string::npos;) w.replace(p, 3, std::to_string(world_size));
    words.push_back(w);
  }
  return words;
}

std::string findEngine(const std::optional<std::string>& given) {
  if (given) return *given;
  if (const char* env = std::getenv("SHARDSCOPE_ENGINE"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& candidate :
         {self.parent_path() / "shardscope-engine", self.parent_path().parent_path() / "engine" / "shardscope-engine"})
      if (fs::exists(candidate, ec)) return candidate.string();
  }
  return "shardscope-engine";
}

core::Result<EngineLaunchOutcome> launchEngine(const std::vector<std::string>& argv,
                                               const EngineLaunchCallbacks& callbacks, const std::atomic<bool>* cancel,
                                               const EngineLaunchOptions& options) {
  if (argv.empty()) return core::Error{"no launcher command", core::ErrorKind::Usage};
  int fds[2], efds[2];
  if (pipe(fds) != 0)
    return core::Error{std::string("cannot create a pipe: ") + std::strerror(errno), core::ErrorKind::Io};
  if (pipe(efds) != 0) {
    close(fds[0]);
    close(fds[1]);
    return core::Error{std::string("cannot create a pipe: ") + std::strerror(errno), core::ErrorKind::Io};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, efds[1], STDERR_FILENO);
  for (int fd : {fds[0], fds[1], efds[0], efds[1]}) posix_spawn_file_actions_addclose(&actions, fd);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, cargv[0], &actions, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  close(efds[1]);
  if (rc != 0) {
    close(fds[0]);
    close(efds[0]);
    return core::Error{"cannot start the launcher '" + argv.front() + "': " + std::strerror(rc), core::ErrorKind::Io};
  }
  return LaunchFollower(pid, fds[0], efds[0], callbacks, cancel, options).run();
}

std::string launcherFailureHint(const std::vector<std::string>& stderr_tail) {
  const bool root_refused = std::any_of(stderr_tail.begin(), stderr_tail.end(), [](const std::string& l) {
    return l.find("--allow-run-as-root") != std::string::npos || l.find("attempt to run as root") != std::string::npos;
  });
  if (root_refused)
    return "OpenMPI refuses to run as root: add --allow-run-as-root to your launcher (e.g. --launcher \"mpirun "
           "--allow-run-as-root -np {N}\") or set OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1";
  return {};
}

}  // namespace shardscope::profiler
