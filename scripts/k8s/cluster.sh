#!/bin/bash
# A single-node Kubernetes on this machine, from the binaries scripts/k8s/build.sh cached:
#
#   scripts/k8s/cluster.sh up      etcd, containerd, the control plane, kubelet and kube-proxy,
#                                  kube-router (NetworkPolicies), CoreDNS, Traefik (the Gateway API);
#                                  waits for the node Ready, the policy agent healthy, CoreDNS
#                                  available and the GatewayClass accepted
#   scripts/k8s/cluster.sh import  IMAGE…   podman images into the node's containerd
#   scripts/k8s/cluster.sh down    stops all of it and undoes what it changed on the host
#   eval "$(scripts/k8s/cluster.sh env)"   kubectl for it in this shell
#   scripts/k8s/cluster.sh check   compares the host with the snapshot `up` took (processes,
#                                  links, iptables chains, ipsets, mounts, network namespaces, sysctls);
#                                  exit 1 when anything is left
#
# Needs root (kubelet, containerd, iptables). State lives in $MKT_K8S_CACHE/v<version>/cluster
# (removed by `down`), the daemons' logs in $MKT_K8S_LOGS (default: the state folder's logs/, gone
# with it; `npm run k8s:e2e` keeps them in .dev/k8s/logs/). The machine's quirks this handles (see k8s/README.md): containerd with
# restrict_oom_score_adj (no CAP_SYS_RESOURCE), runc and cgroupfs, kubelet failCgroupV1: false
# (hybrid cgroups), kubelet bound to the node's address (logs/exec), the marketplace's images
# pulled by digest from the project's registry on 127.0.0.1:$MKT_REGISTRY_PORT (trusted over plain
# HTTP, certs.d/<registry>/hosts.toml; the pause and CoreDNS images are imported), kubelet's
# sysctls given back on `down`. NetworkPolicies are enforced by kube-router's firewall alone
# (--run-firewall; its router and service proxy off: the bridge CNI and kube-proxy do those), built
# by scripts/k8s/build.sh into $MKT_K8S_CACHE/kube-router/v<version>/bin; MKT_K8S_POLICY_AGENT=none
# leaves it out (the policies are then stored and ignored: `npm run k8s:e2e` fails on it). The
# Gateway API implementation is Traefik, a host daemon too (its kubernetesgateway provider, with a
# kubeconfig of its own; entryPoints on the node's loopback: $EDGE_HTTP_PORT, $EDGE_HTTPS_PORT, the
# ping on $EDGE_PING_PORT), built by scripts/k8s/build.sh into $MKT_K8S_CACHE/traefik/v<version>
# with the standard channel CRDs of the Gateway API version it is built against, which `up`
# installs, and the GatewayClass `traefik` (controllerName traefik.io/gateway-controller);
# MKT_K8S_GATEWAY=none leaves it out (`npm run k8s:e2e` then reaches the gateway Service directly).
set -Eeuo pipefail
# A command that stops the script says which, where and with what status: never a silent exit.
trap 'status=$?; [[ $- == *e* ]] && echo "$0: line $LINENO: \`$BASH_COMMAND\` exited $status" >&2' ERR
V=${MKT_K8S_VERSION:-1.34.4}
C=${MKT_K8S_CACHE:-$HOME/.cache/mkt-k8s}/v$V
B=$C/bin
KUBE_ROUTER_VERSION=${MKT_KUBE_ROUTER_VERSION:-2.1.0}
KR=${MKT_K8S_CACHE:-$HOME/.cache/mkt-k8s}/kube-router/v$KUBE_ROUTER_VERSION/bin
POLICY_AGENT=${MKT_K8S_POLICY_AGENT:-kube-router}
KR_HEALTH_PORT=20244
TRAEFIK_VERSION=${MKT_TRAEFIK_VERSION:-3.7.13}
TR=${MKT_K8S_CACHE:-$HOME/.cache/mkt-k8s}/traefik/v$TRAEFIK_VERSION
GATEWAY_IMPL=${MKT_K8S_GATEWAY:-traefik}
# Traefik's entryPoints: a Gateway listener is served by the entryPoint of its port, so the ci
# overlay's listeners name these ports (k8s/overlays/ci/kustomization.yaml; deploy/test holds them equal).
EDGE_HTTP_PORT=18080
EDGE_HTTPS_PORT=18443
EDGE_PING_PORT=18082
GATEWAY_CLASS=traefik
K=$C/cluster
BEFORE=$C/host-before
LOGS=${MKT_K8S_LOGS:-$K/logs}
COREDNS_VERSION=${MKT_COREDNS_VERSION:-1.12.4}
NODE=mkt-k8s-node
BRIDGE=mktk8s0
CNI_NET=mkt-k8s
POD_CIDR=10.244.0.0/24
SERVICE_CIDR=10.96.0.0/16
DNS_IP=10.96.0.10
API_PORT=16443
ETCD_CLIENT=127.0.0.1:23790
ETCD_PEER=127.0.0.1:23800
PAUSE_IMAGE=localhost/mkt-k8s/pause:3.10
COREDNS_IMAGE=localhost/mkt-k8s/coredns:$COREDNS_VERSION
# The project's registry (scripts/lib/supply-chain.mjs) on this machine, plain HTTP: the node
# pulls the marketplace's images from it by digest.
REGISTRY=127.0.0.1:${MKT_REGISTRY_PORT:-5055}
SYSCTLS="vm.overcommit_memory kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes
 net.ipv4.ip_forward net.ipv4.conf.all.route_localnet net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
 net.netfilter.nf_conntrack_max net.netfilter.nf_conntrack_tcp_timeout_established net.netfilter.nf_conntrack_tcp_timeout_close_wait"
