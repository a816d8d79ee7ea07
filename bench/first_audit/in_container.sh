#!/bin/bash
# Runs inside a fresh Debian 12 minbase container (first_audit_bench.sh): from nothing to the audit's
# verdict, each line timestamped.
set -o pipefail
stamp() { echo "@@ $1 $(date +%s.%N)"; }
export DEBIAN_FRONTEND=noninteractive
stamp start
apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends git make ca-certificates >/dev/null || exit 1
stamp prereq
git clone -q /src /root/nodeaudit || exit 1
stamp cloned
cd /root/nodeaudit
make audit JOBS=2 2>&1 | while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done
rc=$?
stamp done
echo "rc=$rc"
