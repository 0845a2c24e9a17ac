#!/bin/bash
# Builds the single-node cluster's binaries once into a cache folder outside the clone, keyed by
# version: $MKT_K8S_CACHE/v<version>/bin (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kube-proxy, kubectl, coredns) and pause-bin. Kubernetes comes from
# the Go module proxy (its zip has no staging/ tree, so every staging replace points at the
# published module), etcd/containerd/runc/CNI plugins from Debian. ~12-15 min on 2 cores, once;
# a complete cache (bin/.complete) is reused and this script returns at once. The NetworkPolicy
# agent, kube-router (its firewall alone: scripts/k8s/cluster.sh), has a cache of its own keyed by
# its version, $MKT_K8S_CACHE/kube-router/v<version>/bin (`go install` from the Go module proxy,
# ~3 min of CPU, 12 min on a loaded machine), and needs Debian's ipset.
set -Eeuo pipefail
# A command that stops the script says which, where and with what status: never a silent exit.
trap 'status=$?; [[ $- == *e* ]] && echo "$0: line $LINENO: \`$BASH_COMMAND\` exited $status" >&2' ERR
V=${MKT_K8S_VERSION:-1.34.4}
COREDNS=${MKT_COREDNS_VERSION:-1.12.4}
C=${MKT_K8S_CACHE:-$HOME/.cache/mkt-k8s}/v$V
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
KUBE_ROUTER_VERSION=${MKT_KUBE_ROUTER_VERSION:-2.1.0}
KR=${MKT_K8S_CACHE:-$HOME/.cache/mkt-k8s}/kube-router/v$KUBE_ROUTER_VERSION
built() { [ -f "$C/bin/.complete" ] && [ -f "$KR/bin/.complete" ] && command -v ipset >/dev/null; }
if built; then echo "k8s v$V, kube-router v$KUBE_ROUTER_VERSION: cached in $C/bin, $KR/bin"; exit 0; fi
mkdir -p "$C"
exec 9>"$C/.build.lock"
flock 9
if built; then echo "k8s v$V, kube-router v$KUBE_ROUTER_VERSION: cached (built by another run)"; exit 0; fi
start=$(date +%s)
pkgs="containerd etcd-server containernetworking-plugins runc iptables ipset conntrack gcc libc6-dev openssl"
missing=$(for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
  echo "installing from Debian: $missing"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null ||
    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null; }
fi
kube_router() {
  [ -f "$KR/bin/.complete" ] && return 0
  rm -rf "$KR/bin.tmp" && mkdir -p "$KR/bin.tmp"
  GOBIN="$KR/bin.tmp" CGO_ENABLED=0 nice -n 19 "$GO" install \
    -ldflags "-s -w -X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=v$KUBE_ROUTER_VERSION" \
    "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@v$KUBE_ROUTER_VERSION"
  touch "$KR/bin.tmp/.complete" && rm -rf "$KR/bin" && mv "$KR/bin.tmp" "$KR/bin"
  echo "kube-router v$KUBE_ROUTER_VERSION built into $KR/bin"
}
if [ -f "$C/bin/.complete" ]; then kube_router; exit 0; fi
GOFLAGS=-mod=mod "$GO" mod download "k8s.io/kubernetes@v$V"
src=$("$GO" env GOMODCACHE)/k8s.io/kubernetes@v$V
rm -rf "$C/src" "$C/bin.tmp" && cp -r "$src" "$C/src" && chmod -R u+w "$C/src" && cd "$C/src"
rm -rf vendor go.work go.work.sum
sed -i -E "s#(k8s.io/[a-z0-9-]+) => ./staging/src/k8s.io/[a-z0-9-]+#\1 => \1 v0.${V#1.}#" go.mod
CMDS="./cmd/kube-apiserver ./cmd/kubelet ./cmd/kube-controller-manager ./cmd/kube-scheduler ./cmd/kube-proxy ./cmd/kubectl"
# The module's go.sum lists none of the published staging modules: `go get` of the commands
# records what they need (`go mod download` alone leaves go.sum as it is).
GOFLAGS=-mod=mod "$GO" get $CMDS
mkdir -p "$C/bin.tmp"
CGO_ENABLED=0 nice -n 19 "$GO" build -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=v$V" \
  -o "$C/bin.tmp/" $CMDS
GOBIN="$C/bin.tmp" CGO_ENABLED=0 nice -n 19 "$GO" install "github.com/coredns/coredns@v$COREDNS"
# pause: the module's own pause.c, static, for an image FROM scratch
gcc -static -O2 -o "$C/bin.tmp/pause" build/pause/linux/pause.c
cd "$C" && rm -rf src
touch bin.tmp/.complete && rm -rf bin && mv bin.tmp bin
kube_router
echo "k8s v$V built into $C/bin in $(( $(date +%s) - start )) s: $(ls bin | tr '\n' ' ')"
