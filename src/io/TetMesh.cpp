#include "io/TetMesh.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string_view>
#include <unordered_map>

#include <Eigen/LU>

#include "core/Error.hpp"
#include "io/LineReader.hpp"

namespace optistep {

namespace {

/// A text mesh file read line by line (LineReader), with errors that say what the line
/// should hold: the `expected` of the last Require.
class MeshLineReader : public LineReader {
 public:
  MeshLineReader(const std::string& path, bool hash_comments)
      : LineReader(path, ReadInputFile(path, "mesh"), hash_comments ? '#' : '\0') {}

  /// Advances to the next line, which should be `expected`; a truncated file throws.
  void Require(const std::string& expected) {
    expected_ = expected;
    if (!Next()) Fail("unexpected end of file after this line, expected " + expected_);
  }

  /// The current line must have exactly n fields.
  void ExpectFields(std::size_t n) const {
    if (Size() != n)
      Fail("expected " + expected_ + " (" + std::to_string(n) + " fields), got " +
           std::to_string(Size()) + " fields: '" + Text() + "'");
  }

  long long Integer(std::size_t i) const {
    long long value = 0;
    if (!ParseInteger(Field(i), &value)) BadField(i, "an integer");
    return value;
  }

  /// A non-negative integer that fits an int (counts, numbers of fields).
  int Count(std::size_t i) const {
    const long long value = Integer(i);
    if (value < 0 || value > INT_MAX) BadField(i, "a count (non-negative integer)");
    return static_cast<int>(value);
  }

  double Real(std::size_t i) const {
    double value = 0.0;
    if (!ParseFiniteReal(Field(i), &value)) BadField(i, "a finite number");
    return value;
  }

 private:
  [[noreturn]] void BadField(std::size_t i, const char* kind) const {
    Fail("field " + std::to_string(i + 1) + " '" + std::string(Field(i)) + "' is not " + kind +
         "; expected " + expected_ + ": '" + Text() + "'");
  }

