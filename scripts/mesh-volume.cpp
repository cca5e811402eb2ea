// mesh-volume IN.off OUT SIZE DISTANCE SLIVER_DEGREES
// Tetrahedralizes the inside of a closed triangle surface with CGAL's 3D mesh generator
// (CGAL::make_mesh_3 on a Polyhedral_mesh_domain_3: Delaunay refinement to the criteria
// below, then sliver perturbation and exudation; Jamin, Alliez, Yvinec, Boissonnat 2015,
// "CGALmesh: a generic framework for Delaunay mesh generation"), for
// scripts/fetch-meshes.sh: armadillo_mesh3. Writes OUT.node and OUT.ele in TetGen's format
// (1-based). Criteria, with SIZE and DISTANCE in the surface's units: surface facets of
// angle >= 25 degrees, size <= SIZE, distance to the input surface <= DISTANCE (smaller
// refines curved parts, and small tets shorten the semi-implicit CFL step); tets of
// radius-edge ratio <= 3 and size <= SIZE. Perturbation and exudation raise every dihedral angle toward
// SLIVER_DEGREES (no time limit: a time-limited optimizer stops at a machine-dependent
// point). Sequential, and CGAL's default random generator has a fixed seed, so the same
// input and arguments give the same mesh. Prints the node and tet counts.
// Exit 1 on a bad argument or an unreadable surface.
#include <CGAL/Exact_predicates_inexact_constructions_kernel.h>
#include <CGAL/Mesh_complex_3_in_triangulation_3.h>
#include <CGAL/Mesh_criteria_3.h>
#include <CGAL/Mesh_triangulation_3.h>
#include <CGAL/Polyhedral_mesh_domain_3.h>
#include <CGAL/Surface_mesh.h>
#include <CGAL/make_mesh_3.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <vector>

using Kernel = CGAL::Exact_predicates_inexact_constructions_kernel;
using Surface = CGAL::Surface_mesh<Kernel::Point_3>;
using Domain = CGAL::Polyhedral_mesh_domain_3<Surface, Kernel>;
using Triangulation = CGAL::Mesh_triangulation_3<Domain, CGAL::Default, CGAL::Sequential_tag>::type;
using Complex = CGAL::Mesh_complex_3_in_triangulation_3<Triangulation>;
using Criteria = CGAL::Mesh_criteria_3<Triangulation>;
namespace params = CGAL::parameters;

int main(int argc, char** argv) {
  if (argc != 6) {
    std::cerr << "usage: mesh-volume IN.off OUT SIZE DISTANCE SLIVER_DEGREES\n";
    return 1;
  }
  const double size = std::atof(argv[3]), distance = std::atof(argv[4]), sliver = std::atof(argv[5]);
  if (!(size > 0.0) || !(distance > 0.0) || !(sliver > 0.0 && sliver < 70.0)) {
    std::cerr << "mesh-volume: SIZE and DISTANCE must be > 0 and SLIVER_DEGREES in (0, 70)\n";
    return 1;
  }
  Surface surface;
  std::ifstream in(argv[1]);
  if (!in || !(in >> surface) || !CGAL::is_triangle_mesh(surface) || !CGAL::is_closed(surface)) {
    std::cerr << "mesh-volume: " << argv[1] << ": not a closed triangle surface (.off)\n";
    return 1;
  }
  const Domain domain(surface);
  const Criteria criteria(params::facet_angle = 25, params::facet_size = size,
                          params::facet_distance = distance, params::cell_radius_edge_ratio = 3,
                          params::cell_size = size);
  const Complex mesh = CGAL::make_mesh_3<Complex>(
      domain, criteria, params::no_lloyd(), params::no_odt(),
      params::perturb(params::time_limit = 0, params::sliver_bound = sliver),
      params::exude(params::time_limit = 0, params::sliver_bound = sliver));
  // Nodes numbered in the order the complex's cells first reach them.
  std::map<Triangulation::Vertex_handle, long> number;
  std::vector<Triangulation::Vertex_handle> nodes;
  for (auto c = mesh.cells_in_complex_begin(); c != mesh.cells_in_complex_end(); ++c)
    for (int k = 0; k < 4; ++k)
      if (number.emplace(c->vertex(k), static_cast<long>(nodes.size()) + 1).second) nodes.push_back(c->vertex(k));
  const std::string out = argv[2];
  std::ofstream node(out + ".node"), ele(out + ".ele");
  node.precision(17);
  node << nodes.size() << " 3 0 0\n";
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto& p = nodes[i]->point();
    node << i + 1 << " " << p.x() << " " << p.y() << " " << p.z() << "\n";
  }
  ele << mesh.number_of_cells_in_complex() << " 4 0\n";
  long e = 0;
  for (auto c = mesh.cells_in_complex_begin(); c != mesh.cells_in_complex_end(); ++c) {
    ele << ++e;
    for (int k = 0; k < 4; ++k) ele << " " << number[c->vertex(k)];
    ele << "\n";
  }
  if (!node || !ele) {
    std::cerr << "mesh-volume: cannot write " << out << ".node/.ele\n";
    return 1;
  }
  std::printf("%zu nodes, %ld tets\n", nodes.size(), e);
  return 0;
}
