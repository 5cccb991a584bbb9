#!/usr/bin/env bash
# The alerting rules shipped beside the Grafana dashboard (docs/prometheus-alerts.yml):
# `promtool check rules` (they load), then `promtool test rules` with
# made-up series whose answer is known (prometheus_alerts_test.yml: each
# alert fires for the rank it should, when it should, and for no other).
# promtool comes with Debian's prometheus package; not skipped without it.
#   prometheus_alerts_test.sh RULES TESTS
set -euo pipefail
rules="$1" tests="$2"
promtool="${PROMTOOL:-$(command -v promtool || true)}"
if [[ -z "$promtool" ]]; then
  echo "FAIL: no promtool: install Debian's prometheus package (scripts/install-deps.sh does)" >&2
  exit 1
fi
"$promtool" check rules "$rules"
# rule_files in the tests are relative to the tests file.
"$promtool" test rules "$tests"
