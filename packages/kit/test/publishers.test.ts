import { busPermissions, eventOwner, EVENT_NAMESPACE_OWNERS } from '@mkt/contracts';
import { amqpUser, refusalOf, type PublisherTrust } from '../src/bus/publishers';

const EVENTS = 'marketplace.events';
const trust: PublisherTrust = { ownUser: 'wallet', publisherUsers: '{service}' };
const cancelled = { type: 'consultation.booking.cancelled', source: 'consultation' };
const viaExchange = { exchange: EVENTS, routingKey: 'consultation.booking.cancelled' };

describe('the owner of an event', () => {
  test('each namespace has one producer, from the producer table', () => {
    expect(EVENT_NAMESPACE_OWNERS).toEqual({
      identity: 'gateway',
      consultation: 'consultation',
      wallet: 'wallet',
      review: 'review',
      catalog: 'catalog',
      crm: 'crm',
    });
    expect(eventOwner('consultation.session.no_show')).toBe('consultation');
    expect(eventOwner('review.created.v2')).toBe('review');
    expect(eventOwner('catalog.admin_action.recorded')).toBe('catalog');
    expect(eventOwner('search.product.indexed')).toBeUndefined();
  });
});

describe('refusalOf', () => {
  test('the owner, as its own broker user, through the events exchange: taken', () => {
    expect(refusalOf(cancelled, { ...viaExchange, userId: 'consultation' }, trust, EVENTS)).toBeNull();
  });

  test('another source than the owner: refused, whoever published it', () => {
    expect(refusalOf({ ...cancelled, source: 'crm' }, { ...viaExchange, userId: 'consultation' }, trust, EVENTS)?.reason).toBe('source');
    expect(refusalOf({ ...cancelled, source: 'crm' }, viaExchange, { ownUser: 'guest' }, EVENTS)?.reason).toBe('source');
  });

  test('a type no producer owns: refused', () => {
    expect(refusalOf({ type: 'refund.now', source: 'refund' }, viaExchange, trust, EVENTS)?.reason).toBe('unowned');
  });

  test("through the events exchange under another namespace's key: refused", () => {
    const delivery = { exchange: EVENTS, routingKey: 'identity.user.registered', userId: 'consultation' };
    expect(refusalOf(cancelled, delivery, trust, EVENTS)?.reason).toBe('routing_key');
  });

  test("another service's user-id, or none: refused; this consumer's own only on its own copy (not through the exchange)", () => {
    expect(refusalOf(cancelled, { ...viaExchange, userId: 'crm' }, trust, EVENTS)?.reason).toBe('publisher');
    expect(refusalOf(cancelled, viaExchange, trust, EVENTS)?.reason).toBe('publisher');
    expect(refusalOf(cancelled, { exchange: '', routingKey: 'wallet.bookings', userId: 'crm' }, trust, EVENTS)?.reason).toBe('publisher');
    expect(refusalOf(cancelled, { exchange: '', routingKey: 'wallet.bookings', userId: 'wallet' }, trust, EVENTS)).toBeNull();
    expect(refusalOf(cancelled, { ...viaExchange, userId: 'wallet' }, trust, EVENTS)?.reason).toBe('publisher');
  });

  test('the template names every user of a deployment', () => {
    const run = { ownUser: 'mkt_1a_wallet', publisherUsers: 'mkt_1a_{service}' };
    expect(refusalOf(cancelled, { ...viaExchange, userId: 'mkt_1a_consultation' }, run, EVENTS)).toBeNull();
    expect(refusalOf(cancelled, { ...viaExchange, userId: 'consultation' }, run, EVENTS)?.reason).toBe('publisher');
  });

  test('without publisher users the user-id is not checked', () => {
    expect(refusalOf(cancelled, { ...viaExchange, userId: 'guest' }, { ownUser: 'guest' }, EVENTS)).toBeNull();
  });

  test('the user of an AMQP URL', () => {
    expect(amqpUser('amqp://mkt_1a_wallet:secret@127.0.0.1:5672')).toBe('mkt_1a_wallet');
    expect(amqpUser('amqp://127.0.0.1')).toBe('guest');
  });
});

describe('busPermissions', () => {
  const matches = (regex: string, name: string) => new RegExp(regex).test(name);

  test('topic write: only the routing keys of its own namespaces', () => {
    const { topic } = busPermissions('consultation');
    expect(topic.exchange).toBe('marketplace.events');
    expect(matches(topic.write, 'consultation.booking.cancelled')).toBe(true);
    expect(matches(topic.write, 'consultation.session.completed.v2')).toBe(true);
    expect(matches(topic.write, 'review.created')).toBe(false);
    expect(matches(topic.write, 'consultationx.booking.cancelled')).toBe(false);
    expect(matches(busPermissions('gateway').topic.write, 'identity.user.registered')).toBe(true);
    expect(matches(busPermissions('catalog').topic.write, 'consultation.booking.cancelled')).toBe(false);
  });

  test('configure, write and read: the exchanges and the platform queues, under the namespace', () => {
    const { configure, write, read } = busPermissions('crm', 'ns1');
    for (const name of ['ns1.marketplace.events', 'ns1.marketplace.dlx', 'ns1.wallet.bookings', 'ns1.crm.bookings.retry.1'])
      expect([name, matches(configure, name), matches(read, name)]).toEqual([name, true, true]);
    expect(matches(write, 'amq.default')).toBe(true);
    expect(matches(configure, 'marketplace.events')).toBe(false);
    expect(matches(configure, 'ns1.other.queue')).toBe(false);
    expect(matches(read, 'amq.default')).toBe(false);
  });
});
