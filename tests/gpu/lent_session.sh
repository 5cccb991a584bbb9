#!/usr/bin/env bash
# One command for a lent GPU machine (device tool, 10 minutes a command, 8
# files back): several kit invocations, most wanted first, each with its own
# time budget, each packed into OUT as soon as it ends, so a command stopped
# at its limit still returns what finished.
#   tests/gpu/lent_session.sh OUT SECONDS [PLAN...]
# PLAN entries are "NAME:BUDGET:KIT-ARGS", one shell word each, e.g.
#   "p5:120:--part 5"   "mps1:60:--mps --part 1 --only ddp_overlap-bucketed"
# Entries whose budget no longer fits are skipped and said so in OUT/session.log.
set -u
if [[ "${1:-}" == "--help" || $# -lt 2 ]]; then
  sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit $([[ "${1:-}" == "--help" ]] && echo 0 || echo 2)
fi
here="$(cd "$(dirname "$0")" && pwd)"
out="$1"; total="$2"; shift 2
mkdir -p "$out"
start=$(date +%s)
log="$out/session.log"
echo "lent_session: $(date -u +%FT%TZ), $total s in all" >"$log"
for entry in "$@"; do
  name="${entry%%:*}"; rest="${entry#*:}"; budget="${rest%%:*}"; args="${rest#*:}"
  left=$((total - ($(date +%s) - start)))
  if ((left < budget / 2 || left < 20)); then
    echo "$name: skipped, $left s left for a budget of $budget s" >>"$log"
    continue
  fi
  ((budget > left - 10)) && budget=$((left - 10))
  read -r -a kit_args <<<"$args"
  echo "$name: ${kit_args[*]} --budget $budget (started at +$(($(date +%s) - start)) s)" >>"$log"
  "$here/run.sh" "${kit_args[@]}" --bin "${OSC_KIT_BIN:-.device/kit}" --out "/tmp/lent-$name" \
    --work "/tmp/lent-$name-work" --budget "$budget" >>"$log" 2>&1
  echo "$name: exit $? at +$(($(date +%s) - start)) s" >>"$log"
  tar -C /tmp -czf "$out/$name.tar.gz" "lent-$name" 2>>"$log"
done
echo "lent_session: done at +$(($(date +%s) - start)) s" >>"$log"
