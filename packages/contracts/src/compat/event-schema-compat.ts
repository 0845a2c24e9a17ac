import { z } from 'zod';
import { EVENT_CONTRACTS, EventEnvelope, eventContractList, type EventRegistry } from '../events';

/**
 * Whether the data of a released event `type@version` and the data of the same `type@version`
 * now can still be read both ways: a consumer on the previous release reads what the new
 * producer sends, and a new consumer reads what a producer on the previous release sends (a
 * rolling update runs both at once). Consumers parse with zod's open-content model: unknown
 * fields are dropped, not refused — unless the released schema closes the object. So:
 * - compatible: a new optional property (at any depth) of an object the released schema leaves
 *   open; description, title, examples, defaults;
 * - breaking: a removed property, a changed type, a new required property, optional → required
 *   or required → optional, enum or const values added or removed, any changed constraint
 *   (format, pattern, minimum/maximum, lengths, item counts, multipleOf), a changed union, any
 *   other keyword changed (conservative: what it does not know, it refuses);
 * - `additionalProperties` (and `unevaluatedProperties`): a schema is compared as any other (the
 *   value type of a `z.record`, path `/{*}`); a change to or from `false` is breaking; a property
 *   added to an object the released side closes (`false`) is breaking, and one added where it
 *   gives the other properties a schema must still read as that schema. Absent, `true` and `{}`
 *   are the same: open.
 * Written here rather than taken from npm: the JSON Schema diff libraries either compare the sets
 * of accepted values one way (an added optional property then narrows an open object), or flag
 * every removed node, docs included (packages/contracts/README.md, "Event contracts").
 */

export type JsonSchema = { [key: string]: unknown };

export interface SchemaChange {
  /** Where in `data`: `/` for the top, `/buyerIds/[]` for the items of an array, `/totals/{*}` for the values of a record. */
  path: string;
  kind: 'breaking' | 'compatible';
  change: string;
}

/** Keywords that document and never decide what a reader accepts. */
const DOC_KEYWORDS = new Set([
  '$schema',
  '$id',
  '$comment',
  'description',
  'title',
  'examples',
  'example',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
]);
/** What an object says of the properties it does not list: compared below, not as a constraint. */
const OPEN_CONTENT = new Set(['additionalProperties', 'unevaluatedProperties']);
const STRUCTURE = new Set(['type', 'properties', 'required', 'items', 'prefixItems', 'anyOf', 'oneOf', 'allOf', 'enum', 'const']);

const isObject = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null && !Array.isArray(value);
/** `additionalProperties` as a reader applies it: `false` (closed) or the schema of the others (`{}`: anything). */
const others = (value: unknown): JsonSchema | false => (value === false ? false : isObject(value) ? value : {});
const types = (schema: JsonSchema): string[] => (schema.type === undefined ? [] : [schema.type].flat().map(String).sort());
const equal = (a: unknown, b: unknown): boolean => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, canonical(value[key])]),
  );
}
const join = (path: string, part: string) => (path === '/' ? `/${part}` : `${path}/${part}`);
const show = (value: unknown) => JSON.stringify(value);

