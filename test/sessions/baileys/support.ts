import { Value } from '@sinclair/typebox/value';
import { proto, type BaileysEventMap, type WAMessage, type WAMessageKey } from '@whiskeysockets/baileys';
import { expect } from 'chai';
import { SessionEventSchemas, type SessionEvent } from '../../../src/domain/session/events.js';
import { translateBatch, type BatchContext } from '../../../src/sessions/baileys/translator.js';

/** Identities used across the translator tests, in the forms Baileys 7 gives them. */
export const ME = '5511900000001:7@s.whatsapp.net';
export const ME_PN = '5511900000001@s.whatsapp.net';
export const ME_LID = '100000000000001:7@lid';
export const ME_LID_USER = '100000000000001@lid';
export const ALICE_PN = '5511988887777@s.whatsapp.net';
export const ALICE_LID = '200000000000002@lid';
export const BOB_PN = '5511966665555@s.whatsapp.net';
export const BOB_LID = '300000000000003@lid';
export const GROUP = '120363000000000001@g.us';

export const T0 = 1_700_000_000;

export function context(overrides: Partial<BatchContext> = {}): BatchContext {
  return { me: { jid: ME, lid: ME_LID }, wasTyping: () => false, ...overrides };
}

/** The translator over one Baileys buffer emission, with every event checked against its schema. */
export function translate(batch: Partial<BaileysEventMap>, ctx: BatchContext = context()): SessionEvent[] {
  const { events } = translateBatch(batch, ctx);
  expectValid(events);
  return events;
}

/**
 * Each event's data must satisfy its TypeBox schema, as the event store will require. Exact
 * equality is asserted by the tests themselves; this catches what equality would not name
 * (a float where an integer is due, a missing required field).
 */
export function expectValid(events: SessionEvent[]): void {
  for (const event of events) {
    const schema = SessionEventSchemas[event.type];
    const errors = [...Value.Errors(schema, event.data)].map((e) => `${e.path}: ${e.message}`);
    expect(errors, `${event.type} ${JSON.stringify(event.data)}`).to.deep.equal([]);
    expect(Value.Check(schema, event.data)).to.equal(true);
  }
}

/**
 * A message as Baileys hands it over after decoding: encoded and decoded through WhatsApp's own
 * protobuf, so integers come back as Long and bytes as Uint8Array, as they do off the wire. The
 * v7 alternate-jid fields are not in the protobuf (Baileys adds them after decoding), so they are
 * put back on the key.
 */
export function wire(message: WAMessage): WAMessage {
  const decoded = proto.WebMessageInfo.decode(proto.WebMessageInfo.encode(message).finish());
  const key: WAMessageKey | null | undefined = decoded.key;
  if (!key) throw new Error('a message always has a key');
  const { remoteJidAlt, participantAlt } = message.key;
  Object.assign(key, remoteJidAlt ? { remoteJidAlt } : {}, participantAlt ? { participantAlt } : {});
  return Object.assign(decoded, { key });
}

export function bytes(...values: number[]): Uint8Array {
  return Uint8Array.from(values);
}

export const b64 = (value: Uint8Array): string => Buffer.from(value).toString('base64');
