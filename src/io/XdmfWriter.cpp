#include "io/XdmfWriter.hpp"

#include <petscviewer.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "core/Error.hpp"

namespace optistep {

namespace {

namespace fs = std::filesystem;

constexpr const char* kMeshTets = "tets";
constexpr const char* kMeshTriangles = "triangles";
constexpr const char* kPositions = "positions";
/// ParaView's XDMF 3 reader counts Polyvertex cells from the connectivity array, so point
/// clouds store the ids 0..n-1 explicitly.
constexpr const char* kPointIds = "point_ids";

/// The shortest decimal text that reads back as the same double.
std::string ExactText(double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string XmlEscaped(const std::string& text) {
  std::string escaped;
  for (const char c : text) {
    switch (c) {
      case '&': escaped += "&amp;"; break;
      case '<': escaped += "&lt;"; break;
      case '>': escaped += "&gt;"; break;
      case '"': escaped += "&quot;"; break;
      default: escaped += c;
    }
  }
  return escaped;
}

/// XDMF AttributeType of a field with this many columns, or nullptr.
const char* AttributeType(int columns) {
  switch (columns) {
    case 1: return "Scalar";
    case 3: return "Vector";
    case 9: return "Tensor";
    default: return nullptr;
  }
}

/// One heavy-data item: an 8-byte HDF5 dataset given as "file.h5:/dataset".
void WriteDataItem(std::ostream& out, int64_t rows, int columns, const char* number_type,
                   const std::string& reference) {
  out << "          <DataItem Dimensions=\"" << rows;
  if (columns > 1) out << " " << columns;
  out << "\" NumberType=\"" << number_type << "\" Precision=\"8\" Format=\"HDF\">"
      << XmlEscaped(reference) << "</DataItem>\n";
}

PetscLogEvent WriteFrameEvent() {
  static const PetscLogEvent event = [] {
    PetscLogEvent registered;
    OPTISTEP_PETSC(PetscLogEventRegister("XdmfWriteFrame", PETSC_VIEWER_CLASSID, &registered));
    return registered;
  }();
  return event;
}

}  // namespace

XdmfTimeSeries::XdmfTimeSeries(MPI_Comm comm, std::string directory, std::string name)
    : comm_(comm), directory_(std::move(directory)), name_(std::move(name)) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  std::string problem;
  if (rank == 0) {
    std::error_code error;
    fs::create_directories(fs::path(directory_) / "frames", error);
    if (error) problem = "cannot create " + directory_ + "/frames: " + error.message();
  }
  problem = MessageOfAnyRank(comm_, problem);
  if (!problem.empty()) throw IoError(problem);
}

std::string XdmfTimeSeries::XdmfPath() const {
  return (fs::path(directory_) / (name_ + ".xdmf")).string();
}

std::string XdmfTimeSeries::FrameStem(int frame) const {
  char number[16];
  std::snprintf(number, sizeof number, "%06d", frame);
  return name_ + "_" + number;
}

std::string XdmfTimeSeries::FramePath(int frame) const {
  return (fs::path(directory_) / "frames" / (FrameStem(frame) + ".h5")).string();
}

void XdmfTimeSeries::SetTetMesh(const DistributedArray<int64_t>& tets, int64_t num_nodes) {
  SetCellMesh(kMeshTets, "Tetrahedron", tets, num_nodes);
}

void XdmfTimeSeries::SetPolylineMesh(const DistributedArray<int64_t>& segments, int64_t num_nodes,
                                     const DistributedArray<int64_t>* triangles) {
  if (triangles && triangles->columns != 3)
    throw std::runtime_error("XdmfTimeSeries::SetPolylineMesh: triangles need 3 node ids, got " +
                             std::to_string(triangles->columns));
  SetCellMesh("segments", "Polyline", segments, num_nodes, triangles);
}

void XdmfTimeSeries::SetCellMesh(const char* dataset, const char* topology,
                                 const DistributedArray<int64_t>& cells, int64_t num_nodes,
                                 const DistributedArray<int64_t>* triangles) {
  const int nodes_per_cell = std::string(topology) == "Polyline" ? 2 : 4;
  if (cells.columns != nodes_per_cell || num_nodes < 0)
    throw std::runtime_error(
        std::string("XdmfTimeSeries::Set") + (nodes_per_cell == 2 ? "PolylineMesh" : "TetMesh") +
        ": expected cells of " + std::to_string(nodes_per_cell) + " node ids and a "
        "non-negative node count, got " +
        std::to_string(cells.columns) + " columns and " + std::to_string(num_nodes) + " nodes");
  Hdf5File mesh = Hdf5File::Create(comm_, (fs::path(directory_) / (name_ + "_mesh.h5")).string());
  mesh.WriteArray(dataset, cells);
  mesh.WriteAttribute(dataset, "num_nodes", num_nodes);
  if (triangles) mesh.WriteArray(kMeshTriangles, *triangles);
  mesh.Close();
  num_triangles_ = triangles ? triangles->global_rows : -1;
  num_tets_ = cells.global_rows;
  num_nodes_ = num_nodes;
  cell_dataset_ = dataset;
  cell_topology_ = topology;
  nodes_per_cell_ = nodes_per_cell;
}

void XdmfTimeSeries::WriteFrame(int frame, double time, const DistributedArray<double>& positions,
                                const std::vector<Field>& fields) {
  const bool mesh = num_tets_ >= 0;
  const int64_t num_points = positions.global_rows;
  const int64_t num_cells = mesh ? num_tets_ : num_points;
  const std::string frame_path = FramePath(frame);
  // These checks read only global sizes, so every rank reaches the same verdict.
  auto fail = [&](const std::string& problem) {
    throw std::runtime_error("XdmfTimeSeries::WriteFrame: " + frame_path + ": " + problem);
  };
  if (frame < 0) fail("negative frame number " + std::to_string(frame));
  if (positions.columns != 3) fail("positions need 3 columns");
  if (mesh && num_points != num_nodes_)
    fail(std::to_string(num_points) + " positions for a mesh of " + std::to_string(num_nodes_) +
         " nodes");
  std::vector<FieldLayout> layouts;
  for (const Field& field : fields) {
    const int64_t rows = field.cell_centered ? num_cells : num_points;
    const bool taken = field.name == kPositions || field.name == kPointIds ||
                       std::any_of(layouts.begin(), layouts.end(),
                                   [&](const FieldLayout& f) { return f.name == field.name; });
    if (field.name.empty() || taken) fail("field name '" + field.name + "' is empty or taken");
    if (!AttributeType(field.values.columns))
      fail("field '" + field.name + "' has " + std::to_string(field.values.columns) +
           " columns, not 1, 3 or 9");
    if (field.values.global_rows != rows)
      fail("field '" + field.name + "' has " + std::to_string(field.values.global_rows) +
           " rows, expected " + std::to_string(rows));
    layouts.push_back({field.name, field.cell_centered, field.values.columns});
  }

  OPTISTEP_PETSC(PetscLogEventBegin(WriteFrameEvent(), 0, 0, 0, 0));
  Hdf5File file = Hdf5File::Create(comm_, frame_path);
  file.WriteArray(kPositions, positions);
  if (!mesh) {
    std::vector<int64_t> ids(positions.local_rows);
    std::iota(ids.begin(), ids.end(), positions.row_offset);
    file.WriteArray(kPointIds, DistributedArray<int64_t>{num_points, positions.row_offset,
                                                         positions.local_rows, 1, ids.data()});
  }
  for (const Field& field : fields) file.WriteArray(field.name, field.values);
  file.WriteAttribute("", "time", time);
  file.WriteAttribute("", "frame", int64_t{frame});
  file.Close();

  frames_[frame] = FrameRecord{time, num_points, num_cells, true, layouts};
  latest_fields_ = std::move(layouts);
  WriteXdmf();
  OPTISTEP_PETSC(PetscLogEventEnd(WriteFrameEvent(), 0, 0, 0, 0));
}

void XdmfTimeSeries::AddExistingFrame(int frame, double time, int64_t num_points,
                                      int64_t num_cells) {
  frames_[frame] = FrameRecord{time, num_points, num_cells, false, {}};
}

void XdmfTimeSeries::WriteXdmf() const {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  std::string problem;
  if (rank == 0) {
    std::ostringstream out;
    out << "<?xml version=\"1.0\" ?>\n"
        << "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
        << "<Xdmf Version=\"3.0\">\n"
        << "  <Domain>\n"
        << "    <Grid Name=\"" << XmlEscaped(name_)
        << "\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for (const auto& [frame, record] : frames_) {
      const std::string file = "frames/" + FrameStem(frame) + ".h5";
      const auto& fields = record.fields_known ? record.fields : latest_fields_;
      // One Uniform grid over the frame's positions: its topology, and the node fields (and
      // the cell fields, if with_cells).
      const auto grid = [&](const std::string& indent, const std::string& name, bool with_time,
                            bool with_cells, const auto& topology) {
        out << indent << "<Grid Name=\"" << XmlEscaped(name) << "\" GridType=\"Uniform\">\n";
        if (with_time) out << indent << "  <Time Value=\"" << ExactText(record.time) << "\"/>\n";
        topology(indent + "  ");
        out << indent << "  <Geometry GeometryType=\"XYZ\">\n";
        WriteDataItem(out, record.num_points, 3, "Float", file + ":/" + kPositions);
        out << indent << "  </Geometry>\n";
        for (const FieldLayout& field : fields) {
          if (field.cell_centered && !with_cells) continue;
          out << indent << "  <Attribute Name=\"" << XmlEscaped(field.name) << "\" AttributeType=\""
              << AttributeType(field.columns) << "\" Center=\""
              << (field.cell_centered ? "Cell" : "Node") << "\">\n";
          WriteDataItem(out, field.cell_centered ? record.num_cells : record.num_points,
                        field.columns, "Float", file + ":/" + field.name);
          out << indent << "  </Attribute>\n";
        }
        out << indent << "</Grid>\n";
      };
      const auto cells = [&](const std::string& indent) {
        if (num_tets_ >= 0) {
          out << indent << "<Topology TopologyType=\"" << cell_topology_ << "\" NumberOfElements=\""
              << record.num_cells << "\"" << (nodes_per_cell_ == 2 ? " NodesPerElement=\"2\"" : "")
              << ">\n";
          WriteDataItem(out, record.num_cells, nodes_per_cell_, "Int",
                        name_ + "_mesh.h5:/" + cell_dataset_);
        } else {
          out << indent << "<Topology TopologyType=\"Polyvertex\" NumberOfElements=\""
              << record.num_points << "\" NodesPerElement=\"1\">\n";
          WriteDataItem(out, record.num_points, 1, "Int", file + ":/" + kPointIds);
        }
        out << indent << "</Topology>\n";
      };
      if (num_triangles_ < 0) {
        grid("      ", FrameStem(frame), true, true, cells);
        continue;
      }
      // Polylines with triangle surfaces: a spatial collection of the surfaces (node fields)
      // and the polylines (node and cell fields) over the same positions.
      out << "      <Grid Name=\"" << XmlEscaped(FrameStem(frame))
          << "\" GridType=\"Collection\" CollectionType=\"Spatial\">\n"
          << "        <Time Value=\"" << ExactText(record.time) << "\"/>\n";
      grid("        ", "surfaces", false, false, [&](const std::string& indent) {
        out << indent << "<Topology TopologyType=\"Triangle\" NumberOfElements=\"" << num_triangles_
            << "\">\n";
        WriteDataItem(out, num_triangles_, 3, "Int", name_ + "_mesh.h5:/" + kMeshTriangles);
        out << indent << "</Topology>\n";
      });
      grid("        ", cell_dataset_, false, true, cells);
      out << "      </Grid>\n";
    }
    out << "    </Grid>\n"
        << "  </Domain>\n"
        << "</Xdmf>\n";

    // A reader (ParaView refreshing during a run) sees the old file or the new one, never
    // half of one: rename within a folder is atomic.
    const std::string path = XdmfPath();
    const std::string temporary = path + ".tmp";
    errno = 0;
    std::ofstream stream(temporary, std::ios::trunc);
    stream << out.str();
    stream.close();
    if (!stream)
      problem = "cannot write " + temporary + ": " + std::strerror(errno);
    else if (std::rename(temporary.c_str(), path.c_str()) != 0)
      problem = "cannot rename " + temporary + " to " + path + ": " + std::strerror(errno);
  }
  problem = MessageOfAnyRank(comm_, problem);
  if (!problem.empty()) throw IoError(problem);
}

}  // namespace optistep
