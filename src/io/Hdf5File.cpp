#include "io/Hdf5File.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "core/Error.hpp"

namespace optistep {

namespace {

/// HDF5 prints its error stack to stderr by default; we put it in the exception instead.
class QuietErrors {
 public:
  QuietErrors() {
    H5Eget_auto2(H5E_DEFAULT, &function_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, function_, data_); }
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t function_ = nullptr;
  void* data_ = nullptr;
};

herr_t CollectMessage(unsigned, const H5E_error2_t* error, void* messages) {
  static_cast<std::vector<std::string>*>(messages)->push_back(
      std::string(error->func_name) + "(): " + (error->desc ? error->desc : ""));
  return 0;
}

/// The outermost (API) and innermost (cause) entries of HDF5's current error stack.
std::string ErrorStackText() {
  std::vector<std::string> messages;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, CollectMessage, &messages);
  if (messages.empty()) return "no HDF5 error message";
  if (messages.size() == 1) return messages.front();
  return messages.front() + " <- " + messages.back();
}

std::string Where(const std::string& file, const std::string& object) {
  return "file '" + file + "'" + (object.empty() ? "" : ", object '" + object + "'");
}

/// Runs one HDF5 call with error printing off; a negative result throws with the call's
/// text, the file, the object and HDF5's messages.
template <class Call>
auto Checked(const char* call_text, const std::string& file, const std::string& object,
             Call&& call) {
  QuietErrors quiet;
  auto result = call();
  if (result < 0)
    throw std::runtime_error(std::string("HDF5 call ") + call_text + " failed (" +
                             Where(file, object) + "): " + ErrorStackText());
  return result;
}

#define OPTISTEP_H5(file, object, call) Checked(#call, file, object, [&] { return (call); })

/// Memory and file (little-endian) types and the type class of each supported element type.
template <class T>
struct HdfType;
template <>
struct HdfType<double> {
  static hid_t Memory() { return H5T_NATIVE_DOUBLE; }
  static hid_t File() { return H5T_IEEE_F64LE; }
  static constexpr H5T_class_t kClass = H5T_FLOAT;
  static constexpr const char* kName = "floating-point";
};
template <>
struct HdfType<int32_t> {
  static hid_t Memory() { return H5T_NATIVE_INT32; }
  static hid_t File() { return H5T_STD_I32LE; }
  static constexpr H5T_class_t kClass = H5T_INTEGER;
  static constexpr const char* kName = "integer";
};
template <>
struct HdfType<int64_t> {
  static hid_t Memory() { return H5T_NATIVE_INT64; }
  static hid_t File() { return H5T_STD_I64LE; }
  static constexpr H5T_class_t kClass = H5T_INTEGER;
  static constexpr const char* kName = "integer";
};
template <>
struct HdfType<std::string> {
  static constexpr H5T_class_t kClass = H5T_STRING;
  static constexpr const char* kName = "string";
};

/// HDF5 rejects a null buffer even when nothing is selected, as on a rank with no rows.
template <class T>
T* NonNull(T* buffer) {
  static std::remove_const_t<T> unused{};
  return buffer ? buffer : &unused;
}

std::string ObjectPath(const std::string& object) { return object.empty() ? "/" : object; }

/// Why path cannot be written, by the system's account, or "" if a probe finds no reason:
/// MPI-IO reports a failed open as "MPI_ERR_OTHER: known error not in list", the probe
/// repeats it with open(2) and reads errno; a full file system is found by statvfs(2).
std::string SystemReason(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd >= 0) {
    ::close(fd);
    ::unlink(path.c_str());
  } else if (errno == EEXIST) {
    fd = ::open(path.c_str(), O_WRONLY);
    if (fd >= 0) ::close(fd);
  }
  if (fd < 0) return std::strerror(errno);
  struct statvfs space {};
  const std::string folder = std::filesystem::path(path).parent_path().string();
  if (::statvfs(folder.empty() ? "." : folder.c_str(), &space) == 0 && space.f_bavail == 0)
    return std::strerror(ENOSPC);
  return "";
}

}  // namespace

