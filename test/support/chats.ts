/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import type { Clock } from '../../src/infra/clock.js';
import { newInstance, type TestAccount, type TestGateway } from './gateway.js';
import { newPhone, pairByQr, sessionEvents, waitFor, waitForEvent } from './sandbox.js';

/** A clock the test moves: message timestamps (seconds) differ only when the test says so. */
export class SteppingClock implements Clock {
  private ms = Date.UTC(2030, 0, 1, 12, 0, 0);
  now(): Date {
    return new Date(this.ms);
  }
  tick(seconds = 1): void {
    this.ms += seconds * 1000;
  }
  get seconds(): number {
    return Math.floor(this.ms / 1000);
  }
}

/** A fresh instance paired with a fresh sandbox phone. */
export async function pairedInstance(t: TestGateway, owner: TestAccount, phone?: string): Promise<{ id: string; phone: string; jid: string }> {
  const me = phone ? { phone, jid: `${phone}@s.whatsapp.net` } : await newPhone(t.api, owner);
  const { id } = await newInstance(t.api, owner);
  await pairByQr(t.api, owner, id, me.phone);
  return { id, ...me };
}

/** A sandbox phone sends text (or media) to `to`; answers the message id. */
export async function phoneSends(t: TestGateway, owner: TestAccount, from: string, to: string, body: Record<string, unknown> = { text: 'hello' }): Promise<string> {
  const res = await t.api('POST', `/sandbox/phones/${from}/messages`, { token: owner.jwt, body: { to, ...body } });
  if (res.status !== 201) throw new Error(`send failed: ${res.status} ${res.text}`);
  return res.body.message_id;
}

/** The data of what the instance's session recorded, of one type, oldest first. */
export async function eventData(t: TestGateway, instanceId: string, type: string): Promise<any[]> {
  return (await sessionEvents(t.gateway, instanceId)).filter((e) => e.type === type).map((e) => e.data);
}

/** Waits until the instance has recorded an event of `type` whose data `match` accepts, and answers that data. */
export async function recorded(t: TestGateway, instanceId: string, type: string, match: (data: any) => boolean = () => true): Promise<any> {
  return (await waitForEvent(t.gateway, instanceId, (e) => e.type === type && match(e.data), `${type} on ${instanceId}`)).data;
}

export async function chatList(t: TestGateway, owner: TestAccount, id: string, query = ''): Promise<any> {
  const res = await t.api('GET', `/instances/${id}/chats${query}`, { token: owner.jwt });
  if (res.status !== 200) throw new Error(`chats failed: ${res.status} ${res.text}`);
  return res.body;
}

/** Polls the chat list until `check` holds for it; answers the last page read. */
export async function chatsUntil(t: TestGateway, owner: TestAccount, id: string, check: (page: any) => boolean, query = ''): Promise<any> {
  let page: any;
  await waitFor(async () => check((page = await chatList(t, owner, id, query))), `chat list of ${id}`);
  return page;
}

export const fieldsOf = (answer: { body: any }): string[] => (answer.body?.error?.details ?? []).map((d: { field: string }) => d.field);
