#include "io/RunOutput.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/Error.hpp"

namespace optistep {

std::unique_ptr<XdmfTimeSeries> OpenRunOutput(MPI_Comm comm, const SceneConfig& scene) {
  auto frames = std::make_unique<XdmfTimeSeries>(comm, scene.output.directory, scene.name);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string problem;
  if (rank == 0) {
    const std::string path = scene.output.directory + "/scene.yaml";
    errno = 0;
    std::ofstream out(path);
    out << scene.text;
    out.close();
    if (!out) problem = "cannot write " + path + ": " + std::strerror(errno);
  }
  problem = MessageOfAnyRank(comm, problem);
  if (!problem.empty()) throw IoError(problem);
  return frames;
}

}  // namespace optistep
