// What the scripts that drive a running system (the journey of `npm run images` and the
// mixed-version run, `npm run fuzz`, the benches) share: the project's own SDK (@mkt/client,
// packages/client — they call the API through it as a client would) and a booking's body.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * @mkt/client from its build (packages/client/dist; `npm start`, `npm test` and `pnpm run build`
 * make it), built here first when it is missing (its types generated, then `tsc -b`).
 * @returns {Promise<typeof import('../packages/client/dist/index.js')>}
 */
export async function sdk() {
  const entry = join(root, 'packages/client/dist/index.js');
  if (!existsSync(entry)) {
    console.error('[client] packages/client/dist missing: generating and building it');
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc', { paths: [root] });
    for (const args of [[join(root, 'packages/client/scripts/generate.mjs')], [tsc, '-b', join(root, 'packages/client')]]) {
      const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
      if (result.status !== 0)
        throw new Error(`building @mkt/client failed: node ${args.join(' ')} (exit ${result.status ?? result.signal})`);
    }
  }
  return import(pathToFileURL(entry).href);
}

/**
 * An openapi-fetch call's answer as `{ status, body }` (the success envelope, or the error's
 * body), for scripts that check statuses themselves.
 */
export async function answer(call) {
  const { data, error, response } = await call;
  return { status: response.status, body: data ?? error };
}

/**
 * The body of `POST /consultations/bookings` for one slot (as `GET …/slots` lists it) of a
 * consultation on `ruleSet` sold by `seller`, for one participant, at `price` ETB.
 */
export function bookingBody({ seller, consultation, ruleSet }, slot, participant, price) {
  return {
    SellerId: seller.id,
    consultationId: consultation.id,
    ruleSetId: ruleSet.id,
    date: slot.date,
    startTime: slot.startTime,
    endTime: slot.endTime,
    participants: [participant],
    subTotal: price,
    totalAmount: price,
    currency: 'ETB',
  };
}
