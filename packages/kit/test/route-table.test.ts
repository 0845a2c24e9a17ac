import { RouteTable, allowOf, compilePath, expressPath, matchPath } from '../src/http/route-table';

describe('compilePath and matchPath', () => {
  test.each([
    ['/reviews/{id}', '/reviews/r1', { id: 'r1' }],
    ['/reviews/{id}', '/reviews/', null],
    ['/reviews/{id}', '/reviews/r1/', null],
    ['/reviews/{id}', '/Reviews/r1', null],
    ['/reviews/{id}', '/reviews//r1', null],
    ['/a/', '/a/', {}],
    ['/a/', '/a', null],
    ['/a', '/a/', null],
    ['/a/{x}/b/{y}', '/a/1/b/%2F2', { x: '1', y: '/2' }],
    ['/a/bookings', '/a/%62ookings', null],
  ])('%s against %s', (template, path, params) => {
    expect(matchPath(compilePath(template), path)).toEqual(params);
  });

  test('a segment is a literal or one whole parameter', () => {
    expect(() => compilePath('/a/:id')).toThrow();
    expect(() => compilePath('/a/x{id}')).toThrow();
    expect(() => compilePath('a')).toThrow();
    expect(compilePath('/a/{id}/b').params).toBe(1);
  });

  test('express spelling for labels, Allow with HEAD beside GET', () => {
    expect(expressPath('/a/{id}/b/{c}')).toBe('/a/:id/b/:c');
    expect(allowOf(['post', 'get', 'delete'])).toEqual(['DELETE', 'GET', 'HEAD', 'POST']);
  });
});

describe('RouteTable.lookup', () => {
  const table = new RouteTable<string>();
  table.add('post', '/orders/cancel', 'cancel');
  table.add('get', '/orders/{id}', 'get');
  table.add('put', '/orders/{id}', 'put');
  table.add('get', '/orders/{id}/lines', 'lines');

  test.each([
    ['POST', '/orders/cancel', { kind: 'found', value: 'cancel', params: {} }],
    ['GET', '/orders/o1', { kind: 'found', value: 'get', params: { id: 'o1' } }],
    ['HEAD', '/orders/o1', { kind: 'found', value: 'get', params: { id: 'o1' } }],
    ['PUT', '/orders/o1', { kind: 'found', value: 'put', params: { id: 'o1' } }],
    ['GET', '/orders/cancel', { kind: 'method', allow: ['POST'], takenByParameter: true }],
    ['DELETE', '/orders/cancel', { kind: 'method', allow: ['POST'], takenByParameter: false }],
    ['DELETE', '/orders/o1', { kind: 'method', allow: ['GET', 'HEAD', 'PUT'], takenByParameter: false }],
    ['GET', '/orders', { kind: 'none' }],
    ['GET', '/orders/o1/LINES', { kind: 'none' }],
  ])('%s %s', (method, path, expected) => {
    const found = table.lookup(method, path);
    const shown = found.kind === 'found' ? { kind: found.kind, value: found.route.value, params: found.params } : found;
    expect(shown).toEqual(expected);
  });

  test('a route mounted twice is refused', () => {
    expect(() => table.add('get', '/orders/{id}', 'again')).toThrow('mounted twice');
  });
});
