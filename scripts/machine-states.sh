#!/bin/bash
# `npm run images` and `npm run k8s:e2e`'s start-up as a newcomer's machine runs them, not as the
# machine that ran everything before happens to be (`npm run test:machine-states`, in CI):
#
#   - a fresh clone of the commit: no .tools/, no node_modules/, nothing built;
#   - another pnpm first on PATH: a stand-in that says it is 10.99.0 and fails when anything runs
#     it, so a script that takes the pnpm on PATH instead of the project's pinned one fails here
#     (and one that finds no pnpm on PATH would have failed the same way);
#   - no /var/run/netns: the cluster is brought up (and down, and the host checked) inside a mount
#     namespace of its own whose /run is this machine's without netns/, as on a machine where
#     nothing has made a named network namespace yet.
#
#   scripts/machine-states.sh [--ref REV] [--skip images|k8s]
#
# Needs root, the images `npm run images` built (podman) and the binaries scripts/k8s/build.sh
# cached. Logs: .dev/machine-states/.
set -Eeuo pipefail
# A command that stops the script says which, where and with what status: never a silent exit.
trap 'status=$?; [[ $- == *e* ]] && echo "$0: line $LINENO: \`$BASH_COMMAND\` exited $status" >&2' ERR

root=$(cd "$(dirname "$0")/.." && pwd -P)
ref=HEAD
skip=
while [ $# -gt 0 ]; do
  case "$1" in
    --ref) ref=$2; shift 2 ;;
    --skip) skip=$2; shift 2 ;;
    *) echo "usage: $0 [--ref REV] [--skip images|k8s]" >&2; exit 2 ;;
  esac
done
say() { echo "[machine-states] $*" >&2; }
work=$root/.dev/machine-states
clone=$work/clone
rm -rf "$work" && mkdir -p "$work/foreign-bin"

# A pnpm that is not the project's, first on PATH.
cat >"$work/foreign-bin/pnpm" <<'EOF'
#!/bin/sh
case "${1:-}" in --version | -v) echo 10.99.0; exit 0 ;; esac
echo "[machine-states] the pnpm on PATH was run (pnpm $*): a script took it instead of the project's pinned one" >&2
exit 97
EOF
chmod +x "$work/foreign-bin/pnpm"
foreign_path=$work/foreign-bin:$PATH

commit=$(git -C "$root" rev-parse --verify "$ref^{commit}")
say "a fresh clone of ${commit:0:12} in ${clone#"$root"/}"
git clone --quiet --no-hardlinks --no-checkout "$root" "$clone"
git -C "$clone" checkout --quiet --detach "$commit"
# Nothing this machine's runs have set may leak in (a run marks itself prepared or pinned).
unset RUN_PREPARED RUN_PINNED_NODE NODE npm_node_execpath

failed=0
if [[ ",$skip," != *,images,* ]]; then
  # The run step (each image started read-only against the project's own servers, which the
  # clone must install and build first) on the images this machine has: building them again
  # from a fresh clone proves nothing more and takes minutes.
  say "npm run images -- run (another pnpm first on PATH; log: ${work#"$root"/}/images.log)"
  started=$SECONDS
  if (cd "$clone" && PATH=$foreign_path npm run images -- run) >"$work/images.log" 2>&1; then
    say "  images: ok in $((SECONDS - started)) s"
  else
    failed=1
    tail -n 40 "$work/images.log" >&2
    say "  images: FAILED after $((SECONDS - started)) s"
  fi
fi

if [[ ",$skip," != *,k8s,* ]]; then
  say "scripts/k8s/cluster.sh up, down, check with no /var/run/netns (log: ${work#"$root"/}/k8s.log)"
  started=$SECONDS
  # In a mount namespace of its own: /run is this machine's, entry by entry, but for netns/.
  # Whatever the cluster mounts there goes with the namespace; `down` and `check` run inside it.
  if PATH=$foreign_path unshare --mount --propagation private -- bash -Eeuo pipefail -c '
      held=$(mktemp -d)
      mount --rbind /run "$held"
      mount -t tmpfs -o mode=0755 tmpfs /run
      for entry in $(ls -A "$held"); do
        # (mount itself may have made one already: /run/mount, its table)
        [ "$entry" = netns ] && continue
        [ -e "/run/$entry" ] || [ -L "/run/$entry" ] && continue
        if [ -L "$held/$entry" ]; then
          cp -P "$held/$entry" /run/
        elif [ -d "$held/$entry" ]; then
          mkdir "/run/$entry"
          mount --rbind "$held/$entry" "/run/$entry"
        else
          touch "/run/$entry"
          mount --bind "$held/$entry" "/run/$entry"
        fi
      done
      [ ! -e /var/run/netns ] || { echo "/var/run/netns is still there" >&2; exit 1; }
      cd "$1"
      status=0
      scripts/k8s/cluster.sh up || status=$?
      scripts/k8s/cluster.sh down || status=$?
      scripts/k8s/cluster.sh check || status=$?
      exit $status
    ' machine-states "$clone" >"$work/k8s.log" 2>&1; then
    say "  k8s start-up: ok in $((SECONDS - started)) s"
  else
    failed=1
    tail -n 40 "$work/k8s.log" >&2
    say "  k8s start-up: FAILED after $((SECONDS - started)) s"
  fi
fi

if [ "$failed" = 0 ]; then rm -rf "$clone"; say "every machine state passed"; else say "a machine state failed (the clone stays in ${clone#"$root"/})"; fi
exit "$failed"
