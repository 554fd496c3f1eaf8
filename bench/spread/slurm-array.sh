#!/bin/bash
# A suite spread over a Slurm job array, one shard a task, then merged.
#
#   id=$(sbatch --parsable --array=1-8 bench/spread/slurm-array.sh)
#   sbatch --dependency=afterok:$id --export=ALL,MERGE=1 bench/spread/slurm-array.sh
#
# pcbench reads the task's shard from SLURM_ARRAY_TASK_ID over
# SLURM_ARRAY_TASK_MIN.._MAX (8 tasks: 8 shards) and says so; a sparse array
# (--array=1,4,9) is refused. Each task writes its own folder, parts/<task>;
# the merge job puts them into results/, which `make tables` and `make plots`
# read as one run's. Extra arguments go to pcbench bench.
#SBATCH --job-name=pcbench
#SBATCH --gpus=1
#SBATCH --output=pcbench-%A_%a.log
set -euo pipefail
PCBENCH=${PCBENCH:-build/pcbench}
SUITE=${SUITE:-full}
if [ "${MERGE:-0}" = 1 ]; then
    exec "$PCBENCH" merge results parts/*/
fi
exec "$PCBENCH" bench --suite "$SUITE" --results "parts/$SLURM_ARRAY_TASK_ID" "$@"
