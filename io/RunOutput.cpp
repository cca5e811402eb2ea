#include "io/RunOutput.hpp"

#include <fstream>

namespace optistep {

std::unique_ptr<XdmfTimeSeries> OpenRunOutput(MPI_Comm comm, const SceneConfig& scene) {
  auto frames = std::make_unique<XdmfTimeSeries>(comm, scene.output.directory, scene.name);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) std::ofstream(scene.output.directory + "/scene.yaml") << scene.text;
  return frames;
}

}  // namespace optistep
