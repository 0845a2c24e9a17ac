// The NetworkPolicies (k8s/base/network-policies.yaml, the overlays' data-tier policies) enforced on
// the k8s run's cluster: each flow below is tried with a TCP connect from inside a pod (`kubectl
// exec … node -e net.connect`, 3 s timeout) and must come out as the policies say. The allowed ones
// must connect; the closed ones must time out or be refused. A closed flow counts only next to a
// control: the same listener reached from a pod no policy restricts, so a refusal is the policy's
// and never a listener that is down. On a cluster that stores the policies but does not enforce
// them (no policy agent), every closed flow connects and the run fails.
//
// Probe pods (the gateway's image, its own `node`, a listener on 7000 accepting every connection):
//   marketplace-ci-probe/netpol-probe  a namespace without policies (the unrestricted side)
//   <monitoring>/netpol-probe          the monitoring namespace of the overlay's params (Prometheus's)
//   marketplace-ci/netpol-probe        inside the marketplace's namespace, no tier label (not the app)

export const PROBE_NAMESPACE = 'marketplace-ci-probe';
const PROBE = 'netpol-probe';
const PORT = 7000;
const TIMEOUT_MS = 3_000;
// An address outside the cluster: reachable from the unrestricted probe when the machine has a route out.
const OUTSIDE = { host: '1.1.1.1', port: 443 };

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// argv[1] host, argv[2] port: prints `open`, `timeout` or the socket error's code (ECONNREFUSED…).
const CONNECT = [
  'const n=require("net");',
  `const s=n.connect({host:process.argv[1],port:Number(process.argv[2]),timeout:${TIMEOUT_MS}});`,
  's.on("connect",()=>{console.log("open");s.destroy();process.exit(0)});',
  's.on("timeout",()=>{console.log("timeout");process.exit(0)});',
  's.on("error",(e)=>{console.log(e.code||e.message);process.exit(0)});',
].join('');

/** A pod that answers on PORT, restricted-profile compliant (the marketplace's namespace enforces it). */
const probePod = (namespace, image) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: PROBE, namespace, labels: { 'marketplace/probe': 'netpol' } },
  spec: {
    automountServiceAccountToken: false,
    terminationGracePeriodSeconds: 1,
    securityContext: { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: { type: 'RuntimeDefault' } },
    containers: [
      {
        name: 'probe',
        image,
        imagePullPolicy: 'IfNotPresent',
        // Accepts and closes; a peer gone first (the connect probe, the kubelet's) is no error.
        command: ['node', '-e', `require("net").createServer((s)=>{s.on("error",()=>{});s.end()}).listen(${PORT})`],
        ports: [{ containerPort: PORT }],
        readinessProbe: { tcpSocket: { port: PORT }, periodSeconds: 1 },
        resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '96Mi' } },
        securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
      },
    ],
  },
});

/**
 * Runs the flows, pushes one row per flow into `results` ('network policy', rule, ok|BROKEN, detail).
 * `monitoring` is the overlay's monitoring-namespace (dev's params: monitoring).
 */
