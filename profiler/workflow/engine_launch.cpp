#include "shardscope/profiler/workflow/engine_launch.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "shardscope/core/summary.h"

extern char** environ;

namespace shardscope::profiler {

namespace {
namespace fs = std::filesystem;

constexpr std::size_t kStderrTailLines = 40;
constexpr auto kLimitSampleEvery = std::chrono::milliseconds(200);

// Every process's parent, from /proc/<pid>/stat (its 4th field, after the
// command name in parentheses, which may hold anything).
std::multimap<int, int> childrenByParent() {
  std::multimap<int, int> children;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    char state = 0;
    int ppid = 0;
    if (rest >> state >> ppid) children.emplace(ppid, std::stoi(name));
  }
  return children;
}

// Resident bytes of one process (statm's second field, in pages); 0 when gone.
std::uint64_t residentBytesOf(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/statm");
  std::uint64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

// Starts argv with fork and exec, for what posix_spawn cannot do first: an
// address-space limit and a death signal tied to the calling thread. Only
// async-signal-safe calls between fork and exec. Returns the pid, or -1 with
// `error` set (errno of the failed exec, reported through a close-on-exec pipe).
pid_t forkExec(std::vector<char*>& cargv, int out_fd, int err_fd, const std::vector<int>& close_fds,
               const ProcessLimits& limits, int& error) {
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    error = errno;
    return -1;
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    if (limits.die_with_caller && (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)) _exit(127);
    if (limits.address_space_bytes > 0) {
      const rlimit as{limits.address_space_bytes, limits.address_space_bytes};
      setrlimit(RLIMIT_AS, &as);
    }
    signal(SIGPIPE, SIG_DFL);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    for (int fd : close_fds) close(fd);
    execvp(cargv[0], cargv.data());
    const int e = errno;
    (void)!write(report[1], &e, sizeof e);
    _exit(127);
  }
  close(report[1]);
  if (pid < 0) {
    error = errno;
    close(report[0]);
    return -1;
  }
  setpgid(pid, pid);  // also here: the group exists before anyone signals it
  int e = 0;
  ssize_t got = 0;
  while ((got = read(report[0], &e, sizeof e)) < 0 && errno == EINTR) {
  }
  close(report[0]);
  if (got == static_cast<ssize_t>(sizeof e)) {  // exec failed
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    error = e;
    return -1;
  }
  return pid;
}

// Follows one launched process group: reads its stdout and stderr line by
// line and escalates a cancel from SIGUSR1 to SIGTERM and SIGKILL.
class LaunchFollower {
 public:
  LaunchFollower(pid_t pid, int out_fd, int err_fd, const EngineLaunchCallbacks& callbacks,
                 const std::atomic<bool>* cancel, const EngineLaunchOptions& options)
      : pid_(pid), fds_{out_fd, err_fd}, callbacks_(callbacks), cancel_(cancel), options_(options) {}

  EngineLaunchOutcome run() {
    started_ = std::chrono::steady_clock::now();
    while (fds_[0] >= 0 || fds_[1] >= 0) {
      escalateCancel();
      enforceLimits();
      followFile();
      pollfd p[2] = {{fds_[0], POLLIN, 0}, {fds_[1], POLLIN, 0}};  // a negative fd is ignored
      if (poll(p, 2, 200) <= 0) continue;                          // a timeout, or EINTR
      for (int i = 0; i < 2; ++i)
        if (fds_[i] >= 0 && p[i].revents != 0) readFrom(i);
    }
    followFile();
    if (!file_buffer_.empty()) handleLine(file_buffer_);
    if (file_fd_ >= 0) close(file_fd_);
    if (out_.cancelled || !out_.limit.empty()) killTree();  // nothing it started outlives it
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

  // Samples the resident memory of the process tree every 200 ms and kills
  // it at a limit (once).
  void enforceLimits() {
    const ProcessLimits& l = options_.limits;
    if (!out_.limit.empty() || (l.resident_bytes == 0 && l.wall.count() == 0 && !l.sample)) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_sample_ < kLimitSampleEvery) return;
    last_sample_ = now;
    const std::uint64_t resident = processTreeResidentBytes(pid_);
    out_.peak_resident_bytes = std::max(out_.peak_resident_bytes, resident);
    std::string reason;
    if (l.resident_bytes > 0 && resident > l.resident_bytes)
      reason = "memory limit (" + core::formatBytes(l.resident_bytes) + ", " + l.resident_name +
               "): its processes held " + core::formatBytes(resident);
    else if (l.wall.count() > 0 && now - started_ > l.wall)
      reason = "wall time limit (" + std::to_string(l.wall.count()) + " s, " + l.wall_name + ")";
    else if (l.sample)
      reason = l.sample(resident);
    if (reason.empty()) return;
    out_.limit = reason;
    killTree();
    if (options_.cancel_action) options_.cancel_action(2);  // a batch job's ranks are the scheduler's: stop them hard
  }

  // SIGKILL to the process group and to every descendant (some may have left the group).
  void killTree() {
    for (const int p : processTree(pid_)) kill(p, SIGKILL);
    kill(-pid_, SIGKILL);
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
  std::chrono::steady_clock::time_point started_{};
  std::chrono::steady_clock::time_point last_sample_{};
  int escalation_ = 0;  // 0 SIGUSR1 sent, 1 SIGTERM sent, 2 SIGKILL sent
};
}  // namespace

bool runningAsRoot() { return geteuid() == 0; }

std::vector<int> processTree(int pid) {
  std::vector<int> tree;
  if (pid <= 0 || kill(pid, 0) != 0) return tree;
  const std::multimap<int, int> children = childrenByParent();
  tree.push_back(pid);
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const auto [first, last] = children.equal_range(tree[i]);
    for (auto it = first; it != last; ++it) tree.push_back(it->second);
  }
  return tree;
}

std::uint64_t processTreeResidentBytes(int pid) {
  std::uint64_t total = 0;
  for (const int p : processTree(pid)) total += residentBytesOf(p);
  return total;
}

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
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = 0;
  int rc = 0;
  if (options.limits.address_space_bytes > 0 || options.limits.die_with_caller) {
    pid = forkExec(cargv, fds[1], efds[1], {fds[0], fds[1], efds[0], efds[1]}, options.limits, rc);
  } else {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, efds[1], STDERR_FILENO);
    for (int fd : {fds[0], fds[1], efds[0], efds[1]}) posix_spawn_file_actions_addclose(&actions, fd);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    rc = posix_spawnp(&pid, cargv[0], &actions, &attr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
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
