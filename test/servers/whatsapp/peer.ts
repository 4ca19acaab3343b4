import {
  addTransactionCapability,
  Curve,
  DEFAULT_CONNECTION_CONFIG,
  encodeBigEndian,
  encodeWAMessage,
  generateSignalPubKey,
  getBinaryNodeChild,
  getBinaryNodeChildBuffer,
  getBinaryNodeChildren,
  getBinaryNodeChildUInt,
  initAuthCreds,
  proto,
  unpadRandomMax16,
  xmppPreKey,
  xmppSignedPreKey,
  type AuthenticationCreds,
  type BinaryNode,
  type SignalDataTypeMap,
  type SignalKeyStore,
  type SignalKeyStoreWithTransaction,
  type SignalRepositoryWithLIDStore,
} from '@whiskeysockets/baileys';
import { pino } from 'pino';

const logger = pino({ level: 'silent' });

/** What a device announced of its keys: as the gateway's pre-key upload carries it. */
export interface KeyBundle {
  registrationId: number;
  identity: Uint8Array;
  signedPreKey: { keyId: number; publicKey: Uint8Array; signature: Uint8Array };
  preKeys: { keyId: number; publicKey: Uint8Array }[];
}

/** A bundle as the gateway uploaded it (`<iq xmlns="encrypt" type="set">`). */
export function bundleOfUpload(iq: BinaryNode): KeyBundle {
  const skey = getBinaryNodeChild(iq, 'skey');
  if (!skey) throw new Error('a pre-key upload carries the signed pre-key');
  const list = getBinaryNodeChild(iq, 'list');
  return {
    registrationId: getBinaryNodeChildUInt(iq, 'registration', 4) ?? 0,
    identity: getBinaryNodeChildBuffer(iq, 'identity') ?? new Uint8Array(),
    signedPreKey: {
      keyId: getBinaryNodeChildUInt(skey, 'id', 3) ?? 0,
      publicKey: getBinaryNodeChildBuffer(skey, 'value') ?? new Uint8Array(),
      signature: getBinaryNodeChildBuffer(skey, 'signature') ?? new Uint8Array(),
    },
    preKeys: getBinaryNodeChildren(list, 'key').map((key) => ({
      keyId: getBinaryNodeChildUInt(key, 'id', 3) ?? 0,
      publicKey: getBinaryNodeChildBuffer(key, 'value') ?? new Uint8Array(),
    })),
  };
}

/**
 * Someone on the network: a person with a phone number and a LID whose phone runs a real Signal
 * session (Baileys' own repository over a store in memory), as a phone would. It hands out a
 * pre-key bundle, encrypts messages to the gateway's device and decrypts what the gateway sends it.
 */
export class Peer {
  readonly creds: AuthenticationCreds = initAuthCreds();
  readonly repo: SignalRepositoryWithLIDStore;
  private readonly store: SignalKeyStoreWithTransaction;
  private nextPreKeyId = 1;

  constructor(
    readonly phone: string,
    readonly lidUser: string,
    readonly pushName: string,
  ) {
    this.store = addTransactionCapability(memoryKeys(), logger, { maxCommitRetries: 1, delayBetweenTriesMs: 0 });
    this.repo = DEFAULT_CONNECTION_CONFIG.makeSignalRepository({ creds: this.creds, keys: this.store }, logger);
  }

  get pn(): string {
    return `${this.phone}@s.whatsapp.net`;
  }

  get lid(): string {
    return `${this.lidUser}@lid`;
  }

  /** The `<user>` of a key fetch answer for `jid` (a fresh one-time pre-key each time, as the server hands out). */
  async bundleNode(jid: string): Promise<BinaryNode> {
    const id = this.nextPreKeyId++;
    const pair = Curve.generateKeyPair();
    await this.store.set({ 'pre-key': { [String(id)]: pair } });
    return {
      tag: 'user',
      attrs: { jid },
      content: [
        { tag: 'registration', attrs: {}, content: encodeBigEndian(this.creds.registrationId) },
        { tag: 'type', attrs: {}, content: Buffer.from([5]) },
        { tag: 'identity', attrs: {}, content: this.creds.signedIdentityKey.public },
        xmppSignedPreKey(this.creds.signedPreKey),
        xmppPreKey(pair, id),
      ],
    };
  }

  private readonly met = new Set<string>();

  /** Starts a session with a device from the bundle it uploaded (once: later messages ratchet on). */
  async meet(deviceJid: string, bundle: KeyBundle): Promise<void> {
    if (this.met.has(deviceJid)) return;
    this.met.add(deviceJid);
    const preKey = bundle.preKeys[0];
    await this.repo.injectE2ESession({
      jid: deviceJid,
      session: {
        registrationId: bundle.registrationId,
        identityKey: generateSignalPubKey(bundle.identity),
        signedPreKey: { keyId: bundle.signedPreKey.keyId, publicKey: generateSignalPubKey(bundle.signedPreKey.publicKey), signature: bundle.signedPreKey.signature },
        ...(preKey ? { preKey: { keyId: preKey.keyId, publicKey: generateSignalPubKey(preKey.publicKey) } } : {}),
      },
    });
  }

  async encrypt(deviceJid: string, message: proto.IMessage): Promise<{ type: string; ciphertext: Uint8Array }> {
    return this.repo.encryptMessage({ jid: deviceJid, data: encodeWAMessage(message) });
  }

  /** A message the gateway's device sent to this peer (`enc` of its `to` node). */
  async decrypt(fromDeviceJid: string, enc: BinaryNode): Promise<proto.IMessage> {
    const type = enc.attrs.type as 'pkmsg' | 'msg';
    const plain = await this.repo.decryptMessage({ jid: fromDeviceJid, type, ciphertext: enc.content as Uint8Array });
    return proto.Message.decode(unpadRandomMax16(plain));
  }
}

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