DAEMONS="traefik kube-router kube-proxy kubelet kube-scheduler kube-controller-manager kube-apiserver etcd containerd"
export KUBECONFIG=$K/pki/admin.kubeconfig
export PATH=$B:$PATH

say() { echo "[k8s] $*" >&2; }
die() { say "$*"; exit 1; }
ctr_() { ctr -a "$K/containerd/containerd.sock" -n k8s.io "$@"; }
# A daemon of ours is alive: its pid file names a live process whose command line names $K (a pid
# file left by a crash or a reboot may name an unrelated process since: never signalled).
alive() {
  [ -f "$K/$1.pid" ] || return 1
  local pid; pid=$(cat "$K/$1.pid")
  kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$K"
}
start() { # name command…: in a session of its own, output in the logs folder
  local name=$1; shift
  setsid "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
  echo $! >"$K/$name.pid"
}
wait_for() { # what seconds command…
  local what=$1 seconds=$2 i; shift 2
  for ((i = 0; i < seconds * 2; i++)); do "$@" >/dev/null 2>&1 && { say "$what after $((i / 2)) s"; return 0; }; sleep 0.5; done
  die "$what: not within $seconds s (logs: $LOGS)"
}

# ---- what the host looks like before: `down` restores it, `clean?` compares with it
# Podman's (other work on this machine: netavark chains, podman bridges and their veths, container
# mounts, netns-* namespaces) is left out of the comparison; CRI's pod namespaces are cni-*.
chains() { { for t in filter nat mangle raw; do iptables-save -t "$t" 2>/dev/null | sed -n "s/^:\([^ ]*\) .*/$t \1/p"; done
  for t in filter nat mangle raw; do ip6tables-save -t "$t" 2>/dev/null | sed -n "s/^:\([^ ]*\) .*/ip6 $t \1/p"; done; } | grep -v NETAVARK || true; }
