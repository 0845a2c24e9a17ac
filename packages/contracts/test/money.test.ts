import {
  CreateDiscountBody,
  decimalStringToMinor,
  formatMinor,
  majorToMinor,
  minorToMajor,
  NonNegativeMajorAmount,
  NonNegativeMoneyParam,
  parseMoney,
  PositiveDecimalString,
  PositiveMajorAmount,
  withMinorNames,
} from '@mkt/contracts';
import { z } from 'zod';

describe('parseMoney: the one money parser', () => {
  test.each([
    ['0', 0],
    ['0.00', 0],
    ['1', 100],
    ['1.1', 110],
    ['1.10', 110],
    ['19.99', 1999],
    ['0.01', 1],
    ['0.5', 50],
    ['150.00', 15000],
    ['  7.25 ', 725],
    ['-0.01', -1],
    ['-12.34', -1234],
    ['-0', 0],
    ['007.50', 750],
    ['90071992547409.91', 9007199254740991],
  ])('the string %j is %d minor units', (input, minor) => {
    expect(parseMoney(input)).toBe(minor);
  });

  test.each([
    [0, 0],
    [-0, 0],
    [1.1, 110],
    [1.1, 110],
    [19.99, 1999],
    [0.01, 1],
    [0.29, 29],
    [0.57, 57],
    [1.15, 115],
    [4.35, 435],
    [1.005e3, 100500],
    [1e2, 10000],
    [-12.34, -1234],
    [123456789.12, 12345678912],
    [9999999999999.99, 999999999999999],
  ])('the number %p is %d minor units', (input, minor) => {
    expect(parseMoney(input)).toBe(minor);
  });

  test.each([
    '2.6e-42',
    '1e5',
    '1E2',
    '1.5e1',
    '1e+21',
    '1.005',
    '0.001',
    '12.345',
    '.5',
    '5.',
    '+5',
    '1,000.00',
    '1 000',
    '0x10',
    'abc',
    '',
    ' ',
    '--1',
    '1.2.3',
    'NaN',
    'Infinity',
    '99999999999999999999',
    '90071992547409.92',
  ])('the string %j is refused', (input) => {
    expect(parseMoney(input)).toBeNull();
  });

  test.each([
    2.6e-42,
    1e-7,
    5e-324,
    1e21,
    1e20,
    1.005,
    0.001,
    12.345,
    0.1 + 0.2,
    1.1 * 3,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    Number.MAX_VALUE,
    90071992547409.91,
    1e13,
  ])('the number %p is refused', (input) => {
    expect(parseMoney(input)).toBeNull();
  });

  test('anything that is neither a string nor a number is refused', () => {
    for (const input of [null, undefined, true, {}, [], ['1.00']]) expect(parseMoney(input as unknown as string)).toBeNull();
  });

  test('every cent from 0.00 to 99.99 parses exactly, as a number and as a string', () => {
    for (let minor = 0; minor < 10_000; minor += 1) {
      const text = formatMinor(minor);
      expect(parseMoney(text)).toBe(minor);
      expect(parseMoney(Number(text))).toBe(minor);
    }
  });

  test('decimalStringToMinor and majorToMinor are the same parser', () => {
    expect(majorToMinor(2.6e-42)).toBeNull();
    expect(decimalStringToMinor('2.6e-42')).toBeNull();
    expect(majorToMinor(19.99)).toBe(1999);
  });
});

