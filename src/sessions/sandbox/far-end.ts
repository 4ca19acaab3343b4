import { Type, type Static } from '@sinclair/typebox';
import { invalidInput } from '../../domain/errors.js';
import type { SessionEvent } from '../../domain/session/events.js';
import type { GroupChange } from '../account-port.js';
import { userJid } from './addresses.js';
import { labelsOf, privacyOf } from './account-admin.js';
import { inviteCodeOf } from './account-operations.js';
import type { GroupAdmin } from './group-admin.js';
import type { Phones } from './phones.js';
import type { Pictures } from './pictures.js';
import type { PhoneDoc, SandboxState } from './state.js';

const Phone = Type.String({ pattern: '^[0-9]{8,15}$', description: 'digits with country code', example: '5511999990001' });

export const JoinBody = Type.Object({ invite_url: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false });
export const JoinAnswer = Type.Object({ jid: Type.String() });

export const GroupView = Type.Object({
  jid: Type.String(),
  name: Type.String(),
  topic: Type.String(),
  announce: Type.Boolean(),
  locked: Type.Boolean(),
  ephemeral_seconds: Type.Integer(),
  invite_code: Type.Union([Type.String(), Type.Null()], { description: 'null until an admin first asks for the link' }),
  picture_id: Type.Union([Type.String(), Type.Null()]),
  participants: Type.Array(Type.Object({ phone: Type.String(), admin: Type.Boolean(), super_admin: Type.Boolean() })),
});
export type GroupView = Static<typeof GroupView>;

export const AccountView = Type.Object({
  jid: Type.String(),
  push_name: Type.String(),
  about: Type.Union([Type.String(), Type.Null()]),
  profile_picture_id: Type.Union([Type.String(), Type.Null()]),
  privacy: Type.Record(Type.String(), Type.String()),
  blocked: Type.Array(Type.String()),
  labels: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), color: Type.Integer() })),
  chat_labels: Type.Array(Type.Object({ chat: Type.String(), label_id: Type.String() })),
});
export type AccountView = Static<typeof AccountView>;

export const StatusesAnswer = Type.Object({
  statuses: Type.Array(
    Type.Object({
      message_id: Type.String(),
      from: Type.String({ description: 'jid of the poster' }),
      text: Type.Optional(Type.String()),
      media: Type.Optional(Type.Object({ kind: Type.String(), mimetype: Type.String(), file_length: Type.Integer(), caption: Type.Optional(Type.String()) })),
      background_color: Type.Optional(Type.String()),
      font: Type.Optional(Type.Integer()),
      posted_at: Type.String({ format: 'date-time' }),
    }),
  ),
});
export type StatusesAnswer = Static<typeof StatusesAnswer>;

