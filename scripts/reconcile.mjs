#!/usr/bin/env node
// After a restore (README "Backups and restore"): mends what the services' own sweeps cannot,
// because each database was backed up at its own moment. Run it once on the restored system,
// with the services up and before users are let back in.
//
//   npm run reconcile [-- --dry-run]
//
// The consultation's bookings are the truth about bookings; the wallet's holds the truth about
// money. What it does, in this order:
//   1. A hold still holding money (Held, or Pending) whose booking the consultation does not
//      have, or has Failed or Pending (a request the backup cut short), is voided through the
//      wallet's own API: the buyer gets the whole amount back, as the consultation's sweep does
//      for a booking it gives up. One whose booking is Cancelled (the wallet's backup predates
//      the cancel) gets the cancel announced again through the consultation's outbox, so the
//      wallet settles it as the cancel said (the refund it recorded, the rest to the seller).
//   2. A paid Confirmed booking whose hold the wallet does not have is held again (the same
//      idempotent request the consultation makes); one the wallet refuses, or whose hold has
//      already ended (a cancel the consultation's backup missed), is cancelled by the admin
//      through the gateway, so its places come back and the CRM hears of it. Anything it cannot
//      mend is listed under `needsAPerson` (exit 2).
//   3. The CRM's booking facts follow the consultation: facts of bookings it does not have are
//      deleted, missing ones are written from the booking; then the CRM's own rebuild
//      (services/crm/dist/rebuild.js) recomputes every relationship's totals from the facts.
// PaymentPending bookings are left to the consultation's sweep (it asks the wallet again).
//
// Environment: MONGO_URL or <SERVICE>_MONGO_URL and <SERVICE>_MONGO_DB, MONGO_TLS_CA_FILE, as for `npm run backup`;
// WALLET_URL and INTERNAL_API_TOKEN (the wallet's internal API); GATEWAY_URL, ADMIN_EMAIL and
// ADMIN_PASSWORD (the admin's cancels). Nothing secret is printed.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { targetsOf } from './backup.mjs';
import { mongodb, mongoTls } from './lib/deps.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { MongoClient } = mongodb(root);

const log = (line) => console.error(`[reconcile] ${line}`);
/** The built contracts package: the events' and the wallet's requests' one definition, as the services use it. */
const contracts = () => createRequire(import.meta.url)(join(root, 'packages/contracts/dist/index.js'));
const ACTIVE_HOLD = ['Held', 'Pending'];
/** A booking that was confirmed (the CRM heard `booking.confirmed`): Confirmed, or Cancelled after. */
export const wasConfirmed = (b) => b.status === 'Confirmed' || (b.status === 'Cancelled' && ['held', 'free'].includes(b.payment));

function required(env, name) {
  const value = env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

async function call(url, method, body, headers = {}) {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: the status says enough
  }
  return { status: res.status, body: json };
}

async function openDb(client, service, env) {
  const [target] = targetsOf([service], env);
  const c = client.get(target.url) ?? new MongoClient(target.url, { serverSelectionTimeoutMS: 10_000, ...mongoTls(root, target.url, env) });
  if (!client.has(target.url)) {
    await c.connect();
    client.set(target.url, c);
  }
  return { db: c.db(target.database ?? service), url: target.url, database: target.database ?? service };
}

/**
 * The booking's `booking.cancelled` once more, with the terms the booking recorded, put in the
 * booking's own outbox: the consultation's relay publishes it, the wallet settles the hold as
 * the cancel said (refund to the buyer, the rest to the seller), the CRM merges it (idempotent).
 */
async function announceCancelAgain(db, booking) {
  const { makeEvent } = contracts();
  const event = makeEvent(
    'consultation.booking.cancelled',
    {
      bookingId: booking._id,
      sellerId: booking.sellerId,
      buyerId: booking.buyerId,
      refundAmountMinor: booking.refundAmountMinor ?? booking.totalAmountMinor,
      totalAmountMinor: booking.totalAmountMinor,
      ...(booking.cancelledBy ? { cancelledBy: booking.cancelledBy } : {}),
      ...(booking.cancelCause ? { cause: booking.cancelCause } : {}),
    },
    { source: 'consultation', correlationId: booking.correlationId ?? undefined },
  );
  await db.collection('bookings').updateOne({ _id: booking._id, status: 'Cancelled' }, { $push: { pendingEvents: event } });
}

