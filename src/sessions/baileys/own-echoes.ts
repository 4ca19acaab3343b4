import type { SessionEvent } from '../../domain/session/events.js';

const TTL_MS = 60_000;

const KINDS: Record<string, string> = {
  GroupParticipantsAdded: 'add',
  GroupParticipantsRemoved: 'remove',
  GroupLeft: 'remove',
  GroupParticipantsPromoted: 'promote',
  GroupParticipantsDemoted: 'demote',
  GroupUpdated: 'update',
  GroupInviteRevoked: 'update',
};

interface Expected {
  group: string;
  kind: string;
  /** People still to be echoed; undefined: the whole change. */
  people?: Set<string>;
  until: number;
}

/**
 * The network tells every device of a group's members what changed, the device that made the
 * change included. The API records its own changes (with who asked), so their echo must not be
 * recorded again as a second change (a second GroupParticipantsAdd webhook): each change this
 * connection makes is expected once, for a minute, and its echo dropped. A change made on the
 * phone itself or by another admin was never expected, and is recorded.
 */
export class OwnEchoes {
  private expected: Expected[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  expect(group: string, kind: string, people?: string[]): void {
    this.expected.push({ group, kind, ...(people ? { people: new Set(people) } : {}), until: this.now() + TTL_MS });
  }

  filter(events: SessionEvent[]): SessionEvent[] {
    const now = this.now();
    this.expected = this.expected.filter((e) => e.until > now);
    if (this.expected.length === 0) return events;
    const out: SessionEvent[] = [];
    for (const event of events) {
      const kind = KINDS[event.type];
      if (!kind) {
        out.push(event);
        continue;
      }
      const data = event.data as { group: string; participants?: { jid: string; phone_number?: string; lid?: string }[] };
      const match = this.expected.find((e) => e.group === data.group && e.kind === kind);
      if (!match) {
        out.push(event);
        continue;
      }
      if (!data.participants || !match.people) {
        if (event.type !== 'GroupLeft') this.expected = this.expected.filter((e) => e !== match);
        continue;
      }
      const ids = (p: { jid: string; phone_number?: string; lid?: string }) => [p.jid, p.phone_number, p.lid].filter((j): j is string => !!j);
      const rest = data.participants.filter((p) => !ids(p).some((j) => match.people!.has(j)));
      for (const p of data.participants) for (const j of ids(p)) match.people.delete(j);
      if (match.people.size === 0) this.expected = this.expected.filter((e) => e !== match);
      if (rest.length > 0) out.push({ ...event, data: { ...event.data, participants: rest } } as SessionEvent);
    }
    return out;
  }
}
