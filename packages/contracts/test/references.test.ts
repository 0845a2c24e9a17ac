import {
  INTERNAL_ID_KINDS,
  PREFIXED_KINDS,
  UNDERSCORE_KINDS,
  isReferenceOf,
  newInternalId,
  newReference,
  newUnderscoreReference,
  parseReference,
  referenceOf,
  referencePattern,
  type PrefixedKind,
  type UnderscoreKind,
} from '@mkt/contracts';

describe('references', () => {
  test.each(PREFIXED_KINDS)('%s references are made and read back', (kind) => {
    const ref = newReference(kind, 'MKT');
    expect(ref).toMatch(new RegExp(`^MKT-${kind}-[A-Z0-9]{8}$`));
    expect(parseReference(ref)).toEqual({ prefix: 'MKT', kind, suffix: ref.slice(-8) });
  });
  test.each(UNDERSCORE_KINDS)('%s_ references are made and read back', (kind) => {
    const ref = newUnderscoreReference(kind);
    expect(ref).toMatch(new RegExp(`^${kind}_[A-Z0-9]{8}$`));
    expect(parseReference(ref)?.kind).toBe(kind);
  });
  test('USR-WAL is never read as USR', () => {
    const wallet = newReference('USR-WAL');
    expect(isReferenceOf(wallet, 'USR-WAL')).toBe(true);
    expect(isReferenceOf(wallet, 'USR')).toBe(false);
  });
  test('a configured prefix is kept', () => {
    expect(parseReference(newReference('TOP-UP', 'ACME'))?.prefix).toBe('ACME');
  });
  test('malformed references are refused', () => {
    for (const bad of ['MKT-USR-abc12345', 'MKT-USR-ABC1234', 'MKT-XYZ-ABCD1234', 'BK_abc', 'bk_ABCD1234', '']) {
      expect(parseReference(bad)).toBeNull();
    }
    expect(referenceOf('CON').safeParse('MKT-CAT-ABCD1234').success).toBe(false);
  });
  test.each(INTERNAL_ID_KINDS)('%s_ internal ids are lower case', (kind) => {
    expect(newInternalId(kind)).toMatch(new RegExp(`^${kind}_[a-z0-9]{16}$`));
  });
  test('suffixes do not repeat', () => {
    const refs = new Set(Array.from({ length: 1000 }, () => newReference('CON')));
    expect(refs.size).toBe(1000);
  });
});

describe('referencePattern', () => {
  const kinds: Array<PrefixedKind | UnderscoreKind> = [...PREFIXED_KINDS, ...UNDERSCORE_KINDS];
  test.each(kinds)('%s: the pattern and the parser agree', (kind) => {
    const made = (PREFIXED_KINDS as readonly string[]).includes(kind)
      ? newReference(kind as PrefixedKind, 'SHOP2')
      : newUnderscoreReference(kind as UnderscoreKind);
    expect(referencePattern(kind).test(made)).toBe(true);
    expect(isReferenceOf(made, kind)).toBe(true);
    expect(referencePattern(kind).test(` ${made}`)).toBe(false);
    for (const other of kinds.filter((k) => k !== kind)) expect(referencePattern(other).test(made)).toBe(isReferenceOf(made, other));
  });
});
