#pragma once
// The MPM state in a checkpoint (io/Checkpoint.hpp). Datasets, rows by particle id:
// /mpm/particles/x, v (n x 3; m, m/s), C (n x 9, 1/s), F (n x 9), both row-major, Jp,
// plastic_strain, mass (kg), V0 (m^3), material (int32), rank and local_index (int32, int64:
// where the particle lived, for a bitwise restart on the same rank count); /mpm/blocks (b x 3,
// int64 block coordinates) and /mpm/block_owner (b, int32): the block -> rank map.
#include <cstdint>

#include "io/Checkpoint.hpp"
#include "io/SceneSections.hpp"
#include "mpm/MpmDomain.hpp"

namespace optistep::mpm {

/// Collective on the domain's communicator. Writes the owned particles of every rank (ids
/// 0..n_particles-1, once each; std::logic_error otherwise) and the block map to out.
void SaveParticles(CheckpointWriter& out, const MpmDomain& domain, std::int64_t n_particles);

/// Collective on the domain's communicator. Reads the particles of a checkpoint of `scene`
/// (n_particles of them) into domain. On the rank count that wrote it, every particle goes
/// back to its rank and local index and the block map is kept when it fits the grid
/// (MpmDomain::Restore): returns true, and the run goes on bitwise. Otherwise the particles
/// are distributed anew by METIS: returns false. Nothing changes before everything is read.
/// InputError for datasets of the wrong shape or a material that is no body of the scene;
/// CheckpointDamaged for ranks and local indices that are not a layout.
bool LoadParticles(const CheckpointReader& in, const ModelConfig& scene, MpmDomain& domain,
                   std::int64_t n_particles);

}  // namespace optistep::mpm
