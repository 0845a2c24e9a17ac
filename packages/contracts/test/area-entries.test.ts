// Each area's entry (`@mkt/contracts/<service>`) holds the index's own objects, and its slice of
// the endpoint table is exactly the index's entries of that service: a service mounting from its
// entry mounts what it mounted from the index.
import * as index from '@mkt/contracts';
import * as catalog from '@mkt/contracts/catalog';
import * as consultation from '@mkt/contracts/consultation';
import * as core from '@mkt/contracts/core';
import * as crm from '@mkt/contracts/crm';
import * as endpoints from '@mkt/contracts/endpoints';
import * as gateway from '@mkt/contracts/gateway';
import * as review from '@mkt/contracts/review';
import * as wallet from '@mkt/contracts/wallet';

const AREAS = { gateway, wallet, catalog, crm, consultation, review } as const;

test.each(Object.keys(AREAS) as Array<keyof typeof AREAS>)('@mkt/contracts/%s: its table is the index’s entries of the service', (area) => {
  const entry = AREAS[area];
  const own = index.ENDPOINTS.filter((endpoint) => endpoint.service === area);
  expect(entry.ENDPOINTS).toEqual(own);
  entry.ENDPOINTS.forEach((endpoint, i) => expect(endpoint).toBe(own[i]));
  expect(Object.keys(entry.OPERATIONS)).toEqual(own.map((endpoint) => endpoint.operationId));
});

test.each([...Object.entries(AREAS), ['core', core] as const])(
  '@mkt/contracts/%s: every other value is the index’s own',
  (_area, entry) => {
    const names = Object.keys(entry).filter((name) => name !== 'OPERATIONS' && name !== 'ENDPOINTS');
    expect(names.length).toBeGreaterThan(20);
    const values = entry as Record<string, unknown>;
    expect(names.filter((name) => values[name] !== index[name as keyof typeof index])).toEqual([]);
  },
);

test('the areas together are the whole table, and /endpoints is the index’s', () => {
  const areas = Object.values(AREAS).flatMap((entry) => Object.keys(entry.OPERATIONS));
  expect(areas.sort()).toEqual(Object.keys(index.OPERATIONS).sort());
  expect(endpoints.OPERATIONS).toBe(index.OPERATIONS);
  expect(endpoints.ENDPOINTS).toBe(index.ENDPOINTS);
});
