#pragma once
// Collective parallel HDF5 I/O over MPI-IO: the one layer under XDMF frames and checkpoints.
//
// Arrays are stored by global row id (a node, element or particle id), never by rank, so a
// file written on P ranks is read back on any Q ranks with any split of the rows.
//
// Every method is collective on the file's communicator: all ranks call it, in the same
// order, with the same names and the same global sizes. Metadata reads are collective too
// (H5Pset_all_coll_metadata_ops), so only one rank touches the file system for them.
//
// Errors: a failed HDF5 call throws std::runtime_error naming the call, the file, the object
// and HDF5's own message. Opening a missing or non-HDF5 file throws the same InputError on
// every rank. A write that fails (Create, WriteArray, WriteAttribute, Flush, Close) throws
// the same IoError on every rank, naming the file and the system's reason: the ranks agree
// on every write's outcome, since MPI-IO need not report a failure to all of them. A file
// whose write failed once it was created cannot be closed (FailedWriteLeftFileOpen).
#include <hdf5.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/DistributedArray.hpp"

namespace optistep {

/// An HDF5 file opened on a communicator with the MPI-IO driver. Move-only; the destructor
/// closes the file (collective) unless an exception is unwinding through it: then the file
/// is left to HDF5's shutdown at MPI_Finalize, because the other ranks may not be unwinding
/// and a one-sided collective close would hang instead of letting main() report and abort.
class Hdf5File {
 public:
  /// How a created file guards its contents.
  ///  - kPlain (frames): the most widely readable format.
  ///  - kChecksummed (checkpoints): every metadata block carries a checksum (superblock v3,
  ///    v2 object headers: the 1.10 format, H5Pset_libver_bounds), so a flipped byte in the
  ///    file's structure or attributes, or a truncated file, makes the open or the read that
  ///    meets it fail instead of returning wrong values. Dataset contents are not covered
  ///    (io/Checkpoint hashes them). h5py and h5dump >= 1.10 read both.
  enum class Integrity { kPlain, kChecksummed };

  /// Creates (truncates) path for writing. Collective.
  static Hdf5File Create(MPI_Comm comm, const std::string& path,
                         Integrity integrity = Integrity::kPlain);
  /// Opens an existing file read-only. Collective. InputError if it is missing or not HDF5.
  static Hdf5File Open(MPI_Comm comm, const std::string& path);

  Hdf5File(Hdf5File&& other) noexcept;
  Hdf5File(const Hdf5File&) = delete;
  Hdf5File& operator=(const Hdf5File&) = delete;
  Hdf5File& operator=(Hdf5File&&) = delete;
  ~Hdf5File();

  /// Collective: H5Fflush of the whole file; with MPI-IO this ends in MPI_File_sync, so
  /// every rank's data has been handed to the storage system when it returns.
  void Flush();
  /// Flushes and closes the file. Collective; a closed file cannot be used again.
  void Close();
  const std::string& Path() const { return path_; }

  /// Whether a write failed in a file already created (a full disk, a quota). Its ranks'
  /// HDF5 states may then differ, so that closing it, also HDF5's own close at
  /// MPI_Finalize, would wait forever: the process must end with MPI_Abort instead.
  static bool FailedWriteLeftFileOpen() { return failed_write_left_file_open_; }

  /// Writes a new dataset "name" (a/b/name creates the groups a and a/b): 2-D
  /// (global_rows x columns), or 1-D (global_rows) when columns == 1; little-endian file
  /// types, contiguous layout, collective transfer. The ranks' row ranges must tile
  /// [0, global_rows) exactly; otherwise every rank throws the same std::runtime_error.
  template <class T>
  void WriteArray(const std::string& name, const DistributedArray<T>& array);

  /// Reads rows [row_offset, row_offset + local_rows) of dataset "name" (1-D or 2-D),
  /// row-major, converting to T; the stored type must be of T's class (float or integer).
  /// Collective transfer; ranges of different ranks may overlap (ghosts) or be empty.
  template <class T>
  std::vector<T> ReadArray(const std::string& name, int64_t row_offset, int64_t local_rows) const;

  /// Dimensions of dataset "name": {rows} or {rows, columns}.
  std::vector<int64_t> Shape(const std::string& name) const;

  /// Scalar attributes on an object: object is a group or dataset path, "" or "/" for the
  /// root group. An existing attribute of that name is replaced. Every rank passes the same
  /// value (HDF5 caches attribute data per rank). Pass integers as int64_t{n}.
  void WriteAttribute(const std::string& object, const std::string& name, double value);
  void WriteAttribute(const std::string& object, const std::string& name, int64_t value);
  void WriteAttribute(const std::string& object, const std::string& name, const std::string& value);
  /// T is double, int64_t or std::string; the stored attribute must be a scalar of T's class.
  template <class T>
  T ReadAttribute(const std::string& object, const std::string& name) const;

 private:
  class Id;
  Hdf5File(MPI_Comm comm, std::string path);
  Id AccessProperties() const;
  Id OpenObject(const std::string& object) const;
  void CheckRowTiling(const std::string& name, int64_t global_rows, int columns, int64_t row_offset,
                      int64_t local_rows, bool has_data) const;
  void WriteScalarAttribute(const std::string& object, const std::string& name, hid_t file_type,
                            hid_t memory_type, const void* value);
  Id OpenDataset(const std::string& name) const;
  std::vector<int64_t> Extent(const std::string& name, hid_t space) const;
  void ExpectTypeClass(const std::string& object, hid_t type, H5T_class_t expected,
                       const char* wanted) const;
  Id DatasetCreationProperties(const std::string& name) const;
  Id SelectRows(const std::string& name, hid_t file_space, int64_t row_offset, int64_t local_rows,
                int columns) const;
  Id CollectiveTransfer(const std::string& name) const;
  /// Collective: runs call (a write step) and, if it threw on any rank, closes the file and
  /// throws IoError("cannot <action> <path>: <reason>") on every rank.
  template <class Call>
  void Agreed(const char* action, Call&& call);

  MPI_Comm comm_;
  std::string path_;
  hid_t file_ = H5I_INVALID_HID;
  int uncaught_at_open_ = 0;
  static bool failed_write_left_file_open_;
};

}  // namespace optistep
