#include "io/Checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <type_traits>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>

#include "core/Error.hpp"

namespace optistep {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPrefix = "ckpt_";
constexpr const char* kSuffix = ".h5";
constexpr const char* kTemporary = ".tmp";

/// The step of a checkpoint file name ckpt_<digits>.h5, or -1 for any other name.
int64_t StepOfName(const std::string& name) {
  const std::string prefix = kPrefix, suffix = kSuffix;
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 18 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return -1;
  return std::stoll(digits);
}

/// fsync of a file or folder; "" or what failed and why.
std::string Fsync(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), O_RDONLY | (directory ? O_DIRECTORY : 0));
  if (fd < 0) return "cannot open " + path + " to fsync it: " + std::strerror(errno);
  const int status = ::fsync(fd);
  const std::string reason = status == 0 ? "" : std::strerror(errno);
  ::close(fd);
  return status == 0 ? "" : "cannot fsync " + path + ": " + reason;
}

/// Rank 0's text on every rank.
std::string Broadcast(MPI_Comm comm, std::string text) {
  int length = static_cast<int>(text.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, comm);
  text.resize(length);
  MPI_Bcast(text.data(), length, MPI_CHAR, 0, comm);
  return text;
}

/// Loads one file with load: its header, or nothing and *damage says why.
std::optional<CheckpointHeader> TryLoad(MPI_Comm comm, const std::string& path,
                                        const std::function<void(const CheckpointReader&)>& load,
                                        std::string* damage) {
  std::unique_ptr<CheckpointReader> reader;
  std::optional<CheckpointHeader> header;
  try {
    reader = std::make_unique<CheckpointReader>(comm, path);
    load(*reader);
    header = reader->header();
  } catch (const CheckpointDamaged& e) {
    *damage = e.what();
  }
  reader.reset();  // outside the handler: no exception in flight, so the file is closed
  return header;
}

std::uint64_t SplitMix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

template <class T>
std::uint64_t Word(T value) {
  if constexpr (std::is_floating_point_v<T>) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
  } else {
    return static_cast<std::uint64_t>(static_cast<int64_t>(value));
  }
}

std::string Hex(std::uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

}  // namespace

template <class T>
std::uint64_t RowHash(const T* values, int64_t first_row, int64_t rows, int columns) {
  constexpr std::uint64_t kBasis = 0xcbf29ce484222325ull, kPrime = 0x100000001b3ull;
  std::uint64_t sum = 0;
  for (int64_t r = 0; r < rows; ++r) {
    std::uint64_t h = (kBasis ^ static_cast<std::uint64_t>(first_row + r)) * kPrime;
    for (int c = 0; c < columns; ++c) h = (h ^ Word(values[r * columns + c])) * kPrime;
    sum += SplitMix64(h);
  }
  return sum;
}

template std::uint64_t RowHash(const double*, int64_t, int64_t, int);
template std::uint64_t RowHash(const int32_t*, int64_t, int64_t, int);
template std::uint64_t RowHash(const int64_t*, int64_t, int64_t, int);

std::uint64_t Fnv1a64(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ull;  // offset basis
  for (const unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;  // FNV prime
  }
  return hash;
}

std::string SceneHash(const std::string& text) { return Hex(Fnv1a64(text)); }

std::string CheckpointDirectory(const std::string& output_directory) {
  return (fs::path(output_directory) / "checkpoints").string();
}

std::string CheckpointPath(const std::string& directory, int64_t step) {
  char name[40];
  std::snprintf(name, sizeof name, "%s%08lld%s", kPrefix, static_cast<long long>(step), kSuffix);
  return (fs::path(directory) / name).string();
}

std::vector<std::string> ListCheckpoints(const std::string& directory) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    const int64_t step = StepOfName(it->path().filename().string());
    if (step >= 0 && it->is_regular_file(ec)) found.emplace_back(step, it->path().string());
  }
  std::sort(found.rbegin(), found.rend());
  std::vector<std::string> paths;
  for (const auto& entry : found) paths.push_back(entry.second);
  return paths;
}

// ---------------------------------------------------------------------------------------

CheckpointWriter::CheckpointWriter(MPI_Comm comm, const std::string& directory,
                                   const CheckpointHeader& header)
    : comm_(comm),
      directory_(directory),
      path_(CheckpointPath(directory, header.step)),
      file_([&] {
        int rank = 0;
        MPI_Comm_rank(comm, &rank);
        std::string problem;
        std::error_code ec;
        if (rank == 0 && !fs::create_directories(directory, ec) && ec)
          problem = "cannot create " + directory + ": " + ec.message();
        problem = MessageOfAnyRank(comm, problem);
        if (!problem.empty()) throw IoError(problem);
        return Hdf5File::Create(comm, CheckpointPath(directory, header.step) + kTemporary,
                                Hdf5File::Integrity::kChecksummed);
      }()) {
  file_.WriteAttribute("", "format_version", header.format_version);
  file_.WriteAttribute("", "optistep_version", header.optistep_version);
  file_.WriteAttribute("", "discretization", header.discretization);
  file_.WriteAttribute("", "time", header.time);
  file_.WriteAttribute("", "step", header.step);
  file_.WriteAttribute("", "frame", header.frame);
  file_.WriteAttribute("", "ranks", header.ranks);
  file_.WriteAttribute("", "scene_text", header.scene_text);
  file_.WriteAttribute("", "scene_hash", header.scene_hash);
}

