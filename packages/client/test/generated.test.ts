import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENDPOINTS, buildOpenApi } from '@mkt/contracts';
import { IDEMPOTENT_OPERATIONS } from '@mkt/client';

/** What the build generated (scripts/generate.mjs) against the contracts as they are now. */
describe('the generated part of the SDK', () => {
  test('is generated from the document the contracts build now (run `pnpm run build` after changing them)', () => {
    const written = JSON.parse(readFileSync(join(__dirname, '../generated/openapi.json'), 'utf8')) as unknown;
    expect(written).toEqual(JSON.parse(JSON.stringify(buildOpenApi())));
  });

  test('the operations that take an Idempotency-Key are exactly the idempotent endpoints', () => {
    const idempotent = ENDPOINTS.filter((e) => e.idempotent).map((e) => `${e.method.toUpperCase()} ${e.path}`);
    expect(idempotent.length).toBeGreaterThan(0);
    expect([...IDEMPOTENT_OPERATIONS].sort()).toEqual(idempotent.sort());
  });
});
