#!/usr/bin/env bash
# Stands in for the reference workloads (ddp_overlap, tp_overlap,
# fsdp_prefetch, pp_overlap, moe_alltoall) in the kit's self-test (no GPU):
# each rank is a fake_job that loads the injected agent (the fake agent
# there) like the CUDA driver would, then the SUMMARY line a real rank 0
# prints. Links named after the workloads point here.
prog="$(basename "$0")"
ranks=1 steps=20
while (($#)); do
  case "$1" in
    --help) echo "usage: $prog [options] (the GPU kit's stand-in)"; exit 0 ;;
    --ranks) ranks="$2"; shift ;;
    --steps) steps="$2"; shift ;;
  esac
  shift
done
job="$(dirname "$(readlink -f "$0")")/fake_job"
seconds="$(awk -v s="$steps" 'BEGIN { t = s / 200; if (t < 0.3) t = 0.3; if (t > 20) t = 20; print t }')"
pids=()
for ((r = 0; r < ranks; r++)); do
  RANK=$r WORLD_SIZE=$ranks LOCAL_RANK=$r "$job" "$seconds" 0 --nccl 3 &
  pids+=($!)
done
code=0
for p in "${pids[@]}"; do wait "$p" || code=1; done
echo "SUMMARY $prog mode=fake buckets=3 chunks=4 layers=8 world=$ranks median_step_ms=1.$RANDOM check=passed"
exit $code
