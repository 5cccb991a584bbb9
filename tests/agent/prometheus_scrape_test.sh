#!/usr/bin/env bash
# A real Prometheus server (Debian's `prometheus` package) scrapes the live
# metrics of an agent: `overlapscope run --metrics-port` runs fake_job under
# the fake agent library playing the paced training job, Prometheus (on a
# free port of 127.0.0.1, with a temporary configuration and data directory)
# scrapes it every second, and PromQL queries through Prometheus' HTTP API
# must return the agent's values; so must every query of the Grafana
# dashboard in docs/ (its variables set to this job). Not skipped when
# Prometheus is missing: it fails, saying how to install it.
#   prometheus_scrape_test.sh OVERLAPSCOPE FAKE_AGENT FAKE_JOB DASHBOARD_JSON
set -euo pipefail
cli="$1" agent="$2" job="$3" dashboard="$4"
prometheus="${PROMETHEUS:-$(command -v prometheus || true)}"
if [[ -z "$prometheus" ]]; then
  echo "FAIL: no prometheus server: install Debian's prometheus package (scripts/install-deps.sh does)" >&2
  exit 1
fi

root="$(mktemp -d "${TMPDIR:-/tmp}/osc_prometheus_XXXXXX")"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$root"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
agent_port="$(free_port)"
prom_port="$(free_port)"

# The job: one rank (5) of job "promtest", 20 ms steps, 1 MiB all-reduces.
mkdir -p "$root/sock" "$root/out"
chmod 700 "$root/sock"
RANK=5 OVERLAPSCOPE_SOCKET_DIR="$root/sock" OVERLAPSCOPE_COMMIT_MS=100 OVERLAPSCOPE_FAKE_STEP_MS=20 \
  OVERLAPSCOPE_FAKE_NCCL_BYTES=1048576 \
  "$cli" run --agent "$agent" -o "$root/out" --metrics-port "$agent_port" --job promtest -- "$job" 120 0 \
  > "$root/job.log" 2>&1 &
pids+=($!)

# honor_labels: the agent's own `job` label stays `job` (not exported_job).
cat > "$root/prometheus.yml" <<YAML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: overlapscope-agents
    honor_labels: true
    static_configs:
      - targets: ["127.0.0.1:$agent_port"]
YAML
"$prometheus" --config.file="$root/prometheus.yml" --storage.tsdb.path="$root/data" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=warn > "$root/prometheus.log" 2>&1 &
pids+=($!)

