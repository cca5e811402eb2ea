#pragma once
// The output folder of a run: the XDMF time series of its frames and a copy of the scene.
#include <mpi.h>

#include <memory>
#include <string>

#include "io/SceneSections.hpp"
#include "io/XdmfWriter.hpp"

namespace optistep {

/// Collective. Creates output.directory (and frames/), writes `text` there as scene.yaml (the
/// scene as run, after --set) and returns the frame series named `name` (the scene's).
/// IoError on every rank if the folder or the file cannot be written.
std::unique_ptr<XdmfTimeSeries> OpenRunOutput(MPI_Comm comm, const OutputConfig& output,
                                              const std::string& name, const std::string& text);

}  // namespace optistep
