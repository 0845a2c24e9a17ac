import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { freePort } from '@mkt/infra';
import { apiOf, book, fund, loginAdmin, metric, nearSlots, offerNearConsultation, register, waitFor } from './fixtures';
import { startSystem, type ProcessName, type System } from './system';

/**
 * The metrics: after a paid booking, every process's /metrics exposes the names and label
 * names docs/observability.md lists, routes are labelled by their template, every name follows
 * the naming scheme (ADR 0018: `marketplace_…`, prom-client's `process_*`/`nodejs_*`), and every
 * metric the Grafana dashboard and the PrometheusRule query is one the processes export and
 * follows that scheme.
 */
let system: System;
let gatewayMetrics: string;
beforeAll(async () => {
  const metricsPort = await freePort();
  gatewayMetrics = `http://127.0.0.1:${metricsPort}`;
  system = await startSystem({
    envOf: { gateway: { METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.1' }, wallet: { SWEEP_INTERVAL_MS: '500' } },
  });
}, 120_000);
afterAll(() => system?.stop());

const monitoring = join(__dirname, '..', '..', 'k8s', 'components', 'monitoring');

/** Each metric family of an exposition text: its type and the label names of its samples. */
interface Family {
  type: string;
  labels: Set<string>;
  samples: Array<{ name: string; labels: Record<string, string>; value: number }>;
}

function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const familyOf = (name: string) => {
    if (!families.has(name)) families.set(name, { type: 'untyped', labels: new Set(), samples: [] });
    return families.get(name)!;
  };
  for (const line of text.split('\n')) {
    const typed = /^# TYPE (\S+) (\S+)/.exec(line);
    if (typed) familyOf(typed[1]!).type = typed[2]!;
    if (!line || line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!sample) throw new Error(`not an exposition line: ${line}`);
    const [, name, body = '', value] = sample;
    const labels: Record<string, string> = {};
    for (const [, key, raw] of body.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = raw!;
    const family = families.has(name!) ? name! : name!.replace(/_(bucket|sum|count)$/, '');
    const target = familyOf(family);
    for (const key of Object.keys(labels)) if (key !== 'le') target.labels.add(key);
    target.samples.push({ name: name!, labels, value: Number(value) });
  }
  return families;
}

async function scrape(url: string, accept?: string): Promise<{ type: string; text: string }> {
  const res = await fetch(`${url}/metrics`, { headers: accept ? { accept } : {} });
  expect(res.status).toBe(200);
  return { type: res.headers.get('content-type') ?? '', text: await res.text() };
}

const metricsUrl = (name: ProcessName) => (name === 'gateway' ? gatewayMetrics : system.processes[name].url);
const PROCESSES: ProcessName[] = ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'];

/** What docs/observability.md lists, by process: name → label names (without Prometheus's own). */
const EVERYWHERE = { marketplace_http_request_duration_seconds: ['method', 'route', 'status'], marketplace_outbox_backlog: ['source'] };
const CONSUMING = {
  marketplace_events_consumed_total: ['queue', 'type', 'outcome'],
  marketplace_event_handling_duration_seconds: ['queue', 'outcome'],
  marketplace_event_lag_seconds: ['queue'],
  marketplace_dead_letter_queue_messages: ['queue'],
};
const PUBLISHING = {
  marketplace_events_published_total: ['type', 'outcome'],
  marketplace_outbox_backlog: ['source'],
  marketplace_outbox_oldest_pending_age_seconds: ['source'],
};
const EXPECTED: Record<ProcessName, Record<string, string[]>> = {
  gateway: { ...EVERYWHERE, ...PUBLISHING, marketplace_gateway_login_throttled_total: ['rule'] },
  wallet: {
    ...EVERYWHERE,
    ...PUBLISHING,
    ...CONSUMING,
    marketplace_job_runs_total: ['job_name', 'outcome'],
    marketplace_job_duration_seconds: ['job_name'],
    marketplace_wallet_open_holds: [],
    marketplace_wallet_oldest_open_hold_age_seconds: [],
    marketplace_wallet_overdue_holds: [],
  },
  catalog: { marketplace_http_request_duration_seconds: ['method', 'route', 'status'] },
  crm: { marketplace_http_request_duration_seconds: ['method', 'route', 'status'], ...CONSUMING },
  consultation: { ...EVERYWHERE, ...PUBLISHING, ...CONSUMING },
  review: { ...EVERYWHERE, ...CONSUMING },
};

/** The naming scheme of the metrics a process exports (ADR 0018). */
const FOLLOWS_SCHEME = /^(marketplace_[a-z][a-z0-9_]*|process_[a-z0-9_]+|nodejs_[a-z0-9_]+)$/;

let exported: Map<ProcessName, Map<string, Family>>;

test('after a paid booking every process exposes its metrics with the documented label names, routes as templates', async () => {
  const admin = await loginAdmin(system);
  const seller = await register(system, 'seller');
  const buyer = await register(system, 'buyer');
  await fund(system, [buyer], 500);
  const offer = await offerNearConsultation(system, seller, admin);
  const booked = await book(system, buyer, offer, nearSlots(offer)[0]!);
  expect(booked.status).toBe(200);
  const bookingId = booked.body.data.bookingId as string;
  // A read by id, an unknown route and a refused method: each must keep a bounded route label.
  expect((await apiOf(system, seller)('GET', `/consultations/${offer.id}`)).status).toBe(200);
  expect((await apiOf(system, buyer)('GET', `/consultations/bookings/${bookingId}/nothing-here`)).status).toBe(404);
  // The CRM has handled the booking, the wallet holds it, its sweeper has run.
  await waitFor(
    'the CRM handles the booking',
    () =>
      metric(system.processes.crm.url, 'marketplace_events_consumed_total', { type: 'consultation.booking.confirmed', outcome: 'acked' }),
    (n) => n >= 1,
  );
  await waitFor(
    'the wallet sweeper runs',
    () => metric(system.processes.wallet.url, 'marketplace_job_runs_total', { job_name: 'wallet-sweep' }),
    (n) => n >= 1,
  );

  exported = new Map();
  for (const name of PROCESSES) {
    const { type, text } = await scrape(metricsUrl(name));
    expect(type).toContain('text/plain');
    const families = parseExposition(text);
    exported.set(name, families);
    for (const [metricName, labels] of Object.entries(EXPECTED[name])) {
      const family = families.get(metricName);
      expect({ process: name, metric: metricName, exported: !!family }).toEqual({ process: name, metric: metricName, exported: true });
      // Series that have samples carry exactly the documented labels.
      if (family!.samples.length > 0)
        expect({ process: name, metric: metricName, labels: [...family!.labels].sort() }).toEqual({
          process: name,
          metric: metricName,
          labels: [...labels].sort(),
        });
    }
    // One naming scheme (ADR 0018): what the marketplace defines is marketplace_…, prom-client's
    // default process and Node.js metrics keep their standard names.
    expect({ process: name, outside: [...families.keys()].filter((family) => !FOLLOWS_SCHEME.test(family)) }).toEqual({
      process: name,
      outside: [],
    });
    // No id in any route label: templates (`/:id`), `unmatched`, or the gateway's `proxy:<upstream>` / `edge`.
    const routes = new Set(families.get('marketplace_http_request_duration_seconds')!.samples.map((s) => s.labels.route!));
    for (const route of routes) {
      expect(route).toMatch(/^(\/[A-Za-z0-9_\-/:.{}*]*|unmatched|edge|proxy:[a-z]+)$/);
      for (const id of [offer.id, bookingId, buyer.id, seller.id]) expect(route).not.toContain(id);
    }
  }
  const consultationRoutes = new Set(
    exported
      .get('consultation')!
      .get('marketplace_http_request_duration_seconds')!
      .samples.map((s) => s.labels.route),
  );
  expect([...consultationRoutes]).toContain('/consultations/:id');
  expect([...consultationRoutes]).toContain('unmatched');
  const gatewayRoutes = new Set(
    exported
      .get('gateway')!
      .get('marketplace_http_request_duration_seconds')!
      .samples.map((s) => s.labels.route),
  );
  expect([...gatewayRoutes]).toEqual(expect.arrayContaining(['proxy:consultation', '/v1/auth/register']));
  const wallet = exported.get('wallet')!;
  expect(wallet.get('marketplace_wallet_open_holds')!.samples[0]!.value).toBeGreaterThanOrEqual(1);
  expect(wallet.get('marketplace_wallet_oldest_open_hold_age_seconds')!.samples[0]!.value).toBeGreaterThan(0);
  expect(wallet.get('marketplace_wallet_overdue_holds')!.samples[0]!.value).toBe(0);
  const lag = exported
    .get('crm')!
    .get('marketplace_event_lag_seconds')!
    .samples.filter((s) => s.name === 'marketplace_event_lag_seconds_count');
  expect(lag.reduce((sum, s) => sum + s.value, 0)).toBeGreaterThanOrEqual(1);
}, 120_000);

test('OpenMetrics when the scraper asks for it; the Prometheus text format keeps its counter names after it', async () => {
  const url = system.processes.consultation.url;
  const open = await scrape(url, 'application/openmetrics-text; version=1.0.0,text/plain;version=0.0.4;q=0.5');
  expect(open.type).toContain('application/openmetrics-text');
  expect(open.text.trimEnd().endsWith('# EOF')).toBe(true);
  expect(open.text).toMatch(/^marketplace_events_published_total\{/m);
  const plain = await scrape(url);
  expect(plain.type).toContain('text/plain');
  expect(plain.text).toMatch(/^# TYPE marketplace_events_published_total counter$/m);
  expect(plain.text).not.toContain('# EOF');
});

/** Metric names a PromQL expression reads: identifiers not followed by `(`, not keywords, labels or durations. */
function metricNamesOf(expr: string): string[] {
  const withoutStrings = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '{}')
    .replace(/\[[^\]]*\]/g, '[]');
  const names = new Set<string>();
  const keywords = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset']);
  // Aggregations may take their `by (...)` before the parenthesis: `sum by (x) (...)`.
  const aggregations = /^(sum|min|max|avg|count|group|stddev|stdvar|topk|bottomk|quantile|count_values)$/;
  for (const match of withoutStrings.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\()?/g)) {
    const [, name, call] = match;
    if (call || keywords.has(name!) || aggregations.test(name!)) continue;
    // Grouping labels: inside `by (...)`.
    const before = withoutStrings.slice(0, match.index);
    if (/(by|without|on|ignoring)\s*\([^)]*$/.test(before)) continue;
    names.add(name!);
  }
  return [...names];
}

test('every metric the dashboard and the alert rules query is exported and follows the naming scheme (kube_* from kube-state-metrics, container_* from the kubelet)', () => {
  const known = new Set<string>();
  for (const families of exported.values())
    for (const [name, family] of families) {
      known.add(name);
      if (family.type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) known.add(`${name}${suffix}`);
    }
  const dashboard = JSON.parse(readFileSync(join(monitoring, 'dashboards', 'marketplace.json'), 'utf8')) as {
    panels: Array<{ targets?: Array<{ expr: string }> }>;
    templating: { list: Array<{ query?: { query: string } | string }> };
  };
  const rule = parse(readFileSync(join(monitoring, 'prometheus-rule.yaml'), 'utf8')) as {
    spec: { groups: Array<{ rules: Array<{ alert: string; expr: string; annotations: Record<string, string> }> }> };
  };
  const queries = [
    ...dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr)),
    ...rule.spec.groups.flatMap((group) => group.rules.map((r) => r.expr)),
  ];
  expect(queries.length).toBeGreaterThan(20);
  const unknown = queries.flatMap((expr) =>
    metricNamesOf(expr)
      .filter((name) => !known.has(name) && !name.startsWith('kube_') && !name.startsWith('container_'))
      .map((name) => ({ name, expr })),
  );
  expect(unknown).toEqual([]);
  // And each follows the scheme: the marketplace's own are marketplace_…, besides the standard
  // process_/nodejs_ ones and the cluster's kube_/container_ ones.
  const outside = queries.flatMap((expr) =>
    metricNamesOf(expr)
      .filter((name) => !FOLLOWS_SCHEME.test(name) && !/^(kube|container)_/.test(name))
      .map((name) => ({ name, expr })),
  );
  expect(outside).toEqual([]);
  // Every alert explains itself and names a runbook anchor of docs/observability.md (the URL before
  // the anchor is the overlay's params: runbook-base-url).
  const docs = readFileSync(join(__dirname, '..', '..', 'docs', 'observability.md'), 'utf8');
  for (const r of rule.spec.groups.flatMap((group) => group.rules)) {
    expect(r.annotations).toEqual(expect.objectContaining({ summary: expect.any(String), description: expect.any(String) }));
    expect(r.annotations.runbook_url).toBe(`https://set-by-params.invalid#${r.alert.toLowerCase()}`);
    expect(docs).toContain(`### ${r.alert}`);
  }
});