links() { ip -o link show | { grep -vE 'master (podman|cni-podman)|: podman' || true; } | awk -F': ' '{print $2}' | sed 's/@.*//' | sort; }
mounts() { awk '{print $2}' /proc/self/mounts | { grep -vE '^/(var/lib|run|var/run)/containers/|/netns/netns-' || true; } | sort; }
# /var/run/netns exists only once something made a named network namespace (ip netns, podman, a CNI).
netns() { [ -d /var/run/netns ] || return 0; ls /var/run/netns | { grep '^cni-' || true; } | sort; }
# kube-router's ipsets (pods, namespaces and policies' members); none without the ipset tool.
ipsets() { command -v ipset >/dev/null || return 0; ipset list -n 2>/dev/null | sort; }
sysctls() { for s in $SYSCTLS; do echo "$s=$(sysctl -n "$s" 2>/dev/null || echo absent)"; done; }
processes() { # our binaries and containerd's shims for our socket, by /proc
  local pid exe
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
    case "$exe" in
      "$B"/* | "$KR"/* | "$TR"/bin/*) echo "$pid $exe" ;;
      */containerd-shim*) tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$K/containerd" && echo "$pid $exe" ;;
      /usr/bin/containerd | /usr/bin/etcd) tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$K" && echo "$pid $exe" ;;
    esac
  done 2>/dev/null || true
}
cgroups() { ls -d /sys/fs/cgroup/*/kubepods* /sys/fs/cgroup/kubepods* 2>/dev/null | sort || true; }
snapshot() { # folder
  mkdir -p "$1"
  chains | sort >"$1/chains"; ipsets >"$1/ipsets"; links >"$1/links"; mounts >"$1/mounts"; netns >"$1/netns"; sysctls >"$1/sysctls"
  cgroups >"$1/cgroups"
}

# ---- certificates and kubeconfigs (30 days; made again on every `up`)
pki() {
  local P=$K/pki NODE_IP=$1
  (
    cd "$P"
    openssl genrsa -out ca.key 2048 2>/dev/null
    openssl req -x509 -new -nodes -key ca.key -subj "/CN=mkt-k8s-ca" -days 30 -out ca.crt 2>/dev/null
    printf 'subjectAltName=DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:10.96.0.1,IP:%s\nextendedKeyUsage=serverAuth\n' "$NODE_IP" >server.ext
    printf 'subjectAltName=DNS:%s,IP:%s\nextendedKeyUsage=serverAuth\n' "$NODE" "$NODE_IP" >kubelet-server.ext
    echo "extendedKeyUsage=clientAuth" >client.ext
    cert() { # name subject extensions
      openssl genrsa -out "$1.key" 2048 2>/dev/null
      openssl req -new -key "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -out "$1.crt" -extfile "$3" 2>/dev/null
    }
    cert apiserver "/CN=kube-apiserver" server.ext
    cert kubelet-server "/CN=$NODE" kubelet-server.ext
    cert admin "/O=system:masters/CN=admin" client.ext
    cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" client.ext
    cert controller-manager "/CN=system:kube-controller-manager" client.ext
    cert scheduler "/CN=system:kube-scheduler" client.ext
    cert kubelet "/O=system:nodes/CN=system:node:$NODE" client.ext
    cert kube-proxy "/CN=system:kube-proxy" client.ext
    cert kube-router "/CN=system:kube-router" client.ext
    cert traefik "/CN=system:traefik" client.ext
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    for n in admin controller-manager scheduler kubelet kube-proxy kube-router traefik; do
      cat >"$n.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: mkt-k8s
  cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority-data: $(base64 -w0 ca.crt)}
users:
- name: $n
  user: {client-certificate-data: $(base64 -w0 "$n.crt"), client-key-data: $(base64 -w0 "$n.key")}
contexts:
- name: mkt-k8s
  context: {cluster: mkt-k8s, user: $n}
current-context: mkt-k8s
EOF
    done
    chmod 600 ./*.key ./*.kubeconfig
  )
}

registry_hosts() { # the local registry trusted over plain HTTP, for pulls only
  mkdir -p "$K/containerd/certs.d/$REGISTRY"
  cat >"$K/containerd/certs.d/$REGISTRY/hosts.toml" <<EOF
server = "http://$REGISTRY"
[host."http://$REGISTRY"]
  capabilities = ["pull", "resolve"]
EOF
}

configs() {
  local NODE_IP=$1
  cat >"$K/containerd/config.toml" <<EOF
version = 2
root = "$K/containerd/root"
state = "$K/containerd/state"
[grpc]
  address = "$K/containerd/containerd.sock"
[ttrpc]
  address = "$K/containerd/containerd.sock.ttrpc"
[debug]
  address = "$K/containerd/debug.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # root here lacks CAP_SYS_RESOURCE: no oom_score_adj below the parent's
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "/usr/sbin/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$K/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$K/containerd/certs.d"
EOF
  registry_hosts
  # bridge + host-local: no NetworkPolicy enforcement (k8s/README.md); no portmap (no hostPorts).
  cat >"$K/cni/net.d/10-$CNI_NET.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "$CNI_NET",
  "plugins": [
    {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "loopback"}
  ]
}
EOF
  cat >"$K/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$K/containerd/containerd.sock
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $K/pki/ca.crt}
authorization: {mode: AlwaysAllow}
tlsCertFile: $K/pki/kubelet-server.crt
tlsPrivateKeyFile: $K/pki/kubelet-server.key
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
staticPodPath: ""
failSwapOn: false
failCgroupV1: false
oomScoreAdj: 0
resolvConf: /etc/resolv.conf
evictionHard: {}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
imageMinimumGCAge: 87600h
serializeImagePulls: false
clusterDNS: ["$DNS_IP"]
clusterDomain: cluster.local
maxPods: 60
EOF
  cat >"$K/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $K/pki/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $POD_CIDR
# leave the host's conntrack settings alone
conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: 127.0.0.1:10256
EOF
}

# ---- the pause and CoreDNS images (FROM scratch, built once with podman, kept there)
node_images() {
  local ctx=$C/images
  if ! podman image exists "$PAUSE_IMAGE"; then
    rm -rf "$ctx/pause" && mkdir -p "$ctx/pause" && cp "$B/pause" "$ctx/pause/pause"
    printf 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n' >"$ctx/pause/Containerfile"
    podman build -q -t "$PAUSE_IMAGE" "$ctx/pause" >/dev/null
  fi
  if ! podman image exists "$COREDNS_IMAGE"; then
    rm -rf "$ctx/coredns" && mkdir -p "$ctx/coredns" && cp "$B/coredns" "$ctx/coredns/coredns"
    printf 'FROM scratch\nCOPY coredns /coredns\nENTRYPOINT ["/coredns"]\n' >"$ctx/coredns/Containerfile"
    podman build -q -t "$COREDNS_IMAGE" "$ctx/coredns" >/dev/null
  fi
  import "$PAUSE_IMAGE" "$COREDNS_IMAGE"
}

import() { # podman images → the node's containerd, one archive (shared layers once)
  [ $# -gt 0 ] || return 0
  podman save -m --format docker-archive "$@" | ctr_ images import - >/dev/null
}

coredns() {
  kubectl apply --server-side -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- {apiGroups: [""], resources: [endpoints, services, pods, namespaces], verbs: [list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    .:53 {
        errors
        health
        ready
        kubernetes cluster.local in-addr.arpa ip6.arpa {
          pods insecure
          fallthrough in-addr.arpa ip6.arpa
        }
        forward . /etc/resolv.conf
        cache 30
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      dnsPolicy: Default
      containers:
      - name: coredns
        image: $COREDNS_IMAGE
        imagePullPolicy: Never
        args: ["-conf", "/etc/coredns/Corefile"]
        volumeMounts: [{name: cfg, mountPath: /etc/coredns}]
        ports: [{containerPort: 53, protocol: UDP, name: dns}, {containerPort: 53, protocol: TCP, name: dns-tcp}]
        securityContext: {capabilities: {add: [NET_BIND_SERVICE]}}
        readinessProbe: {httpGet: {path: /ready, port: 8181}, periodSeconds: 2}
        resources: {requests: {cpu: 20m, memory: 32Mi}, limits: {memory: 128Mi}}
      volumes: [{name: cfg, configMap: {name: coredns}}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $DNS_IP
  selector: {k8s-app: kube-dns}
  ports: [{name: dns, port: 53, protocol: UDP}, {name: dns-tcp, port: 53, protocol: TCP}]
EOF
}

# ---- the NetworkPolicy agent: kube-router's firewall only, as a host daemon (like kube-proxy), with
# the read access it needs (pods, namespaces, policies; nodes, services, endpoints for its informers)
policy_agent() {
  [ "$POLICY_AGENT" = none ] && { say "MKT_K8S_POLICY_AGENT=none: no NetworkPolicy enforcement"; return 0; }
  kubectl apply --server-side -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:kube-router"}
rules:
- {apiGroups: [""], resources: [namespaces, pods, services, nodes, endpoints], verbs: [get, list, watch]}
- {apiGroups: [networking.k8s.io], resources: [networkpolicies], verbs: [get, list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [get, list, watch]}
- {apiGroups: [""], resources: [events], verbs: [create, patch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:kube-router"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:kube-router"}
subjects: [{kind: User, name: "system:kube-router", apiGroup: rbac.authorization.k8s.io}]
EOF
  start kube-router "$KR/kube-router" --kubeconfig="$K/pki/kube-router.kubeconfig" --hostname-override=$NODE \
    --run-firewall=true --run-router=false --run-service-proxy=false --enable-cni=false \
    --service-cluster-ip-range=$SERVICE_CIDR --health-port=$KR_HEALTH_PORT --metrics-port=0 --v=1
  wait_for "kube-router (NetworkPolicies) healthy" 90 curl -sf "http://127.0.0.1:$KR_HEALTH_PORT/healthz"
}

# ---- the Gateway API implementation: Traefik as a host daemon (like kube-router), its
# kubernetesgateway provider reading the Gateway API objects and the Services' EndpointSlices (it
# proxies to the pods' addresses, which the node reaches on the bridge) and writing their status
gateway_api() {
  [ "$GATEWAY_IMPL" = none ] && { say "MKT_K8S_GATEWAY=none: no Gateway API implementation"; return 0; }
  local crds f
  crds=$(for f in "$TR"/crds/*.yaml; do printf -- '-f %s ' "$f"; done)
  # The CRDs first: the provider waits for every kind it watches (BackendTLSPolicy and TLSRoute
  # included) before it serves anything.
  kubectl apply --server-side $crds >/dev/null
  kubectl wait --for=condition=Established --timeout=60s $crds >/dev/null
  kubectl apply --server-side -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:traefik"}
rules:
- {apiGroups: [""], resources: [namespaces, services, secrets, configmaps], verbs: [get, list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [get, list, watch]}
- {apiGroups: [gateway.networking.k8s.io], resources: [gatewayclasses, gateways, httproutes, grpcroutes, tlsroutes, referencegrants, backendtlspolicies], verbs: [get, list, watch]}
- {apiGroups: [gateway.networking.k8s.io], resources: [gatewayclasses/status, gateways/status, httproutes/status, grpcroutes/status, tlsroutes/status, backendtlspolicies/status], verbs: [get, update, patch]}
- {apiGroups: [""], resources: [events], verbs: [create, patch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:traefik"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:traefik"}
subjects: [{kind: User, name: "system:traefik", apiGroup: rbac.authorization.k8s.io}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: $GATEWAY_CLASS}
spec: {controllerName: traefik.io/gateway-controller}
EOF
  KUBECONFIG="$K/pki/traefik.kubeconfig" start traefik "$TR/bin/traefik" \
    --global.checkNewVersion=false --global.sendAnonymousUsage=false --log.level=INFO \
    --entryPoints.web.address=127.0.0.1:$EDGE_HTTP_PORT --entryPoints.websecure.address=127.0.0.1:$EDGE_HTTPS_PORT \
    --entryPoints.traefik.address=127.0.0.1:$EDGE_PING_PORT --ping=true --ping.entryPoint=traefik \
    --providers.kubernetesgateway=true --providers.kubernetesgateway.statusAddress.ip=127.0.0.1
  wait_for "Traefik (Gateway API) answers its ping" 60 curl -sf "http://127.0.0.1:$EDGE_PING_PORT/ping"
  wait_for "GatewayClass $GATEWAY_CLASS accepted by Traefik" 60 kubectl wait --for=condition=Accepted --timeout=2s "gatewayclass/$GATEWAY_CLASS"
}

up() {
  [ "$(id -u)" = 0 ] || die "needs root (kubelet, containerd, iptables)"
  [ -f "$B/.complete" ] || die "no binaries in $B: run scripts/k8s/build.sh first"
  case "$POLICY_AGENT" in
    none) ;;
    kube-router)
      [ -x "$KR/kube-router" ] || die "no kube-router in $KR: run scripts/k8s/build.sh first"
      command -v ipset >/dev/null || die "kube-router needs ipset (Debian package ipset): run scripts/k8s/build.sh first" ;;
    *) die "MKT_K8S_POLICY_AGENT=$POLICY_AGENT: kube-router or none" ;;
  esac
  case "$GATEWAY_IMPL" in
    none) ;;
    traefik) { [ -x "$TR/bin/traefik" ] && [ -f "$TR/.complete" ]; } || die "no Traefik in $TR: run scripts/k8s/build.sh first" ;;
    *) die "MKT_K8S_GATEWAY=$GATEWAY_IMPL: traefik or none" ;;
  esac
  for d in $DAEMONS; do alive "$d" && die "a cluster runs already ($d, state $K): scripts/k8s/cluster.sh down"; done
  # One such cluster per machine (its ports are fixed), whatever cache folder it came from.
  local port
  for port in $API_PORT ${ETCD_CLIENT##*:} 10250 $KR_HEALTH_PORT $EDGE_HTTP_PORT $EDGE_HTTPS_PORT $EDGE_PING_PORT; do
    ss -Hltn "sport = :$port" | grep -q . && die "port $port is in use: another cluster (or something else) runs on this machine"
  done
  local started=$SECONDS NODE_IP
  NODE_IP=${MKT_K8S_NODE_IP:-$(hostname -I | awk '{print $1}')}
  [ -n "$NODE_IP" ] || die "this machine has no IPv4 address besides loopback (hostname -I): set MKT_K8S_NODE_IP"
  if [ -d "$K" ]; then
    # A run that crashed or was killed: its leftovers go first, and its snapshot of the host stays
    # the one to compare with.
    say "the state of an earlier cluster is in $K: tearing it down first"
    down
  else
    rm -rf "$BEFORE" && snapshot "$BEFORE"
  fi
  mkdir -p "$K/pki" "$K/cni/net.d" "$K/containerd" "$LOGS"
  pki "$NODE_IP"
  configs "$NODE_IP"
  start containerd containerd --config "$K/containerd/config.toml"
  start etcd etcd --name mkt-k8s --data-dir "$K/etcd" --listen-client-urls "http://$ETCD_CLIENT" \
    --advertise-client-urls "http://$ETCD_CLIENT" --listen-peer-urls "http://$ETCD_PEER" \
    --initial-advertise-peer-urls "http://$ETCD_PEER" --initial-cluster "mkt-k8s=http://$ETCD_PEER"
  wait_for "containerd answers" 30 ctr_ version
  node_images
  local P=$K/pki
  start kube-apiserver kube-apiserver --advertise-address="$NODE_IP" --bind-address=0.0.0.0 --secure-port=$API_PORT \
    --etcd-servers="http://$ETCD_CLIENT" --service-cluster-ip-range=$SERVICE_CIDR --allow-privileged=true \
    --authorization-mode=Node,RBAC --client-ca-file="$P/ca.crt" --tls-cert-file="$P/apiserver.crt" \
    --tls-private-key-file="$P/apiserver.key" --kubelet-client-certificate="$P/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$P/apiserver-kubelet-client.key" --kubelet-certificate-authority="$P/ca.crt" \
    --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --kubelet-preferred-address-types=InternalIP,Hostname --profiling=false
  wait_for "kube-apiserver ready" 90 kubectl get --raw /readyz
  start kube-controller-manager kube-controller-manager --kubeconfig="$P/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$P/controller-manager.kubeconfig" --authorization-kubeconfig="$P/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --service-account-private-key-file="$P/sa.key" --root-ca-file="$P/ca.crt" \
    --cluster-signing-cert-file="$P/ca.crt" --cluster-signing-key-file="$P/ca.key" --use-service-account-credentials=true \
    --service-cluster-ip-range=$SERVICE_CIDR --leader-elect=false --profiling=false
  start kube-scheduler kube-scheduler --kubeconfig="$P/scheduler.kubeconfig" --authentication-kubeconfig="$P/scheduler.kubeconfig" \
    --authorization-kubeconfig="$P/scheduler.kubeconfig" --bind-address=127.0.0.1 --leader-elect=false --profiling=false
  start kubelet kubelet --config="$K/kubelet.yaml" --kubeconfig="$P/kubelet.kubeconfig" --hostname-override=$NODE \
    --node-ip="$NODE_IP" --root-dir="$K/kubelet"
  start kube-proxy kube-proxy --config="$K/kube-proxy.yaml" --hostname-override=$NODE
  wait_for "node $NODE Ready" 120 sh -c "kubectl get node $NODE --no-headers | grep -qw Ready"
  policy_agent
  coredns
  wait_for "CoreDNS available" 120 kubectl -n kube-system rollout status deploy/coredns --timeout=2s
  gateway_api
  say "up in $((SECONDS - started)) s (Kubernetes $(kubectl version -o json | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -1), node $NODE_IP, KUBECONFIG=$KUBECONFIG)"
}

stop_daemon() { # name…: SIGTERM, then SIGKILL after 10 s
  local d pids=()
  for d in "$@"; do alive "$d" && { pids+=("$(cat "$K/$d.pid")"); kill -TERM "$(cat "$K/$d.pid")" 2>/dev/null || true; }; done
  local i
  for ((i = 0; i < 20; i++)); do
    local any=0; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && any=1; done
    [ $any = 0 ] && break; sleep 0.5
  done
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  for d in "$@"; do rm -f "$K/$d.pid"; done
}

down() ( # a subshell: its best-effort `set +e` ends with it (up calls it and goes on)
  # Best effort, every step: one that fails must not keep the next from running.
  set +e +o pipefail
  local started=$SECONDS
  [ -d "$K" ] || { say "nothing to stop ($K absent)"; return 0; }
  if alive kube-apiserver && alive kubelet; then
    # Pods deleted while the kubelet runs: it stops their sandboxes (CNI DEL takes the veth off the
    # bridge, the masquerade rules go). The namespaces and CoreDNS first (nothing recreates the
    # pods: a terminating namespace admits none), then the pods with a short grace (no drain needed).
    kubectl get ns -o name 2>/dev/null | sed 's#namespace/##' | grep -vE '^(default|kube-system|kube-public|kube-node-lease)$' |
      xargs -r kubectl delete ns --wait=false >/dev/null 2>&1
    kubectl -n kube-system delete deploy coredns --wait=false >/dev/null 2>&1
    kubectl delete pods --all -A --grace-period=1 --wait=false >/dev/null 2>&1
    local i
    for ((i = 0; i < 60; i++)); do
      [ "$(kubectl get pods -A --no-headers 2>/dev/null | wc -l)" = 0 ] && break
      sleep 1
    done
    for ((i = 0; i < 30; i++)); do
      [ -z "$(ip -o link show master "$BRIDGE" 2>/dev/null)" ] && break
      sleep 1
    done
  fi
  stop_daemon traefik kubelet kube-proxy kube-router
  "$B/kube-proxy" --cleanup >/dev/null 2>&1 || true
  if alive containerd; then
    local c
    for c in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s KILL "$c" >/dev/null 2>&1 || true; done
    sleep 1
    for c in $(ctr_ containers ls -q 2>/dev/null); do ctr_ tasks delete -f "$c" >/dev/null 2>&1 || true; ctr_ containers rm "$c" >/dev/null 2>&1 || true; done
  fi
  stop_daemon kube-scheduler kube-controller-manager kube-apiserver
  stop_daemon etcd containerd
  # Left over after a crash: the shims of our containerd, any of our binaries.
  local pid _
  while read -r pid _; do [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true; done < <(processes)
  # Mounts under the state folder (kubelet volumes, container root file systems, shm), deepest first.
  local m
  for m in $(awk '{print $2}' /proc/self/mounts | grep -F "$K/" | sort -r); do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  # Network namespaces containerd made for the pods (bind mounts under /var/run/netns).
  if [ -f "$BEFORE/netns" ]; then
    for m in $(comm -13 "$BEFORE/netns" <(netns)); do umount "/var/run/netns/$m" 2>/dev/null || true; rm -f "/var/run/netns/$m"; done
  fi
  # iptables chains made since `up` (KUBE-*, CNI-*): their jumps first, then the chains.
  if [ -f "$BEFORE/chains" ]; then
    local fam t chain
    comm -13 "$BEFORE/chains" <(chains | sort) | while read -r a b c; do
      if [ "$a" = ip6 ]; then fam=ip6tables; t=$b; chain=$c; else fam=iptables; t=$a; chain=$b; fi
      case "$chain" in KUBE-* | CNI-*) ;; *) continue ;; esac
      "$fam-save" -t "$t" | grep -E "^-A [^ ]+ .*-j $chain( |$)" | sed 's/^-A/-D/' | while read -r rule; do
        eval "$fam -t $t $rule" 2>/dev/null || true
      done
      echo "$fam $t $chain"
    done >"$K/chains-made"
    while read -r fam t chain; do "$fam" -t "$t" -F "$chain" 2>/dev/null || true; done <"$K/chains-made"
    while read -r fam t chain; do "$fam" -t "$t" -X "$chain" 2>/dev/null || true; done <"$K/chains-made"
  fi
  # kube-router's ipsets, once no rule names them any more (the chains above are gone).
  if [ -f "$BEFORE/ipsets" ]; then
    local set
    for set in $(comm -13 "$BEFORE/ipsets" <(ipsets)); do ipset destroy "$set" 2>/dev/null || true; done
  fi
  ip link del "$BRIDGE" 2>/dev/null || true
  rm -rf "/var/lib/cni/networks/$CNI_NET"
  find /var/lib/cni/results -name "$CNI_NET-*" -delete 2>/dev/null || true
  # The sysctls the kubelet (and the bridge plugin) set, as they were.
  if [ -f "$BEFORE/sysctls" ]; then
    local line key value
    while IFS= read -r line; do
      key=${line%%=*}; value=${line#*=}
      [ "$value" = absent ] && continue
      [ "$(sysctl -n "$key" 2>/dev/null)" = "$value" ] || sysctl -qw "$key=$value" 2>/dev/null || true
    done <"$BEFORE/sysctls"
  fi
  # The kubelet's pod cgroups (cgroupfs driver), deepest first, when it did not remove them.
  if [ -f "$BEFORE/cgroups" ]; then
    local g
    for g in $(comm -13 "$BEFORE/cgroups" <(cgroups)); do find "$g" -depth -type d -exec rmdir {} + 2>/dev/null || true; done
  fi
  # Never rm -rf through a mount that would not go (a container's root, a volume).
  if grep -qF " $K/" /proc/self/mounts; then
    say "mounts under $K remain: $(grep -F " $K/" /proc/self/mounts | awk '{print $2}' | tr '\n' ' ')"
    return 1
  fi
  rm -rf "$K"
  say "down in $((SECONDS - started)) s"
)

clean() { # the host against the snapshot `up` took
  [ -d "$BEFORE" ] || die "no snapshot ($BEFORE): was the cluster brought up by this script?"
  local now left=0
  now=$(mktemp -d)
  snapshot "$now"
  report() { # what before now
    local diff
    diff=$(diff "$2" "$3" | grep '^[<>]' || true)
    if [ -n "$diff" ]; then left=1; echo "  $1: CHANGED"; echo "$diff" | sed 's/^/      /'; else echo "  $1: as before ($(wc -l <"$2") checked)"; fi
  }
  echo "[k8s] the host after teardown, against before the cluster:"
  local procs
  procs=$(processes)
  if [ -n "$procs" ]; then left=1; echo "  processes: LEFT"; echo "$procs" | sed 's/^/      /'; else echo "  processes: none of the cluster's (kube-*, etcd, containerd, shims)"; fi
  report "network links (ip link)" "$BEFORE/links" "$now/links"
  report "iptables/ip6tables chains" "$BEFORE/chains" "$now/chains"
  [ -f "$BEFORE/ipsets" ] && report "ipsets" "$BEFORE/ipsets" "$now/ipsets"
  report "mounts" "$BEFORE/mounts" "$now/mounts"
  report "network namespaces" "$BEFORE/netns" "$now/netns"
  report "sysctls ($(echo $SYSCTLS | wc -w))" "$BEFORE/sysctls" "$now/sysctls"
  report "kubepods cgroups" "$BEFORE/cgroups" "$now/cgroups"
  local rules
  rules=$({ iptables-save; ip6tables-save; } 2>/dev/null | grep -cE 'KUBE-|CNI-|10\.244\.0\.|10\.96\.' || true)
  if [ "$rules" != 0 ]; then left=1; echo "  iptables rules naming KUBE-/CNI- or the cluster's ranges: $rules LEFT"; else echo "  iptables rules naming KUBE-/CNI- or the cluster's ranges: none"; fi
  [ -e "$K" ] && { left=1; echo "  state folder $K: LEFT"; }
  rm -rf "$now"
  [ $left = 0 ] && rm -rf "$BEFORE"
  return $left
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  import) shift; import "$@" ;;
  check) clean ;;
  env) echo "export KUBECONFIG=$KUBECONFIG PATH=$B:\$PATH" ;;
  # The edge as `npm run k8s:e2e` reaches it: Traefik's entryPoints and the GatewayClass (empty: none).
  edge) echo "http=127.0.0.1:$EDGE_HTTP_PORT https=127.0.0.1:$EDGE_HTTPS_PORT class=$([ "$GATEWAY_IMPL" = none ] || echo "$GATEWAY_CLASS")" ;;
  *) echo "usage: $0 up|import IMAGE…|down|check|env|edge" >&2; exit 2 ;;
esac
