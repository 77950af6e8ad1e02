#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Prints the two Secrets units.yaml reads, for UNITS units:
#   openenvd-tokens     one orchestrator token per unit, key openenvd-<i>
#                       (32 random bytes, URL-safe base64); each pod mounts
#                       only its own key
#   openenvd-model-key  the real model key, read from KEY_FILE
#
#   deploy/kubernetes/make-secrets.sh UNITS KEY_FILE | kubectl apply -f -
#
# The trainer reads its tokens back from openenvd-tokens. Nothing is written
# to disk; the output holds the secrets, so pipe it, don't save it.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 UNITS KEY_FILE" >&2; exit 2; }
units=$1
key_file=$2
[[ "$units" =~ ^[1-9][0-9]{0,3}$ ]] || { echo "$0: UNITS must be 1..9999" >&2; exit 2; }
[ -r "$key_file" ] || { echo "$0: cannot read $key_file" >&2; exit 2; }

b64() { base64 -w0; }

cat <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: openenvd-tokens
  namespace: openenvd
  labels:
    app.kubernetes.io/part-of: openenvd
type: Opaque
data:
YAML
for ((i = 0; i < units; i++)); do
        token=$(head -c 32 /dev/urandom | base64 -w0 | tr '+/' '-_' | tr -d '=')
        printf '  openenvd-%d: %s\n' "$i" "$(printf '%s' "$token" | b64)"
done
cat <<YAML
---
apiVersion: v1
kind: Secret
metadata:
  name: openenvd-model-key
  namespace: openenvd
  labels:
    app.kubernetes.io/part-of: openenvd
type: Opaque
data:
  key: $(b64 <"$key_file")
YAML
