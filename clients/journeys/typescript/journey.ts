/* eslint-disable no-console -- a program whose output is its report */
// A booking journey through a client that openapi-generator (`typescript-fetch`) generated from
// /openapi.json: what a TypeScript developer outside the project would write. `npm run
// clients:check` generates the client beside this file (./generated), compiles both with
// `tsc --strict` and runs this against a running system.
//
//   MARKETPLACE_URL             the gateway (the document's `servers` URL when unset)
//   ADMIN_EMAIL, ADMIN_PASSWORD the seeded admin, who approves the consultation
import {
  CatalogApi,
  Configuration,
  ConsultationApi,
  GatewayApi,
  ResponseError,
  WalletApi,
  type AuthSession,
  type ErrorBody,
  type Slot,
} from './generated';

const base = process.env.MARKETPLACE_URL;
const admin = { email: process.env.ADMIN_EMAIL ?? '', password: process.env.ADMIN_PASSWORD ?? '' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (line: string) => console.log(`[typescript-fetch] ${line}`);

/** The APIs as one caller (a bearer token, or none) sees them. */
function as(token?: string) {
  const configuration = new Configuration({ ...(base ? { basePath: base } : {}), ...(token ? { accessToken: token } : {}) });
  return {
    gateway: new GatewayApi(configuration),
    wallet: new WalletApi(configuration),
    catalog: new CatalogApi(configuration),
    consultation: new ConsultationApi(configuration),
  };
}

/** The error envelope of a refused call (the generated client throws a ResponseError). */
async function refusal(call: Promise<unknown>): Promise<{ status: number; body: ErrorBody }> {
  try {
    await call;
  } catch (err) {
    if (err instanceof ResponseError) return { status: err.response.status, body: (await err.response.json()) as ErrorBody };
    throw err;
  }
  throw new Error('expected the call to be refused');
}

async function eventually<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await read().catch(() => undefined);
    if (value !== undefined && ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within 30 s`);
    await sleep(300);
  }
}

/** The day `days` from now, YYYY-MM-DD in UTC. */
const dayFromNow = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

async function main(): Promise<void> {
  const anonymous = as();
  const adminSession = await anonymous.gateway.login({ loginBody: admin });
  say(`the admin logs in: ${adminSession.data.user.role}`);

  const unique = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const register = async (role: 'buyer' | 'seller', fullName: string): Promise<AuthSession> =>
    (
      await anonymous.gateway.register({
        registerBody: { email: `${role}-ts-${unique}@example.com`, password: 'a long password', fullName, role },
      })
    ).data;
  const seller = await register('seller', 'Abebe Kebede');
  const buyer = await register('buyer', 'Sara Tesfaye');
  say(`a seller and a buyer register: ${seller.user.referenceId}, ${buyer.user.referenceId}`);
  const asSeller = as(seller.accessToken);
  const asBuyer = as(buyer.accessToken);
  const asAdmin = as(adminSession.data.accessToken);

  const ruleSet = (
    await asSeller.consultation.createRuleSet({
      createRuleSetBody: {
        name: 'Mornings',
        timezone: 'Africa/Addis_Ababa',
        availabilityRules: (['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const).map((weekday) => ({
          type: 'weekly' as const,
          weekday,
          intervals: [{ startTime: '09:00:00', endTime: '12:00:00', enabled: true }],
        })),
      },
    })
  ).data;
  const pricing = (await asSeller.consultation.createPricing({ createPricingBody: { basePrice: 750, currency: 'ETB' } })).data;
  const consultation = (
    await asSeller.consultation.createConsultation({
      createConsultationBody: {
        title: 'Business plan review',
        duration: 60,
        sessionType: 'OneToOne',
        deliveryMode: 'Online',
        timezone: 'Africa/Addis_Ababa',
        language: 'Amharic',
        category: 'Business',
        ruleSetId: ruleSet.id,
        pricingId: pricing.id,
      },
    })
  ).data;
  say(`the seller offers a consultation: ${consultation.referenceId} (${consultation.currentStatus}), rule set ${ruleSet.referenceId}`);

  // The admin approves the version they read (here: the one the seller created).
  const approved = (
    await asAdmin.consultation.approveConsultation({ id: consultation.id, approveConsultationBody: { version: consultation.version } })
  ).data;
  say(`the admin approves it: ${approved.visibility}`);

  // The wallet is opened from the gateway's user.registered: an event away.
  await eventually(
    'the buyer’s wallet',
    () => asBuyer.wallet.getWallet(),
    () => true,
  );
  const topUp = (
    await asBuyer.wallet.createTopup({
      userReferenceId: buyer.user.referenceId,
      createTopUpBody: { amount: 1000, paymentMethod: 'Chapa', redirectUrl: `${base ?? ''}/done` },
    })
  ).data;
  const checkout = new URL(topUp.paymentUrl);
  // The sandbox checkout answers 303 to the client's address: not followed (redirect: manual),
  // it is a ResponseError the generated client raises for any status outside 2xx.
  const paid = await anonymous.wallet
    .payCheckout({ walletReferenceId: topUp.referenceId, token: checkout.searchParams.get('token') ?? '' }, { redirect: 'manual' })
    .then(
      () => null,
      (err: unknown) => (err instanceof ResponseError ? err.response : null),
    );
  if (paid?.status !== 303 || !paid.headers.get('location')?.includes('status=Completed'))
    throw new Error(`the sandbox checkout answered ${paid?.status ?? 'no redirect'}`);
  const wallet = await eventually(
    'the top-up credited',
    () => asBuyer.wallet.getWallet(),
    (answer) => answer.data.etbAvailableBalance === 1000,
  );
  say(`the buyer tops up on the sandbox checkout: ${topUp.referenceId}, balance ${wallet.data.etbAvailableBalance} ETB`);

  const slots = (
    await asBuyer.consultation.listSlots({
      id: consultation.id,
      from: new Date(`${dayFromNow(1)}T00:00:00Z`),
      to: new Date(`${dayFromNow(7)}T00:00:00Z`),
    })
  ).data.slots;
  const slot: Slot | undefined = slots[0];
  if (!slot) throw new Error('no free slot in the coming week');
  const booking = (
    await asBuyer.consultation.createBooking({
      createBookingBody: {
        sellerId: seller.user.id,
        consultationId: consultation.id,
        ruleSetId: ruleSet.id,
        date: slot.date,
        startTime: slot.startTime,
        endTime: slot.endTime,
        participants: [{ fullName: buyer.user.fullName, email: buyer.user.email, phone: '+251911223344' }],
        subTotal: 750,
        totalAmount: 750,
        currency: 'ETB',
      },
    })
  ).data;
  say(
    `the buyer books ${slot.date.toISOString().slice(0, 10)} ${slot.startTime}: ${booking.referenceId} ${booking.status}, ${booking.totalAmount} ${booking.currency}`,
  );

  const listed = await asBuyer.consultation.listBookings({});
  if (!listed.data.bookings.some((item) => item.id === booking.bookingId)) throw new Error('the booking is not in the buyer’s list');
  say(`the buyer's bookings list it: ${listed.data.bookings.length} booking(s), status ${listed.data.bookings[0]?.status}`);

  // An error case: the same slot again (the consultation is one-to-one): a 422 in the error envelope.
  const again = await refusal(
    asBuyer.consultation.createBooking({
      createBookingBody: {
        sellerId: seller.user.id,
        consultationId: consultation.id,
        ruleSetId: ruleSet.id,
        date: slot.date,
        startTime: slot.startTime,
        endTime: slot.endTime,
        participants: [{ fullName: buyer.user.fullName, email: buyer.user.email, phone: '+251911223344' }],
        subTotal: 750,
        totalAmount: 750,
        currency: 'ETB',
      },
    }),
  );
  const code = again.body.errors?.[0]?.code;
  if (again.status !== 422 || again.body.success !== false) throw new Error(`booking the slot again answered ${again.status}`);
  say(`booking the same slot again is refused: ${again.status} ${code ?? ''} "${again.body.message}"`);

  const products = await anonymous.catalog.listProducts({});
  say(`the public product listing answers: page ${products.pagination.page}, ${products.pagination.total} product(s)`);
  say('journey done');
}

main().catch((err: unknown) => {
  console.error(`[typescript-fetch] journey FAILED: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