/** Every difference between two JSON Schemas of event data that matters to a reader, classified. */
export function compareEventSchemas(released: JsonSchema, current: JsonSchema, path = '/'): SchemaChange[] {
  const changes: SchemaChange[] = [];
  const breaking = (at: string, change: string) => changes.push({ path: at, kind: 'breaking', change });

  if (!equal(types(released), types(current))) breaking(path, `type ${show(released.type ?? 'any')} → ${show(current.type ?? 'any')}`);

  for (const key of ['enum', 'const'] as const) {
    if (!(key in released) && !(key in current)) continue;
    const before = key in released ? [released[key]].flat() : null;
    const after = key in current ? [current[key]].flat() : null;
    if (before === null || after === null) {
      breaking(path, `${key} ${before === null ? 'added' : 'removed'}`);
      continue;
    }
    const added = after.filter((v) => !before.some((w) => equal(v, w)));
    const removed = before.filter((v) => !after.some((w) => equal(v, w)));
    if (added.length) breaking(path, `${key} values added: ${added.map(show).join(', ')} (a reader of the previous release refuses them)`);
    if (removed.length)
      breaking(path, `${key} values removed: ${removed.map(show).join(', ')} (a producer of the previous release still sends them)`);
  }

  const beforeProps = isObject(released.properties) ? released.properties : {};
  const afterProps = isObject(current.properties) ? current.properties : {};
  const beforeRequired = new Set(Array.isArray(released.required) ? (released.required as string[]) : []);
  const afterRequired = new Set(Array.isArray(current.required) ? (current.required as string[]) : []);
  for (const name of Object.keys(beforeProps))
    if (!(name in afterProps)) breaking(join(path, name), `property removed (was ${beforeRequired.has(name) ? 'required' : 'optional'})`);
  for (const name of Object.keys(afterProps)) {
    const at = join(path, name);
    if (!(name in beforeProps)) {
      if (afterRequired.has(name)) breaking(at, 'new required property (a producer of the previous release does not send it)');
      else if (closedBy(released)) breaking(at, `property added to an object the released schema closes (${closedBy(released)}: false)`);
      else if (!readsAsOthers(released, afterProps[name]))
        breaking(at, 'property added whose value does not read as the released additionalProperties schema');
      else changes.push({ path: at, kind: 'compatible', change: 'optional property added' });
      continue;
    }
    if (beforeRequired.has(name) && !afterRequired.has(name))
      breaking(at, 'required → optional (a reader of the previous release needs it)');
    if (!beforeRequired.has(name) && afterRequired.has(name))
      breaking(at, 'optional → required (a producer of the previous release may leave it out)');
    changes.push(...compareEventSchemas(asSchema(beforeProps[name]), asSchema(afterProps[name]), at));
  }
  for (const name of new Set([...beforeRequired, ...afterRequired]))
    if (!(name in beforeProps) && !(name in afterProps) && beforeRequired.has(name) !== afterRequired.has(name))
      breaking(join(path, name), `required without a property: ${beforeRequired.has(name) ? 'removed' : 'added'}`);

  for (const key of OPEN_CONTENT) {
    if (!(key in released) && !(key in current)) continue;
    const before = others(released[key]);
    const after = others(current[key]);
    const at = join(path, key === 'additionalProperties' ? '{*}' : '{unevaluated}');
    if (before === false || after === false) {
      if (before !== after)
        breaking(path, `${key} ${key in released ? show(released[key]) : '(none)'} → ${key in current ? show(current[key]) : '(none)'}`);
    } else changes.push(...compareEventSchemas(before, after, at));
  }

  if ('items' in released || 'items' in current) {
    if (isObject(released.items) && isObject(current.items))
      changes.push(...compareEventSchemas(released.items, current.items, join(path, '[]')));
    else if (!equal(released.items, current.items)) breaking(join(path, '[]'), 'items changed');
  }
  for (const key of ['prefixItems', 'anyOf', 'oneOf', 'allOf'] as const) {
    if (!(key in released) && !(key in current)) continue;
    const before = Array.isArray(released[key]) ? (released[key] as unknown[]) : [];
    const after = Array.isArray(current[key]) ? (current[key] as unknown[]) : [];
    if (before.length !== after.length) {
      breaking(path, `${key} has ${after.length} branches instead of ${before.length}`);
      continue;
    }
    before.forEach((branch, index) =>
      changes.push(...compareEventSchemas(asSchema(branch), asSchema(after[index]), join(path, `${key}[${index}]`))),
    );
  }

  // Constraints (format, pattern, minimum, maxLength...) and any keyword not known above.
  for (const key of new Set([...Object.keys(released), ...Object.keys(current)])) {
    if (DOC_KEYWORDS.has(key) || OPEN_CONTENT.has(key) || STRUCTURE.has(key)) continue;
    if (!equal(released[key], current[key]))
      breaking(path, `${key} ${key in released ? show(released[key]) : '(none)'} → ${key in current ? show(current[key]) : '(none)'}`);
  }
  return changes;
}

