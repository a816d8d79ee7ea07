#!/usr/bin/env bash
# The Kubernetes manifests in scripts/k8s validate against the API schema (kubernetes-validate from
# PyPI, strict: an unknown or misspelt field fails), each requests GPUs, mounts the scratch volume and
# writes the Prometheus textfile; a misspelt copy must fail, so a validator that passes anything is caught.
# kubectl cannot do this offline: even `--dry-run=client --validate=false` asks a server for the API list.
# Usage: validate_manifests.sh REPO_DIR VENV_DIR   (the validator is installed into VENV_DIR once)
# Exit 77 (skip) when the validator cannot be installed here; with NODEAUDIT_EXPECT_K8S_VALIDATOR=1
# (CI on a machine that has it) that is a failure.
set -euo pipefail
skip() {
  if [[ ${NODEAUDIT_EXPECT_K8S_VALIDATOR:-} == 1 ]]; then echo "FAIL: NODEAUDIT_EXPECT_K8S_VALIDATOR=1, yet: $*"; exit 1; fi
  echo "SKIP: $*"
  exit 77
}
repo=$1 venv=$2
manifests=("$repo"/scripts/k8s/*.yaml)
validator_version=1.37.0

validator=$(command -v kubernetes-validate || true)
if [[ -z "$validator" ]]; then
  validator="$venv/bin/kubernetes-validate"
  if [[ ! -x "$validator" ]]; then
    python3 -m venv "$venv" >/dev/null 2>&1 || skip "python3 -m venv failed (apt-get install python3-venv)"
    "$venv/bin/pip" install -q "kubernetes-validate==$validator_version" >"$venv.log" 2>&1 ||
      { rm -rf "$venv"; skip "cannot install kubernetes-validate from PyPI: $(tail -1 "$venv.log" 2>/dev/null)"; }
  fi
fi

"$validator" --strict "${manifests[@]}"

for m in "${manifests[@]}"; do
  for needed in 'nvidia.com/gpu: 8' 'mountPath: /data' '--data-dir' 'nodeaudit.prom' 'IPC_LOCK' 'hostIPC: true' 'type: Unconfined'; do
    grep -q -- "$needed" "$m" || { echo "FAIL: $m lacks '$needed'"; exit 1; }
  done
done

broken=$(mktemp --suffix=.yaml)
trap 'rm -f "$broken"' EXIT
sed 's/restartPolicy:/restartPolcy:/' "$repo/scripts/k8s/job-one-node.yaml" >"$broken"
if "$validator" --strict --quiet "$broken" >/dev/null 2>&1; then
  echo "FAIL: a manifest with a misspelt field (restartPolcy) passed validation"
  exit 1
fi
echo "all ${#manifests[@]} manifests valid; a misspelt field is caught"
