#!/bin/sh
# One rank of an MPI test (mpiexec -n N sh run_rank.sh [--own-gpu] PROGRAM ARGS...). Where the
# node shows this rank at least as many GPUs as it has ranks, SPADE_TEST_MUST_RUN=1 tells the
# program that skipping for want of GPUs is a failure. --own-gpu shows the rank only the GPU of
# its local rank through CUDA_VISIBLE_DEVICES, as launchers that bind a GPU per rank do.
own_gpu=0
if [ "$1" = "--own-gpu" ]; then
  own_gpu=1
  shift
fi
local_rank=${OMPI_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-${SLURM_LOCALID:-0}}}
local_size=${OMPI_COMM_WORLD_LOCAL_SIZE:-${MPI_LOCALNRANKS:-${SLURM_NTASKS_PER_NODE:-1}}}
# The GPUs this process may use: CUDA_VISIBLE_DEVICES's list where it is set, else every one.
if [ -n "${CUDA_VISIBLE_DEVICES+set}" ]; then
  gpus=$(printf '%s' "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
  list=$CUDA_VISIBLE_DEVICES
else
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  list=$(seq -s, 0 $((gpus - 1)) 2>/dev/null)
fi
if [ "$gpus" -ge "$local_size" ] && [ "$gpus" -gt 0 ]; then
  export SPADE_TEST_MUST_RUN=1
fi
if [ "$own_gpu" = 1 ]; then
  CUDA_VISIBLE_DEVICES=$(printf '%s' "$list" | cut -d, -f$((local_rank + 1)))
  export CUDA_VISIBLE_DEVICES
fi
exec "$@"
