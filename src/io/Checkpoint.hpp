#pragma once
// Checkpoints: one parallel HDF5 file per checkpoint, written collectively by every rank
// (no file per rank), from which a run resumes: bitwise on the same number of ranks, by
// global ids on any other.
//
// Files: <output.directory>/checkpoints/ckpt_<step, 8 digits>.h5. Root attributes are the
// CheckpointHeader below; the datasets are the discretization's (app/FemSimulation,
// mpm/ParticleCheckpoint, app/ParticleSimulation; docs/user/checkpoints.md specifies the
// format), every one keyed by a global,
// rank-count-independent id (node id, particle id).
//
// Safety, against a run killed at any moment:
//  - written to <name>.tmp, flushed (MPI_File_sync), closed, fsync'ed by rank 0, renamed
//    to <name> and the folder fsync'ed: a file under its final name is complete;
//  - the newest `keep` checkpoints are kept; older ones, stray .tmp files of killed writes
//    and checkpoints of later steps than the new one (a run restarted from an older file
//    abandons them) are deleted only after the new one is complete;
//  - checksums, verified on every read: the file's metadata and attributes carry HDF5's
//    (Hdf5File::Integrity::kChecksummed), and every dataset carries the attribute
//    row_hash = RowHash of its rows; a truncated or damaged file fails to load on every
//    rank alike, and LoadCheckpoint then falls back to the previous one.
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/DistributedArray.hpp"
#include "io/Hdf5File.hpp"

namespace optistep {

/// Version of the layout below; a reader refuses any other.
inline constexpr int64_t kCheckpointFormatVersion = 1;

/// FNV-1a, 64 bits (Fowler, Noll, Vo), of text: the scene hash of a checkpoint.
std::uint64_t Fnv1a64(const std::string& text);
/// Fnv1a64(text) as 16 lower-case hex digits, as stored in scene_hash.
std::string SceneHash(const std::string& text);

/// The hash stored as a dataset's attribute row_hash (16 hex digits): the sum mod 2^64,
/// over rows i, of splitmix64(h_i), h_i the word-wise FNV-1a of the row index i and then
/// the row's values as 64-bit words (doubles' IEEE bits, integers as int64). A sum, so
/// ranks holding any split of the rows add their parts: the check costs one reduction, and
/// a changed, lost or moved row changes it. This is the part of values holding rows
/// [first_row, first_row + rows) of a (* x columns) array.
template <class T>
std::uint64_t RowHash(const T* values, int64_t first_row, int64_t rows, int columns);

/// The root attributes of a checkpoint file (names as the fields).
struct CheckpointHeader {
  int64_t format_version = kCheckpointFormatVersion;
  std::string optistep_version;  ///< OPTISTEP_VERSION of the writer
  std::string discretization;    ///< "fem" | "mpm"
  double time = 0.0;             ///< simulated time t, s
  int64_t step = 0;              ///< accepted steps so far
  int64_t frame = 0;             ///< frames completed; frame files up to it are on disk
  int64_t ranks = 0;             ///< MPI ranks of the run that wrote it
  std::string scene_text;        ///< SceneConfig::text (the scene after --set)
  std::string scene_hash;        ///< SceneHash(scene_text)
};

/// A checkpoint file that cannot be read: truncated, a checksum mismatch, a missing
/// dataset or attribute, another format version. Thrown on every rank alike.
class CheckpointDamaged : public std::runtime_error {
 public:
  explicit CheckpointDamaged(const std::string& what) : std::runtime_error(what) {}
};

/// <output_directory>/checkpoints
std::string CheckpointDirectory(const std::string& output_directory);
/// <directory>/ckpt_<step, 8 digits>.h5
std::string CheckpointPath(const std::string& directory, int64_t step);
/// Not collective: the complete checkpoint files (ckpt_*.h5; no .tmp, no .damaged) in
/// directory, newest (largest step) first; empty if the folder does not exist.
std::vector<std::string> ListCheckpoints(const std::string& directory);

/// One checkpoint being written. Every method is collective on comm.
class CheckpointWriter {
 public:
  /// Creates directory if missing and <CheckpointPath(directory, header.step)>.tmp
  /// (kChecksummed), and writes the header's attributes. IoError on every rank if the
  /// folder or the file cannot be made (so for every method below).
  CheckpointWriter(MPI_Comm comm, const std::string& directory, const CheckpointHeader& header);

  /// Writes dataset name (Hdf5File::WriteArray: rows keyed by global id, tiled by ranks)
  /// and its row_hash.
  template <class T>
  void Write(const std::string& name, const DistributedArray<T>& array);
  /// A root attribute of the discretization's own (as Hdf5File::WriteAttribute).
  void WriteAttribute(const std::string& name, int64_t value) { file_.WriteAttribute("", name, value); }

  /// Flushes, closes and fsyncs the file, renames it to its final name, fsyncs the folder,
  /// then deletes all but the newest `keep` (>= 1) checkpoints up to this one, those of
  /// later steps, and stray .tmp files.
  /// Returns the final path. IoError on every rank if a step fails; the checkpoints
  /// before it are then all kept.
  std::string Commit(int keep);

 private:
  MPI_Comm comm_;
  std::string directory_;
  std::string path_;
  Hdf5File file_;
};

/// One checkpoint being read. Every method is collective on comm, and every failure is
/// agreed: if any rank's read fails (say a chunk only it reads has a bad checksum), every
/// rank throws the same CheckpointDamaged.
class CheckpointReader {
 public:
  /// Opens path and reads the header. CheckpointDamaged if the file is missing, truncated,
  /// damaged or of another format version.
  CheckpointReader(MPI_Comm comm, const std::string& path);

  const CheckpointHeader& header() const { return header_; }
  const std::string& path() const { return file_.Path(); }
  /// Dimensions of dataset name: {rows} or {rows, columns}.
  std::vector<int64_t> Shape(const std::string& name) const;
  /// Rows [rows.offset, rows.offset + rows.count) of dataset name, row-major, checked
  /// against its row_hash: the ranks' ranges must tile the rows, or each be all of them.
  template <class T>
  std::vector<T> Read(const std::string& name, RowRange rows) const;
  /// A root attribute (T: double, int64_t or std::string).
  template <class T>
  T Attribute(const std::string& name) const;

 private:
  void ReadHeader();
  template <class Call>
  auto Agreed(const std::string& what, Call&& call) const;

  MPI_Comm comm_;
  Hdf5File file_;
  CheckpointHeader header_;
};

/// Collective: loads a checkpoint with load(reader), which must read everything it needs
/// before it changes any state (so that a failure half-way leaves the state as it was).
///  - spec "latest": the newest checkpoint in directory; one that fails with
///    CheckpointDamaged is skipped and the next older one tried; once one loads, each one
///    skipped is reported on rank 0 (a warning line) and renamed to <name>.damaged;
///  - any other spec is a checkpoint file, loaded without fallback.
/// Returns the header of the checkpoint loaded. InputError (one line naming the folder or
/// file and the damage of each) if none loads, with every file left as it was: a run never
/// restarts from step 0 silently. An InputError
/// thrown by load (the checkpoint does not fit the scene) passes through unchanged.
CheckpointHeader LoadCheckpoint(MPI_Comm comm, const std::string& spec,
                                const std::string& directory,
                                const std::function<void(const CheckpointReader&)>& load);

}  // namespace optistep