export async function networkPolicies({ namespace, monitoring = 'monitoring', kubectl, k, image, say, results }) {
  const created = [];
  const ours = async (name) => {
    const made = await kubectl(['create', 'namespace', name], { check: false });
    if (made.code === 0) created.push(name);
    return made.code === 0;
  };
  try {
    if (!(await ours(PROBE_NAMESPACE))) throw new Error(`namespace ${PROBE_NAMESPACE} could not be created: another run may be using it`);
    // Prometheus's namespace on another cluster is someone's: no probe pod there, its flows not judged.
    const inMonitoring = await ours(monitoring);
    const places = [PROBE_NAMESPACE, namespace, ...(inMonitoring ? [monitoring] : [])];
    await kubectl(['apply', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: places.map((ns) => probePod(ns, image)) }),
    });
    await Promise.all(places.map((ns) => k(['-n', ns, 'wait', '--for=condition=Ready', `pod/${PROBE}`, '--timeout=120s'])));

    const podIp = async (ns, selector) => {
      const ips = (
        await k([
          '-n',
          ns,
          'get',
          'pods',
          '-l',
          selector,
          '--field-selector=status.phase=Running',
          '-o',
          'jsonpath={.items[*].status.podIP}',
        ])
      )
        .split(' ')
        .filter(Boolean);
      if (ips.length === 0) throw new Error(`network policies: no running pod ${selector} in ${ns}`);
      return ips[0];
    };
    const ip = {
      wallet: await podIp(namespace, 'app.kubernetes.io/name=wallet'),
      gateway: await podIp(namespace, 'app.kubernetes.io/name=gateway'),
      mongo: await podIp(namespace, 'app.kubernetes.io/name=mongo'),
      probe: await podIp(PROBE_NAMESPACE, 'marketplace/probe=netpol'),
    };
    /**
     * The connect's outcome from a pod.
     * @param {string[]} from [namespace, 'deploy/<name>' | 'pod/<name>']
     * @param {string} host
     * @param {number} port
     */
    const attempt = async (from, host, port) => {
      const [ns, target] = from;
      const out = await kubectl(['-n', ns, 'exec', target, '--', 'node', '-e', CONNECT, host, String(port)], { check: false });
      return out.code === 0 ? out.stdout.trim().split('\n').pop() : `exec failed: ${(out.stderr || out.stdout).slice(-200)}`;
    };
    // kube-router programs a new pod's rules within a second or two of its start: a flow that comes
    // out against the policy (or whose exec failed) is tried again, up to 4 times 2 s apart, before it counts.
    const flow = async (rule, from, to, port, expect) => {
      let outcome;
      for (let i = 0; i < 4; i++) {
        outcome = await attempt(from, to.host, port);
        if (!outcome.startsWith('exec failed') && (outcome === 'open') === (expect === 'open')) break;
        await sleep(2_000);
      }
      const ok = expect === 'open' ? outcome === 'open' : outcome !== 'open' && !outcome.startsWith('exec failed');
      const where = `${from[0]}/${from[1].split('/')[1]} → ${to.name} ${to.host}:${port}`;
      say(`network policy: ${where}: ${outcome} (expected ${expect})`);
      results.push(['network policy', rule, ok ? 'ok' : 'BROKEN', `${where}: ${outcome}, expected ${expect}`]);
      return outcome;
    };
    const unrestricted = [PROBE_NAMESPACE, `pod/${PROBE}`];
    const review = [namespace, 'deploy/review'];
    const target = (name) => ({ name, host: ip[name] });

    const monitoringProbe = [monitoring, `pod/${PROBE}`];
    // Allowed flows (the journey crossed them through the Services; here pod to pod). Each is the
    // control of the closed flows to the same listener below.
    await flow('consultation reaches the wallet’s internal API', [namespace, 'deploy/consultation'], target('wallet'), 8081, 'open');
    await flow('a service reaches the data tier', review, target('mongo'), 27017, 'open');
    if (inMonitoring) {
      await flow('the gateway’s metrics port: from the monitoring namespace', monitoringProbe, target('gateway'), 9464, 'open');
      await flow('control: the probe listener answers a pod without policies', monitoringProbe, target('probe'), PORT, 'open');
    } else {
      results.push([
        'network policy',
        'the gateway’s metrics port: from the monitoring namespace',
        'ok',
        `not judged: namespace ${monitoring} exists on this cluster (no probe put there)`,
      ]);
    }
    // Closed flows.
    await flow('a service does not reach another service’s port (review → wallet)', review, target('wallet'), 8081, 'closed');
    await flow(
      'a pod outside the app does not reach the database (same namespace)',
      [namespace, `pod/${PROBE}`],
      target('mongo'),
      27017,
      'closed',
    );
    await flow('a pod outside the app does not reach the database (another namespace)', unrestricted, target('mongo'), 27017, 'closed');
    await flow('the gateway’s metrics port: not from outside the monitoring namespace', unrestricted, target('gateway'), 9464, 'closed');
    await flow('egress from a service to an in-cluster address no policy allows', review, target('probe'), PORT, 'closed');
    // Outside the cluster: judged only when the unrestricted probe gets out.
    const outside = await attempt(unrestricted, OUTSIDE.host, OUTSIDE.port);
    if (outside === 'open') {
      const to = { name: 'outside', host: OUTSIDE.host };
      await flow('egress from a service to an arbitrary outside address (review)', review, to, OUTSIDE.port, 'closed');
      await flow(
        'the wallet reaches the payment provider’s port on a public address',
        [namespace, 'deploy/wallet'],
        to,
        OUTSIDE.port,
        'open',
      );
    } else {
      say(
        `network policy: ${OUTSIDE.host}:${OUTSIDE.port} unreachable from the unrestricted probe too (${outside}): egress outside the cluster not judged`,
      );
      results.push([
        'network policy',
        'egress from a service to an arbitrary outside address',
        'ok',
        `not judged: no route out from this cluster (${outside} from an unrestricted pod)`,
      ]);
    }
  } finally {
    await kubectl(['-n', namespace, 'delete', 'pod', PROBE, '--ignore-not-found', '--wait=false', '--grace-period=1'], { check: false });
    for (const name of created) await kubectl(['delete', 'namespace', name, '--wait=false'], { check: false });
  }
}