template <class Call>
void Hdf5File::Agreed(const char* action, Call&& call) {
  std::string problem;
  try {
    call();
  } catch (const std::exception& e) {
    problem = e.what();
    if (problem.empty()) problem = "unknown error";
  }
  problem = MessageOfAnyRank(comm_, problem);
  if (problem.empty()) return;
  // A collective write that failed can leave the ranks' HDF5 metadata caches in different
  // states; closing the file (or HDF5's own close at MPI_Finalize) then waits forever in
  // mismatched collective calls. The file is left open and the process must end without
  // MPI_Finalize (FailedWriteLeftFileOpen).
  if (file_ >= 0) failed_write_left_file_open_ = true;
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  const std::string reason = MessageOfAnyRank(comm_, rank == 0 ? SystemReason(path_) : "");
  throw IoError(std::string("cannot ") + action + " " + path_ + ": " +
                (reason.empty() ? problem : reason));
}

/// Owns one HDF5 identifier and closes it with the matching H5?close.
class Hdf5File::Id {
 public:
  Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Id(Id&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)), close_(other.close_) {}
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  Id& operator=(Id&&) = delete;
  ~Id() {
    if (id_ < 0) return;
    QuietErrors quiet;
    close_(id_);
  }
  operator hid_t() const { return id_; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

bool Hdf5File::failed_write_left_file_open_ = false;

Hdf5File::Hdf5File(MPI_Comm comm, std::string path)
    : comm_(comm), path_(std::move(path)), uncaught_at_open_(std::uncaught_exceptions()) {}

Hdf5File::Hdf5File(Hdf5File&& other) noexcept
    : comm_(other.comm_),
      path_(std::move(other.path_)),
      file_(std::exchange(other.file_, H5I_INVALID_HID)),
      uncaught_at_open_(other.uncaught_at_open_) {}

Hdf5File::~Hdf5File() {
  if (file_ < 0 || std::uncaught_exceptions() > uncaught_at_open_) return;
  QuietErrors quiet;
  H5Fclose(file_);
}

Hdf5File Hdf5File::Create(MPI_Comm comm, const std::string& path, Integrity integrity) {
  Hdf5File file(comm, path);
  file.Agreed("create", [&] {
    Id access = file.AccessProperties();
    if (integrity == Integrity::kChecksummed)
      OPTISTEP_H5(path, "", H5Pset_libver_bounds(access, H5F_LIBVER_V110, H5F_LIBVER_LATEST));
    file.file_ = OPTISTEP_H5(path, "", H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access));
  });
  return file;
}

Hdf5File Hdf5File::Open(MPI_Comm comm, const std::string& path) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string problem;
  if (rank == 0) {
    std::error_code ignored;
    QuietErrors quiet;
    if (!std::filesystem::is_regular_file(path, ignored))
      problem = "HDF5 file '" + path + "' does not exist or is not a regular file";
    else if (H5Fis_hdf5(path.c_str()) <= 0)
      problem = "'" + path + "' is not an HDF5 file";
  }
  ThrowIfAnyRank(comm, problem);
  Hdf5File file(comm, path);
  Id access = file.AccessProperties();
  file.file_ = OPTISTEP_H5(path, "", H5Fopen(path.c_str(), H5F_ACC_RDONLY, access));
  return file;
}

void Hdf5File::Flush() {
  Agreed("write", [&] { OPTISTEP_H5(path_, "", H5Fflush(file_, H5F_SCOPE_GLOBAL)); });
}

void Hdf5File::Close() {
  if (file_ < 0) return;
  Agreed("write", [&] {
    const hid_t file = std::exchange(file_, H5I_INVALID_HID);
    OPTISTEP_H5(path_, "", H5Fclose(file));
  });
}

Hdf5File::Id Hdf5File::AccessProperties() const {
  Id access(OPTISTEP_H5(path_, "", H5Pcreate(H5P_FILE_ACCESS)), H5Pclose);
  OPTISTEP_H5(path_, "", H5Pset_fapl_mpio(access, comm_, MPI_INFO_NULL));
  // Collective metadata: one rank reads and broadcasts, instead of every rank hitting the
  // parallel file system; requires every metadata operation to be collective (it is here).
  OPTISTEP_H5(path_, "", H5Pset_all_coll_metadata_ops(access, true));
  OPTISTEP_H5(path_, "", H5Pset_coll_metadata_write(access, true));
  return access;
}

Hdf5File::Id Hdf5File::OpenObject(const std::string& object) const {
  const std::string path = ObjectPath(object);
  return Id(OPTISTEP_H5(path_, path, H5Oopen(file_, path.c_str(), H5P_DEFAULT)), H5Oclose);
}

