#!/usr/bin/env bash
# Fetches CGAL's demo surface meshes (elephant.off, armadillo.off, bunny00.off) into
# data/meshes/ and tetrahedralizes elephant and armadillo with TetGen into
# data/meshes/<name>.1.node/.ele (+ .face/.edge), the meshes the demo scenes use.
#
# The .off files come from Debian's libcgal-demo package, unpacked without installing it
# (installing would pull in some 74 packages): it holds them in a data.tar.gz under
# usr/share/doc/, at data/meshes/ inside. Only Debian's package registry is needed.
# armadillo_coarse (6832 nodes, 25072 tets, configs/armadillo_drop.yaml) is armadillo.off
# first decimated to 1000 vertices by OpenMesh's quadric decimater (OpenMesh-commandline-
# Decimater -M Q -M NF -M AR:5 -n -1000: quadric error, no normal flips, triangle aspect
# ratio <= 5; Debian's libopenmesh-apps, unpacked like libcgal-demo since installing it
# pulls in Qt; it needs only libopenmesh1, which is installed), then given to TetGen. The
# decimation is deterministic, so the mesh is the same on every machine.
# armadillo_mesh3 (configs/armadillo_drop.yaml) is armadillo.off tetrahedralized by CGAL's
# 3D mesh generator with sliver perturbation and exudation (scripts/mesh-volume.cpp, built
# here with g++ against Debian's libcgal-dev, header-only; size 3.2 and surface distance 2
# in the .off's units, slivers pushed toward 12 degrees): 6651 nodes, 32134 tets, smallest
# dihedral angle 12.0 degrees (against 3.3 in armadillo_coarse's thin surface tets), so its
# semi-implicit CFL step is 4.8x longer (1.41e-4 s against 2.94e-5 s in
# configs/armadillo_drop.yaml). Sequential with a fixed seed and no time limits: the same
# mesh on every machine (its counts are checked below).
# Idempotent: files already there are kept, so a second run takes well under a second.
# Usage: scripts/fetch-meshes.sh [FILE...]   (as root, or a user with sudo for tetgen)
#   FILE: <name>.off, a surface (elephant, armadillo, bunny00), or <name>.1.node, a TetGen
#   mesh (elephant, armadillo, armadillo_coarse; with its .ele, .face, .edge, and its
#   surface). Without arguments, all of them. Meshing armadillo (751680 tets) takes some
#   20 s; the others take about a second each, the download a few seconds.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/data/meshes"
known_surfaces=(elephant armadillo bunny00)
known_volumes=(elephant armadillo armadillo_coarse armadillo_mesh3)
# -p: tetrahedralize the closed surface; -q1.5: radius-edge ratio <= 1.5; -Q: quiet.
tetgen_flags=-pq1.5Q

# CGAL Mesh_3 for armadillo_mesh3 (scripts/mesh-volume.cpp): SIZE (facet and tet size,
# in the .off's units: 151 for the armadillo's height), DISTANCE (to the input surface),
# SLIVER_DEGREES; and the counts it gives ("nodes tets").
mesh3_args="3.2 2 12"
mesh3_counts="6651 32134"

# The surface a volume mesh is made from: <name>_coarse from <name>.off (decimated first),
# <name>_mesh3 from <name>.off.
source_of() { local name=${1%_coarse}; echo "${name%_mesh3}"; }

# Whether word $1 is one of the remaining arguments.
contains() {
  local word=$1
  shift
  local item
  for item in "$@"; do [[ $item == "$word" ]] && return 0; done
  return 1
}

