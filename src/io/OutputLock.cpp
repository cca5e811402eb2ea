#include "io/OutputLock.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <sstream>

#include "core/Error.hpp"

namespace optistep {
namespace {

namespace fs = std::filesystem;

/// Who holds (or held) a lock file: its lines "host <name>", "pid <n>", "started <time>".
struct Holder {
  std::string host;
  long pid = 0;
  std::string started;

  std::string Text() const {
    return "host " + host + "\npid " + std::to_string(pid) + "\nstarted " + started + "\n";
  }
  std::string Describe() const {
    return "pid " + std::to_string(pid) + " on host " + host + ", started " + started;
  }
};

Holder ReadHolder(int fd) {
  std::string text(4096, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  Holder holder;
  std::istringstream lines(text);
  for (std::string key; lines >> key;) {
    if (key == "host") lines >> holder.host;
    else if (key == "pid") lines >> holder.pid;
    else if (key == "started") lines >> holder.started;
  }
  return holder;
}

Holder ThisProcess() {
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  char started[32];
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  std::strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return {host, static_cast<long>(::getpid()), started};
}

bool Alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

enum Outcome { kLocked = 0, kInUse = 1, kCannotWrite = 2 };

}  // namespace

OutputFolderLock::OutputFolderLock(MPI_Comm comm, const std::string& directory)
    : directory_(directory), path_((fs::path(directory) / "optistep.lock").string()) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int outcome = kLocked;
  std::string message;
  const auto fail = [&](int kind, const std::string& what) {
    outcome = kind;
    message = what;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  };
  if (rank == 0) {
    std::error_code ec;
    made_directory_ = !fs::exists(directory, ec);
    fs::create_directories(directory, ec);
    if (ec) fail(kCannotWrite, "cannot create " + directory + ": " + ec.message());
    // A few tries: the holder may remove the file between our open and our lock.
    for (int attempt = 0; attempt < 3 && outcome == kLocked && fd_ < 0; ++attempt) {
      fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (fd_ < 0) {
        fail(kCannotWrite, "cannot create " + path_ + ": " + std::strerror(errno));
        break;
      }
      struct flock whole {};
      whole.l_type = F_WRLCK;
      whole.l_whence = SEEK_SET;
      const bool enforced = ::fcntl(fd_, F_SETLK, &whole) == 0;
      const bool held = !enforced && (errno == EACCES || errno == EAGAIN);
      const Holder holder = ReadHolder(fd_);
      if (held) {
        fail(kInUse, directory + " is in use by the optistep run of " + holder.Describe() +
                         " (lock file " + path_ + ")");
        break;
      }
      struct stat opened {}, named {};
      if (enforced && (::fstat(fd_, &opened) != 0 || ::stat(path_.c_str(), &named) != 0 ||
                       opened.st_ino != named.st_ino || opened.st_dev != named.st_dev)) {
        ::close(fd_);  // removed by its holder meanwhile: lock the new file
        fd_ = -1;
        continue;
      }
      if (!holder.host.empty()) {
        const bool dead_here = holder.host == ThisProcess().host && !Alive(holder.pid);
        if (!enforced && !dead_here) {
          fail(kInUse, directory + " is in use by the optistep run of " + holder.Describe() +
                           " (lock file " + path_ +
                           "; this file system has no locks: delete it if that run is over)");
          break;
        }
        std::fprintf(stderr,
                     "optistep: warning: %s: the run of %s ended without releasing %s; "
                     "taking it over\n",
                     path_.c_str(), holder.Describe().c_str(), directory.c_str());
      }
      const std::string text = ThisProcess().Text();
      if (::ftruncate(fd_, 0) != 0 ||
          ::pwrite(fd_, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()) ||
          ::fsync(fd_) != 0)
        fail(kCannotWrite, "cannot write " + path_ + ": " + std::strerror(errno));
    }
    if (outcome == kLocked && fd_ < 0) fail(kCannotWrite, "cannot lock " + path_);
  }
  MPI_Bcast(&outcome, 1, MPI_INT, 0, comm);
  message = MessageOfAnyRank(comm, message);
  if (outcome == kInUse) throw OutputLocked(message);
  if (outcome == kCannotWrite) throw IoError(message);
}

OutputFolderLock::~OutputFolderLock() {
  if (fd_ < 0) return;
  // Removed before it is unlocked: a run that opens the file meanwhile finds, once it
  // holds the lock, that the name no longer refers to it, and tries again.
  ::unlink(path_.c_str());
  ::close(fd_);
  std::error_code ignored;
  if (made_directory_) fs::remove(directory_, ignored);  // only if empty
}

}  // namespace optistep
