#include "mpm/BodySampling.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "core/Error.hpp"
#include "io/SurfaceMesh.hpp"
#include "io/TetMesh.hpp"
#include "model/InitialConditions.hpp"
#include "mpm/ClosedSurface.hpp"
#include "mpm/MpmLoads.hpp"
#include "mpm/Sampling.hpp"
#include "mpm/Shapes.hpp"

namespace optistep::mpm {
namespace {

/// The body's source solid in its own frame (m).
std::unique_ptr<Shape> BodyShape(const BodyConfig& body) {
  const std::string where = "bodies '" + body.name + "'";
  switch (body.source) {
    case BodyConfig::Source::kMesh:
      return std::make_unique<TetMeshShape>(ReadTetMesh(body.mesh), body.mesh);
    case BodyConfig::Source::kSurface:
      return std::make_unique<ClosedSurface>(ReadSurfaceMesh(body.surface), body.surface);
    case BodyConfig::Source::kShape: {
      const ShapeConfig& s = body.shape;
      switch (s.kind) {
        case ShapeConfig::Kind::kBox: return std::make_unique<Box>(s.box_min, s.box_max, where);
        case ShapeConfig::Kind::kSphere: return std::make_unique<Sphere>(s.center, s.radius, where);
        case ShapeConfig::Kind::kCylinder:
          return std::make_unique<Cylinder>(s.center, s.axis, s.radius, s.half_length, where);
        case ShapeConfig::Kind::kTorus:
          return std::make_unique<Torus>(s.center, s.axis, s.major_radius, s.minor_radius, where);
      }
    }
  }
  throw InputError(where + ": no particle source");
}

/// The world box of a shape (its own frame) under a transform: the box of its box's
/// transformed corners.
Aabb WorldBounds(const Shape& shape, const TransformConfig& T) {
  const Aabb local = shape.Bounds();
  Aabb world{Vec3::Constant(INFINITY), Vec3::Constant(-INFINITY)};
  for (int corner = 0; corner < 8; ++corner) {
    Vec3 c;
    for (int d = 0; d < 3; ++d) c[d] = (corner >> d) & 1 ? local.hi[d] : local.lo[d];
    const Vec3 y = T.Apply(c);
    world.lo = world.lo.cwiseMin(y);
    world.hi = world.hi.cwiseMax(y);
  }
  return world;
}

/// The rest boundary of a body (m, world frame, outward corner order; BoundaryTriangles):
/// a box's 12 triangles, a surface's triangles (turned outward when they enclose a negative
/// volume), a tet mesh's faces held by one tet; empty for the other shapes.
BoundaryTriangles BodyBoundary(const BodyConfig& body, const Shape& shape) {
  BoundaryTriangles T;
  std::vector<Vec3> nodes;
  std::vector<std::array<int, 3>> triangles;
  if (body.source == BodyConfig::Source::kShape && body.shape.kind == ShapeConfig::Kind::kBox) {
    const Vec3& lo = body.shape.box_min;
    const Vec3& hi = body.shape.box_max;
    for (int c = 0; c < 8; ++c) nodes.push_back(Vec3(c & 1 ? hi.x() : lo.x(), c & 2 ? hi.y() : lo.y(), c & 4 ? hi.z() : lo.z()));
    // Two triangles per face, counter-clockwise seen from outside (corner bits x, y, z).
    for (const std::array<int, 4>& q : {std::array<int, 4>{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4},
                                        {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}}) {
      triangles.push_back({q[0], q[1], q[2]});
      triangles.push_back({q[0], q[2], q[3]});
    }
  } else if (body.source == BodyConfig::Source::kSurface) {
    const TriangleSurface& surface = dynamic_cast<const ClosedSurface&>(shape).Surface();
    nodes = surface.vertices;
    triangles = surface.triangles;
    double signed_volume = 0.0;
    for (const auto& t : triangles) signed_volume += nodes[t[0]].dot(nodes[t[1]].cross(nodes[t[2]]));
    if (signed_volume < 0.0)
      for (auto& t : triangles) std::swap(t[1], t[2]);
  } else if (body.source == BodyConfig::Source::kMesh) {
    const TetMeshData mesh = ReadTetMesh(body.mesh);
    nodes = mesh.nodes;
    std::map<std::array<int, 3>, int> holders;
    auto key = [](std::array<int, 3> f) {
      std::sort(f.begin(), f.end());
      return f;
    };
    for (const auto& t : mesh.tets)
      for (int o = 0; o < 4; ++o) ++holders[key({t[(o + 1) % 4], t[(o + 2) % 4], t[(o + 3) % 4]})];
    for (const auto& t : mesh.tets)
      for (int o = 0; o < 4; ++o) {
        std::array<int, 3> f{t[(o + 1) % 4], t[(o + 2) % 4], t[(o + 3) % 4]};
        if (holders[key(f)] != 1) continue;
        if ((nodes[f[1]] - nodes[f[0]]).cross(nodes[f[2]] - nodes[f[0]]).dot(nodes[t[o]] - nodes[f[0]]) > 0.0)
          std::swap(f[1], f[2]);
        triangles.push_back(f);
      }
  }
  for (Vec3& x : nodes) x = body.transform.Apply(x);
  const bool mirrored = body.transform.scale.prod() < 0.0;
  for (const auto& t : triangles)
    T.push_back(mirrored ? std::array<Vec3, 3>{nodes[t[0]], nodes[t[2]], nodes[t[1]]}
                         : std::array<Vec3, 3>{nodes[t[0]], nodes[t[1]], nodes[t[2]]});
  return T;
}

}  // namespace

Particles SampleBodies(const ModelConfig& scene, const MpmConfig& mpm, const AvailableMemory& available, int ranks,
                       MemoryEstimate* estimate, std::vector<ParticleForce>* forces) {
  std::vector<std::unique_ptr<Shape>> shapes;
  std::vector<BodyExtent> extents;
  for (const BodyConfig& body : scene.bodies) {
    shapes.push_back(BodyShape(body));
    extents.push_back({shapes.back()->Volume() * body.transform.scale.prod(),
                       WorldBounds(*shapes.back(), body.transform)});
  }
  const double dx = mpm.dx;
  *estimate = EstimateMemory(extents, dx, mpm.ppc, mpm.matrix_free, ranks);
  CheckMemory(*estimate, available, scene.path, dx, mpm.ppc);

  Particles all;
  const double V0 = ParticleVolume(dx, mpm.ppc);
  const bool tractions = HasTractionLoads(scene);
  std::vector<BoundaryTriangles> boundary;
  std::vector<std::vector<Vec3>> rest;
  std::vector<std::vector<std::int64_t>> rest_id;
  for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
    const BodyConfig& body = scene.bodies[b];
    const Shape& shape = *shapes[b];
    const TransformConfig& T = body.transform;
    const Eigen::AngleAxisd rotation(T.rotate_angle_deg * M_PI / 180.0, T.rotate_axis);
    const Mat3 R_inv = rotation.toRotationMatrix().transpose();
    auto inside = [&](const Vec3& y) {
      const Vec3 x = (R_inv * (y - T.translate)).cwiseQuotient(T.scale);
      return shape.Inside(x);
    };
    const std::uint64_t seed = static_cast<std::uint64_t>(mpm.seed) * 1000003u + b;
    const SampledParticles sampled = SampleInside(
        inside, extents[b].bounds, dx, mpm.ppc, seed, "bodies[" + std::to_string(b) + "]");
    if (sampled.x.empty())
      throw InputError(scene.path + ": bodies[" + std::to_string(b) + "] ('" + body.name +
                       "'): holds no particle (smaller than a cell of dx = " + std::to_string(dx) +
                       " m?)");
    // Initial conditions (model/InitialConditions.hpp): the prestrain maps the sampled
    // (rest) positions and sets F_p = A; velocities and APIC's C_p = dv/dx at the
    // prestrained positions. The rest center of mass is the mean sampled position.
    if (tractions) {
      boundary.push_back(BodyBoundary(body, shape));
      rest.push_back(sampled.x);
      rest_id.emplace_back(sampled.x.size());
      for (std::size_t k = 0; k < sampled.x.size(); ++k) rest_id.back()[k] = static_cast<std::int64_t>(all.size() + k);
    }
    const InitialConditionsConfig& ic = body.initial_conditions;
    Vec3 center = Vec3::Zero();
    for (const Vec3& x : sampled.x) center += x;
    center /= static_cast<double>(sampled.x.size());
    const InitialVelocity velocity(body, center, scene.path + ": bodies[" + std::to_string(b) + "]");
    const bool field = ic.has_angular_velocity || !ic.velocity_expression.empty();
    for (const Vec3& X : sampled.x) {
      Particle q;
      q.x = PrestrainedPosition(ic, center, X);
      q.v = velocity(q.x);
      if (field) q.C = velocity.Gradient(q.x, 1e-3 * dx);
      if (ic.has_prestrain) q.F = ic.prestrain;
      q.mass = body.material.density * V0;
      q.V0 = V0;
      q.id = static_cast<std::int64_t>(all.size());
      q.material = static_cast<int>(b);
      all.Append(q);
    }
  }
  if (tractions)
    *forces = TractionParticleForces(scene, boundary, rest, rest_id, dx / std::cbrt(mpm.ppc));
  return all;
}

}  // namespace optistep::mpm