template <class T>
void CheckpointWriter::Write(const std::string& name, const DistributedArray<T>& array) {
  file_.WriteArray(name, array);
  std::uint64_t hash = RowHash(array.data, array.row_offset, array.local_rows, array.columns);
  MPI_Allreduce(MPI_IN_PLACE, &hash, 1, MPI_UINT64_T, MPI_SUM, comm_);  // wraps mod 2^64
  file_.WriteAttribute(name, "row_hash", Hex(hash));
}

template void CheckpointWriter::Write(const std::string&, const DistributedArray<double>&);
template void CheckpointWriter::Write(const std::string&, const DistributedArray<int32_t>&);
template void CheckpointWriter::Write(const std::string&, const DistributedArray<int64_t>&);

std::string CheckpointWriter::Commit(int keep) {
  file_.Flush();
  file_.Close();
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  std::string problem;
  if (rank == 0) {
    const std::string temporary = path_ + kTemporary;
    problem = Fsync(temporary, false);
    if (problem.empty() && std::rename(temporary.c_str(), path_.c_str()) != 0)
      problem = "cannot rename " + temporary + " to " + path_ + ": " + std::strerror(errno);
    if (problem.empty()) problem = Fsync(directory_, true);
    if (problem.empty()) {
      // Only now that the new checkpoint is complete may others go: the older ones beyond
      // `keep`, and any newer one (left by a run this one, restarted from an older file,
      // no longer continues; "latest" must not jump back to it).
      const int64_t step = StepOfName(fs::path(path_).filename().string());
      std::error_code ec;
      int kept = 0;
      for (const std::string& other : ListCheckpoints(directory_)) {
        const int64_t other_step = StepOfName(fs::path(other).filename().string());
        if (other_step > step || ++kept > std::max(keep, 1))
          fs::remove(other, ec);
      }
      for (fs::directory_iterator it(directory_, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const std::string suffix = std::string(kSuffix) + kTemporary;
        if (name.size() > suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0 &&
            StepOfName(name.substr(0, name.size() - std::string(kTemporary).size())) >= 0) {
          std::error_code ignored;
          fs::remove(it->path(), ignored);
        }
      }
    }
  }
  const std::string agreed = MessageOfAnyRank(comm_, problem);
  if (!agreed.empty()) throw IoError(agreed);
  return path_;
}

// ---------------------------------------------------------------------------------------

template <class Call>
auto CheckpointReader::Agreed(const std::string& what, Call&& call) const {
  std::string problem;
  decltype(call()) result{};
  try {
    result = call();
  } catch (const std::exception& e) {
    problem = e.what();
    if (problem.empty()) problem = "unknown error";
  }
  const std::string agreed = MessageOfAnyRank(comm_, problem);
  if (!agreed.empty())
    throw CheckpointDamaged(file_.Path() + ": cannot read " + what + ": " + agreed);
  return result;
}

CheckpointReader::CheckpointReader(MPI_Comm comm, const std::string& path)
    : comm_(comm), file_([&] {
        // Hdf5File::Open agrees on a missing or non-HDF5 file; a truncated file or a bad
        // superblock checksum fails in H5Fopen, which every rank calls.
        try {
          return Hdf5File::Open(comm, path);
        } catch (const std::exception& e) {
          throw CheckpointDamaged(path + ": cannot open: " + e.what());
        }
      }()) {
  try {
    ReadHeader();
  } catch (const CheckpointDamaged&) {
    // Every rank is here (the failure is agreed), so the collective close is safe; the
    // destructor would not close a file an exception unwinds through.
    try {
      file_.Close();
    } catch (const std::exception&) {
    }
    throw;
  }
}

void CheckpointReader::ReadHeader() {
  const std::string& path = file_.Path();
  header_.format_version = Attribute<int64_t>("format_version");
  if (header_.format_version != kCheckpointFormatVersion)
    throw CheckpointDamaged(path + ": checkpoint format version " +
                            std::to_string(header_.format_version) + ", this optistep reads " +
                            std::to_string(kCheckpointFormatVersion));
  header_.optistep_version = Attribute<std::string>("optistep_version");
  header_.discretization = Attribute<std::string>("discretization");
  header_.time = Attribute<double>("time");
  header_.step = Attribute<int64_t>("step");
  header_.frame = Attribute<int64_t>("frame");
  header_.ranks = Attribute<int64_t>("ranks");
  header_.scene_text = Attribute<std::string>("scene_text");
  header_.scene_hash = Attribute<std::string>("scene_hash");
  if (SceneHash(header_.scene_text) != header_.scene_hash)
    throw CheckpointDamaged(path + ": the stored scene text does not match its hash");
}

std::vector<int64_t> CheckpointReader::Shape(const std::string& name) const {
  return Agreed("dataset " + name, [&] { return file_.Shape(name); });
}

template <class T>
std::vector<T> CheckpointReader::Read(const std::string& name, RowRange rows) const {
  const std::vector<int64_t> shape = Shape(name);
  const int columns = shape.size() == 2 ? static_cast<int>(shape[1]) : 1;
  const std::string stored = Agreed("the row_hash of " + name,
                                    [&] { return file_.ReadAttribute<std::string>(name, "row_hash"); });
  std::vector<T> values = Agreed("dataset " + name, [&] {
    return file_.ReadArray<T>(name, rows.offset, rows.count);
  });
  // Either the ranges tile the rows (the parts add up) or every rank read them all.
  const std::uint64_t mine = RowHash(values.data(), rows.offset, rows.count, columns);
  const int64_t local[2] = {rows.count, rows.count == shape[0] ? 0 : 1};
  int64_t total[2] = {0, 0};
  MPI_Allreduce(local, total, 2, MPI_INT64_T, MPI_SUM, comm_);
  std::uint64_t sum = mine;
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_UINT64_T, MPI_SUM, comm_);
  int match = 0;
  if (total[1] == 0)
    match = Hex(mine) == stored;
  else if (total[0] == shape[0])
    match = Hex(sum) == stored;
  else
    throw std::logic_error("CheckpointReader::Read(" + name +
                           "): the ranks' row ranges neither tile the rows nor each cover all");
  MPI_Allreduce(MPI_IN_PLACE, &match, 1, MPI_INT, MPI_MIN, comm_);
  if (!match)
    throw CheckpointDamaged(file_.Path() + ": dataset " + name +
                            " does not match its row_hash " + stored);
  return values;
}