Hdf5File::Id Hdf5File::OpenDataset(const std::string& name) const {
  return Id(OPTISTEP_H5(path_, name, H5Dopen2(file_, name.c_str(), H5P_DEFAULT)), H5Dclose);
}

std::vector<int64_t> Hdf5File::Extent(const std::string& name, hid_t space) const {
  const int rank = OPTISTEP_H5(path_, name, H5Sget_simple_extent_ndims(space));
  if (rank != 1 && rank != 2)
    throw std::runtime_error("Hdf5File: " + Where(path_, name) +
                             ": expected a 1-D or 2-D dataset, found " + std::to_string(rank) +
                             "-D");
  hsize_t dims[2] = {0, 0};
  OPTISTEP_H5(path_, name, H5Sget_simple_extent_dims(space, dims, nullptr));
  return std::vector<int64_t>(dims, dims + rank);
}

void Hdf5File::ExpectTypeClass(const std::string& object, hid_t type, H5T_class_t expected,
                               const char* wanted) const {
  if (OPTISTEP_H5(path_, object, H5Tget_class(type)) != expected)
    throw std::runtime_error("Hdf5File: " + Where(path_, object) + ": stored type is not " +
                             wanted);
}

std::vector<int64_t> Hdf5File::Shape(const std::string& name) const {
  Id dataset = OpenDataset(name);
  Id space(OPTISTEP_H5(path_, name, H5Dget_space(dataset)), H5Sclose);
  return Extent(name, space);
}

void Hdf5File::CheckRowTiling(const std::string& name, int64_t global_rows, int columns,
                              int64_t row_offset, int64_t local_rows, bool has_data) const {
  int size = 1;
  MPI_Comm_size(comm_, &size);
  constexpr int kFields = 5;
  const int64_t mine[kFields] = {global_rows, columns, row_offset, local_rows, has_data};
  std::vector<int64_t> all(static_cast<size_t>(kFields) * size);
  MPI_Allgather(mine, kFields, MPI_INT64_T, all.data(), kFields, MPI_INT64_T, comm_);

  // Every rank judges the same gathered table, so every rank throws the same error.
  std::string problem;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int r = 0; r < size && problem.empty(); ++r) {
    const int64_t* v = &all[static_cast<size_t>(kFields) * r];
    const std::string rows = "[" + std::to_string(v[2]) + ", " + std::to_string(v[2] + v[3]) + ")";
    if (v[0] != all[0] || v[1] != all[1])
      problem = "rank " + std::to_string(r) + " gives shape " + std::to_string(v[0]) + " x " +
                std::to_string(v[1]) + ", rank 0 gives " + std::to_string(all[0]) + " x " +
                std::to_string(all[1]);
    else if (v[1] < 1 || v[2] < 0 || v[3] < 0 || v[2] + v[3] > v[0])
      problem = "rank " + std::to_string(r) + " holds rows " + rows + " of a " +
                std::to_string(v[0]) + " x " + std::to_string(v[1]) + " array";
    else if (v[3] > 0 && !v[4])
      problem = "rank " + std::to_string(r) + " holds rows " + rows + " but no data";
    else if (v[3] > 0)
      ranges.emplace_back(v[2], v[3]);
  }
  std::sort(ranges.begin(), ranges.end());
  int64_t next = 0;
  for (const auto& [offset, count] : ranges) {
    if (!problem.empty()) break;
    if (offset != next)
      problem = "rows from " + std::to_string(std::min(offset, next)) +
                (offset > next ? " are held by no rank" : " are held by two ranks");
    next = offset + count;
  }
  if (problem.empty() && next != global_rows)
    problem = "rows from " + std::to_string(next) + " are held by no rank";
  if (!problem.empty())
    throw std::runtime_error("Hdf5File::WriteArray: " + Where(path_, name) + ": " + problem);
}

Hdf5File::Id Hdf5File::DatasetCreationProperties(const std::string& name) const {
  Id creation(OPTISTEP_H5(path_, name, H5Pcreate(H5P_DATASET_CREATE)), H5Pclose);
  // Contiguous layout, written once and in full by the collective write: no fill pass.
  // Not the Fletcher32 filter for checkpoints: it needs a chunked layout, and HDF5 1.10's
  // parallel filtered I/O is several times slower to write and read
  // (docs/benchmarks/2026-11-21-checkpoint-io.md); io/Checkpoint stores a hash of each
  // dataset's rows instead.
  OPTISTEP_H5(path_, name, H5Pset_fill_time(creation, H5D_FILL_TIME_NEVER));
  return creation;
}

