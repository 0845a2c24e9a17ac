import { formatMinor } from '@mkt/contracts/wallet';

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)}</title>
<style>
body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center}
main{background:#fff;border-radius:12px;box-shadow:0 2px 12px #0002;padding:2rem;max-width:24rem;width:100%}
h1{font-size:1.25rem;margin:0 0 .25rem}.muted{color:#666;font-size:.9rem}.amount{font-size:2rem;font-weight:700;margin:1rem 0}
.row{display:flex;gap:.75rem;margin-top:1.5rem}form{flex:1}button{width:100%;padding:.75rem;border:0;border-radius:8px;font-size:1rem;cursor:pointer}
.pay{background:#1a7f37;color:#fff}.cancel{background:#eee}.badge{display:inline-block;background:#fff3cd;border-radius:4px;padding:.1rem .4rem;font-size:.75rem}
</style></head><body><main>${body}</main></body></html>`;
}

export interface CheckoutView {
  referenceId: string;
  amountMinor: number;
  currency: string;
  merchant: string;
  token: string;
}

/** The sandbox hosted checkout: amount, merchant, Pay and Cancel. */
export function checkoutPage(view: CheckoutView): string {
  const action = `/wallets/checkout/${encodeURIComponent(view.referenceId)}`;
  const token = `<input type="hidden" name="token" value="${escape(view.token)}">`;
  return layout(
    'Checkout',
    `<span class="badge">Sandbox — no real money moves</span>
<h1>${escape(view.merchant)}</h1><p class="muted">Wallet top-up ${escape(view.referenceId)}</p>
<div class="amount">${escape(formatMinor(view.amountMinor))} ${escape(view.currency)}</div>
<div class="row">
<form method="post" action="${action}/pay">${token}<button class="pay" type="submit">Pay</button></form>
<form method="post" action="${action}/cancel">${token}<button class="cancel" type="submit">Cancel</button></form>
</div>`,
  );
}

/** What the page shows for an unknown, used or expired link. */
export function checkoutMessagePage(title: string, message: string): string {
  return layout(title, `<h1>${escape(title)}</h1><p class="muted">${escape(message)}</p>`);
}