/** Sandbox extension: a member (another admin, or the paired phone itself) changes the group on its phone. */
export const GroupChangeBody = Type.Object(
  {
    by: Phone,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    topic: Type.Optional(Type.String({ maxLength: 2048 })),
    announce: Type.Optional(Type.Boolean()),
    locked: Type.Optional(Type.Boolean()),
    ephemeral_seconds: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);
export type GroupChangeInput = Static<typeof GroupChangeBody>;

/** Sandbox extension: an admin promotes or demotes members on its phone. */
export const AdminsBody = Type.Object(
  { by: Phone, promote: Type.Optional(Type.Array(Phone, { maxItems: 1023 })), demote: Type.Optional(Type.Array(Phone, { maxItems: 1023 })) },
  { additionalProperties: false },
);
export type AdminsInput = Static<typeof AdminsBody>;

/**
 * What the network shows other people of what accounts do (SANDBOX.md, "What phones see of what
 * instances do"), and what a phone does to a group by hand: the far end a test checks a route at.
 */
export class SandboxFarEnd {
  constructor(
    private readonly state: SandboxState,
    private readonly phones: Phones,
    private readonly groups: GroupAdmin,
    private readonly pictures: Pictures,
  ) {}

  async group(accountId: string, jid: string): Promise<GroupView> {
    await this.state.ready();
    const g = await this.groups.view(accountId, jid);
    return {
      jid: g._id,
      name: g.name,
      topic: g.topic ?? '',
      announce: g.announce,
      locked: g.locked,
      ephemeral_seconds: g.ephemeral_seconds,
      invite_code: g.invite_code ?? null,
      picture_id: g.picture_id ?? null,
      participants: g.participants.map((p) => ({ phone: p.phone, admin: p.is_admin, super_admin: p.is_super_admin })),
    };
  }

  /** The phone joins by invite: members' instances see GroupParticipantsAdd, its own device too. */
  async join(accountId: string, phone: string, inviteUrl: string): Promise<{ jid: string }> {
    const me = await this.phone(accountId, phone);
    return { jid: await this.groups.join(me, inviteCodeOf(inviteUrl), 'phone') };
  }

  async account(accountId: string, phone: string): Promise<AccountView> {
    const me = await this.phone(accountId, phone);
    return {
      jid: me.jid,
      push_name: me.push_name,
      about: me.about ?? null,
      profile_picture_id: me.picture_id ?? null,
      privacy: privacyOf(me),
      blocked: (me.blocked ?? []).map(userJid),
      labels: labelsOf(me),
      chat_labels: me.chat_labels ?? [],
    };
  }

  /** Status posts the phone can see, newest first. */
  async statuses(accountId: string, phone: string): Promise<StatusesAnswer> {
    const me = await this.phone(accountId, phone);
    const docs = await this.state.statuses.find({ recipients: me._id }, { sort: { posted_at: -1 } });
    return {
      statuses: docs.map((d) => ({
        message_id: d._id,
        from: userJid(d.from),
        ...(d.text === undefined ? {} : { text: d.text }),
        ...(d.media === undefined ? {} : { media: d.media }),
        ...(d.background_color === undefined ? {} : { background_color: d.background_color }),
        ...(d.font === undefined ? {} : { font: d.font }),
        posted_at: d.posted_at,
      })),
    };
  }

  /** A member changes the group on its phone; every member's instance hears of it, with `by`. */
  async changeGroup(accountId: string, jid: string, input: GroupChangeInput): Promise<void> {
    const by = await this.phone(accountId, input.by);
    const changes: GroupChange[] = [];
    if (input.name !== undefined) changes.push({ name: input.name });
    if (input.topic !== undefined) changes.push({ topic: input.topic });
    if (input.announce !== undefined) changes.push({ is_announce: input.announce });
    if (input.locked !== undefined) changes.push({ is_locked: input.locked });
    if (input.ephemeral_seconds !== undefined) changes.push({ disappearing_timer: input.ephemeral_seconds });
    if (changes.length === 0) throw invalidInput('name', 'change at least one of name, topic, announce, locked, ephemeral_seconds');
    for (const change of changes) await this.groups.update(by, jid, change, 'phone');
  }

  async changeAdmins(accountId: string, jid: string, input: AdminsInput): Promise<void> {
    const by = await this.phone(accountId, input.by);
    if (!input.promote?.length && !input.demote?.length) throw invalidInput('promote', 'promote or demote at least one phone');
    if (input.promote?.length) await this.groups.participants(by, jid, 'promote', input.promote, 'phone');
    if (input.demote?.length) await this.groups.participants(by, jid, 'demote', input.demote, 'phone');
  }

  picture(file: string): Promise<Buffer | null> {
    return this.pictures.file(file);
  }

  private async phone(accountId: string, phone: string): Promise<PhoneDoc> {
    await this.state.ready();
    return this.phones.owned(accountId, phone);
  }
}

/** What a newly linked device learns of its account besides chats: contacts, block list, labels. */
export async function accountSync(phone: PhoneDoc, phones: Phones): Promise<SessionEvent[]> {
  const contacts = await phones.byIds(phone.contacts);
  const events: SessionEvent[] = [];
  const known = phone.contacts.map((c) => contacts.get(c)).filter((c): c is PhoneDoc => c !== undefined && c.account_id === phone.account_id);
  if (known.length > 0) {
    events.push({
      type: 'ContactsUpserted',
      data: {
        contacts: known.map((c) => ({
          jid: c.jid,
          // The address book keeps the name the phone's owner knows them by: their own, here.
          name: c.push_name,
          push_name: c.push_name,
          ...(c.lid ? { lid: c.lid } : {}),
          ...(c.business ? { business_name: c.business.name } : {}),
        })),
      },
    });
  }
  events.push({ type: 'BlocklistUpdated', data: { action: 'set', jids: (phone.blocked ?? []).map(userJid) } });
  const labels = labelsOf(phone);
  if (labels.length > 0) events.push({ type: 'LabelsUpserted', data: { labels } });
  return events;
}
