import { createHash } from 'node:crypto';
import type { Response } from 'express';

/** One line of a receipt: a label and its value, both plain text (escaped when printed). */
export interface ReceiptLine {
  label: string;
  value: string;
  /** Printed larger: the total a reader looks for. */
  strong?: boolean;
}

/** A printable receipt: a title, who issued it, and its sections of lines. */
export interface ReceiptDocument {
  title: string;
  issuer: string;
  sections: Array<{ heading: string; lines: ReceiptLine[] }>;
}

/** Every character HTML gives a meaning to, as its entity: a value never becomes markup. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The page's only style sheet, allowed by its hash (no inline style attributes, no scripts). */
const STYLE = [
  'body{font-family:system-ui,sans-serif;color:#111;margin:0;padding:2rem;background:#fff}',
  'main{max-width:36rem;margin:0 auto}h1{font-size:1.4rem;margin:0}.issuer{color:#555;margin:.25rem 0 1.5rem}',
  'h2{font-size:1rem;border-bottom:1px solid #ccc;padding-bottom:.25rem;margin:1.5rem 0 .5rem}',
  'table{width:100%;border-collapse:collapse}th{text-align:left;font-weight:400;color:#555;padding:.2rem 0;width:45%}',
  'td{text-align:right;padding:.2rem 0;word-break:break-all}.strong td,.strong th{font-weight:700;color:#111;font-size:1.1rem}',
  '@media print{body{padding:0}@page{margin:1.5cm}}',
].join('');

const STYLE_HASH = `sha256-${createHash('sha256').update(STYLE).digest('base64')}`;

/**
 * The receipt pages' policy: nothing loads or runs but the page's own style sheet (by its hash);
 * no scripts, forms, frames or base address.
 */
export const RECEIPT_CSP = `default-src 'none'; style-src '${STYLE_HASH}'; img-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`;

/** A receipt as a self-contained HTML page: every value escaped, no external assets. */
export function receiptPage(receipt: ReceiptDocument): string {
  const sections = receipt.sections
    .map(
      (section) =>
        `<h2>${escapeHtml(section.heading)}</h2><table>${section.lines
          .map(
            (line) =>
              `<tr${line.strong ? ' class="strong"' : ''}><th scope="row">${escapeHtml(line.label)}</th><td>${escapeHtml(line.value)}</td></tr>`,
          )
          .join('')}</table>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(receipt.title)}</title>
<style>${STYLE}</style></head><body><main>
<h1>${escapeHtml(receipt.title)}</h1><p class="issuer">${escapeHtml(receipt.issuer)}</p>
${sections}
</main></body></html>`;
}

/** Answers a receipt page: its policy, never cached or sniffed, no referrer. */
export function sendReceiptPage(res: Response, receipt: ReceiptDocument): void {
  res
    .status(200)
    .set('Content-Security-Policy', RECEIPT_CSP)
    .set('Cache-Control', 'private, no-store')
    .set('X-Content-Type-Options', 'nosniff')
    .set('Referrer-Policy', 'no-referrer')
    .type('html')
    .send(receiptPage(receipt));
}
