import { buildOpenApi, ErrorCode } from '@mkt/contracts';

describe('error codes in the OpenAPI document', () => {
  test('the error envelope lists every stable code, the wallet’s included', () => {
    const { schemas } = buildOpenApi().components;
    // ErrorBody.errors is a list of FieldError (a named schema).
    expect((schemas.ErrorBody as unknown as { properties: { errors: { items: unknown } } }).properties.errors.items).toEqual({
      $ref: '#/components/schemas/FieldError',
    });
    const item = schemas.FieldError as unknown as { properties: { code: { examples: string[] } } };
    const codes = item.properties.code.examples;
    expect(codes).toEqual(Object.values(ErrorCode));
    expect(codes).toEqual(
      expect.arrayContaining(['currency_mismatch', 'balance_limit_exceeded', 'amount_too_large', 'insufficient_funds']),
    );
  });
});