  std::string expected_;
};

std::string Scientific(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3e", x);
  return buffer;
}

std::string TetDescription(const TetMeshData& mesh, int t) {
  const auto& n = mesh.tets[t];
  return "tet " + std::to_string(t) + " (0-based; nodes " + std::to_string(n[0]) + " " +
         std::to_string(n[1]) + " " + std::to_string(n[2]) + " " + std::to_string(n[3]) + ")";
}

// ---- TetGen ------------------------------------------------------------------------

/// Points of a .node file and the index its numbering starts from (0 or 1).
struct TetGenNodes {
  std::vector<Vec3> nodes;
  int base = 0;
};

TetGenNodes ReadTetGenNodes(const std::string& path) {
  MeshLineReader in(path, /*hash_comments=*/true);
  in.Require("the .node header '<#points> 3 <#attributes> <#boundary markers: 0|1>'");
  in.ExpectFields(4);
  const int count = in.Count(0);
  if (in.Integer(1) != 3) in.Fail("expected dimension 3 in the .node header, got " + std::string(in.Field(1)));
  const int attributes = in.Count(2);
  const int markers = in.Count(3);
  if (markers > 1) in.Fail("expected 0 or 1 boundary markers in the .node header, got " + std::to_string(markers));

  TetGenNodes result;
  result.nodes.reserve(count);
  const std::string point_line = "a point line '<index> <x> <y> <z>" +
                                 std::string(attributes ? " <attributes...>" : "") +
                                 (markers ? " <marker>" : "") + "'";
  for (int i = 0; i < count; ++i) {
    in.Require(point_line);
    in.ExpectFields(4 + attributes + markers);
    const long long index = in.Integer(0);
    if (i == 0) {
      if (index != 0 && index != 1) in.Fail("expected the first point index to be 0 or 1, got " + std::to_string(index));
      result.base = static_cast<int>(index);
    } else if (index != result.base + i) {
      in.Fail("expected point index " + std::to_string(result.base + i) +
              " (points are numbered consecutively), got " + std::to_string(index));
    }
    result.nodes.emplace_back(in.Real(1), in.Real(2), in.Real(3));
  }
  if (in.Next())
    in.Fail("expected the end of the file after the " + std::to_string(count) +
            " points the header announces, found more lines");
  return result;
}

std::vector<std::array<int, 4>> ReadTetGenEle(const std::string& path, const TetGenNodes& points) {
  MeshLineReader in(path, /*hash_comments=*/true);
  in.Require("the .ele header '<#tets> <nodes per tet: 4|10> <#attributes>'");
  in.ExpectFields(3);
  const int count = in.Count(0);
  const int nodes_per_tet = in.Count(1);
  if (nodes_per_tet != 4 && nodes_per_tet != 10)
    in.Fail("expected 4 or 10 nodes per tet in the .ele header, got " + std::to_string(nodes_per_tet));
  const int attributes = in.Count(2);

  const long long base = points.base;
  const long long last = base + static_cast<long long>(points.nodes.size()) - 1;
  std::vector<std::array<int, 4>> tets;
  tets.reserve(count);
  const std::string tet_line = "a tet line '<index> <" + std::to_string(nodes_per_tet) + " nodes>" +
                               (attributes ? " <attributes...>" : "") + "'";
  for (int t = 0; t < count; ++t) {
    in.Require(tet_line);
    in.ExpectFields(1 + nodes_per_tet + attributes);
    const long long index = in.Integer(0);
    if (index != base + t)
      in.Fail("expected tet index " + std::to_string(base + t) + " (tets are numbered from " +
              std::to_string(base) + " like the .node points), got " + std::to_string(index));
    std::array<int, 4> tet;
    for (int k = 0; k < 4; ++k) {
      const long long node = in.Integer(1 + k);
      if (node < base || node > last)
        in.Fail("node " + std::to_string(node) + " is out of range: the .node file numbers its points " +
                std::to_string(base) + " to " + std::to_string(last));
      tet[k] = static_cast<int>(node - base);
    }
    tets.push_back(tet);
  }
  if (in.Next())
    in.Fail("expected the end of the file after the " + std::to_string(count) +
            " tets the header announces, found more lines");
  return tets;
}

// ---- Gmsh --------------------------------------------------------------------------

constexpr long long kGmshTet4 = 4;  // Gmsh element type of the 4-node tetrahedron

/// Nodes and 4-node tets of a .msh file, indexed in file order, and the map from node
/// tags to those indices.
struct GmshMesh {
  TetMeshData mesh;
  std::unordered_map<long long, int> index_of_tag;
};

/// The next line must be the section end `end` (after the number of items announced).
void ExpectSectionEnd(MeshLineReader& in, const std::string& end) {
  in.Require(end);
  if (in.Field(0) != end) in.Fail("expected " + end + " (does the count in the section header match?)");
}

void AddGmshNode(MeshLineReader& in, GmshMesh& gmsh, long long tag, const Vec3& x) {
  if (!gmsh.index_of_tag.emplace(tag, static_cast<int>(gmsh.mesh.nodes.size())).second)
    in.Fail("node tag " + std::to_string(tag) + " appears twice");
  gmsh.mesh.nodes.push_back(x);
}

/// Adds the tet whose 4 node tags are the fields first..first+3 of the current line.
void AddGmshTet(MeshLineReader& in, GmshMesh& gmsh, std::size_t first) {
  std::array<int, 4> tet;
  for (int k = 0; k < 4; ++k) {
    const long long tag = in.Integer(first + k);
    const auto it = gmsh.index_of_tag.find(tag);
    if (it == gmsh.index_of_tag.end()) in.Fail("tet references node tag " + std::to_string(tag) + ", which $Nodes does not define");
    tet[k] = it->second;
  }
  gmsh.mesh.tets.push_back(tet);
}

void ReadGmshNodes22(MeshLineReader& in, GmshMesh& gmsh) {
  in.Require("the number of nodes");
  in.ExpectFields(1);
  const int count = in.Count(0);
  for (int i = 0; i < count; ++i) {
    in.Require("a node line '<tag> <x> <y> <z>'");
    in.ExpectFields(4);
    AddGmshNode(in, gmsh, in.Integer(0), Vec3(in.Real(1), in.Real(2), in.Real(3)));
  }
  ExpectSectionEnd(in, "$EndNodes");
}

void ReadGmshElements22(MeshLineReader& in, GmshMesh& gmsh) {
  in.Require("the number of elements");
  in.ExpectFields(1);
  const int count = in.Count(0);
  for (int e = 0; e < count; ++e) {
    in.Require("an element line '<tag> <type> <#tags> <tags...> <nodes...>'");
    if (in.Size() < 3) in.ExpectFields(3);
    if (in.Integer(1) != kGmshTet4) continue;
    const int tags = in.Count(2);
    in.ExpectFields(3 + tags + 4);
    AddGmshTet(in, gmsh, 3 + tags);
  }
  ExpectSectionEnd(in, "$EndElements");
}

/// Reads the body of a format 4.1 $Nodes or $Elements section: the header '<#blocks>
/// <#items> <min tag> <max tag>', then per block its header line, after which
/// read_block(n) reads the block's n items (the block header's fields are still the
/// current line), then the section's end line.
template <class ReadBlock>
void ReadGmshBlocks41(MeshLineReader& in, const std::string& section, const std::string& block_header,
                      ReadBlock read_block) {
  const std::string items = section == "$Nodes" ? "nodes" : "elements";
  in.Require("the " + section + " header '<#blocks> <#" + items + "> <min tag> <max tag>'");
  in.ExpectFields(4);
  const int blocks = in.Count(0);
  const int count = in.Count(1);
  int total = 0;
  for (int b = 0; b < blocks; ++b) {
    in.Require(block_header);
    in.ExpectFields(4);
    const int n = in.Count(3);
    read_block(n);
    total += n;
  }
  if (total != count)
    in.Fail("the " + section + " header announces " + std::to_string(count) + " " + items + ", its blocks hold " +
            std::to_string(total));
  ExpectSectionEnd(in, "$End" + section.substr(1));
}

void ReadGmshNodes41(MeshLineReader& in, GmshMesh& gmsh) {
  std::vector<long long> tags;
  const auto read_block = [&](int n) {
    const int dim = in.Count(0);
    const int parametric = in.Count(2);
    if (dim > 3 || parametric > 1) in.Fail("expected entity dimension 0..3 and parametric 0 or 1");
    tags.clear();
    for (int i = 0; i < n; ++i) {
      in.Require("a node tag");
      in.ExpectFields(1);
      tags.push_back(in.Integer(0));
    }
    for (int i = 0; i < n; ++i) {
      in.Require(parametric ? "a node line '<x> <y> <z> <" + std::to_string(dim) + " parametric coordinates>'"
                            : std::string("a node line '<x> <y> <z>'"));
      in.ExpectFields(3 + parametric * dim);
      AddGmshNode(in, gmsh, tags[i], Vec3(in.Real(0), in.Real(1), in.Real(2)));
    }
  };
  ReadGmshBlocks41(in, "$Nodes", "a node block header '<entity dim> <entity tag> <parametric: 0|1> <#nodes>'",
                   read_block);
}

void ReadGmshElements41(MeshLineReader& in, GmshMesh& gmsh) {
  const auto read_block = [&](int n) {
    const bool tets = in.Integer(2) == kGmshTet4;
    if (tets && in.Integer(0) != 3) in.Fail("expected entity dimension 3 for a block of tetrahedra (type 4)");
    for (int e = 0; e < n; ++e) {
      in.Require(tets ? "a tet line '<tag> <4 node tags>'" : "an element line '<tag> <node tags...>'");
      if (!tets) continue;
      in.ExpectFields(5);
      AddGmshTet(in, gmsh, 1);
    }
  };
  ReadGmshBlocks41(in, "$Elements",
                   "an element block header '<entity dim> <entity tag> <element type> <#elements>'", read_block);
}

TetMeshData ReadGmsh(const std::string& path) {
  MeshLineReader in(path, /*hash_comments=*/false);
  in.Require("$MeshFormat");
  if (in.Field(0) != "$MeshFormat") in.Fail("expected $MeshFormat on the first line (is this a Gmsh .msh file?)");
  in.Require("'<version> <file type> <data size>'");
  in.ExpectFields(3);
  const std::string_view version = in.Field(0);
  if (version != "2.2" && version != "4.1")
    in.Fail("unsupported .msh version " + std::string(version) + "; expected 2.2 or 4.1 (ASCII)");
  if (in.Integer(1) != 0)
    in.Fail("binary .msh is not supported; expected ASCII (file type 0): export with Mesh.Binary = 0");
  const bool v41 = version == "4.1";
  ExpectSectionEnd(in, "$EndMeshFormat");

  GmshMesh gmsh;
  bool have_nodes = false;
  while (in.Next()) {
    const std::string section(in.Field(0));
    if (section.size() < 2 || section[0] != '$') in.Fail("expected a section start such as $Nodes, got '" + section + "'");
    if (section == "$Nodes") {
      v41 ? ReadGmshNodes41(in, gmsh) : ReadGmshNodes22(in, gmsh);
      have_nodes = true;
    } else if (section == "$Elements") {
      if (!have_nodes) in.Fail("expected $Nodes before $Elements");
      v41 ? ReadGmshElements41(in, gmsh) : ReadGmshElements22(in, gmsh);
    } else {
      const std::string end = "$End" + section.substr(1);
      do {
        in.Require(end);
      } while (in.Field(0) != end);
    }
  }

  return std::move(gmsh.mesh);
}

/// Drops the nodes that no tet references and renumbers the rest in their file order.
void DropUnusedNodes(TetMeshData& mesh) {
  std::vector<int> new_index(mesh.nodes.size(), -1);
  for (const auto& tet : mesh.tets)
    for (int node : tet) new_index[node] = 0;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < new_index.size(); ++i) {
    if (new_index[i] < 0) continue;
    new_index[i] = static_cast<int>(kept);
    mesh.nodes[kept++] = mesh.nodes[i];
  }
  mesh.nodes.resize(kept);
  for (auto& tet : mesh.tets)
    for (int& node : tet) node = new_index[node];
}

}  // namespace

