#pragma once
// One run at a time in an output folder. Two runs writing the same folder would each
// replace the other's frames, stats.csv and checkpoints, and both exit 0.
//
// The lock is <output.directory>/optistep.lock: rank 0 holds an advisory POSIX lock on it
// (fcntl F_SETLK, which NFS and parallel file systems with POSIX locking carry across
// hosts) for the length of a run, and the file names the holder: its host, pid and start
// time. The file is removed when the run ends.
//  - A run in a folder that another run holds is refused before it writes anything:
//    OutputLocked on every rank, one line naming the holder (exit code 5).
//  - The system drops the lock when its process ends, even by kill -9 or a lost node (NFS:
//    when the lease runs out), so a file left by such a run is taken over, with a
//    warning naming that run.
//  - On a file system without POSIX locks the file alone decides: its holder is taken to
//    be alive unless it is a dead process on this host.
#include <mpi.h>

#include <stdexcept>
#include <string>

namespace optistep {

/// The output folder is in use by another run. Thrown on every rank alike.
class OutputLocked : public std::runtime_error {
 public:
  explicit OutputLocked(const std::string& what) : std::runtime_error(what) {}
};

class OutputFolderLock {
 public:
  /// Collective. Creates directory if missing and locks it; rank 0 prints a warning when
  /// it takes over the lock file of a run that ended without removing it. OutputLocked if
  /// another run holds the folder, IoError if the folder or the lock file cannot be made.
  OutputFolderLock(MPI_Comm comm, const std::string& directory);
  /// Rank 0 removes the lock file (and the folder, if this lock made it and it is empty).
  ~OutputFolderLock();
  OutputFolderLock(const OutputFolderLock&) = delete;
  OutputFolderLock& operator=(const OutputFolderLock&) = delete;

 private:
  std::string directory_;
  std::string path_;
  int fd_ = -1;                   ///< rank 0: the locked lock file
  bool made_directory_ = false;   ///< rank 0: the folder did not exist before
};

}  // namespace optistep