describe('money schemas', () => {
  test('major amounts: exponent forms and sub-cent values are 400s, not 0', () => {
    expect(NonNegativeMajorAmount.safeParse(2.6e-42).success).toBe(false);
    expect(PositiveMajorAmount.safeParse(2.6e-42).success).toBe(false);
    expect(NonNegativeMajorAmount.parse(0)).toBe(0);
    expect(NonNegativeMajorAmount.safeParse(-0.01).success).toBe(false);
    expect(NonNegativeMajorAmount.parse(19.99)).toBe(1999);
    expect(PositiveMajorAmount.safeParse(-5).success).toBe(false);
  });
  test('query amounts parse to minor units', () => {
    expect(NonNegativeMoneyParam.parse('9.99')).toBe(999);
    expect(NonNegativeMoneyParam.parse('0')).toBe(0);
    for (const bad of ['-1', '1e3', '9.999', 'x', '']) expect(NonNegativeMoneyParam.safeParse(bad).success).toBe(false);
  });
  test('a fixed discount of 1.10 or 19.99 is valid; 0.001 and 2.6e-42 are not', () => {
    const discount = (discountValue: number) => ({
      name: 'Launch',
      discountType: 'Fixed',
      discountValue,
      validFrom: '2030-01-01T00:00:00.000Z',
      validTo: '2030-02-01T00:00:00.000Z',
      couponCode: 'LAUNCH',
      maxUses: 10,
    });
    for (const ok of [1.1, 1.1, 19.99, 0.29, 100]) expect(CreateDiscountBody.safeParse(discount(ok)).success).toBe(true);
    for (const bad of [0.001, 2.6e-42, 1.005]) {
      const result = CreateDiscountBody.safeParse(discount(bad));
      expect(result.success).toBe(false);
      expect(result.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['discountValue']);
    }
  });
});

describe('money', () => {
  test('a real third decimal is refused', () => {
    expect(majorToMinor(1.005)).toBeNull();
    expect(decimalStringToMinor('1.005')).toBeNull();
  });
  test('2-decimal strings round-trip', () => {
    expect(decimalStringToMinor('150.00')).toBe(15000);
    expect(decimalStringToMinor('0.5')).toBe(50);
    expect(formatMinor(15000)).toBe('150.00');
    expect(formatMinor(5)).toBe('0.05');
  });
  test('negative amounts keep their sign', () => {
    expect(decimalStringToMinor('-0.01')).toBe(-1);
    expect(formatMinor(-1)).toBe('-0.01');
    expect(majorToMinor(-12.34)).toBe(-1234);
  });
  test('huge amounts beyond exact integers are refused', () => {
    expect(majorToMinor(1e20)).toBeNull();
    expect(decimalStringToMinor('99999999999999999999')).toBeNull();
    expect(() => formatMinor(2 ** 60)).toThrow(RangeError);
    expect(majorToMinor(90071992547409.91)).toBeNull();
    expect(decimalStringToMinor('90071992547409.91')).toBe(9007199254740991);
  });
  test('minor to major is exact for display', () => {
    expect(minorToMajor(1234)).toBe(12.34);
    expect(minorToMajor(0)).toBe(0);
  });
  test('schemas parse to minor units and refuse zero, negatives and extra decimals', () => {
    expect(PositiveMajorAmount.parse(12.5)).toBe(1250);
    expect(PositiveMajorAmount.safeParse(0).success).toBe(false);
    expect(PositiveMajorAmount.safeParse(1.234).success).toBe(false);
    expect(PositiveDecimalString.parse('150.00')).toBe(15000);
    for (const bad of ['0', '0.00', '-5.00', '1.234', 'abc', '']) expect(PositiveDecimalString.safeParse(bad).success).toBe(false);
  });
  test('garbage is not money', () => {
    expect(majorToMinor(Number.NaN)).toBeNull();
    expect(majorToMinor(Number.POSITIVE_INFINITY)).toBeNull();
    expect(decimalStringToMinor('1e5')).toBeNull();
  });
});

describe('withMinorNames', () => {
  const Body = z
    .object({ price: NonNegativeMajorAmount, compare: NonNegativeMajorAmount.optional(), name: z.string() })
    .strict()
    .transform(withMinorNames(['price', 'compare']));

  test('renames the parsed amounts and nothing else', () => {
    const parsed: { priceMinor: number; compareMinor?: number; name: string } = Body.parse({ price: 12.5, compare: 20, name: 'x' });
    expect(parsed).toEqual({ priceMinor: 1250, compareMinor: 2000, name: 'x' });
  });

  test('an absent optional amount stays absent', () => {
    expect(Body.parse({ price: 1, name: 'x' })).toEqual({ priceMinor: 100, name: 'x' });
  });

  test('a bad amount is still reported under the name the client sent', () => {
    const result = Body.safeParse({ price: 1.234, name: 'x' });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]!.path).toEqual(['price']);
  });
});
