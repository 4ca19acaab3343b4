import {
  addTransactionCapability,
  DEFAULT_CONNECTION_CONFIG,
  generateSignalPubKey,
  getNextPreKeys,
  proto,
  type AuthenticationCreds,
  type KeyPair,
  type SignalDataTypeMap,
  type SignalKeyStore,
  type SignalKeyStoreWithTransaction,
  type SignalRepositoryWithLIDStore,
} from '@whiskeysockets/baileys';
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { SecretBox } from '../../../src/infra/crypto/secret-box.js';
import { EmbeddedDocumentStore } from '../../../src/infra/docstore/embedded/embedded-document-store.js';
import type { Collection, Document, DocumentStore, WriteOp, WriteOptions } from '../../../src/infra/docstore/port.js';
import { baileysAuthState, type BaileysAuthState } from '../../../src/sessions/baileys/auth-state.js';
import { DocumentAuthStateStore, SESSION_AUTH_COLLECTION } from '../../../src/sessions/baileys/document-auth-state-store.js';

/**
 * A real Signal session, made by Baileys' own functions, kept in our document store.
 *
 * "Bob" is the gateway: Baileys' creds and signal keys behind our adapter (baileysAuthState over
 * DocumentAuthStateStore over the embedded LMDB store), wrapped in transactions exactly as
 * Baileys' socket wraps the key store it is given (lib/Socket/socket.js: addTransactionCapability,
 * then makeSignalRepository). "Alice" is a phone with an in-memory store. Alice builds an X3DH
 * session from Bob's pre-key bundle (injectE2ESession, as Baileys does from a USync key fetch),
 * encrypts; Bob decrypts and answers. Then everything of Bob's is thrown away and reopened from
 * disk, and the ratchet carries on.
 */

const logger = pino({ level: 'silent' });
const INSTANCE = 'INSTANCE1';
const ALICE_JID = '5511988887777@s.whatsapp.net';
const BOB_JID = '5511900000001@s.whatsapp.net';
/** Signal addresses as Baileys names them in the key store (user.device). */
const ALICE_ADDR = '5511988887777.0';

/** Delegates to a real store and records every batch, to count durable writes. */
class CountingDocumentStore implements DocumentStore {
  readonly batches: WriteOp[][] = [];

  constructor(readonly inner: DocumentStore) {}

  collection<T extends Document = Document>(name: string): Collection<T> {
    return this.inner.collection<T>(name);
  }

  batch(ops: WriteOp[], options?: WriteOptions): Promise<void> {
    this.batches.push(ops);
    expect(options?.durable, 'credentials are written durably').to.equal(true);
    return this.inner.batch(ops, options);
  }

  flush(): Promise<void> {
    return this.inner.flush();
  }

  ping(): Promise<boolean> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  /** The batches written while `work` ran. */
  async during(work: () => Promise<unknown>): Promise<WriteOp[][]> {
    const from = this.batches.length;
    await work();
    return this.batches.slice(from);
  }
}

interface Party {
  creds: AuthenticationCreds;
  keys: SignalKeyStoreWithTransaction;
  repo: SignalRepositoryWithLIDStore;
}

interface Gateway extends Party {
  docs: CountingDocumentStore;
  auth: BaileysAuthState;
}

/** As Baileys' socket does with the auth state it is given. */
function party(creds: AuthenticationCreds, store: SignalKeyStore): Party {
  const keys = addTransactionCapability(store, logger, { maxCommitRetries: 1, delayBetweenTriesMs: 0 });
  return { creds, keys, repo: DEFAULT_CONNECTION_CONFIG.makeSignalRepository({ creds, keys }, logger) };
}

async function openGateway(dir: string, serverKey: Buffer): Promise<Gateway> {
  const docs = new CountingDocumentStore(await EmbeddedDocumentStore.open({ path: dir }));
  const auth = await baileysAuthState(new DocumentAuthStateStore(docs, new SecretBox(serverKey), INSTANCE), { logger });
  return { docs, auth, ...party(auth.state.creds, auth.state.keys) };
}

/** The phone's store: a plain map, as a phone's database would be. */
function memoryKeys(): SignalKeyStore {
  const data = new Map<string, unknown>();
  return {
    get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      const out: { [id: string]: SignalDataTypeMap[T] } = {};
      for (const id of ids) {
        const value = data.get(`${type}/${id}`);
        if (value !== undefined) out[id] = value as SignalDataTypeMap[T];
      }
      return out;
    },
    set(set) {
      for (const [type, values] of Object.entries(set)) {
        for (const [id, value] of Object.entries(values ?? {})) {
          if (value === null) data.delete(`${type}/${id}`);
          else data.set(`${type}/${id}`, value);
        }
      }
    },
  };
}

