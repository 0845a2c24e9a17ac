// The route list's gate (scripts/contract-gates/routes.mjs): `contracts.mjs routes` writes what
// `check` accepts, and `check` refuses a list that lacks an entry, names one the table does not, or
// was edited by hand.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENDPOINTS } from '@mkt/contracts';

type RouteEntry = { method: string; path: string; service: string };
type RoutesVerdict = { ok: boolean; file: string; missing: string[]; extra: string[]; stale: boolean };
// eslint-disable-next-line @typescript-eslint/no-require-imports -- an ES module, loaded through SWC as CommonJS (scripts/jest.config.js)
const gate = require('../contract-gates/routes.mjs') as {
  ROUTE_LIST_FILE: string;
  routeListText: (endpoints: readonly RouteEntry[]) => string;
  writeRouteList: (file: string, endpoints: readonly RouteEntry[]) => boolean;
  judgeRouteList: (file: string, endpoints: readonly RouteEntry[]) => RoutesVerdict;
  reportRouteList: (verdict: RoutesVerdict) => string;
};

const root = join(__dirname, '../..');
const TABLE: RouteEntry[] = [
  { method: 'get', path: '/wallets/banks', service: 'wallet' },
  { method: 'post', path: '/reviews', service: 'review' },
];
let dir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'route-list-'));
  file = join(dir, 'route-list.generated.ts');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

test('the committed list is what the endpoint table generates', () => {
  expect(readFileSync(join(root, gate.ROUTE_LIST_FILE), 'utf8')).toBe(gate.routeListText(ENDPOINTS));
  expect(gate.judgeRouteList(join(root, gate.ROUTE_LIST_FILE), ENDPOINTS)).toMatchObject({ ok: true, missing: [], extra: [] });
});

test('what routes writes, check accepts; a second write changes nothing', () => {
  expect(gate.writeRouteList(file, TABLE)).toBe(true);
  expect(gate.writeRouteList(file, TABLE)).toBe(false);
  expect(gate.judgeRouteList(file, TABLE)).toEqual({ ok: true, file: gate.ROUTE_LIST_FILE, missing: [], extra: [], stale: false });
});

test('an entry added to the table, or one removed from it, without regenerating is refused and named', () => {
  gate.writeRouteList(file, TABLE);
  const added = [...TABLE, { method: 'delete', path: '/reviews/{id}', service: 'review' }];
  const verdict = gate.judgeRouteList(file, added);
  expect(verdict).toMatchObject({ ok: false, missing: ['DELETE /reviews/{id} → review'], extra: [] });
  expect(gate.reportRouteList(verdict)).toMatch(/^REFUSED: .*npm run contracts:routes/);
  expect(gate.judgeRouteList(file, TABLE.slice(1))).toMatchObject({ ok: false, missing: [], extra: ['GET /wallets/banks → wallet'] });
});

test('a hand edit or another order is refused; a missing file lacks every entry', () => {
  gate.writeRouteList(file, TABLE);
  writeFileSync(file, readFileSync(file, 'utf8').replace('// Generated', '// Edited'));
  expect(gate.judgeRouteList(file, TABLE)).toMatchObject({ ok: false, stale: true, missing: [], extra: [] });
  gate.writeRouteList(file, [...TABLE].reverse());
  expect(gate.judgeRouteList(file, TABLE)).toMatchObject({ ok: false, stale: true });
  expect(gate.judgeRouteList(join(dir, 'none.ts'), TABLE)).toMatchObject({ ok: false, missing: TABLE.map(() => expect.any(String)) });
});

test('a quote in a path is refused rather than escaped', () => {
  expect(() => gate.routeListText([{ method: 'get', path: "/a'b", service: 'wallet' }])).toThrow('a quote or backslash');
});
