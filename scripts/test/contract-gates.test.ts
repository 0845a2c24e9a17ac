import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventJsonSchemas, judgeEventContracts, type JsonSchema } from '@mkt/contracts';

type Finding = { id: string; level: string; operation: string; path: string; text: string };
type Verdict = {
  ok: boolean;
  refused: Finding[];
  acknowledged: Array<Finding & { why: string }>;
  removed: Finding[];
  additive: Finding[];
  unused: Array<{ where: string }>;
  problems: string[];
};
type Acknowledgements = { acknowledgements: unknown[]; problems: string[] };
/* eslint-disable @typescript-eslint/no-require-imports -- ES modules, loaded through SWC as CommonJS (scripts/jest.config.js) */
const { diffOpenApi, ensureOasdiff, judgeOpenApi, readAcknowledgements, reportOpenApi } = require('../contract-gates/http.mjs') as {
  diffOpenApi: (oasdiff: string, base: string, revision: string) => { breaking: Finding[]; changes: Finding[] };
  ensureOasdiff: (toolsDir: string, log: (message: string) => void) => string;
  judgeOpenApi: (diff: { breaking: Finding[]; changes: Finding[] }, acks: Acknowledgements) => Verdict;
  readAcknowledgements: (dir: string) => Acknowledgements;
  reportOpenApi: (verdict: Verdict) => string;
};
const { readEventSchemas, writeEventSchemas } = require('../contract-gates/events.mjs') as {
  readEventSchemas: (dir: string) => Record<string, JsonSchema>;
  writeEventSchemas: (dir: string, schemas: Record<string, JsonSchema>) => void;
};
/* eslint-enable @typescript-eslint/no-require-imports */

// The contract gates on real files in a temporary directory, with the real oasdiff binary
// (installed into .tools/go/ by the first run: a minute or two of `go install`).
const root = join(__dirname, '..', '..');
const releasedOpenApi = join(root, 'contracts', 'released', 'openapi.json');
let oasdiff: string;
let dir: string;

beforeAll(() => {
  oasdiff = ensureOasdiff(join(root, '.tools'), (message: string) => process.stderr.write(`${message}\n`));
}, 600_000);
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'contract-gates-'));
  mkdirSync(join(dir, '.changeset'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

type OpenApi = {
  paths: Record<string, unknown>;
  components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>>; required: string[] }> };
};
const released = (): OpenApi => JSON.parse(readFileSync(releasedOpenApi, 'utf8')) as OpenApi;

/** The HTTP gate on a changed copy of the released document and the changesets given. */
function httpGate(change: (doc: OpenApi) => void, changesets: Record<string, string> = {}) {
  const doc = released();
  change(doc);
  const current = join(dir, 'openapi.json');
  writeFileSync(current, JSON.stringify(doc, null, 2));
  for (const [name, text] of Object.entries(changesets)) writeFileSync(join(dir, '.changeset', name), text);
  return judgeOpenApi(diffOpenApi(oasdiff, releasedOpenApi, current), readAcknowledgements(join(dir, '.changeset')));
}

/** A changeset's front matter bumping a package (what gets its body into a CHANGELOG). */
const bumps = "---\n'@mkt/contracts': major\n---\n";

const removeResponseField = (doc: OpenApi) => {
  const booking = doc.components.schemas.Booking!;
  delete booking.properties.consultationTitle;
  booking.required = booking.required.filter((name) => name !== 'consultationTitle');
};
const removePath = (doc: OpenApi) => delete doc.paths['/consultations/bookings/cancel'];
const requireRequestField = (doc: OpenApi) => doc.components.schemas.CreateBookingBody!.required.push('couponCode');