async function send(from: Party, toJid: string, to: Party, fromJid: string, text: string): Promise<{ type: 'pkmsg' | 'msg'; plain: string }> {
  const { type, ciphertext } = await from.repo.encryptMessage({ jid: toJid, data: Buffer.from(text) });
  const plain = await to.repo.decryptMessage({ jid: fromJid, type, ciphertext });
  return { type, plain: Buffer.from(plain).toString('utf8') };
}

const idsOf = (batch: WriteOp[] | undefined): string[] =>
  (batch ?? []).map((op) => {
    const filter = 'filter' in op ? op.filter : { _id: op.doc._id };
    return String(filter._id);
  });

/** Every file LMDB wrote, as one buffer: what an attacker with the disk would read. */
async function rawFiles(dir: string): Promise<Buffer> {
  const names = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = names.filter((n) => n.isFile()).map((n) => join(n.parentPath, n.name));
  return Buffer.concat(await Promise.all(files.map((f) => readFile(f))));
}

/** The ways a secret could sit on disk in clear: raw, base64 (BufferJSON's form), hex. */
function clearForms(secret: Uint8Array | string): Buffer[] {
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'base64') : Buffer.from(secret);
  return [bytes, Buffer.from(bytes.toString('base64')), Buffer.from(bytes.toString('hex')), Buffer.from(bytes.toString('base64url'))];
}

/** The ratchet secrets inside a libsignal session record (its serialize() form, base64 strings). */
function ratchetSecrets(record: unknown): string[] {
  const sessions = (record as { _sessions?: Record<string, { currentRatchet?: { rootKey?: unknown; ephemeralKeyPair?: { privKey?: unknown } } }> })._sessions;
  const out: string[] = [];
  for (const entry of Object.values(sessions ?? {})) {
    const ratchet = entry.currentRatchet;
    for (const secret of [ratchet?.rootKey, ratchet?.ephemeralKeyPair?.privKey]) if (typeof secret === 'string') out.push(secret);
  }
  return out;
}

