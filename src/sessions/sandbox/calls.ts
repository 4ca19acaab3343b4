import { conflict, invalidInput, notFound } from '../../domain/errors.js';
import type { Clock } from '../../infra/clock.js';
import type { IdGenerator } from '../../infra/ids.js';
import { parseAddress, userJid } from './addresses.js';
import type { SandboxConnection } from './connection.js';
import type { Phones } from './phones.js';
import type { Registry } from './registry.js';
import type { CallEntry } from './schemas.js';
import { DURABLE, type CallDoc, type PhoneDoc, type SandboxState } from './state.js';

/**
 * Voice calls between sandbox phones: a sandbox extension (SANDBOX.md has none) so that an
 * instance's `reject_calls` can be seen working. A call rings the callee's linked instance as a
 * call offer; the instance may reject it; the caller's phone sees the outcome in its call log.
 */
export class Calls {
  constructor(
    private readonly state: SandboxState,
    private readonly phones: Phones,
    private readonly registry: Registry,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
  ) {}

  async place(caller: PhoneDoc, to: unknown): Promise<CallDoc> {
    const address = parseAddress('to', to);
    if (address.kind !== 'phone') throw invalidInput('to', 'must be a phone: the sandbox has no group calls');
    if (address.phone === caller._id) throw invalidInput('to', 'a phone cannot call itself');
    const callee = (await this.phones.byIds([address.phone])).get(address.phone);
    if (!callee || callee.account_id !== caller.account_id) throw notFound(`sandbox phone ${address.phone} not found`);
    const call: CallDoc = {
      // The network's call ids are 32 hex digits.
      _id: this.ids.bytes(16).toString('hex').toUpperCase(),
      account_id: caller.account_id,
      from: caller._id,
      to: callee._id,
      status: 'ringing',
      offered_at: this.clock.now().toISOString(),
    };
    await this.state.calls.insertOne(call, DURABLE);
    const conn = this.registry.connectedFor(callee._id);
    if (conn) await conn.offerCall({ id: call._id, from: caller.jid });
    return call;
  }

  /** The callee's instance declines: only a ringing call to its own phone, from the named caller. */
  async reject(conn: SandboxConnection, callId: string, from: string): Promise<void> {
    const phone = conn.connectedPhone();
    const call = await this.state.calls.findOne({ _id: callId });
    if (!call || call.to !== phone || userJid(call.from) !== from) throw notFound(`call ${callId} not found`);
    if (call.status !== 'ringing') throw conflict(`call ${callId} is no longer ringing`);
    await this.state.calls.updateOne({ _id: callId }, { $set: { status: 'rejected', rejected_at: this.clock.now().toISOString() } }, DURABLE);
  }

  /** The phone's call log, oldest first: calls it placed and calls it received. */
  async log(phone: PhoneDoc): Promise<CallEntry[]> {
    const calls = await this.state.calls.find({ $or: [{ from: phone._id }, { to: phone._id }] }, { sort: { offered_at: 1, _id: 1 } });
    return calls.map((c) => {
      const entry: CallEntry = { call_id: c._id, from: userJid(c.from), to: userJid(c.to), status: c.status, offered_at: c.offered_at };
      if (c.rejected_at !== undefined) entry.rejected_at = c.rejected_at;
      return entry;
    });
  }
}
