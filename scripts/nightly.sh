#!/usr/bin/env bash
# One night of a nightly sweep: run every op and implementation of a custom-ops root, write
# every report, compare with the previous night, and say in one line whether anything regressed.
#
#   scripts/nightly.sh [options] ROOT BASELINE OUT [-- backendbench flags...]
#
#   ROOT       the custom-ops root to sweep
#   BASELINE   the previous night: a results.json, or a log dir holding one; with --store, the
#              folder of earlier nights' log dirs (OUT may lie in it, as each night's does)
#   OUT        this night's log dir: results.json, results.jsonl, junit.xml, operator_summary.csv,
#              OVERALL_SUMMARY.md, report.html; console.log (the sweep's console output),
#              compare.md and compare.txt (the comparison, and compare's console output)
#
# Options:
#   --update-baseline  when nothing regressed, this night becomes the baseline (BASELINE is
#                      replaced; a missing BASELINE is created: the first night)
#   --store            BASELINE is a store of past nights: tonight is compared with the last
#                      --last N of them together (default 7; backendbench compare STORE NEW), each
#                      test's trend over them in compare.txt, compare.md and trend.csv. The store
#                      grows as each night's OUT lands in it: nothing to update; a store with no
#                      earlier night makes tonight its first.
#   --last N           with --store: how many of its newest nights to compare with
#   --threshold PCT    a slowdown beyond PCT percent is a regression (backendbench compare's)
#   --confirm          re-time each performance regression, tonight's library against last night's,
#                      paired, before calling it one (backendbench compare --confirm): a slowdown
#                      the host caused, not the code, is then no regression
#   --binary PATH      the backendbench to run (default $BACKENDBENCH; installed as
#                      backendbench-nightly, the backendbench beside it; else the one on PATH,
#                      else this checkout's build/backendbench)
# Flags after `--`, and the words of $BACKENDBENCH_FLAGS, go to the sweep (e.g. --devices all,
# -j 4, --correctness-only, --shard auto).
#
# Standard output is one line, the verdict. Exit status is compare's: 0 no regression, 3 a regression, 2 unusable (the sweep could not
# run, or the baseline cannot be read).
set -uo pipefail

usage() {
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

update=0
store=0
last=()
threshold=()
confirm=()
binary=${BACKENDBENCH:-}
positional=()
extra=()
while (($#)); do
  case "$1" in
    --update-baseline) update=1 ;;
    --store) store=1 ;;
    --last) [[ $# -ge 2 ]] || usage; last=(--last "$2"); shift ;;
    --last=*) last=(--last "${1#*=}") ;;
    --threshold) [[ $# -ge 2 ]] || usage; threshold=(--threshold "$2"); shift ;;
    --threshold=*) threshold=(--threshold "${1#*=}") ;;
    --confirm) confirm=(--confirm) ;;
    --binary) [[ $# -ge 2 ]] || usage; binary=$2; shift ;;
    --binary=*) binary=${1#*=} ;;
    -h | --help) usage ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "nightly: unknown option $1" >&2; usage ;;
    *) positional+=("$1") ;;
  esac
  shift
done
((${#positional[@]} == 3)) || usage
root=${positional[0]}
baseline=${positional[1]}
out=${positional[2]}
if [[ -z $binary ]]; then
  # Installed (bin/backendbench-nightly): the backendbench beside it, whatever cron's PATH holds.
  beside="$(cd "$(dirname "$0")" && pwd)/backendbench"
  if [[ $(basename "$0") != nightly.sh && -x $beside ]]; then binary=$beside
  else binary=$(command -v backendbench) || binary="$(cd "$(dirname "$0")/.." && pwd)/${BUILD_DIR:-build}/backendbench"; fi
  [[ -x $binary ]] || { echo "nightly: no backendbench on PATH nor at $binary; pass --binary or set BACKENDBENCH" >&2; exit 2; }
fi
read -r -a env_flags <<<"${BACKENDBENCH_FLAGS:-}"

# The baseline's results file: BASELINE itself, or BASELINE/results.json (a store: the folder).
baseline_file=$baseline
((store)) || { [[ -d $baseline || $baseline == */ ]] && baseline_file=${baseline%/}/results.json; }
((${#last[@]} == 0 || store)) || { echo "nightly: --last needs --store" >&2; usage; }

verdict() {  # one line on stdout, then the status
  echo "nightly: $2"
  exit "$1"
}

# 1. The sweep. Its own status (1: some test did not pass) is not the verdict: compare decides
#    whether that is new. A run that wrote no results, or that could not run (2) and ran no test,
#    is unusable; one that ran tests beside a plugin it could not use is compared.
mkdir -p "$out"
rm -f "$out/results.json" "$out/compare.md"
"$binary" --custom-ops-root "$root" --log-dir "$out" -q "${env_flags[@]}" "${extra[@]}" >"$out/console.log" 2>&1
run_status=$?
if [[ ! -s $out/results.json ]]; then
  tail -n 20 "$out/console.log" >&2
  verdict 2 "UNUSABLE: the sweep exited $run_status and wrote no $out/results.json"
fi
if ((run_status == 2)) && ! grep -q '"verdict":' "$out/results.json"; then
  tail -n 20 "$out/console.log" >&2
  verdict 2 "UNUSABLE: the sweep could not run (exit 2, no test ran; see $out/console.log)"
fi

# 2. The first night: nothing to compare with (a store: no night but tonight's in it).
if ((store)); then
  earlier=$(find "$baseline" -mindepth 2 -maxdepth 2 \( -name results.json -o -name results.jsonl \) 2>/dev/null |
    while read -r f; do [[ $(cd "$(dirname "$f")" && pwd -P) == $(cd "$out" && pwd -P) ]] || echo "$f"; done | head -n 1)
  [[ -n $earlier ]] || verdict 0 "FIRST NIGHT: the store $baseline holds no earlier night (sweep exit $run_status); tonight is its first"
elif [[ ! -e $baseline_file ]]; then
  if ((update)); then
    mkdir -p "$(dirname "$baseline_file")"
    cp "$out/results.json" "$baseline_file.tmp.$$" && mv "$baseline_file.tmp.$$" "$baseline_file"
    verdict 0 "FIRST NIGHT: no baseline at $baseline; this run (sweep exit $run_status) is now the baseline"
  fi
  verdict 2 "UNUSABLE: no baseline at $baseline (run with --update-baseline to make this night the first)"
fi

# 3. The comparison (against a store: its last nights, and each test's trend in trend.csv).
trend=()
((store)) && trend=("${last[@]}" --trend-csv "$out/trend.csv")
"$binary" compare "$baseline_file" "$out/results.json" "${threshold[@]}" "${confirm[@]}" "${trend[@]}" --md "$out/compare.md" --html "$out/report.html" >"$out/compare.txt" 2>&1
compare_status=$?
case $compare_status in
  0)
    if ((update && !store)); then
      cp "$out/results.json" "$baseline_file.tmp.$$" && mv "$baseline_file.tmp.$$" "$baseline_file"
      verdict 0 "OK: no regression against $baseline (sweep exit $run_status); baseline updated; $out/compare.md"
    fi
    verdict 0 "OK: no regression against $baseline (sweep exit $run_status); $out/compare.md"
    ;;
  3) verdict 3 "REGRESSION against $baseline: see $out/compare.md" ;;
  *)
    tail -n 5 "$out/compare.txt" >&2
    verdict 2 "UNUSABLE: backendbench compare exited $compare_status (see $out/compare.txt)"
    ;;
esac
