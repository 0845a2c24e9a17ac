import { dirname } from 'node:path';
import { static as serveStatic, type Express } from 'express';
import type * as Contracts from '@mkt/contracts';
import { mountRoute } from '@mkt/kit/http';

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Marketplace API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script></body></html>`;

const init = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true });`;

/**
 * Swagger UI's files, found through its package.json: the package's index would load its whole
 * browser bundle (≈ 25 MB resident) into the gateway, which only serves the files.
 */
const swaggerUiFiles = () => dirname(require.resolve('swagger-ui-dist/package.json'));

/** A JSON document built on its first request, then kept serialized (the built objects are let go). */
function builtOnce(build: () => unknown): () => string {
  let json: string | undefined;
  return () => (json ??= JSON.stringify(build()));
}

/**
 * The contracts' index, loaded on the first request for a document: it holds the OpenAPI and
 * AsyncAPI builders (zod-openapi, every area's schemas), which nothing on the request path needs.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadContracts = () => require('@mkt/contracts') as typeof Contracts;

/**
 * `/openapi.json` and `/asyncapi.json` (the HTTP API and the event bus, each built from the
 * contracts on its first request and kept) and `/docs` (Swagger UI served from npm, no CDN):
 * documents about the tables, not entries of them. A gateway nobody asks for its documents
 * never builds them.
 */
export function mountDocs(app: Express, publicUrl: string): void {
  const document = builtOnce(() => loadContracts().buildOpenApi(publicUrl));
  const events = builtOnce(() => loadContracts().buildAsyncApi());
  mountRoute(app, 'get', '/openapi.json', (_req, res) => {
    res.type('json').send(document());
  });
  mountRoute(app, 'get', '/asyncapi.json', (_req, res) => {
    res.type('json').send(events());
  });
  mountRoute(app, 'get', '/docs', (_req, res) => {
    res.type('html').send(page);
  });
  mountRoute(app, 'get', '/docs/init.js', (_req, res) => {
    res.type('application/javascript').send(init);
  });
  app.use('/docs/assets', serveStatic(swaggerUiFiles(), { index: false, maxAge: '1d' }));
}
