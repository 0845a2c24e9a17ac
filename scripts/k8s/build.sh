#!/bin/bash
# Builds the single-node cluster's binaries once into a cache folder outside the clone, keyed by
# version: $MKT_K8S_CACHE/v<version>/bin (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kube-proxy, kubectl, coredns) and pause-bin. Kubernetes comes from
# the Go module proxy (its zip has no staging/ tree, so every staging replace points at the
# published module), etcd/containerd/runc/CNI plugins from Debian. ~12-15 min on 2 cores, once;
# a complete cache (bin/.complete) is reused and this script returns at once. The NetworkPolicy
# agent, kube-router (its firewall alone: scripts/k8s/cluster.sh), has a cache of its own keyed by
# its version, $MKT_K8S_CACHE/kube-router/v<version>/bin (`go install` from the Go module proxy,
# ~3 min of CPU, 12 min on a loaded machine), and needs Debian's ipset. The Gateway API
# implementation, Traefik (a host daemon of the cluster too), has its own cache keyed by its version,
# $MKT_K8S_CACHE/traefik/v<version>/: bin/traefik, built from the Go module proxy's
# github.com/traefik/traefik/v3 (see traefik() below for what the proxy lacks and how the build
# does without it), and crds/: the standard channel CRDs of the Gateway API version it is built
# against (sigs.k8s.io/gateway-api, the version its go.mod names).
set -Eeuo pipefail
# A command that stops the script says which, where and with what status: never a silent exit.
trap 'status=$?; [[ $- == *e* ]] && echo "$0: line $LINENO: \`$BASH_COMMAND\` exited $status" >&2' ERR
V=${MKT_K8S_VERSION:-1.34.4}
COREDNS=${MKT_COREDNS_VERSION:-1.12.4}
C=${MKT_K8S_CACHE:-$HOME/.cache/mkt-k8s}/v$V
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
KUBE_ROUTER_VERSION=${MKT_KUBE_ROUTER_VERSION:-2.1.0}
KR=${MKT_K8S_CACHE:-$HOME/.cache/mkt-k8s}/kube-router/v$KUBE_ROUTER_VERSION
TRAEFIK_VERSION=${MKT_TRAEFIK_VERSION:-3.7.13}
TR=${MKT_K8S_CACHE:-$HOME/.cache/mkt-k8s}/traefik/v$TRAEFIK_VERSION
built() { [ -f "$C/bin/.complete" ] && [ -f "$KR/bin/.complete" ] && [ -f "$TR/.complete" ] && command -v ipset >/dev/null; }
if built; then echo "k8s v$V, kube-router v$KUBE_ROUTER_VERSION, traefik v$TRAEFIK_VERSION: cached in $C/bin, $KR/bin, $TR"; exit 0; fi
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
# Traefik v3 from the Go module proxy. Its module cannot be built as published (`go install
# …@version` refuses a go.mod with replace directives), so it is built in a copy of its source,
# where three things the proxy does not serve are made up for, none of them on the path the CI
# cluster uses (the kubernetesgateway provider, HTTP routing):
#   - github.com/traefik/traefik/dynamic/ext, a nested module of the repository (excluded from the
#     module's zip; replaced by ./pkg/config/dynamic/ext): its open-source content, the empty
#     extension structs HTTP and Router, is written in its place;
#   - github.com/containous/go-http-auth (Traefik's fork for its basic/digest auth middlewares):
#     the upstream github.com/abbot/go-http-auth it forks instead, which lacks the fork's
#     RequireAuthStale (a digest answer to a stale nonce is then a plain new challenge);
#   - the SDKs of 13 of lego's ~220 ACME DNS-challenge providers: lego v5 is used from a copy
#     without those providers (an ACME DNS challenge through them is then refused by name).
GWAPI_CRDS="backendtlspolicies gatewayclasses gateways grpcroutes httproutes listenersets referencegrants tlsroutes"
LEGO_WITHOUT="alidns aliesa azion dnsimple edgedns edgeone huaweicloud oraclecloud regfish sakuracloud tencentcloud ucloud yandexcloud"
traefik() {
  [ -f "$TR/.complete" ] && return 0
  local started=$SECONDS src lego gwapi p
  rm -rf "$TR/src" "$TR/lego" "$TR/bin" "$TR/crds" && mkdir -p "$TR/bin" "$TR/crds"
  src=$(GOFLAGS=-mod=mod "$GO" mod download -json "github.com/traefik/traefik/v3@v$TRAEFIK_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  cp -r "$src" "$TR/src" && chmod -R u+w "$TR/src"
  mkdir -p "$TR/src/pkg/config/dynamic/ext"
  printf 'module github.com/traefik/traefik/dynamic/ext\n\ngo 1.24\n' >"$TR/src/pkg/config/dynamic/ext/go.mod"
  printf '%s\n' '// Package ext holds the extension points of the dynamic configuration: empty in the open-source build.' \
    'package ext' '' '// HTTP extends dynamic.HTTP.' 'type HTTP struct{}' '' '// Router extends dynamic.Router.' 'type Router struct{}' \
    >"$TR/src/pkg/config/dynamic/ext/ext.go"
  lego=$(cd "$TR/src" && "$GO" list -m -f '{{.Version}}' github.com/go-acme/lego/v5)
  cp -r "$(GOFLAGS=-mod=mod "$GO" mod download -json "github.com/go-acme/lego/v5@$lego" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')" "$TR/lego"
  chmod -R u+w "$TR/lego"
  for p in $LEGO_WITHOUT; do
    rm -rf "$TR/lego/providers/dns/$p"
    sed -i -E "\#\"github.com/go-acme/lego/v5/providers/dns/$p\"#d; /^\tcase \"$p\"[,:]/,/return $p\./d" "$TR/lego/providers/dns/zz_gen_dns_providers.go"
  done
  sed -i 's/d\.auth\.RequireAuthStale(rw, req)/d.auth.RequireAuth(rw, req)/' "$TR/src/pkg/middlewares/auth/digest_auth.go"
  (
    cd "$TR/src"
    "$GO" mod edit -dropreplace=github.com/abbot/go-http-auth -require=github.com/abbot/go-http-auth@v0.4.1-0.20220112235402-e1cee1c72f2f \
      -replace=github.com/go-acme/lego/v5=../lego
    CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 19 "$GO" build -trimpath \
      -ldflags "-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=v$TRAEFIK_VERSION" -o "$TR/bin/traefik" ./cmd/traefik
  )
  gwapi=$(cd "$TR/src" && "$GO" list -m -f '{{.Version}}' sigs.k8s.io/gateway-api)
  src=$(GOFLAGS=-mod=mod "$GO" mod download -json "sigs.k8s.io/gateway-api@$gwapi" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  for p in $GWAPI_CRDS; do cp "$src/config/crd/standard/gateway.networking.k8s.io_$p.yaml" "$TR/crds/"; done
  echo "$gwapi" >"$TR/crds/VERSION"
  rm -rf "$TR/src" "$TR/lego"
  touch "$TR/.complete"
  echo "traefik v$TRAEFIK_VERSION built into $TR/bin in $((SECONDS - started)) s (Gateway API $gwapi CRDs in $TR/crds)"
}
if [ -f "$C/bin/.complete" ]; then kube_router; traefik; exit 0; fi
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
traefik
echo "k8s v$V built into $C/bin in $(( $(date +%s) - start )) s: $(ls bin | tr '\n' ' ')"
