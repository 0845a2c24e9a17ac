// The sandbox hosted checkout as a payer uses it, for the scripts that need paid top-ups
// (`npm run fuzz`, `npm run bench:writes`).

/**
 * Presses Pay on the checkout page of a top-up: `paymentUrl` is the link its creation answered,
 * `base` the gateway. Throws unless the checkout completed the payment (303 to the client's
 * address with `status=Completed`).
 */
export async function payInSandbox(base, paymentUrl) {
  const link = new URL(paymentUrl);
  const paid = await fetch(`${base}${link.pathname}/pay`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: link.searchParams.get('token') ?? '' }).toString(),
  });
  const location = paid.headers.get('location') ?? '';
  if (paid.status !== 303 || !location.includes('status=Completed'))
    throw new Error(`sandbox payment of ${link.pathname} failed: ${paid.status} ${location}`);
}