double SignedVolume(const TetMeshData& mesh, int t) {
  const auto& n = mesh.tets[t];
  const Vec3& x0 = mesh.nodes[n[0]];
  Mat3 D;
  D << mesh.nodes[n[1]] - x0, mesh.nodes[n[2]] - x0, mesh.nodes[n[3]] - x0;
  return D.determinant() / 6.0;
}

void ValidateTets(const TetMeshData& mesh, const std::string& path) {
  if (mesh.tets.empty()) throw InputError(path + ": expected at least one tetrahedron, found none");
  const int num_nodes = static_cast<int>(mesh.nodes.size());
  const int num_tets = static_cast<int>(mesh.tets.size());
  double edge_sum = 0.0;
  for (int t = 0; t < num_tets; ++t) {
    const auto& n = mesh.tets[t];
    for (int node : n)
      if (node < 0 || node >= num_nodes)
        throw InputError(path + ": " + TetDescription(mesh, t) + " references node " + std::to_string(node) +
                         ", expected 0-based node indices in [0, " + std::to_string(num_nodes) + ")");
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b) edge_sum += (mesh.nodes[n[a]] - mesh.nodes[n[b]]).norm();
  }
  const double L = edge_sum / (6.0 * num_tets);
  const double min_volume = 1e-12 * L * L * L;
  for (int t = 0; t < num_tets; ++t) {
    const double V = SignedVolume(mesh, t);
    if (std::abs(V) <= min_volume)
      throw InputError(path + ": " + TetDescription(mesh, t) + " is degenerate: signed volume " + Scientific(V) +
                       " m^3, expected |V| > 1e-12 L^3 = " + Scientific(min_volume) +
                       " m^3 (L = mean edge length " + Scientific(L) + " m)");
    if (V < 0.0)
      throw InputError(path + ": " + TetDescription(mesh, t) + " is inverted: signed volume " + Scientific(V) +
                       " m^3, expected det[x1-x0, x2-x0, x3-x0] > 0 as the corners are listed");
  }
}

TetMeshData ReadTetMesh(const std::string& path) {
  std::filesystem::path file(path);
  const std::string extension = file.extension().string();
  if (extension == ".node" || extension == ".ele") {
    const std::string node_path = file.replace_extension(".node").string();
    const std::string ele_path = file.replace_extension(".ele").string();
    TetGenNodes points = ReadTetGenNodes(node_path);
    TetMeshData mesh;
    mesh.tets = ReadTetGenEle(ele_path, points);
    mesh.nodes = std::move(points.nodes);
    DropUnusedNodes(mesh);
    ValidateTets(mesh, ele_path);
    return mesh;
  }
  if (extension == ".msh") {
    TetMeshData mesh = ReadGmsh(path);
    DropUnusedNodes(mesh);
    ValidateTets(mesh, path);
    return mesh;
  }
  throw InputError(path + ": unknown mesh file extension '" + extension +
                   "', expected .node or .ele (TetGen) or .msh (Gmsh)");
}

}  // namespace optistep