# query EXPR -> the first result's value, or "" while there is none.
query() {
  python3 - "$prom_port" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
port, expr = sys.argv[1], sys.argv[2]
url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
try:
    with urllib.request.urlopen(url, timeout=5) as r:
        data = json.load(r)
except Exception:
    print("")
    sys.exit(0)
res = data.get("data", {}).get("result", [])
print(json.dumps({"labels": res[0]["metric"], "value": float(res[0]["value"][1])}) if res else "")
PY
}
# scrape NAME -> the agent's own value of NAME, straight from /metrics.
scrape() {
  python3 - "$agent_port" "$1" <<'PY'
import sys, urllib.request
port, name = sys.argv[1], sys.argv[2]
text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
print(next(float(l.rsplit(" ", 1)[1]) for l in text.splitlines() if l.startswith(name + "{")))
PY
}
wait_for() {  # EXPR SECONDS
  for _ in $(seq 1 $(($2 * 5))); do
    v="$(query "$1")"
    if [[ -n "$v" ]]; then echo "$v"; return 0; fi
    sleep 0.2
  done
  echo "FAIL: Prometheus has no result for $1 after $2 s" >&2
  tail -20 "$root/prometheus.log" "$root/job.log" >&2
  exit 1
}
field() { python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(eval(sys.argv[2], {}, d))' "$1" "$2"; }
check() {  # WHAT ACTUAL EXPECTED TOLERANCE
  if ! python3 -c 'import sys; a, e, t = map(float, sys.argv[1:]); sys.exit(0 if abs(a - e) <= t else 1)' "$2" "$3" "$4"; then
    echo "FAIL: $1 is $2, expected $3 (within $4)" >&2
    exit 1
  fi
  echo "ok: $1 = $2"
}

ratio="$(wait_for 'overlapscope_overlap_ratio{job="promtest",rank="5"}' 60)"
check "overlap ratio through Prometheus" "$(field "$ratio" 'value')" 0.5 1e-12
[[ "$(field "$ratio" 'labels["gpu"]')" == 0 ]] || { echo "FAIL: gpu label: $ratio" >&2; exit 1; }
[[ "$(field "$ratio" 'labels["host"]')" == "$(hostname)" ]] || { echo "FAIL: host label: $ratio" >&2; exit 1; }
exposed="$(wait_for 'overlapscope_exposed_comm_seconds{job="promtest"}' 10)"
check "exposed communication of the last step" "$(field "$exposed" 'value')" 0.004 1e-12
busbw="$(wait_for 'overlapscope_bus_bandwidth_bytes_per_second{job="promtest"}' 10)"
check "bus bandwidth" "$(field "$busbw" 'value')" "$(python3 -c 'print(2 * 1048576 / 0.008)')" 1e-3

# The counters, as Prometheus stored them, are the agent's: no later than what
# it serves now, and a rate over them gives the step's share of exposed time.
steps="$(wait_for 'overlapscope_steps_total{job="promtest"}' 10)"
served="$(scrape overlapscope_steps_total)"
python3 -c 'import sys; p, a = map(float, sys.argv[1:]); sys.exit(0 if 1 <= p <= a else 1)' "$(field "$steps" 'value')" "$served" ||
  { echo "FAIL: Prometheus has $(field "$steps" 'value') steps, the agent serves $served" >&2; exit 1; }
echo "ok: steps_total $(field "$steps" 'value') in Prometheus, $served at the agent"
sleep 4
share="$(wait_for 'rate(overlapscope_exposed_comm_seconds_total{job="promtest"}[10s]) / rate(overlapscope_step_seconds_total{job="promtest"}[10s])' 20)"
check "exposed share of step time (PromQL over the counters)" "$(field "$share" 'value')" 0.25 1e-6
# The dashboard: each panel's PromQL and each variable's label_values() must
# be valid and return this job's series; where the value is known (the paced
# job: 20 ms steps, half the all-reduce under compute, 4 ms exposed, 1 MiB
# each step) it must be that value. Waiting for the slowest GPU needs two
# GPUs in one process; the job here has one, so that panel may be empty.
python3 - "$prom_port" "$dashboard" <<'PY'
import json, re, sys, urllib.error, urllib.parse, urllib.request
port, path = sys.argv[1], sys.argv[2]
dash = json.load(open(path))
def sub(expr):
    return (expr.replace("$__rate_interval", "10s").replace('=~"$job"', '=~"promtest"')
            .replace('=~"$host"', '=~".+"').replace('=~"$rank"', '=~".+"'))
def query(expr):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            data = json.load(r)
    except urllib.error.HTTPError as e:
        data = json.load(e)
    if data.get("status") != "success":
        sys.exit(f"FAIL: dashboard query {expr!r}: {data.get('error')}")
    return data["data"]["result"]
known = {"Overlap ratio": (0.5, 1e-12), "Exposed communication per step": (0.004, 1e-12),
         "Exposed communication, share of step time": (0.25, 1e-6),
         "Bus bandwidth": (2 * 1048576 / 0.008, 1e-3), "Steps per second": (50, 20),
         # The paced step's GPU window is 80 % of its period: 4 ms of every 20 idle between steps
         # (the first step measured has no gap before it: hence the tolerance).
         "GPU idle between steps, share of wall-clock time": (0.2, 1e-3)}
may_be_empty = {"Waiting for the slowest GPU"}
if not dash["panels"]:
    sys.exit("FAIL: the dashboard has no panels")
for panel in dash["panels"]:
    for target in panel["targets"]:
        res = query(sub(target["expr"]))
        if not res:
            if panel["title"] in may_be_empty:
                continue
            sys.exit(f"FAIL: dashboard panel {panel['title']!r}: no result for {sub(target['expr'])}")
        if any(r["metric"].get("rank") != "5" for r in res):
            sys.exit(f"FAIL: dashboard panel {panel['title']!r}: series of another rank: {res}")
        values = [float(r["value"][1]) for r in res]
        if panel["title"] in known:
            want, tol = known[panel["title"]]
            if any(abs(v - want) > tol for v in values):
                sys.exit(f"FAIL: dashboard panel {panel['title']!r} shows {values}, expected {want}")
        print(f"ok: dashboard panel {panel['title']!r}: {values}")
for var in dash["templating"]["list"]:
    if var["type"] != "query":
        continue
    m = re.fullmatch(r"label_values\((.+), (\w+)\)", var["query"]["query"])
    if not m:
        sys.exit(f"FAIL: dashboard variable {var['name']}: not label_values(METRIC, LABEL)")
    res = query(f"count by ({m.group(2)}) ({sub(m.group(1))})")
    got = sorted(r["metric"][m.group(2)] for r in res)
    want = {"job": "promtest", "rank": "5"}.get(m.group(2))
    if not got or (want and got != [want]):
        sys.exit(f"FAIL: dashboard variable {var['name']} lists {got}")
    print(f"ok: dashboard variable {var['name']}: {got}")
PY
echo "Prometheus $("$prometheus" --version 2>&1 | head -1 | awk '{print $3}') scraped the agent; PromQL returned its values"
