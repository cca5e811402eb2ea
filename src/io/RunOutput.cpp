#include "io/RunOutput.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/Error.hpp"

namespace optistep {

std::unique_ptr<XdmfTimeSeries> OpenRunOutput(MPI_Comm comm, const OutputConfig& output, const std::string& name,
                                              const std::string& text) {
  auto frames = std::make_unique<XdmfTimeSeries>(comm, output.directory, name);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string problem;
  if (rank == 0) {
    const std::string path = output.directory + "/scene.yaml";
    errno = 0;
    std::ofstream out(path);
    out << text;
    out.close();
    if (!out) problem = "cannot write " + path + ": " + std::strerror(errno);
  }
  problem = MessageOfAnyRank(comm, problem);
  if (!problem.empty()) throw IoError(problem);
  return frames;
}

}  // namespace optistep
