import { dirname, join } from 'node:path';
import { diag, DiagLogLevel, ROOT_CONTEXT, SpanKind, trace, TraceFlags, type Context, type Sampler } from '@opentelemetry/api';
import type * as SdkTrace from '@opentelemetry/sdk-trace';
import { samplerFromEnv } from '../src/tracing';

// kit builds the process's sampler from OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG and hands it
// to NodeSDK, so that its edge (`traceRequests`) asks the very sampler the SDK's spans ask. This
// pins that it is the sampler NodeSDK would have built itself from the same variables: sdk-node's
// own `createSamplerFromEnv` (not exported by the package; read from its file), and the
// TracerProvider's default when that returns nothing.

type CreateFromEnv = { createSamplerFromEnv: () => Sampler | undefined };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const fromEnv = require(join(dirname(require.resolve('@opentelemetry/sdk-node')), 'create-from-env.cjs')) as CreateFromEnv;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { AlwaysOnSampler, ParentBasedSampler } = require('@opentelemetry/sdk-trace') as typeof SdkTrace;

/** The SDK's sampler for the process's environment, as NodeSDK builds it when given none. */
function sdkSampler(): Sampler {
  return fromEnv.createSamplerFromEnv() ?? new ParentBasedSampler({ root: new AlwaysOnSampler() });
}

const VARIABLES = ['OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG'] as const;
const saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));
const errors: string[] = [];

beforeAll(() => {
  diag.setLogger(
    {
      error: (message: string) => errors.push(message),
      warn: () => undefined,
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    DiagLogLevel.ERROR,
  );
});

afterAll(() => {
  diag.disable();
  for (const name of VARIABLES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

/** Parents a request can arrive with: none, a sampled remote one, an unsampled remote one. */
const parent = (flags: TraceFlags): Context =>
  trace.setSpanContext(ROOT_CONTEXT, { traceId: 'a1'.repeat(16), spanId: 'b2'.repeat(8), traceFlags: flags, isRemote: true });
const PARENTS: Array<[string, Context]> = [
  ['no parent', ROOT_CONTEXT],
  ['a sampled parent', parent(TraceFlags.SAMPLED)],
  ['an unsampled parent', parent(TraceFlags.NONE)],
];
/** Trace ids from low to high, on either side of the ratios above. */
const TRACE_IDS = [
  '0'.repeat(31) + '1',
  '0'.repeat(16) + '19999999' + '0'.repeat(8),
  '0'.repeat(16) + '80000000' + '0'.repeat(8),
  'f'.repeat(32),
];

/** Each sampler's decision for every parent and trace id. */
function decisionsOf(sampler: Sampler): number[] {
  return PARENTS.flatMap(([, ctx]) => TRACE_IDS.map((id) => sampler.shouldSample(ctx, id, 'GET', SpanKind.SERVER, {}, []).decision));
}

const CASES: Array<[string, string | undefined, string | undefined]> = [
  ['always_on', 'always_on', undefined],
  ['always_off', 'always_off', undefined],
  ['traceidratio', 'traceidratio', '0.1'],
  ['parentbased_always_on', 'parentbased_always_on', undefined],
  ['parentbased_always_off', 'parentbased_always_off', undefined],
  ['parentbased_traceidratio', 'parentbased_traceidratio', '0.5'],
  ['unset', undefined, undefined],
  ['blank', '  ', undefined],
  ['an unknown name', 'sometimes', undefined],
  ['a ratio without its argument', 'parentbased_traceidratio', undefined],
  ['a ratio out of range', 'traceidratio', '1.5'],
  ['a ratio that is not a number', 'traceidratio', 'a tenth'],
  ['a blank ratio', 'parentbased_traceidratio', ' '],
];

test.each(CASES)('%s: the same sampler as the SDK builds, the same decisions, the same complaint', (_, name, arg) => {
  for (const [variable, value] of [
    ['OTEL_TRACES_SAMPLER', name],
    ['OTEL_TRACES_SAMPLER_ARG', arg],
  ] as const) {
    if (value === undefined) delete process.env[variable];
    else process.env[variable] = value;
  }
  errors.length = 0;
  const expected = sdkSampler();
  const sdkComplained = errors.length > 0;
  errors.length = 0;
  const built = samplerFromEnv(process.env);
  expect(built.toString()).toBe(expected.toString());
  expect(built.constructor).toBe(expected.constructor);
  expect(decisionsOf(built)).toEqual(decisionsOf(expected));
  // A value the SDK would not take is reported as the SDK reports it (through diag), not silently.
  expect(errors.length > 0).toBe(sdkComplained);
});