export async function reconcile({ env = process.env, dryRun = false } = {}) {
  const walletUrl = required(env, 'WALLET_URL').replace(/\/+$/, '');
  const internal = { 'x-internal-token': required(env, 'INTERNAL_API_TOKEN') };
  const gatewayUrl = required(env, 'GATEWAY_URL').replace(/\/+$/, '');
  const clients = new Map();
  const summary = {
    holdsVoided: 0,
    cancelsAnnouncedAgain: 0,
    holdsTakenAgain: 0,
    bookingsCancelled: 0,
    crmFactsDeleted: 0,
    crmFactsWritten: 0,
    needsAPerson: /** @type {{ booking: string, why: string }[]} */ ([]),
  };
  let adminToken = null;
  const admin = async () => {
    if (adminToken) return adminToken;
    const res = await call(`${gatewayUrl}/v1/auth/login`, 'POST', {
      email: required(env, 'ADMIN_EMAIL'),
      password: required(env, 'ADMIN_PASSWORD'),
    });
    if (res.status !== 200) throw new Error(`admin login refused (${res.status})`);
    return (adminToken = res.body.data.accessToken);
  };
  const cancelAsAdmin = async (booking, why) => {
    log(`booking ${booking._id}: ${why}; cancelled by the admin`);
    summary.bookingsCancelled += 1;
    if (dryRun) return;
    const res = await call(
      `${gatewayUrl}/consultations/bookings/cancel`,
      'POST',
      { bookingId: booking._id, reason: `restore reconcile: ${why}` },
      {
        authorization: `Bearer ${await admin()}`,
      },
    );
    if (res.status !== 200)
      summary.needsAPerson.push({
        booking: booking._id,
        why: `${why}; the cancel answered ${res.status} ${res.body?.errors?.[0]?.code ?? ''}`,
      });
  };
  try {
    const wallet = await openDb(clients, 'wallet', env);
    const consultation = await openDb(clients, 'consultation', env);
    const crm = await openDb(clients, 'crm', env);
    const bookings = await consultation.db.collection('bookings').find().toArray();
    const holds = await wallet.db.collection('booking_holds').find().toArray();
    const bookingById = new Map(bookings.map((b) => [b._id, b]));
    const holdById = new Map(holds.map((h) => [h._id, h]));

    // 1. Money held for no booking, or for a booking whose cancel the wallet never heard.
    for (const hold of holds.filter((h) => ACTIVE_HOLD.includes(h.status))) {
      const booking = bookingById.get(hold._id);
      if (booking?.status === 'Cancelled') {
        log(`hold ${hold._id}: its booking was cancelled; the cancel announced again`);
        summary.cancelsAnnouncedAgain += 1;
        if (!dryRun) await announceCancelAgain(consultation.db, booking);
        continue;
      }
      if (booking && booking.status !== 'Failed') continue;
      log(`hold ${hold._id}: booking ${booking ? booking.status : 'not in the consultation'}; voided`);
      summary.holdsVoided += 1;
      if (dryRun) continue;
      const res = await call(`${walletUrl}/internal/holds/${encodeURIComponent(hold._id)}/void`, 'POST', undefined, internal);
      if (res.status !== 200) summary.needsAPerson.push({ booking: hold._id, why: `the void answered ${res.status}` });
    }

    // 2. Paid confirmed bookings without their money.
    for (const booking of bookings.filter((b) => b.status === 'Confirmed' && b.totalAmountMinor > 0)) {
      const hold = holdById.get(booking._id);
      if (hold && ['Held', 'Settling'].includes(hold.status)) continue;
      // Captured for the seller: a booking stays Confirmed after its session, so that is history.
      if (hold?.status === 'Settled' && hold.settlement?.kind === 'capture') continue;
      if (hold) {
        await cancelAsAdmin(booking, `its hold is ${hold.status}`);
        continue;
      }
      if (dryRun) {
        log(`booking ${booking._id}: no hold; would ask the wallet to hold it`);
        continue;
      }
      const res = await call(`${walletUrl}/internal/holds`, 'POST', contracts().bookingHoldBody(booking), internal);
      if (res.status === 200 && res.body?.data?.status === 'Held') {
        log(`booking ${booking._id}: held again`);
        summary.holdsTakenAgain += 1;
      } else
        await cancelAsAdmin(
          booking,
          `no hold, and the wallet answered ${res.status} ${res.body?.errors?.[0]?.code ?? res.body?.data?.status ?? ''}`,
        );
    }

    // 3. The CRM's facts follow the consultation's bookings; then its totals are rebuilt.
    const facts = await crm.db.collection('booking_facts').find().toArray();
    const unknown = facts.filter((f) => !bookingById.has(f._id)).map((f) => f._id);
    summary.crmFactsDeleted = unknown.length;
    if (!dryRun && unknown.length > 0) await crm.db.collection('booking_facts').deleteMany({ _id: { $in: unknown } });
    const factById = new Map(facts.map((f) => [f._id, f]));
    for (const booking of bookings.filter(wasConfirmed)) {
      const fact = factById.get(booking._id);
      const cancelledAt = booking.status === 'Cancelled' ? (booking.cancelledAt ?? booking.updatedAt) : null;
      if (fact?.confirmedAt && (!cancelledAt || fact.cancelledAt)) continue;
      summary.crmFactsWritten += 1;
      if (dryRun) continue;
      const set = {
        sellerId: booking.sellerId,
        buyerId: booking.buyerId,
        totalMinor: booking.totalAmountMinor,
        confirmedAt: fact?.confirmedAt ?? booking.createdAt,
      };
      if (cancelledAt) Object.assign(set, { cancelledAt, refundMinor: booking.refundAmountMinor ?? null });
      await crm.db.collection('booking_facts').updateOne({ _id: booking._id }, { $set: set }, { upsert: true });
    }
    if (!dryRun) {
      const rebuilt = spawnSync(process.execPath, [join(root, 'services/crm/dist/rebuild.js')], {
        env: { ...process.env, MONGO_URL: crm.url, MONGO_DB: crm.database, LOG_LEVEL: 'warn' },
        encoding: 'utf8',
      });
      if (rebuilt.status !== 0) throw new Error(`the CRM rebuild failed: ${rebuilt.stderr.trim().split('\n').pop()}`);
    }
  } finally {
    await Promise.all([...clients.values()].map((c) => c.close()));
  }
  return summary;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log('usage: npm run reconcile [-- --dry-run]   (environment: see the head of scripts/reconcile.mjs)');
    process.exit(0);
  }
  const unknown = args.filter((a) => a !== '--dry-run');
  if (unknown.length > 0) {
    console.error(`usage: npm run reconcile [-- --dry-run] (unknown ${unknown.join(' ')})`);
    process.exit(2);
  }
  reconcile({ dryRun: args.includes('--dry-run') }).then(
    (summary) => {
      console.log(JSON.stringify(summary));
      if (summary.needsAPerson.length > 0) process.exit(2);
    },
    (err) => {
      console.error(`[reconcile] ${err.message}`);
      process.exit(1);
    },
  );
}
