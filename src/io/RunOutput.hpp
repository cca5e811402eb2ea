#pragma once
// The output folder of a run: the XDMF time series of its frames and a copy of the scene.
#include <mpi.h>

#include <memory>

#include "io/SceneConfig.hpp"
#include "io/XdmfWriter.hpp"

namespace optistep {

/// Collective. Creates scene.output.directory (and frames/), writes scene.yaml there (the
/// scene as run, after --set) and returns the frame series named after the scene. IoError
/// on every rank if the folder or the file cannot be written.
std::unique_ptr<XdmfTimeSeries> OpenRunOutput(MPI_Comm comm, const SceneConfig& scene);

}  // namespace optistep