files=("$@")
if ((${#files[@]} == 0)); then
  files=("${known_surfaces[@]/%/.off}" "${known_volumes[@]/%/.1.node}")
fi
surfaces=()
volumes=()
for file in "${files[@]}"; do
  name=""
  case "$file" in
    *.1.node) contains "${file%.1.node}" "${known_volumes[@]}" && name=${file%.1.node} ;;
    *.off) contains "${file%.off}" "${known_surfaces[@]}" && name=${file%.off} ;;
  esac
  if [[ -z "$name" ]]; then
    echo "fetch-meshes: unknown mesh '$file'; known: ${known_surfaces[*]/%/.off}" \
      "${known_volumes[*]/%/.1.node}" >&2
    exit 2
  fi
  if [[ $file == *.1.node ]] && ! contains "$name" "${volumes[@]}"; then
    volumes+=("$name")
  fi
  [[ $file == *.1.node ]] && name=$(source_of "$name")
  contains "$name" "${surfaces[@]}" || surfaces+=("$name")
done

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

missing_surfaces=()
for name in "${surfaces[@]}"; do
  [[ -s "$out/$name.off" ]] || missing_surfaces+=("$name")
done

if ((${#missing_surfaces[@]} > 0)); then
  echo "fetch-meshes: getting ${missing_surfaces[*]} from Debian's libcgal-demo" >&2
  if ! (cd "$tmp" && apt-get download -qq libcgal-demo 2>/dev/null); then
    $SUDO apt-get update -qq
    (cd "$tmp" && apt-get download -qq libcgal-demo)
  fi
  dpkg-deb -x "$tmp"/libcgal-demo_*.deb "$tmp/pkg"
  archive=$(find "$tmp/pkg/usr/share/doc" -name data.tar.gz | head -n 1)
  if [[ -z "$archive" ]]; then
    echo "fetch-meshes: no data.tar.gz under usr/share/doc/ in libcgal-demo" >&2
    exit 1
  fi
  members=()
  for name in "${missing_surfaces[@]}"; do members+=("data/meshes/$name.off"); done
  tar -xzf "$archive" -C "$tmp" "${members[@]}"
  for name in "${missing_surfaces[@]}"; do mv "$tmp/data/meshes/$name.off" "$out/$name.off"; done
fi

stale=()
for name in "${volumes[@]}"; do
  [[ -s "$out/$name.1.ele" && "$out/$name.1.ele" -nt "$out/$(source_of "$name").off" ]] || stale+=("$name")
done

if ((${#stale[@]} > 0)) && ! command -v tetgen >/dev/null; then
  echo "fetch-meshes: installing tetgen" >&2
  if ! $SUDO apt-get install -y -qq --no-install-recommends tetgen >/dev/null; then
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends tetgen >/dev/null
  fi
fi

decimater=""
for name in "${stale[@]}"; do
  [[ $name == *_coarse && -z $decimater ]] || continue
  echo "fetch-meshes: getting OpenMesh's decimater from Debian's libopenmesh-apps" >&2
  if ! $SUDO apt-get install -y -qq --no-install-recommends libopenmesh1 >/dev/null; then
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends libopenmesh1 >/dev/null
  fi
  if ! (cd "$tmp" && apt-get download -qq libopenmesh-apps 2>/dev/null); then
    $SUDO apt-get update -qq
    (cd "$tmp" && apt-get download -qq libopenmesh-apps)
  fi
  dpkg-deb -x "$tmp"/libopenmesh-apps_*.deb "$tmp/openmesh"
  decimater="$tmp/openmesh/usr/bin/OpenMesh-commandlineDecimater"
done

mesher=""
for name in "${stale[@]}"; do
  [[ $name == *_mesh3 && -z $mesher ]] || continue
  if [[ ! -d /usr/include/CGAL ]]; then
    echo "fetch-meshes: installing Debian's libcgal-dev (header-only CGAL)" >&2
    if ! $SUDO apt-get install -y -qq --no-install-recommends libcgal-dev >/dev/null; then
      $SUDO apt-get update -qq
      $SUDO apt-get install -y -qq --no-install-recommends libcgal-dev >/dev/null
    fi
  fi
  echo "fetch-meshes: building scripts/mesh-volume.cpp (CGAL, a few minutes)" >&2
  mesher="$tmp/mesh-volume"
  g++ -O2 -std=c++17 -DNDEBUG "$root/scripts/mesh-volume.cpp" -o "$mesher" -lgmp -lmpfr
done

for name in "${stale[@]}"; do
  if [[ $name == *_mesh3 ]]; then
    echo "fetch-meshes: mesh-volume $(source_of "$name").off $mesh3_args" >&2
    # shellcheck disable=SC2086
    counts=$("$mesher" "$out/$(source_of "$name").off" "$tmp/$name.1" $mesh3_args)
    counts=$(echo "$counts" | awk '{ print $1, $3 }')
    if [[ $counts != "$mesh3_counts" ]]; then
      echo "fetch-meshes: $name: got $counts (nodes tets), expected $mesh3_counts: another CGAL?" >&2
    fi
    mv "$tmp/$name.1.node" "$out/"
    mv "$tmp/$name.1.ele" "$out/"
    continue
  fi
  echo "fetch-meshes: tetgen $tetgen_flags $name.off" >&2
  # Mesh in the temporary folder and move the results last, so an interrupted run
  # leaves no half-written mesh that a later run would take as done.
  if [[ $name == *_coarse ]]; then
    "$decimater" -M Q -M NF -M AR:5 -n -1000 -i "$out/$(source_of "$name").off" \
      -o "$tmp/$name.off" >/dev/null 2>&1
  else
    cp "$out/$name.off" "$tmp/$name.off"
  fi
  tetgen "$tetgen_flags" "$tmp/$name.off" >/dev/null
  mv "$tmp/$name.1.node" "$tmp/$name.1.face" "$tmp/$name.1.edge" "$out/"
  mv "$tmp/$name.1.ele" "$out/"
done

# First number of the first line that is neither blank nor a comment: the count.
count() { awk '!/^[[:space:]]*(#|$)/ { print $1; exit }' "$1"; }
for name in "${surfaces[@]}"; do
  printf '%-10s surface: %7s vertices %7s triangles\n' "$name" \
    "$(awk 'NR == 2 { print $1 }' "$out/$name.off")" "$(awk 'NR == 2 { print $2 }' "$out/$name.off")"
done
for name in "${volumes[@]}"; do
  printf '%-10s tets:    %7s nodes    %7s tets\n' "$name" \
    "$(count "$out/$name.1.node")" "$(count "$out/$name.1.ele")"
done
