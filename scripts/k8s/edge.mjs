// The edge of the k8s run's own cluster (scripts/k8s-e2e.mjs, k8s/README.md "The edge"): prod's
// Gateway and HTTPRoutes (k8s/components/gateway-api, in k8s/overlays/ci) served by Traefik, a host
// daemon of the cluster (scripts/k8s/cluster.sh). The run reaches the gateway through Traefik's
// HTTPS entryPoint by the Gateway's host name, verifying a certificate the run makes for it
// (Secret marketplace-tls, as prod's listener names it) against the run's own CA.
/* global AbortSignal */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import tls from 'node:tls';

export const CONTROLLER = 'traefik.io/gateway-controller';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The Gateway `marketplace` of a rendered overlay (a List of objects): the HTTPS listener's host
 * name and port, the HTTP listener's port, its class.
 * @param {{ items: Array<{ kind: string, metadata: { name: string }, spec?: any }> }} list
 */
export function gatewayOf(list) {
  const gateway = list.items.find((o) => o.kind === 'Gateway' && o.metadata.name === 'marketplace');
  if (!gateway) throw new Error('the overlay has no Gateway marketplace (k8s/components/gateway-api)');
  const listener = (name) => {
    const found = gateway.spec.listeners.find((l) => l.name === name);
    if (!found) throw new Error(`the Gateway marketplace has no listener ${name}`);
    return found;
  };
  const https = listener('https');
  return { className: gateway.spec.gatewayClassName, host: https.hostname, httpsPort: https.port, httpPort: listener('http').port };
}

/**
 * A CA of the run's own and the listener's certificate for `host` (openssl), in `dir`: the PEMs of
 * the CA, the certificate and its key. The CA's key is removed once it signed.
 * @param {string} dir
 * @param {string} host
 */
export function edgeCertificate(dir, host) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const openssl = (args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=mkt-k8s-edge-ca',
  ]);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'tls.key', '-out', 'tls.csr', '-subj', `/CN=${host}`]);
  const ext = join(dir, 'tls.ext');
  execFileSync('sh', ['-c', `printf 'subjectAltName=DNS:%s\\nextendedKeyUsage=serverAuth\\n' "$1" > "$2"`, 'sh', host, ext]);
  openssl([
    'x509',
    '-req',
    '-in',
    'tls.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-out',
    'tls.crt',
    '-extfile',
    ext,
  ]);
  rmSync(join(dir, 'ca.key'));
  const read = (name) => readFileSync(join(dir, name), 'utf8');
  return { ca: read('ca.crt'), cert: read('tls.crt'), key: read('tls.key') };
}

/** This process (the journey, the load) trusts the run's CA beside the default ones. */
export function trustCa(ca) {
  tls.setDefaultCACertificates([...tls.getCACertificates('default'), ca]);
}

/** The condition `type` of a status' conditions, `True` or what it is instead. */
const conditionOf = (conditions, type) => (conditions ?? []).find((c) => c.type === type);
const isTrue = (conditions, type) => conditionOf(conditions, type)?.status === 'True';

/**
 * The status Traefik wrote: the Gateway Accepted and Programmed, each listener Programmed, every
 * HTTPRoute of the namespace Accepted with its references resolved by this controller. Waits up to
 * `timeoutMs`; returns the rows for the run's table.
 * @param {(args: string[]) => Promise<string>} kn kubectl in the run's namespace
 */
export async function gatewayProgrammed(kn, { timeoutMs = 90_000 } = {}) {
  const started = Date.now();
  let last = '';
  for (;;) {
    const gateway = JSON.parse(await kn(['get', 'gateway', 'marketplace', '-o', 'json']));
    const routes = JSON.parse(await kn(['get', 'httproutes', '-o', 'json'])).items;
    const listeners = gateway.status?.listeners ?? [];
    const gatewayOk =
      isTrue(gateway.status?.conditions, 'Accepted') &&
      isTrue(gateway.status?.conditions, 'Programmed') &&
      gateway.spec.listeners.every((l) => isTrue(listeners.find((s) => s.name === l.name)?.conditions, 'Programmed'));
    const routeState = routes.map((route) => {
      const parents = (route.status?.parents ?? []).filter((p) => p.controllerName === CONTROLLER);
      const ok = parents.length > 0 && parents.every((p) => isTrue(p.conditions, 'Accepted') && isTrue(p.conditions, 'ResolvedRefs'));
      return { name: route.metadata.name, ok, parents };
    });
    const routesOk = routes.length > 0 && routeState.every((r) => r.ok);
    if (gatewayOk && routesOk)
      return [
        [
          'edge',
          `Traefik (${CONTROLLER}) programmed the Gateway: Accepted, Programmed, every listener Programmed`,
          'ok',
          `${gateway.spec.listeners.map((l) => `${l.name} ${l.protocol} ${l.hostname}:${l.port}`).join(', ')}; address ${(gateway.status.addresses ?? []).map((a) => a.value).join(', ') || 'none'}`,
        ],
        [
          'edge',
          'every HTTPRoute Accepted with its references resolved, by Traefik',
          'ok',
          routeState.map((r) => `${r.name} → ${r.parents.map((p) => p.parentRef.sectionName ?? p.parentRef.name).join(', ')}`).join('; '),
        ],
      ];
    last = JSON.stringify({
      gateway: (gateway.status?.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason}`),
      listeners: listeners.map((l) => `${l.name}: ${(l.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason}`).join(' ')}`),
      routes: routeState.map(
        (r) =>
          `${r.name}: ${r.parents.flatMap((p) => (p.conditions ?? []).map((c) => `${c.type}=${c.status} ${c.reason}`)).join(' ') || 'no status'}`,
      ),
    });
    if (Date.now() - started > timeoutMs)
      throw new Error(`the Gateway and its HTTPRoutes are not programmed by Traefik within ${timeoutMs / 1000} s: ${last}`);
    await sleep(1_000);
  }
}

/**
 * Plain HTTP on the Gateway's `http` listener answers with the redirect to HTTPS (HTTPRoute
 * gateway-https-redirect), and HTTPS reaches the gateway's /readyz. Returns the rows.
 */
export async function edgeAnswers({ host, httpPort, httpsPort }) {
  const started = Date.now();
  for (;;) {
    try {
      const plain = await fetch(`http://${host}:${httpPort}/readyz`, { redirect: 'manual', signal: AbortSignal.timeout(3_000) });
      const location = plain.headers.get('location') ?? '';
      const secure = await fetch(`https://${host}:${httpsPort}/readyz`, { signal: AbortSignal.timeout(3_000) });
      if (plain.status === 301 && location.startsWith(`https://${host}`) && secure.status === 200)
        return [
          [
            'edge',
            'HTTP redirected to HTTPS (301) by the HTTPRoute gateway-https-redirect',
            'ok',
            `http://${host}:${httpPort}/readyz → ${location}`,
          ],
          [
            'edge',
            "HTTPS terminated by Traefik with the listener's certificate (Secret marketplace-tls)",
            'ok',
            `https://${host}:${httpsPort}/readyz 200, the run's CA verified`,
          ],
        ];
      if (Date.now() - started > 60_000)
        throw new Error(`the edge answers http ${plain.status} (location ${location || 'none'}), https ${secure.status}`);
    } catch (err) {
      if (Date.now() - started > 60_000) throw err;
    }
    await sleep(1_000);
  }
}
