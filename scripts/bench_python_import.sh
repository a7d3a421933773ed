#!/usr/bin/env bash
# What the warm interpreter's imports cost, outside backendbench: `import torch`, then torch and
# Triton, with and without LD_BIND_NOW (which every worker and the warm interpreter run under),
# ROUNDS times; then Python's own -X importtime of the pair, its 40 slowest modules (cumulative).
#
#   [ROUNDS=2] [PYTHON=python3] scripts/bench_python_import.sh
set -uo pipefail
py="${PYTHON:-python3}"
TIMEFORMAT="%R s"
for round in $(seq 1 "${ROUNDS:-2}"); do
  for what in "import torch" "import torch, triton, triton.language"; do
    for bind in "" 1; do
      t=$( { time env ${bind:+LD_BIND_NOW=1} "$py" -c "$what" > /dev/null 2>&1; } 2>&1 ) && ok=ok || ok="FAILED (see -X importtime below)"
      echo "round $round: ${bind:+LD_BIND_NOW=1 }$what: $t $ok"
    done
  done
done
echo "slowest (cumulative us | module), -X importtime:"
"$py" -X importtime -c "import torch, triton, triton.language" 2>&1 | sort -t'|' -k2 -n | tail -40