Hdf5File::Id Hdf5File::SelectRows(const std::string& name, hid_t file_space, int64_t row_offset,
                                  int64_t local_rows, int columns) const {
  const hsize_t count = static_cast<hsize_t>(local_rows) * columns;
  Id memory_space(OPTISTEP_H5(path_, name, H5Screate_simple(1, &count, nullptr)), H5Sclose);
  if (local_rows == 0) {
    OPTISTEP_H5(path_, name, H5Sselect_none(file_space));
    OPTISTEP_H5(path_, name, H5Sselect_none(memory_space));
    return memory_space;
  }
  const hsize_t start[2] = {static_cast<hsize_t>(row_offset), 0};
  const hsize_t block[2] = {static_cast<hsize_t>(local_rows), static_cast<hsize_t>(columns)};
  OPTISTEP_H5(path_, name,
              H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, block, nullptr));
  return memory_space;
}

Hdf5File::Id Hdf5File::CollectiveTransfer(const std::string& name) const {
  Id transfer(OPTISTEP_H5(path_, name, H5Pcreate(H5P_DATASET_XFER)), H5Pclose);
  OPTISTEP_H5(path_, name, H5Pset_dxpl_mpio(transfer, H5FD_MPIO_COLLECTIVE));
  return transfer;
}

template <class T>
void Hdf5File::WriteArray(const std::string& name, const DistributedArray<T>& array) {
  CheckRowTiling(name, array.global_rows, array.columns, array.row_offset, array.local_rows,
                 array.data != nullptr);
  Agreed("write", [&] {
    const hsize_t dims[2] = {static_cast<hsize_t>(array.global_rows),
                             static_cast<hsize_t>(array.columns)};
    Id file_space(
        OPTISTEP_H5(path_, name, H5Screate_simple(array.columns == 1 ? 1 : 2, dims, nullptr)),
        H5Sclose);
    Id link(OPTISTEP_H5(path_, name, H5Pcreate(H5P_LINK_CREATE)), H5Pclose);
    OPTISTEP_H5(path_, name, H5Pset_create_intermediate_group(link, 1));
    Id creation = DatasetCreationProperties(name);
    Id dataset(OPTISTEP_H5(path_, name,
                           H5Dcreate2(file_, name.c_str(), HdfType<T>::File(), file_space, link,
                                      creation, H5P_DEFAULT)),
               H5Dclose);
    // An empty dataset has no storage to write to; global_rows is the same on every rank.
    if (array.global_rows == 0) return;
    Id memory_space =
        SelectRows(name, file_space, array.row_offset, array.local_rows, array.columns);
    Id transfer = CollectiveTransfer(name);
    OPTISTEP_H5(path_, name,
                H5Dwrite(dataset, HdfType<T>::Memory(), memory_space, file_space, transfer,
                         NonNull(array.data)));
  });
}

template <class T>
std::vector<T> Hdf5File::ReadArray(const std::string& name, int64_t row_offset,
                                   int64_t local_rows) const {
  Id dataset = OpenDataset(name);
  Id type(OPTISTEP_H5(path_, name, H5Dget_type(dataset)), H5Tclose);
  ExpectTypeClass(name, type, HdfType<T>::kClass, HdfType<T>::kName);
  Id file_space(OPTISTEP_H5(path_, name, H5Dget_space(dataset)), H5Sclose);
  const std::vector<int64_t> shape = Extent(name, file_space);
  const int columns = shape.size() == 2 ? static_cast<int>(shape[1]) : 1;
  if (row_offset < 0 || local_rows < 0 || row_offset + local_rows > shape[0])
    throw std::runtime_error(
        "Hdf5File::ReadArray: " + Where(path_, name) + ": rows [" + std::to_string(row_offset) +
        ", " + std::to_string(row_offset + local_rows) + ") asked of " + std::to_string(shape[0]));
  std::vector<T> values(static_cast<size_t>(local_rows) * columns);
  if (shape[0] == 0) return values;  // no storage to read, on every rank
  Id memory_space = SelectRows(name, file_space, row_offset, local_rows, columns);
  Id transfer = CollectiveTransfer(name);
  OPTISTEP_H5(path_, name,
              H5Dread(dataset, HdfType<T>::Memory(), memory_space, file_space, transfer,
                      NonNull(values.data())));
  return values;
}