describe('Baileys auth state in the document store', () => {
  let dir: string;
  let serverKey: Buffer;
  let bob: Gateway;
  let alice: Party;
  let preKeys: { [id: number]: KeyPair };

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'baileys-auth-'));
    serverKey = randomBytes(32);
    bob = await openGateway(dir, serverKey);
    const { initAuthCreds } = await import('@whiskeysockets/baileys');
    alice = party(initAuthCreds(), memoryKeys());

    // Bob generates pre-keys the way the socket does before uploading them: in one transaction,
    // whose creds.update (the next free id) Baileys merges into the creds before it commits.
    const written = await bob.docs.during(async () => {
      const next = await bob.keys.transaction(async () => {
        const made = await getNextPreKeys({ creds: bob.creds, keys: bob.keys }, 5);
        Object.assign(bob.creds, made.update);
        return made;
      }, 'upload-pre-keys');
      preKeys = next.preKeys;
    });
    expect(written, 'one pre-key transaction, one bulk write').to.have.length(1);
    // The credentials go in the same write: the ids are taken before anything can upload them.
    expect(idsOf(written[0])).to.deep.equal([...[1, 2, 3, 4, 5].map((id) => `${INSTANCE}/pre-key/${id}`), `${INSTANCE}/creds/creds`]);
    const reopened = await baileysAuthState(new DocumentAuthStateStore(bob.docs, new SecretBox(serverKey), INSTANCE), { logger });
    expect(reopened.state.creds.nextPreKeyId).to.equal(6);
    await bob.auth.saveCreds();
  });

  afterEach(async () => {
    await bob.docs.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Alice starts a session from Bob's bundle (identity, signed pre-key, one-time pre-key 1). */
  async function aliceMeetsBob(): Promise<void> {
    const preKey = preKeys[1];
    if (!preKey) throw new Error('pre-key 1 was not generated');
    await alice.repo.injectE2ESession({
      jid: BOB_JID,
      session: {
        registrationId: bob.creds.registrationId,
        identityKey: generateSignalPubKey(bob.creds.signedIdentityKey.public),
        signedPreKey: {
          keyId: bob.creds.signedPreKey.keyId,
          publicKey: generateSignalPubKey(bob.creds.signedPreKey.keyPair.public),
          signature: bob.creds.signedPreKey.signature,
        },
        preKey: { keyId: 1, publicKey: generateSignalPubKey(preKey.public) },
      },
    });
  }

  it('keeps an X3DH session across a restart: reopened from disk, it decrypts and encrypts further messages', async () => {
    await aliceMeetsBob();

    let first: { type: string; plain: string } | undefined;
    const decryptWrites = await bob.docs.during(async () => {
      first = await send(alice, BOB_JID, bob, ALICE_JID, 'hello bob');
    });
    expect(first).to.deep.equal({ type: 'pkmsg', plain: 'hello bob' });
    // Baileys saves the sender's identity before its decrypt transaction (libsignal.js
    // decryptMessage), then the transaction commits the session and the used pre-key's removal.
    expect(decryptWrites.map(idsOf)).to.deep.equal([
      [`${INSTANCE}/identity-key/${ALICE_ADDR}`],
      [`${INSTANCE}/session/${ALICE_ADDR}`, `${INSTANCE}/pre-key/1`],
    ]);
    expect(decryptWrites[1]?.[1]?.op).to.equal('deleteOne');

    const reply = await bob.docs.during(async () => {
      expect(await send(bob, ALICE_JID, alice, BOB_JID, 'hi alice')).to.deep.equal({ type: 'msg', plain: 'hi alice' });
    });
    expect(reply.map(idsOf), 'an encrypt is one transaction: one write').to.deep.equal([[`${INSTANCE}/session/${ALICE_ADDR}`]]);

    // Restart: every object of Bob's is dropped; only the files and the server key remain.
    const credsBefore = structuredClone(bob.creds);
    await bob.docs.close();
    bob = await openGateway(dir, serverKey);

    expect(Buffer.from(bob.creds.signedIdentityKey.private).equals(Buffer.from(credsBefore.signedIdentityKey.private))).to.equal(true);
    expect(Buffer.from(bob.creds.noiseKey.private).equals(Buffer.from(credsBefore.noiseKey.private))).to.equal(true);
    expect(bob.creds.registrationId).to.equal(credsBefore.registrationId);
    expect(bob.creds.nextPreKeyId).to.equal(6);
    expect(Object.keys(await bob.auth.state.keys.get('pre-key', ['1', '2', '5']))).to.deep.equal(['2', '5']);

    for (let i = 0; i < 3; i++) {
      expect(await send(alice, BOB_JID, bob, ALICE_JID, `after restart ${i}`)).to.deep.equal({ type: 'msg', plain: `after restart ${i}` });
      expect(await send(bob, ALICE_JID, alice, BOB_JID, `reply ${i}`)).to.deep.equal({ type: 'msg', plain: `reply ${i}` });
    }
  });

  it('stores no key material in clear: not in the documents, not in the LMDB files', async () => {
    await aliceMeetsBob();
    await send(alice, BOB_JID, bob, ALICE_JID, 'hello bob');
    await send(bob, ALICE_JID, alice, BOB_JID, 'hi alice');
    const session = (await bob.auth.state.keys.get('session', [ALICE_ADDR]))[ALICE_ADDR];
    const ratchet = ratchetSecrets(session);
    expect(ratchet, 'the session record holds ratchet secrets to look for').to.have.length.greaterThan(1);
    const preKey2 = preKeys[2];
    if (!preKey2) throw new Error('pre-key 2 was not generated');

    const docs = await bob.docs.collection(SESSION_AUTH_COLLECTION).find({});
    expect(docs.map((d) => d._id)).to.include.members([`${INSTANCE}/creds/creds`, `${INSTANCE}/session/${ALICE_ADDR}`, `${INSTANCE}/pre-key/2`]);
    for (const doc of docs) {
      expect(Object.keys(doc).sort()).to.deep.equal(['_id', 'instance_id', 'key_id', 'sealed', 'type']);
      expect(doc.sealed).to.be.a('string').and.match(/^v1\./);
    }
    await bob.docs.close();

    const disk = await rawFiles(dir);
    // The scan does see document contents: ids and sealed values are there.
    expect(disk.includes(Buffer.from(`${INSTANCE}/session/${ALICE_ADDR}`)), 'scan reads the documents').to.equal(true);
    expect(disk.includes(Buffer.from(String(docs[0]?.sealed))), 'scan reads the sealed values').to.equal(true);

    const secrets: [string, Uint8Array | string][] = [
      ['identity private key', bob.creds.signedIdentityKey.private],
      ['signed pre-key private key', bob.creds.signedPreKey.keyPair.private],
      ['noise private key', bob.creds.noiseKey.private],
      ['adv secret', bob.creds.advSecretKey],
      ['one-time pre-key private key', preKey2.private],
      ...ratchet.map((s, i): [string, string] => [`ratchet secret ${i}`, s]),
    ];
    for (const [name, secret] of secrets) {
      for (const form of clearForms(secret)) expect(disk.includes(form), `${name} found on disk as ${form.toString('latin1').slice(0, 12)}…`).to.equal(false);
    }
    // Nor Baileys' serialisation of any value (it would show as BufferJSON markers).
    expect(disk.includes(Buffer.from('"type":"Buffer"'))).to.equal(false);
    bob = await openGateway(dir, serverKey); // for afterEach
  });

  it('writes one Baileys keys.transaction as one bulk write, with deletions in it', async () => {
    const batches = await bob.docs.during(() =>
      bob.keys.transaction(async () => {
        await bob.keys.set({ 'sender-key-memory': { [`${ALICE_JID}-group`]: { [ALICE_JID]: true } } });
        await bob.keys.set({ 'lid-mapping': { '5511988887777': '200000000000002' }, 'device-list': { '5511988887777': ['0', '3'] } });
        // Baileys deletes a pre-key in a transaction only once it was read there (as libsignal does).
        expect(Object.keys(await bob.keys.get('pre-key', ['3']))).to.deep.equal(['3']);
        await bob.keys.set({ 'pre-key': { '3': null } });
        await bob.keys.set({ 'lid-mapping': { '200000000000002_reverse': '5511988887777' } });
      }, 'any-key'),
    );
    expect(batches).to.have.length(1);
    expect(idsOf(batches[0]).sort()).to.deep.equal(
      [
        `${INSTANCE}/device-list/5511988887777`,
        `${INSTANCE}/lid-mapping/200000000000002_reverse`,
        `${INSTANCE}/lid-mapping/5511988887777`,
        `${INSTANCE}/pre-key/3`,
        `${INSTANCE}/sender-key-memory/${ALICE_JID}-group`,
      ].sort(),
    );

    // The same writes outside a transaction are several writes: the count above means something.
    const loose = await bob.docs.during(async () => {
      await bob.keys.set({ 'lid-mapping': { x: 'y' } });
      await bob.keys.set({ 'device-list': { x: ['0'] } });
    });
    expect(loose).to.have.length(2);
  });

  it('gives app-state sync keys back as their protobuf class, bytes intact, after a reopen', async () => {
    const keyData = randomBytes(32);
    await bob.keys.transaction(async () => {
      await bob.keys.set({ 'app-state-sync-key': { AAAAAQ: proto.Message.AppStateSyncKeyData.fromObject({ keyData, timestamp: 1_700_000_000 }) } });
    }, 'app-state');
    await bob.docs.close();
    bob = await openGateway(dir, serverKey);
    const { AAAAAQ: key } = await bob.auth.state.keys.get('app-state-sync-key', ['AAAAAQ']);
    expect(key).to.be.instanceOf(proto.Message.AppStateSyncKeyData);
    expect(Buffer.from(key?.keyData ?? []).equals(keyData)).to.equal(true);
  });

  it('opens nothing with another server key, and nothing moved to another instance', async () => {
    await bob.docs.close();
    const other = await openGateway(dir, randomBytes(32)).catch((error: unknown) => error);
    expect(other).to.be.instanceOf(Error);

    const docs = await EmbeddedDocumentStore.open({ path: dir });
    try {
      const collection = docs.collection(SESSION_AUTH_COLLECTION);
      const creds = await collection.findOne({ _id: `${INSTANCE}/creds/creds` });
      if (!creds) throw new Error('creds not stored');
      // Copy Bob's sealed creds onto another instance's document: the AAD binds it to Bob.
      await collection.insertOne({ ...creds, _id: 'INSTANCE2/creds/creds', instance_id: 'INSTANCE2' });
      const thief = new DocumentAuthStateStore(docs, new SecretBox(serverKey), 'INSTANCE2');
      const stolen = await thief.get('creds', ['creds']).catch((error: unknown) => error);
      expect(stolen).to.be.instanceOf(Error);
    } finally {
      await docs.close();
    }
    bob = await openGateway(dir, serverKey); // for afterEach
  });
});
