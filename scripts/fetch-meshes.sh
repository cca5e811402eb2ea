#!/usr/bin/env bash
# Fetches CGAL's demo surface meshes (elephant.off, armadillo.off, bunny00.off) into
# data/meshes/ and tetrahedralizes elephant and armadillo with TetGen into
# data/meshes/<name>.1.node/.ele (+ .face/.edge), the meshes the demo scenes use.
#
# The .off files come from Debian's libcgal-demo package, unpacked without installing it
# (installing would pull in some 74 packages): it holds them in a data.tar.gz under
# usr/share/doc/, at data/meshes/ inside. Only Debian's package registry is needed.
# Idempotent: files already there are kept, so a second run takes well under a second.
# Usage: scripts/fetch-meshes.sh [FILE...]   (as root, or a user with sudo for tetgen)
#   FILE: <name>.off, a surface (elephant, armadillo, bunny00), or <name>.1.node, a TetGen
#   mesh (elephant, armadillo; with its .ele, .face, .edge, and its surface). Without
#   arguments, all of them. Meshing armadillo (751680 tets) takes some 20 s; the others
#   take about a second each, the download a few seconds.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/data/meshes"
known_surfaces=(elephant armadillo bunny00)
known_volumes=(elephant armadillo)
# -p: tetrahedralize the closed surface; -q1.5: radius-edge ratio <= 1.5; -Q: quiet.
tetgen_flags=-pq1.5Q

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
  [[ -s "$out/$name.1.ele" && "$out/$name.1.ele" -nt "$out/$name.off" ]] || stale+=("$name")
done

if ((${#stale[@]} > 0)) && ! command -v tetgen >/dev/null; then
  echo "fetch-meshes: installing tetgen" >&2
  if ! $SUDO apt-get install -y -qq --no-install-recommends tetgen >/dev/null; then
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends tetgen >/dev/null
  fi
fi

for name in "${stale[@]}"; do
  echo "fetch-meshes: tetgen $tetgen_flags $name.off" >&2
  # Mesh in the temporary folder and move the results last, so an interrupted run
  # leaves no half-written mesh that a later run would take as done.
  cp "$out/$name.off" "$tmp/$name.off"
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