/** The keyword with which a schema closes its object (`additionalProperties: false`...), if it does. */
const closedBy = (schema: JsonSchema): string | undefined => [...OPEN_CONTENT].find((key) => schema[key] === false);
/** Whether a new property's value still reads as the released schema of unlisted properties. */
const readsAsOthers = (released: JsonSchema, property: unknown): boolean =>
  [...OPEN_CONTENT].every((key) => {
    const schema = others(released[key]);
    return (
      schema === false ||
      Object.keys(schema).length === 0 ||
      compareEventSchemas(schema, asSchema(property)).every((c) => c.kind !== 'breaking')
    );
  });

const asSchema = (value: unknown): JsonSchema => (isObject(value) ? value : value === false ? { not: {} } : {});

/** The JSON Schema of one event version's data, as committed in contracts/released/events/. */
export function eventJsonSchema(schema: z.ZodType): JsonSchema {
  // `input`: what a consumer's parse accepts (zod's `output` adds `additionalProperties: false`,
  // which a reader that drops unknown fields does not mean).
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'throw' }) as JsonSchema;
}

/** `<type>@<version>` → JSON Schema of `data`, for every contract of a registry. */
export function eventJsonSchemas(registry: EventRegistry = EVENT_CONTRACTS): Record<string, JsonSchema> {
  return Object.fromEntries(
    eventContractList(registry).map(({ type, version, schema }) => [`${type}@${version}`, eventJsonSchema(schema)]),
  );
}

/** The envelope's name among the released event contracts: `contracts/released/events/envelope.json`. */
export const ENVELOPE_CONTRACT = 'envelope';

/** The JSON Schema of the envelope every event travels in (`EventEnvelope`), generated as the data schemas are. */
export const eventEnvelopeJsonSchema = (): JsonSchema => eventJsonSchema(EventEnvelope);

/**
 * What `contracts/released/events/` holds and the event gate compares: the envelope
 * (`ENVELOPE_CONTRACT`) and the data of every `type@version`, by the same rules.
 */
export function releasedEventContracts(registry: EventRegistry = EVENT_CONTRACTS): Record<string, JsonSchema> {
  return { [ENVELOPE_CONTRACT]: eventEnvelopeJsonSchema(), ...eventJsonSchemas(registry) };
}

export interface EventContractVerdict {
  ok: boolean;
  /** Released `type@version`s changed so that a reader on one side of a rolling update fails. */
  breaking: Array<{ contract: string } & SchemaChange>;
  /** Compatible changes of released contracts (new optional properties). */
  compatible: Array<{ contract: string } & SchemaChange>;
  /** `type@version`s not released yet: additive (and the envelope, when the released contracts predate its snapshot). */
  added: string[];
}

/**
 * The event gate: every released `type@version` must still exist and read both ways; new ones
 * are additive. No acknowledgement: an incompatible change is a new version.
 */
export function judgeEventContracts(released: Record<string, JsonSchema>, current: Record<string, JsonSchema>): EventContractVerdict {
  const breaking: EventContractVerdict['breaking'] = [];
  const compatible: EventContractVerdict['compatible'] = [];
  for (const [contract, schema] of Object.entries(released)) {
    const now = current[contract];
    if (!now) {
      breaking.push({
        contract,
        path: '/',
        kind: 'breaking',
        change:
          contract === ENVELOPE_CONTRACT
            ? 'released envelope schema missing'
            : 'released type@version removed (a consumer of the previous release reads it)',
      });
      continue;
    }
    for (const change of compareEventSchemas(schema, now))
      (change.kind === 'breaking' ? breaking : compatible).push({ contract, ...change });
  }
  const added = Object.keys(current).filter((contract) => !(contract in released));
  return { ok: breaking.length === 0, breaking, compatible, added };
}
