import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

/**
 * The SDK as a client installs it: `npm pack` here (its `prepack` generates and builds), the
 * tarball installed with npm into a scratch project outside the workspace, a small program
 * compiled against it with `tsc` (the browser's lib, no Node.js types: the package's types need
 * none) and run with plain Node.js against a local server that fails on purpose — a read answered
 * 503 first, a transfer answered 409 in progress first — and pages a listing. Run with the
 * project's Node.js, and with every other Node.js ≥ 20 found on PATH (e.g. a machine's 20 or 22).
 */
const run = promisify(execFile);
const pkg = join(__dirname, '..');
const root = join(pkg, '../..');
const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
let scratch = '';
let server: Server;
let base = '';
let seen: Array<{ method: string; path: string; key: string | undefined; auth: string | undefined }> = [];
let walletReads = 0;
let transfers = 0;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'mkt-client-pack-'));
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const key = req.headers['idempotency-key'];
      seen.push({
        method: req.method ?? '',
        path: url.pathname,
        key: typeof key === 'string' ? key : undefined,
        auth: req.headers.authorization,
      });
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const error = (status: number, code: string) =>
        json(status, { success: false, message: code, errors: [{ path: '', code, message: code }] });
      if (req.method === 'POST' && url.pathname === '/v1/auth/login')
        return json(200, {
          success: true,
          message: 'ok',
          data: { user: { id: 'u1' }, accessToken: 'a.e30.s', refreshToken: 'r1', tokenType: 'Bearer', expiresIn: 900 },
        });
      if (req.method === 'GET' && url.pathname === '/v1/wallet')
        return ++walletReads === 1
          ? error(503, 'unavailable')
          : json(200, { success: true, message: 'ok', data: { etbAvailableBalance: 12.5 } });
      if (req.method === 'POST' && url.pathname === '/v1/wallet/transfers')
        return ++transfers === 1 ? error(409, 'conflict') : json(200, { success: true, message: 'ok', data: { transferId: 't-1' } });
      if (req.method === 'GET' && url.pathname === '/customers') {
        const page = Number(url.searchParams.get('page'));
        const all = ['c1', 'c2', 'c3'].map((id) => ({ id, buyerId: `b-${id}` }));
        const limit = Number(url.searchParams.get('limit'));
        return json(200, {
          success: true,
          message: 'ok',
          data: { customers: all.slice((page - 1) * limit, page * limit), pagination: { page, limit, total: all.length } },
        });
      }
      return error(404, 'not_found');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const PROGRAM = `
import { ApiError, MarketplaceClient, type ItemOf } from '@mkt/client';

declare const process: { argv: string[] };
const sdk = new MarketplaceClient({ baseUrl: process.argv[2]!, initialRetryDelayMs: 10 });
await sdk.signIn('buyer@example.com', 'a long password');
const wallet = await sdk.ok(sdk.api.GET('/v1/wallet'));
const balance: number = wallet.data.etbAvailableBalance;
const transfer = await sdk.ok(
  sdk.api.POST('/v1/wallet/transfers', { body: { toUserId: '3f1c2a7e-8d4b-4c1e-9a2f-5b6c7d8e9f01', amount: 100, currency: 'ETB' } }),
);
const buyers: string[] = [];
for await (const customer of sdk.items('/customers', {}, { limit: 2 })) {
  const typed: ItemOf<'/customers'> = customer;
  buyers.push(typed.buyerId);
}
const missing = await sdk.ok(sdk.api.GET('/v1/auth/me')).catch((e: unknown) => e);
console.log(JSON.stringify({ balance, transfer: transfer.data, buyers, missing: missing instanceof ApiError ? missing.code : String(missing) }));
`;

test('npm pack → npm install in a project outside the workspace → tsc → node, against a server that fails on purpose', async () => {
  const packed = await run('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: pkg, maxBuffer: 16 * 1024 * 1024 });
  // The JSON follows whatever the lifecycle scripts printed.
  const [{ filename, files }] = JSON.parse(packed.stdout.slice(packed.stdout.search(/^\[\s*$/m))) as [
    { filename: string; files: Array<{ path: string }> },
  ];
  const paths = files.map((f) => f.path);
  expect(paths).toEqual(
    expect.arrayContaining(['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/generated/openapi.d.ts']),
  );
  expect(paths.filter((p) => p.startsWith('test/') || p.startsWith('scripts/') || p.endsWith('.tsbuildinfo'))).toEqual([]);

  const app = join(scratch, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module' }));
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', join(scratch, filename)], {
    cwd: app,
    maxBuffer: 16 * 1024 * 1024,
  });
  expect(readdirSync(join(app, 'node_modules/@mkt/client/dist'))).toContain('index.js');

  writeFileSync(join(app, 'program.ts'), PROGRAM);
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2022', 'DOM', 'DOM.Iterable'],
        types: [],
        strict: true,
        noUncheckedIndexedAccess: true,
        outDir: 'out',
      },
      files: ['program.ts'],
    }),
  );
  await run(process.execPath, [tsc, '-p', app], { cwd: app }).catch((e: { stdout?: string }) => {
    throw new Error(`tsc failed:\n${e.stdout ?? String(e)}`);
  });

  for (const node of [process.execPath, ...otherNodes()]) {
    seen = [];
    walletReads = 0;
    transfers = 0;
    const { stdout } = await run(node, [join(app, 'out/program.js'), base], { cwd: app });
    expect({ node, answer: JSON.parse(stdout) }).toEqual({
      node,
      answer: { balance: 12.5, transfer: { transferId: 't-1' }, buyers: ['b-c1', 'b-c2', 'b-c3'], missing: 'not_found' },
    });
    // The read was sent twice (503, then 200); the transfer twice with one key (409 in progress, then done).
    expect(seen.filter((s) => s.path === '/v1/wallet')).toHaveLength(2);
    const sent = seen.filter((s) => s.path === '/v1/wallet/transfers');
    expect(sent).toHaveLength(2);
    expect(sent[0]!.key).toBeTruthy();
    expect(sent[1]!.key).toBe(sent[0]!.key);
    expect(sent.every((t) => t.auth === 'Bearer a.e30.s')).toBe(true);
  }

  // CommonJS too: require() finds the same exports.
  const cjs = await run(
    process.execPath,
    ['-e', "const c = require('@mkt/client'); console.log(typeof c.MarketplaceClient, typeof c.ApiError)"],
    { cwd: app },
  );
  expect(cjs.stdout.trim()).toBe('function function');
}, 300_000);

/** The `node` executables on PATH other than this one whose major is 20 or later. */
function otherNodes(): string[] {
  const found = new Set<string>();
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'node');
    if (!dir || !existsSync(candidate)) continue;
    const real = realpathSync(candidate);
    if (real === realpathSync(process.execPath) || found.has(real)) continue;
    const version = spawnSync(real, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';
    if (Number(/^v(\d+)\./.exec(version)?.[1] ?? 0) >= 20) found.add(real);
  }
  return [...found];
}
