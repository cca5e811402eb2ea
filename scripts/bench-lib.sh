# Shell functions of the benchmark scripts (scripts/bench-*.sh); source it, do not run it.

# stats.csv column by header name -> mean over the steps (rows).
column_mean() {
  awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == name) c = i; next }
                        c { s += $c; n++ } END { printf "%.6g", n ? s / n : 0 }' "$1"
}
# stats.csv column by header name -> sum over the steps (rows).
sum_column() {
  awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == name) c = i; next }
                        { s += $c } END { printf "%.6g", s }' "$1"
}
# "12.3" -> "12.3 (45%)": a phase's mean seconds per step and its share of the wall time.
share() {
  awk -v t="$1" -v w="$2" 'BEGIN { printf "%.3f (%.0f%%)", t, (w > 0 ? 100 * t / w : 0) }'
}
# The BLAS the run links (Debian's libblas.so.3 alternative), e.g. "openblas-pthread".
blas_name() {
  basename "$(dirname "$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)")"
}
