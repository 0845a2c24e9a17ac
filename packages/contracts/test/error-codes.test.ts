import { buildOpenApi, ErrorCode } from '@mkt/contracts';

describe('error codes in the OpenAPI document', () => {
  test('the error envelope lists every stable code, the wallet’s included', () => {
    const body = buildOpenApi().components.schemas.ErrorBody as unknown as {
      properties: { errors: { items: { properties: { code: { examples: string[] } } } } };
    };
    const codes = body.properties.errors.items.properties.code.examples;
    expect(codes).toEqual(Object.values(ErrorCode));
    expect(codes).toEqual(
      expect.arrayContaining(['currency_mismatch', 'balance_limit_exceeded', 'amount_too_large', 'insufficient_funds']),
    );
  });
});
