#pragma once
// A body's initial state beyond its uniform initial velocity (scene key
// bodies[i].initial_conditions, io/SceneSections.hpp InitialConditionsConfig), shared by FEM
// (nodes) and MPM (particles). Positions in m, velocities in m/s.
#include <memory>
#include <string>
#include <vector>

#include "io/SceneSections.hpp"

namespace optistep {

/// The initial velocity field of one body: v(x) = initial_velocity + omega axis x (x - c)
/// + the expression's value at x (muparser, variables x, y, z). Rank-local; not copyable
/// (muparser holds the addresses of x, y, z).
class InitialVelocity {
 public:
  /// center_of_mass: the body's center of mass (m), the rotation center unless the scene
  /// gives one. The expressions were checked when the scene was read; where names the body
  /// in messages ("scene.yaml: bodies[0]").
  InitialVelocity(const BodyConfig& body, const Vec3& center_of_mass, const std::string& where = "");
  ~InitialVelocity();
  InitialVelocity(const InitialVelocity&) = delete;
  InitialVelocity& operator=(const InitialVelocity&) = delete;

  /// v at the initial position x (m), m/s. Throws InputError naming the expression, x and
  /// the value where an expression is not finite (1/x at x = 0, sqrt(-1), an overflow): a
  /// run must not start from a NaN it would only find as a failed first step.
  Vec3 operator()(const Vec3& x) const;
  /// The velocity gradient dv/dx at x (1/s), for MPM's APIC affine velocity C_p: exact for
  /// the rotation ([omega]_x), central differences of step h (m) for the expressions.
  Mat3 Gradient(const Vec3& x, double h) const;

 private:
  struct Expressions;
  Vec3 uniform_;
  Vec3 omega_ = Vec3::Zero();
  Vec3 center_ = Vec3::Zero();
  std::unique_ptr<Expressions> expressions_;
  std::string where_;
};

/// The prestrained initial position of the rest position X (m): c + A (X - c), with A and
/// c from the body's prestrain (c: its center, else center_of_mass); X itself without one.
Vec3 PrestrainedPosition(const InitialConditionsConfig& ic, const Vec3& center_of_mass, const Vec3& X);

/// Reads a velocity table (rows "node vx vy vz", node a 0-based index in the body's mesh
/// file, '#' comments). Throws InputError "path:line: what" for a bad row, a node out of
/// [0, n_nodes) or a node listed twice. Returns one velocity per node, NaN where unlisted
/// (those nodes keep the rest of the field).
std::vector<Vec3> ReadVelocityTable(const std::string& path, long long n_nodes);

}  // namespace optistep
