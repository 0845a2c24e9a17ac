import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mongoose from 'mongoose';
import pino from 'pino';
import { createDatabase, openDatabase } from '@mkt/kit/db';
import { parseConfig, serviceEnv } from '@mkt/kit/runtime';
import { mongoTlsOptions } from '../src/mongo';

// The tests' MongoDB server has no TLS listener: these tests
// check the options kit hands the driver, and what the driver makes of them; the TLS handshake
// itself is the driver's (the broker's side is proven against a TLS listener in bus-tls.test.ts).
const dir = mkdtempSync(join(tmpdir(), 'kit-mongo-tls-'));
const caFile = join(dir, 'ca.crt');
writeFileSync(caFile, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
const notPem = join(dir, 'not-pem.txt');
writeFileSync(notPem, 'hello');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const log = pino({ level: 'silent' });
const URL = 'mongodb://wallet:secret@mongo-0.mongo-svc:27017,mongo-1.mongo-svc:27017/?replicaSet=rs0&authSource=admin';

describe('mongoTlsOptions: the TLS options kit passes the driver', () => {
  test("no CA file: nothing added; a plain URL stays plain, tls=true in the URL is the driver's (system CAs)", () => {
    expect(mongoTlsOptions('mongodb://127.0.0.1:27017')).toEqual({});
    expect(mongoTlsOptions(`${URL}&tls=true`)).toEqual({});
  });

  test('a CA file: TLS on, verified against that file, whatever the URL has besides', () => {
    expect(mongoTlsOptions(URL, caFile)).toEqual({ tls: true, tlsCAFile: caFile });
    expect(mongoTlsOptions(`${URL}&tls=true`, caFile)).toEqual({ tls: true, tlsCAFile: caFile });
    expect(mongoTlsOptions('mongodb://127.0.0.1:27017/db', caFile)).toEqual({ tls: true, tlsCAFile: caFile });
  });

  test('verification turned off in the URL is refused, with or without a CA file', () => {
    for (const option of [
      'tlsInsecure=true',
      'tlsAllowInvalidCertificates=true',
      'tlsAllowInvalidHostnames=TRUE',
      'tlsallowinvalidcertificates=true',
    ]) {
      expect(() => mongoTlsOptions(`${URL}&tls=true&${option}`)).toThrow(/turns certificate verification off/);
      expect(() => mongoTlsOptions(`${URL}&${option}`, caFile)).toThrow(/turns certificate verification off/);
    }
  });

  test('a CA file with tls=false (or ssl=false) in the URL is a configuration error', () => {
    expect(() => mongoTlsOptions(`${URL}&tls=false`, caFile)).toThrow('MONGO_TLS_CA_FILE is set but MONGO_URL says tls=false');
    expect(() => mongoTlsOptions(`${URL}&ssl=false`, caFile)).toThrow('MONGO_TLS_CA_FILE is set but MONGO_URL says tls=false');
  });

  test('a missing or unreadable CA file, or one with no certificate, names the variable and the path', () => {
    expect(() => mongoTlsOptions(URL, join(dir, 'missing.crt'))).toThrow(
      `MONGO_TLS_CA_FILE: cannot read the CA file ${join(dir, 'missing.crt')} (ENOENT)`,
    );
    expect(() => mongoTlsOptions(URL, dir)).toThrow(/MONGO_TLS_CA_FILE: cannot read the CA file .* \(EISDIR\)/);
    expect(() => mongoTlsOptions(URL, notPem)).toThrow(`MONGO_TLS_CA_FILE: ${notPem} holds no PEM certificate`);
  });

  test('the driver takes them as a verified TLS connection with that CA', () => {
    const client = new mongoose.mongo.MongoClient(URL, mongoTlsOptions(URL, caFile));
    expect(client.options).toMatchObject({ tls: true, tlsCAFile: caFile });
    // Node's defaults stand: the certificate and its host name are checked.
    expect(client.options).not.toHaveProperty('rejectUnauthorized', false);
    expect(client.options).not.toHaveProperty('checkServerIdentity');
    // What the refused URL options would have made of it.
    const insecure = new mongoose.mongo.MongoClient(`${URL}&tls=true&tlsInsecure=true`);
    expect(insecure.options).toHaveProperty('rejectUnauthorized', false);
  });
});

describe('openDatabase with MONGO_TLS_CA_FILE', () => {
  test('the connection is opened with TLS on and the CA', async () => {
    const db = createDatabase();
    const openUri = jest.spyOn(db, 'openUri').mockResolvedValue(db);
    await openDatabase(db, { url: URL, dbName: 'wallet', log, tlsCaFile: caFile });
    expect(openUri).toHaveBeenCalledWith(URL, expect.objectContaining({ dbName: 'wallet', tls: true, tlsCAFile: caFile }));
    db.removeAllListeners();
  });

  test('a missing CA file stops the start at once (no retry), before anything connects', async () => {
    const db = createDatabase();
    const openUri = jest.spyOn(db, 'openUri');
    const started = Date.now();
    await expect(openDatabase(db, { url: URL, log, tlsCaFile: '/nonexistent/ca.crt', startTimeoutMs: 30_000 })).rejects.toThrow(
      'MONGO_TLS_CA_FILE: cannot read the CA file /nonexistent/ca.crt (ENOENT)',
    );
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(openUri).not.toHaveBeenCalled();
  });

  test('the configuration reads MONGO_TLS_CA_FILE and AMQP_TLS_CA_FILE (empty: unset)', () => {
    const base = { MONGO_URL: URL, AMQP_URL: 'amqps://wallet:x@rabbit:5671' };
    expect(parseConfig(serviceEnv(8081), { ...base, MONGO_TLS_CA_FILE: '/ca/ca.crt', AMQP_TLS_CA_FILE: '/ca/ca.crt' })).toMatchObject({
      MONGO_TLS_CA_FILE: '/ca/ca.crt',
      AMQP_TLS_CA_FILE: '/ca/ca.crt',
    });
    const plain = parseConfig(serviceEnv(8081), { ...base, MONGO_TLS_CA_FILE: '', AMQP_TLS_CA_FILE: '' });
    expect(plain.MONGO_TLS_CA_FILE).toBeUndefined();
    expect(plain.AMQP_TLS_CA_FILE).toBeUndefined();
  });
});
