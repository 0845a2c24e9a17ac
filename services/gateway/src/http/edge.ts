import type { RequestHandler } from 'express';
import { NotFound } from '@mkt/kit';

// A `.` or `..` path segment, written out or percent-encoded: such a path never reaches a
// service, where a normalizing router could resolve it to something we do not route
// (`/wallets/../metrics`).
const DOT_SEGMENT = /(^|\/)(\.|%2e){1,2}(\/|$)/i;

/**
 * What the gateway refuses before anything else looks at a request, with the 404 envelope:
 * request targets that are not origin-form (`GET http://evil/wallets/...` or `*`), dot
 * segments, and `/metrics` (the gateway's own metrics have their own port; services' are never
 * proxied).
 */
export function refuseUnroutable(): RequestHandler {
  return (req, _res, next) => {
    const target = req.url;
    const path = target.split('?', 1)[0]!;
    if (
      !target.startsWith('/') ||
      target.startsWith('//') ||
      DOT_SEGMENT.test(path) ||
      path === '/metrics' ||
      path.startsWith('/metrics/')
    ) {
      next(new NotFound(`Route ${req.method} ${path.startsWith('/') ? path : '(absolute-form target)'}`));
      return;
    }
    next();
  };
}
