import { createHash } from 'node:crypto';
import { escapeHtml, RECEIPT_CSP, receiptPage } from '../src/http/receipt-page';

describe('receipt pages', () => {
  const page = receiptPage({
    title: 'Receipt <b>1</b>',
    issuer: `O'Brien & "Sons"`,
    sections: [{ heading: '<h2>', lines: [{ label: '<script>x</script>', value: '</td><script>alert(1)</script>', strong: true }] }],
  });

  it('escapes every value: nothing given becomes markup', () => {
    expect(escapeHtml(`<>&"'`)).toBe('&lt;&gt;&amp;&quot;&#39;');
    expect(page).not.toContain('<script');
    expect(page).not.toContain('<b>');
    expect(page).toContain('&lt;/td&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).toContain('O&#39;Brien &amp; &quot;Sons&quot;');
  });

  it('its policy allows its one style sheet by hash and nothing else: no script, no external asset', () => {
    const style = /<style>([^<]*)<\/style>/.exec(page)![1]!;
    const hash = createHash('sha256').update(style).digest('base64');
    expect(RECEIPT_CSP).toContain(`style-src 'sha256-${hash}'`);
    expect(RECEIPT_CSP).toMatch(/^default-src 'none';/);
    expect(RECEIPT_CSP).not.toMatch(/script-src|unsafe/);
    expect(page).not.toMatch(/<(link|img|script|iframe)\b|src=|href=|style="/);
  });
});
