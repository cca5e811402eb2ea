#pragma once
// ParaView frames: one HDF5 file per frame plus one XDMF 3 file describing the time series.
//
// Layout under <directory>:
//   <name>.xdmf                 Temporal Collection of every frame written so far
//   <name>_mesh.h5              "tets" (num_tets x 4, int64, 0-based node ids), if a tet mesh,
//                               or "segments" (num_segments x 2), if polylines, and with them
//                               "triangles" (num_triangles x 3), if triangle surfaces
//   frames/<name>_000042.h5     "positions" (num_points x 3, m), one dataset per field,
//                               root attributes "time" (s) and "frame"; point clouds also
//                               "point_ids" (0..num_points-1, the Polyvertex connectivity)
// The .xdmf refers to the .h5 files by paths relative to itself, so the folder can be moved.
#include <map>
#include <string>
#include <vector>

#include "io/Hdf5File.hpp"

namespace optistep {

/// A time series of a tetrahedral mesh (SetTetMesh, then frames give node positions) or of
/// a point cloud (no SetTetMesh; each frame has its own number of points, e.g. MPM
/// particles). All methods are collective on comm.
///
/// The .xdmf lists the frames this object knows: the ones written by this run, kept in
/// memory. A run restarted from a checkpoint must re-seed the earlier frames with
/// AddExistingFrame before its first WriteFrame, or the .xdmf will lose them.
class XdmfTimeSeries {
 public:
  /// A per-node (or per-point) or per-cell quantity: 1 column -> Scalar, 3 -> Vector,
  /// 9 -> Tensor in ParaView's order xx xy xz yx ... (row-major; an Eigen Mat3's storage is
  /// column-major, so write its transpose). values.global_rows: number of nodes or cells.
  struct Field {
    std::string name;  ///< dataset name in the frame file and attribute name in ParaView
    bool cell_centered = false;
    DistributedArray<double> values;
  };

  /// Rank 0 creates directory and directory/frames if missing. IoError on every rank if
  /// it cannot.
  XdmfTimeSeries(MPI_Comm comm, std::string directory, std::string name);

  /// Writes <name>_mesh.h5: tets is (num_tets x 4) 0-based global node ids; num_nodes is the
  /// number of rows every frame's positions will have.
  void SetTetMesh(const DistributedArray<int64_t>& tets, int64_t num_nodes);
  /// The same for polylines (chains of particles): <name>_mesh.h5 holds "segments"
  /// (num_segments x 2, 0-based node ids), shown as an XDMF Polyline topology of 2 nodes per
  /// element; cell-centered fields are per segment. With triangles (num_triangles x 3,
  /// 0-based node ids: cloth surfaces) <name>_mesh.h5 also holds "triangles", and each frame
  /// is a Spatial collection of two grids over the same positions: "surfaces" (Triangle
  /// topology, the node fields) and "segments" (the polylines, node and cell fields).
  void SetPolylineMesh(const DistributedArray<int64_t>& segments, int64_t num_nodes,
                       const DistributedArray<int64_t>* triangles = nullptr);

  /// Writes frames/<name>_<frame, 6 digits>.h5 with positions (num_points x 3) and the
  /// fields, then rank 0 rewrites <name>.xdmf atomically (<name>.xdmf.tmp, then rename).
  /// Writing a frame number again replaces that frame. Frames are listed by number.
  /// Errors (the same on every rank, before anything is written): std::runtime_error if
  /// shapes disagree with the mesh, a field has another column count than 1, 3 or 9, or a
  /// field name is empty, repeated, "positions" or "point_ids". IoError on every rank if
  /// the frame or the .xdmf cannot be written.
  void WriteFrame(int frame, double time, const DistributedArray<double>& positions,
                  const std::vector<Field>& fields);

  /// Lists a frame file written by an earlier run (restart) without touching it; its fields
  /// are taken to be those of the frames this run writes. num_cells is num_tets for a mesh,
  /// num_points for a point cloud. The .xdmf is rewritten at the next WriteFrame.
  void AddExistingFrame(int frame, double time, int64_t num_points, int64_t num_cells);

  std::string XdmfPath() const;
  std::string FramePath(int frame) const;

 private:
  struct FieldLayout {
    std::string name;
    bool cell_centered;
    int columns;
  };
  struct FrameRecord {
    double time;
    int64_t num_points;
    int64_t num_cells;
    bool fields_known;  ///< false for AddExistingFrame: use the latest written fields
    std::vector<FieldLayout> fields;
  };
  std::string FrameStem(int frame) const;  ///< <name>_<frame, 6 digits>
  void WriteXdmf() const;
  void SetCellMesh(const char* dataset, const char* topology, const DistributedArray<int64_t>& cells,
                   int64_t num_nodes, const DistributedArray<int64_t>* triangles = nullptr);

  MPI_Comm comm_;
  std::string directory_;
  std::string name_;
  int64_t num_tets_ = -1;  ///< cells of the mesh (tets or segments); -1: point cloud
  int64_t num_triangles_ = -1;  ///< surface triangles beside the segments; -1: none
  std::string cell_dataset_ = "tets";
  std::string cell_topology_ = "Tetrahedron";
  int nodes_per_cell_ = 4;
  int64_t num_nodes_ = 0;
  std::map<int, FrameRecord> frames_;
  std::vector<FieldLayout> latest_fields_;
};

}  // namespace optistep
