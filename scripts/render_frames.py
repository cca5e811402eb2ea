"""pvbatch script: PNG snapshots of frames of an optistep run (XDMF + HDF5), colored by a
field. Run by scripts/report (under xvfb-run when there is no display):

  pvbatch scripts/render_frames.py RUN.xdmf OUT_DIR FIELD FRAME [FRAME ...]
  pvbatch scripts/render_frames.py --probe RUN.xdmf   # prints the frame count and fields

Opens the series with ParaView's Xdmf3ReaderS (the reader docs/user/plotting.md names); FRAME is a
0-based frame index (-1: the last). Writes OUT_DIR/frame_NNNNNN_<FIELD>.png, 800 x 600.
MPM frames (point clouds) are drawn as points, tet meshes as surfaces.
"""
import os
import sys

from paraview.simple import (ColorBy, GetActiveViewOrCreate, GetAnimationScene, Render,
                             ResetCamera, SaveScreenshot, Show, Xdmf3ReaderS)


def open_series(path):
    reader = Xdmf3ReaderS(FileName=[path])
    reader.UpdatePipelineInformation()
    times = list(reader.TimestepValues) if reader.TimestepValues else [0.0]
    if isinstance(reader.TimestepValues, float):
        times = [reader.TimestepValues]
    return reader, times


def fields(reader):
    info = reader.GetDataInformation()
    names = []
    for assoc in (reader.PointData, reader.CellData):
        names += list(assoc.keys())
    return names, info


def main(argv):
    if argv[0] == "--probe":
        reader, times = open_series(argv[1])
        reader.UpdatePipeline(times[-1])
        names, info = fields(reader)
        print(f"frames {len(times)}")
        print(f"last_time {times[-1]:.9g}")
        print(f"points {info.GetNumberOfPoints()}")
        print("fields " + " ".join(names))
        return 0
    xdmf, out_dir, field = argv[0], argv[1], argv[2]
    frames = [int(f) for f in argv[3:]] or [-1]
    os.makedirs(out_dir, exist_ok=True)
    reader, times = open_series(xdmf)
    view = GetActiveViewOrCreate("RenderView")
    view.ViewSize = [800, 600]
    view.OrientationAxesVisibility = 0
    display = Show(reader, view)
    reader.UpdatePipeline(times[0])
    point_cloud = reader.GetDataInformation().GetNumberOfCells() == \
        reader.GetDataInformation().GetNumberOfPoints()
    display.SetRepresentationType("Points" if point_cloud else "Surface")
    assoc = "POINTS" if field in reader.PointData.keys() else "CELLS"
    if field not in reader.PointData.keys() and field not in reader.CellData.keys():
        print(f"render_frames: no field '{field}' in {xdmf}; fields: "
              + " ".join(fields(reader)[0]), file=sys.stderr)
        return 1
    ColorBy(display, (assoc, field))
    display.SetScalarBarVisibility(view, True)
    scene = GetAnimationScene()
    scene.UpdateAnimationUsingDataTimeSteps()
    for f in frames:
        i = f if f >= 0 else len(times) + f
        if not 0 <= i < len(times):
            print(f"render_frames: frame {f} out of range (0..{len(times) - 1})", file=sys.stderr)
            return 1
        view.ViewTime = times[i]
        reader.UpdatePipeline(times[i])
        display.RescaleTransferFunctionToDataRange(False, True)
        view.CameraPosition, view.CameraFocalPoint, view.CameraViewUp = [0, 0, 1], [0, 0, 0], [0, 1, 0]
        ResetCamera(view)
        camera = view.GetActiveCamera()
        camera.Azimuth(30)  # a three-quarter view from above (y is up in the scenes)
        camera.Elevation(20)
        ResetCamera(view)
        Render(view)
        path = os.path.join(out_dir, f"frame_{i:06d}_{field}.png")
        SaveScreenshot(path, view, ImageResolution=[800, 600])
        print(f"render_frames: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
