#!/usr/bin/env bash
# Packs the last commit into .snapshot/head.tar (git-ignored) for `gpu_run.sh OUT --committed` on a
# machine that receives the working tree without git history: copy .snapshot/ along with the tree.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .snapshot
rev=$(git rev-parse --short=12 HEAD)
git archive --format=tar HEAD -o .snapshot/head.tar
# Record which commit it is, inside the archive's tree.
tmp=$(mktemp -d)
echo "$rev" > "$tmp/.snapshot-revision"
tar -rf .snapshot/head.tar -C "$tmp" .snapshot-revision
rm -rf "$tmp"
echo "snapshot of $rev: .snapshot/head.tar ($(du -h .snapshot/head.tar | cut -f1))"
