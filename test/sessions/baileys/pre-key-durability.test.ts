import { BufferJSON, makeWASocket, type AuthenticationCreds } from '@whiskeysockets/baileys';
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { SecretBox } from '../../../src/infra/crypto/secret-box.js';
import { EmbeddedDocumentStore } from '../../../src/infra/docstore/embedded/embedded-document-store.js';
import { MongoDocumentStore } from '../../../src/infra/docstore/mongodb/mongodb-document-store.js';
import type { DocumentStore } from '../../../src/infra/docstore/port.js';
import { BaileysNetwork } from '../../../src/sessions/baileys/baileys-network.js';
import { DocumentAuthStateStore } from '../../../src/sessions/baileys/document-auth-state-store.js';
import type { AuthStateStore, NetworkConnection } from '../../../src/sessions/port.js';
import { bundleOfUpload } from '../../servers/whatsapp/peer.js';
import { freshDatabase, testServerTarget, type MongoTarget } from '../../servers/mongodb/targets.js';
import { ScriptedWhatsApp } from '../../servers/whatsapp/scripted-whatsapp.js';
import { waitFor } from '../../support/sandbox.js';

/** A store whose credential writes are slow, as a busy MongoDB's can be: what is written with them waits too. */
function slowCredentials(inner: AuthStateStore, delayMs: number): AuthStateStore {
  return {
    get: (type, ids) => inner.get(type, ids),
    async set(data) {
      if ('creds' in data) await new Promise((resolve) => setTimeout(resolve, delayMs));
      await inner.set(data);
    },
    clear: () => inner.clear(),
  };
}

/**
 * Pre-key ids must never be reused: a peer that fetched pre-key N from the server encrypts to it,
 * and a device that later generates another key under N cannot decrypt (the message is lost).
 * Baileys saves the new pre-keys in a key transaction and announces the next free id in a
 * `creds.update`; if the credentials are not durable by the time the keys are uploaded, a crash
 * there makes the next start generate the same ids again. Checked against Baileys' real socket
 * and the scripted server: when the upload reaches the network, the store (read afresh, as after
 * a crash) must already say that those ids are taken.
 */
describe('pre-key uploads are durable before the network has them', function () {
  this.timeout(60_000);
  let mongo: MongoTarget;
  let dir: string;

  before(async () => {
    mongo = await testServerTarget();
  });
  after(async () => mongo.stop());
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'pre-keys-'))));
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  const adapters: [string, () => Promise<DocumentStore>][] = [
    ['on the MongoDB adapter (test server)', () => MongoDocumentStore.open({ url: mongo.url(freshDatabase('prekeys')) })],
    ['on the embedded store', () => EmbeddedDocumentStore.open({ path: join(dir, 'docs') })],
  ];

  for (const [name, open] of adapters) {
    it(`${name}: the credentials name the uploaded ids as used before the upload goes out`, async () => {
      const docs = await open();
      const box = new SecretBox(randomBytes(32));
      const server = await ScriptedWhatsApp.start();
      const durable = new DocumentAuthStateStore(docs, box, 'I1');
      const checks: { uploadedUpTo: number; durableNext: number }[] = [];
      server.answer(async (iq) => {
        if (iq.attrs.xmlns !== 'encrypt' || iq.attrs.type !== 'set') return undefined;
        const uploaded = bundleOfUpload(iq).preKeys.map((k) => k.keyId);
        if (uploaded.length === 0) return undefined;
        // The network has the keys now: what would a restart find?
        const stored = (await new DocumentAuthStateStore(docs, box, 'I1').get('creds', ['creds'])).creds;
        const creds = JSON.parse(String(stored), BufferJSON.reviver) as AuthenticationCreds;
        checks.push({ uploadedUpTo: Math.max(...uploaded), durableNext: creds.nextPreKeyId });
        return undefined;
      });
      const qrs: string[] = [];
      const connections: NetworkConnection[] = [];
      let opened = false;
      const network = new BaileysNetwork({
        version: [2, 3000, 1],
        logger: pino({ level: 'silent' }),
        historySyncDays: 0,
        makeSocket: (config) => makeWASocket({ ...config, waWebSocketUrl: server.url }),
      });
      const connect = async () =>
        connections.push(
          await network.connect({
            instanceId: 'I1',
            accountId: 'A1',
            auth: slowCredentials(durable, 1500),
            handlers: {
              onEvents: async (events) => void (opened ||= events.some((e) => e.type === 'SessionConnected')),
              onQr: (qr) => qrs.push(qr),
              onClose: (close) => void (close.reason === 'restart_required' && connect()),
            },
          }),
        );
      try {
        await connect();
        await waitFor(() => qrs.length > 0, 'the QR');
        await server.scanQr(await server.connection(0), qrs[0]!);
        await waitFor(() => opened, 'the login after pairing', 30_000);
        expect(checks).to.have.length(1);
        const [{ uploadedUpTo, durableNext }] = checks as [(typeof checks)[number]];
        expect(durableNext, `stored next pre-key id when ids up to ${uploadedUpTo} reached the network`).to.be.greaterThan(uploadedUpTo);
      } finally {
        for (const c of connections) await c.end();
        await server.stop();
        await docs.close();
      }
    });
  }
});
