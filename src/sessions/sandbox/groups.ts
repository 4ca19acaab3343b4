import { DomainError, invalidInput, notFound } from '../../domain/errors.js';
import type { Clock } from '../../infra/clock.js';
import { DuplicateKeyError } from '../../infra/docstore/port.js';
import type { IdGenerator } from '../../infra/ids.js';
import { requireGroupJid, requirePhones, unixSeconds } from './addresses.js';
import type { Phones } from './phones.js';
import type { CreateGroupInput, ParticipantsInput } from './schemas.js';
import { DURABLE, type GroupDoc, type GroupMember, type PhoneDoc, type SandboxState } from './state.js';

export interface ParticipantsChange {
  before: GroupDoc;
  after: GroupDoc;
  added: GroupMember[];
  removed: GroupMember[];
}

export function member(phone: PhoneDoc, owner = false): GroupMember {
  const out: GroupMember = { phone: phone._id, is_admin: owner, is_super_admin: owner };
  if (phone.addressing === 'lid' && phone.lid) out.lid = phone.lid;
  return out;
}
export const isMember = (group: GroupDoc, phone: string) => group.participants.some((p) => p.phone === phone);

/** Groups of sandbox phones: the owner is super admin, the others plain members. */
export class Groups {
  constructor(
    private readonly state: SandboxState,
    private readonly phones: Phones,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
  ) {}

  async create(accountId: string, input: CreateGroupInput): Promise<GroupDoc> {
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (name === '') throw invalidInput('name', 'must not be empty');
    const owner = await this.phones.owned(accountId, input.owner, 'owner');
    const others = requirePhones('participants', input.participants);
    if (others.includes(owner._id)) throw invalidInput('participants', 'the owner is a member already');
    const members = await this.phones.ownedMany(accountId, others, 'participants');
    const ephemeral = input.ephemeral_seconds ?? 0;
    if (!Number.isInteger(ephemeral) || ephemeral < 0) throw invalidInput('ephemeral_seconds', 'must be a whole number of seconds');
    const group: GroupDoc = {
      _id: '',
      account_id: accountId,
      name,
      owner: owner._id,
      participants: [member(owner, true), ...members.map((p) => member(p))],
      announce: input.announce ?? false,
      locked: input.locked ?? false,
      ephemeral_seconds: ephemeral,
      created_s: unixSeconds(this.clock.now()),
    };
    if (input.topic !== undefined) group.topic = input.topic;
    return this.insertNew(group);
  }

  /** Stores a new group under a fresh id (the `_id` given is replaced). */
  async insertNew(group: GroupDoc): Promise<GroupDoc> {
    // Real group ids are 18 digits starting 120363; a collision only costs another draw.
    for (let attempt = 0; ; attempt++) {
      group._id = `120363${this.digits(12)}@g.us`;
      try {
        await this.state.groups.insertOne(group, DURABLE);
        return group;
      } catch (error) {
        if (!(error instanceof DuplicateKeyError) || attempt >= 4) throw error;
      }
    }
  }

  async owned(accountId: string, jid: unknown, field = 'jid'): Promise<GroupDoc> {
    const id = requireGroupJid(field, jid);
    const group = await this.state.groups.findOne({ _id: id });
    if (!group || group.account_id !== accountId) throw notFound(`sandbox group ${id} not found`);
    return group;
  }

  ofMember(phone: string): Promise<GroupDoc[]> {
    return this.state.groups.find({ 'participants.phone': phone }, { sort: { created_s: 1 } });
  }

  async changeParticipants(accountId: string, jid: string, input: ParticipantsInput): Promise<ParticipantsChange> {
    const before = await this.owned(accountId, jid);
    const by = await this.phones.owned(accountId, input.by, 'by');
    const actor = before.participants.find((p) => p.phone === by._id);
    if (!actor) throw invalidInput('by', 'is not a member of the group');
    if (!actor.is_admin) throw new DomainError('forbidden', 'only group admins change participants');
    const add = requirePhones('add', input.add ?? []);
    const remove = requirePhones('remove', input.remove ?? []);
    if (add.length === 0 && remove.length === 0) throw invalidInput('add', 'add or remove at least one phone');
    if (add.some((p) => remove.includes(p))) throw invalidInput('remove', 'a phone cannot be added and removed at once');
    const alreadyIn = add.find((p) => isMember(before, p));
    if (alreadyIn) throw invalidInput('add', `${alreadyIn} is a member already`);
    const notIn = remove.find((p) => !isMember(before, p));
    if (notIn) throw invalidInput('remove', `${notIn} is not a member`);
    if (remove.includes(before.owner)) throw invalidInput('remove', 'the owner cannot be removed');
    const added = (await this.phones.ownedMany(accountId, add, 'add')).map((p) => member(p));
    const removed = before.participants.filter((p) => remove.includes(p.phone));
    const participants = [...before.participants.filter((p) => !remove.includes(p.phone)), ...added];
    await this.state.groups.updateOne({ _id: before._id }, { $set: { participants } }, DURABLE);
    return { before, after: { ...before, participants }, added, removed };
  }

  private digits(count: number): string {
    const bytes = this.ids.bytes(count);
    return Array.from(bytes, (b) => String(b % 10)).join('');
  }
}
