import { decimalStringToMinor, formatMinor, majorToMinor, minorToMajor, PositiveDecimalString, PositiveMajorAmount } from '@mkt/contracts';

describe('money', () => {
  test('0.1 + 0.2 is 30 minor units, not 30.000000000000004', () => {
    expect(majorToMinor(0.1 + 0.2)).toBe(30);
  });
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
    expect(majorToMinor(90071992547409.91)).toBe(9007199254740991);
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
