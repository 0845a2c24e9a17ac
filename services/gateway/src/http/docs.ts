import { static as serveStatic, type Express } from 'express';
import { buildAsyncApi, buildOpenApi } from '@mkt/contracts';
import { mountRoute } from '@mkt/kit/http';
import { getAbsoluteFSPath } from 'swagger-ui-dist';

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Marketplace API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script></body></html>`;

const init = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true });`;

/**
 * `/openapi.json` and `/asyncapi.json` (the HTTP API and the event bus, each built once from the
 * contracts) and `/docs` (Swagger UI served from npm, no CDN): documents about the tables, not
 * entries of them.
 */
export function mountDocs(app: Express, publicUrl: string): void {
  const document = buildOpenApi(publicUrl);
  const events = buildAsyncApi();
  mountRoute(app, 'get', '/openapi.json', (_req, res) => {
    res.json(document);
  });
  mountRoute(app, 'get', '/asyncapi.json', (_req, res) => {
    res.json(events);
  });
  mountRoute(app, 'get', '/docs', (_req, res) => {
    res.type('html').send(page);
  });
  mountRoute(app, 'get', '/docs/init.js', (_req, res) => {
    res.type('application/javascript').send(init);
  });
  app.use('/docs/assets', serveStatic(getAbsoluteFSPath(), { index: false, maxAge: '1d' }));
}