template <class T>
T CheckpointReader::Attribute(const std::string& name) const {
  return Agreed("attribute " + name, [&] { return file_.ReadAttribute<T>("", name); });
}

template std::vector<double> CheckpointReader::Read(const std::string&, RowRange) const;
template std::vector<int32_t> CheckpointReader::Read(const std::string&, RowRange) const;
template std::vector<int64_t> CheckpointReader::Read(const std::string&, RowRange) const;
template double CheckpointReader::Attribute(const std::string&) const;
template int64_t CheckpointReader::Attribute(const std::string&) const;
template std::string CheckpointReader::Attribute(const std::string&) const;

// ---------------------------------------------------------------------------------------

CheckpointHeader LoadCheckpoint(MPI_Comm comm, const std::string& spec,
                                const std::string& directory,
                                const std::function<void(const CheckpointReader&)>& load) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string damage;
  if (spec != "latest") {
    if (const auto header = TryLoad(comm, spec, load, &damage)) return *header;
    throw InputError("--restart: " + damage);
  }
  // Rank 0 lists the folder, so that every rank tries the same files in the same order.
  std::string listing;
  if (rank == 0)
    for (const std::string& path : ListCheckpoints(directory)) listing += path + '\n';
  listing = Broadcast(comm, listing);
  std::vector<std::string> candidates;
  for (std::size_t begin = 0, end; (end = listing.find('\n', begin)) != std::string::npos;
       begin = end + 1)
    candidates.push_back(listing.substr(begin, end - begin));
  if (candidates.empty())
    throw InputError("--restart latest: no checkpoint in " + directory +
                     " (nothing to restart from; run without --restart to start at t = 0)");
  // The damage of each newer checkpoint tried: reported, and the files kept aside, only once
  // an older one loads. If none loads, the run stops with one line and the folder stays as it
  // was (a rerun meets the same files and says the same).
  std::vector<std::pair<std::string, std::string>> damaged;
  for (const std::string& path : candidates) {
    if (const auto header = TryLoad(comm, path, load, &damage)) {
      if (rank == 0)
        for (const auto& [skipped, what] : damaged) {
          std::fprintf(stderr, "optistep: warning: damaged checkpoint skipped (kept as %s.damaged): %s\n",
                       skipped.c_str(), what.c_str());
          std::error_code ignored;
          fs::rename(skipped, skipped + ".damaged", ignored);
        }
      MPI_Barrier(comm);
      return *header;
    }
    damaged.emplace_back(path, damage);
  }
  std::string all_damage;
  for (const auto& [skipped, what] : damaged) all_damage += (all_damage.empty() ? "" : "; ") + what;
  throw InputError("--restart latest: every checkpoint in " + directory +
                   " is damaged (the files are left as they are): " + all_damage);
}

}  // namespace optistep