describe('HTTP gate (oasdiff)', () => {
  test('the released document against itself: nothing', () => {
    expect(httpGate(() => undefined)).toMatchObject({ ok: true, refused: [], additive: [] });
  });

  test('a removed response field, a removed path and a new required request field are refused', () => {
    const verdict = httpGate((doc) => {
      removeResponseField(doc);
      removePath(doc);
      requireRequestField(doc);
    });
    expect(verdict.ok).toBe(false);
    expect(verdict.refused.map((f) => `${f.id} ${f.operation} ${f.path}`).sort()).toEqual([
      'api-path-removed-without-deprecation POST /consultations/bookings/cancel',
      'request-property-became-required POST /consultations/bookings',
      'response-required-property-removed GET /consultations/bookings/{id}',
      'response-required-property-removed POST /consultations/bookings',
    ]);
  });

  test('the same changes pass when a changeset acknowledges each', () => {
    const changeset = [
      '---',
      "'@mkt/contracts': major",
      '---',
      '',
      'Bookings no longer carry their consultation title; cancelling moves to DELETE.',
      '',
      'acknowledge-breaking: response-required-property-removed GET /consultations/bookings/{id} — the title is read from the catalog',
      'acknowledge-breaking: response-required-property-removed POST /consultations/bookings — the same',
      'acknowledge-breaking: api-path-removed-without-deprecation POST /consultations/bookings/cancel — no client uses it (access logs)',
      'acknowledge-breaking: request-property-became-required post /consultations/bookings — coupons are mandatory now',
    ].join('\n');
    const verdict = httpGate(
      (doc) => {
        removeResponseField(doc);
        removePath(doc);
        requireRequestField(doc);
      },
      { 'drop-title.md': changeset },
    );
    expect(verdict).toMatchObject({ ok: true, refused: [], problems: [] });
    expect(verdict.acknowledged).toHaveLength(4);
    expect(verdict.acknowledged[0]).toMatchObject({ why: expect.any(String) });
  });

  test('an acknowledgement of another change, or one without a reason, lets nothing through', () => {
    const verdict = httpGate(removePath, {
      'a.md': `${bumps}acknowledge-breaking: api-path-removed-without-deprecation POST /consultations/bookings — wrong path\n`,
      'b.md': `${bumps}acknowledge-breaking: api-path-removed-without-deprecation POST /consultations/bookings/cancel\n`,
    });
    expect(verdict.ok).toBe(false);
    expect(verdict.refused).toEqual([expect.objectContaining({ id: 'api-path-removed-without-deprecation' })]);
    expect(verdict.problems).toEqual([expect.stringMatching(/^b\.md:4: expected/)]);
    expect(verdict.unused).toEqual([expect.objectContaining({ where: 'a.md:4' })]);
  });

  test('one line acknowledges one finding: two removed properties of one response need two lines', () => {
    const removeTwo = (doc: OpenApi) => {
      removeResponseField(doc);
      const booking = doc.components.schemas.Booking!;
      delete booking.properties.bookingId;
      booking.required = booking.required.filter((name) => name !== 'bookingId');
    };
    const line = 'acknowledge-breaking: response-required-property-removed GET /consultations/bookings/{id} — read from the catalog';
    const post = 'acknowledge-breaking: response-required-property-removed POST /consultations/bookings — the same';
    const once = httpGate(removeTwo, { 'drop.md': `${bumps}${line}\n${post}\n${post}\n` });
    expect(once.ok).toBe(false);
    expect(once.refused.map((f) => `${f.id} ${f.operation} ${f.path}`)).toEqual([
      'response-required-property-removed GET /consultations/bookings/{id}',
    ]);
    expect(once.acknowledged).toHaveLength(3);
    const twice = httpGate(removeTwo, { 'drop.md': `${bumps}${line}\n${line}\n${post}\n${post}\n` });
    expect(twice).toMatchObject({ ok: true, refused: [], unused: [] });
    expect(twice.acknowledged).toHaveLength(4);
  });

  test('the reason needs a separator with blanks around it: "GET /a-b" is a line without a reason', () => {
    const { acknowledgements, problems } = (() => {
      writeFileSync(
        join(dir, '.changeset', 'x.md'),
        `${bumps}acknowledge-breaking: api-path-removed-without-deprecation GET /a-b\nacknowledge-breaking: api-path-removed-without-deprecation GET /c-d -- why\n`,
      );
      return readAcknowledgements(join(dir, '.changeset'));
    })();
    expect(problems).toEqual([expect.stringMatching(/^x\.md:4: expected .*GET \/a-b"$/)]);
    expect(acknowledgements).toEqual([expect.objectContaining({ operation: 'GET', path: '/c-d', why: 'why' })]);
  });

  test('an acknowledgement in a changeset that bumps no package is refused (it would reach no release notes)', () => {
    const line = 'acknowledge-breaking: api-path-removed-without-deprecation POST /consultations/bookings/cancel — unused\n';
    const verdict = httpGate(removePath, { 'empty.md': `---\n---\n\n${line}`, 'none.md': line });
    expect(verdict.ok).toBe(false);
    expect(verdict.problems).toEqual([
      expect.stringMatching(/^empty\.md: acknowledges a breaking change but bumps no package/),
      expect.stringMatching(/^none\.md: acknowledges a breaking change but bumps no package/),
    ]);
  });

  test('WARN findings are refused too unless acknowledged: a removed property of a strict request body, a changed pattern', () => {
    const change = (doc: OpenApi) => {
      const body = doc.components.schemas.CreateBookingBody!;
      delete body.properties.notes;
      body.properties.currency!.pattern = '^(EUR|USD)$';
    };
    const verdict = httpGate(change);
    expect(verdict.ok).toBe(false);
    expect(verdict.refused.map((f) => `${f.level} ${f.id} ${f.operation} ${f.path}`).sort()).toEqual([
      'WARN request-property-pattern-changed POST /consultations/bookings',
      'WARN request-property-removed POST /consultations/bookings',
    ]);
    const acked = httpGate(change, {
      'notes.md': [
        bumps.trimEnd(),
        'acknowledge-breaking: request-property-removed POST /consultations/bookings — notes moved to the booking page',
        'acknowledge-breaking: request-property-pattern-changed POST /consultations/bookings — only EUR and USD are sold',
      ].join('\n'),
    });
    expect(acked).toMatchObject({ ok: true, refused: [], problems: [] });
  });

  test('a removed optional response property is listed as removed, not additive', () => {
    const verdict = httpGate((doc) => delete doc.components.schemas.Consultation!.properties.pendingRevision);
    expect(verdict).toMatchObject({ ok: true, refused: [], additive: [] });
    expect(verdict.removed.map((f) => f.id)).toContain('response-optional-property-removed');
    expect(reportOpenApi(verdict)).toMatch(/^Removed optional parts \(clients must already cope with their absence\) \(\d+\):\n/m);
    expect(reportOpenApi(verdict)).not.toMatch(/^Additive/m);
  });

  test('additive changes pass and are listed: a new optional request field, a new /v2 path', () => {
    const verdict = httpGate((doc) => {
      doc.components.schemas.CreateBookingBody!.properties.note = { type: 'string', maxLength: 500 };
      doc.paths['/v2/consultations/bookings'] = doc.paths['/consultations/bookings'];
    });
    expect(verdict).toMatchObject({ ok: true, refused: [] });
    expect(verdict.additive.map((f) => `${f.id} ${f.operation} ${f.path}`).sort()).toEqual([
      'endpoint-added GET /v2/consultations/bookings',
      'endpoint-added POST /v2/consultations/bookings',
      'new-optional-request-property POST /consultations/bookings',
    ]);
  });
});

describe('event gate (released JSON Schemas on disk)', () => {
  /** The event gate on the released schemas written to disk and read back, against `current`. */
  function eventGate(change: (schemas: Record<string, JsonSchema>) => void) {
    writeEventSchemas(join(dir, 'events'), eventJsonSchemas());
    const current = eventJsonSchemas();
    change(current);
    return judgeEventContracts(readEventSchemas(join(dir, 'events')), current);
  }
  type Props = Record<string, JsonSchema>;
  /** A change to the current schema of `consultation.booking.cancelled@1` (what its zod schema would now generate). */
  const cancelled = (edit: (schema: { properties: Props; required: string[] }) => void) => (schemas: Record<string, JsonSchema>) => {
    edit(schemas['consultation.booking.cancelled@1'] as { properties: Props; required: string[] });
  };

  test.each([
    ['a removed field', '/sellerId', cancelled((s) => delete s.properties.sellerId)],
    ['a retyped field', '/refundAmountMinor', cancelled((s) => (s.properties.refundAmountMinor = { type: 'string' }))],
    ['a new required field', '/currency', cancelled((s) => ((s.properties.currency = { type: 'string' }), s.required.push('currency')))],
    ['a narrowed enum', '/cancelledBy', cancelled((s) => (s.properties.cancelledBy = { type: 'string', enum: ['buyer', 'seller'] }))],
    [
      'a widened enum',
      '/cancelledBy',
      cancelled((s) => (s.properties.cancelledBy = { type: 'string', enum: ['buyer', 'seller', 'admin', 'system'] })),
    ],
  ])('%s is refused', (_name, path, change) => {
    const verdict = eventGate(change);
    expect(verdict.ok).toBe(false);
    expect(verdict.breaking.map((c) => `${c.contract} ${c.path}`)).toContain(`consultation.booking.cancelled@1 ${path}`);
  });

  test('a new optional field is accepted; a new version is additive', () => {
    const verdict = eventGate((schemas) => {
      const v1 = schemas['consultation.booking.cancelled@1']!;
      schemas['consultation.booking.cancelled@2'] = { ...v1, required: [...(v1.required as string[]), 'cancelledBy'] };
      cancelled((s) => (s.properties.reason = { type: 'string', maxLength: 200 }))(schemas);
    });
    expect(verdict).toEqual({
      ok: true,
      breaking: [],
      compatible: [
        { contract: 'consultation.booking.cancelled@1', path: '/reason', kind: 'compatible', change: 'optional property added' },
      ],
      added: ['consultation.booking.cancelled@2'],
    });
  });
});
