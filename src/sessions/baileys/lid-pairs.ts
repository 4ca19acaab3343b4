import type { WAMessage } from '@whiskeysockets/baileys';
import type { SessionEvent, SessionEventData } from '../../domain/session/events.js';
import { isLid, isPhoneJid, normalizeJid } from './jid.js';

type LidPair = SessionEventData<'LidMappingLearned'>['pairs'][number];
type Candidate = [string | null | undefined, string | null | undefined];

/** Keeps the candidates that really are (phone jid, LID) pairs, without duplicates. */
export function uniquePairs(candidates: Candidate[]): LidPair[] {
  const seen = new Set<string>();
  const pairs: LidPair[] = [];
  for (const [rawPn, rawLid] of candidates) {
    const pn = normalizeJid(rawPn);
    const lid = normalizeJid(rawLid);
    if (!pn || !lid || !isPhoneJid(pn) || !isLid(lid)) continue;
    const key = `${pn}|${lid}`;
    if (seen.has(key)) continue;
    seen.add(key);
    pairs.push({ pn, lid });
  }
  return pairs;
}

/**
 * The phone↔LID pairs message keys reveal. Baileys 7 puts the other identity of a chat peer in
 * `remoteJidAlt` and of a group author in `participantAlt`, either way round (a LID-addressed
 * chat has the phone number as alternate, and the reverse). Baileys stores these pairs in its
 * own key store without emitting `lid-mapping.update`, so without this a reply to a contact who
 * only ever wrote from a LID could not be addressed by phone number.
 */
export function messageLidPairs(messages: WAMessage[]): LidPair[] {
  const candidates: Candidate[] = [];
  for (const { key } of messages) {
    for (const [primary, alternate] of [
      [key.remoteJid, key.remoteJidAlt],
      [key.participant, key.participantAlt],
    ] as const) {
      if (!primary || !alternate) continue;
      candidates.push([primary, alternate], [alternate, primary]);
    }
  }
  return uniquePairs(candidates);
}

export function lidMappingEvent(pairs: LidPair[]): SessionEvent[] {
  return pairs.length ? [{ type: 'LidMappingLearned', data: { pairs } }] : [];
}

/**
 * Remembers the pairs a connection has already reported, so a contact writing from a LID does
 * not add a LidMappingLearned to every one of their messages. Per connection on purpose: after a
 * logout the read model forgets its pairs, and a new connection must be able to teach them again.
 * What a new connection meets without knowing it is looked up in Baileys' own durable mapping
 * (see BaileysConnection), so a reconnect does not turn people back into bare LIDs.
 * Bounded: the oldest pairs are forgotten first (and at worst reported once more).
 */
export class LidPairMemory {
  private readonly known = new Set<string>();
  /** LID → phone jid of the pairs reported, so later LID-only happenings are keyed by phone. */
  private readonly phones = new Map<string, string>();

  constructor(private readonly max = 10_000) {}

  readonly pnOf = (lid: string): string | undefined => this.phones.get(lid);

  /** The events without the pairs reported before; a LidMappingLearned left empty is dropped. */
  filter(events: SessionEvent[]): SessionEvent[] {
    const out: SessionEvent[] = [];
    for (const event of events) {
      if (event.type !== 'LidMappingLearned') {
        out.push(event);
        continue;
      }
      const fresh = event.data.pairs.filter((pair) => this.learn(pair));
      if (fresh.length) out.push({ type: 'LidMappingLearned', data: { pairs: fresh } });
    }
    return out;
  }

  /** Knows the pair for naming (pnOf) before it is reported: a batch's own pairs serve the whole batch. */
  remember(pair: LidPair): void {
    this.phones.delete(pair.lid);
    this.phones.set(pair.lid, pair.pn);
    if (this.phones.size > this.max) {
      const oldest = this.phones.keys().next().value;
      if (oldest !== undefined) this.phones.delete(oldest);
    }
  }

  private learn(pair: LidPair): boolean {
    const key = `${pair.pn}|${pair.lid}`;
    this.remember(pair);
    if (this.known.has(key)) return false;
    this.known.add(key);
    if (this.known.size > this.max) {
      const oldest = this.known.values().next().value;
      if (oldest !== undefined) this.known.delete(oldest);
    }
    return true;
  }
}