void Hdf5File::WriteScalarAttribute(const std::string& object, const std::string& name,
                                    hid_t file_type, hid_t memory_type, const void* value) {
  const std::string where = ObjectPath(object) + " attribute " + name;
  Agreed("write", [&] {
    Id holder = OpenObject(object);
    if (OPTISTEP_H5(path_, where, H5Aexists(holder, name.c_str())) > 0)
      OPTISTEP_H5(path_, where, H5Adelete(holder, name.c_str()));
    Id space(OPTISTEP_H5(path_, where, H5Screate(H5S_SCALAR)), H5Sclose);
    Id attribute(
        OPTISTEP_H5(path_, where,
                    H5Acreate2(holder, name.c_str(), file_type, space, H5P_DEFAULT, H5P_DEFAULT)),
        H5Aclose);
    OPTISTEP_H5(path_, where, H5Awrite(attribute, memory_type, value));
  });
}

void Hdf5File::WriteAttribute(const std::string& object, const std::string& name, double value) {
  WriteScalarAttribute(object, name, HdfType<double>::File(), HdfType<double>::Memory(), &value);
}

void Hdf5File::WriteAttribute(const std::string& object, const std::string& name, int64_t value) {
  WriteScalarAttribute(object, name, HdfType<int64_t>::File(), HdfType<int64_t>::Memory(), &value);
}

void Hdf5File::WriteAttribute(const std::string& object, const std::string& name,
                              const std::string& value) {
  const std::string where = ObjectPath(object) + " attribute " + name;
  // Fixed-length, null-terminated: the terminator makes the empty string storable.
  Id type(OPTISTEP_H5(path_, where, H5Tcopy(H5T_C_S1)), H5Tclose);
  OPTISTEP_H5(path_, where, H5Tset_size(type, value.size() + 1));
  WriteScalarAttribute(object, name, type, type, value.c_str());
}

template <class T>
T Hdf5File::ReadAttribute(const std::string& object, const std::string& name) const {
  const std::string where = ObjectPath(object) + " attribute " + name;
  Id holder = OpenObject(object);
  Id attribute(OPTISTEP_H5(path_, where, H5Aopen(holder, name.c_str(), H5P_DEFAULT)), H5Aclose);
  Id space(OPTISTEP_H5(path_, where, H5Aget_space(attribute)), H5Sclose);
  if (OPTISTEP_H5(path_, where, H5Sget_simple_extent_npoints(space)) != 1)
    throw std::runtime_error("Hdf5File: " + Where(path_, where) + ": not a scalar");
  Id type(OPTISTEP_H5(path_, where, H5Aget_type(attribute)), H5Tclose);
  ExpectTypeClass(where, type, HdfType<T>::kClass, HdfType<T>::kName);
  if constexpr (std::is_same_v<T, std::string>) {
    if (OPTISTEP_H5(path_, where, H5Tis_variable_str(type)) > 0)
      throw std::runtime_error("Hdf5File: " + Where(path_, where) +
                               ": variable-length strings are not supported");
    std::string text(H5Tget_size(type), '\0');
    OPTISTEP_H5(path_, where, H5Aread(attribute, type, text.data()));
    return text.substr(0, text.find('\0'));
  } else {
    T value{};
    OPTISTEP_H5(path_, where, H5Aread(attribute, HdfType<T>::Memory(), &value));
    return value;
  }
}

template void Hdf5File::WriteArray(const std::string&, const DistributedArray<double>&);
template void Hdf5File::WriteArray(const std::string&, const DistributedArray<int32_t>&);
template void Hdf5File::WriteArray(const std::string&, const DistributedArray<int64_t>&);
template std::vector<double> Hdf5File::ReadArray(const std::string&, int64_t, int64_t) const;
template std::vector<int32_t> Hdf5File::ReadArray(const std::string&, int64_t, int64_t) const;
template std::vector<int64_t> Hdf5File::ReadArray(const std::string&, int64_t, int64_t) const;
template double Hdf5File::ReadAttribute(const std::string&, const std::string&) const;
template int64_t Hdf5File::ReadAttribute(const std::string&, const std::string&) const;
template std::string Hdf5File::ReadAttribute(const std::string&, const std::string&) const;

}  // namespace optistep
