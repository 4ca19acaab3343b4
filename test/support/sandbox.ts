/* eslint-disable @typescript-eslint/no-explicit-any -- test answers are read field by field */
import type { Gateway } from '../../src/composition-root.js';
import type { Api, TestAccount } from './gateway.js';

let phoneCounter = 0;

/** A fresh sandbox phone number: unique per test run, digits with country code. */
export function nextPhone(): string {
  phoneCounter += 1;
  return `5511${String(process.pid % 10000).padStart(4, '0')}${String(phoneCounter).padStart(5, '0')}`;
}

export async function newPhone(api: Api, owner: TestAccount, body: Record<string, unknown> = {}): Promise<{ phone: string; jid: string }> {
  const phone = (body.phone as string | undefined) ?? nextPhone();
  const res = await api('POST', '/sandbox/phones', { token: owner.jwt, body: { phone, push_name: `Phone ${phone}`, ...body } });
  if (res.status !== 201) throw new Error(`phone failed: ${res.status} ${res.text}`);
  return res.body;
}

/** Pairs an instance with a phone by scanning the QR, and waits until the status says connected. */
export async function pairByQr(api: Api, owner: TestAccount, instanceId: string, phone: string): Promise<void> {
  const qr = await api('GET', `/instances/${instanceId}/session/qr`, { token: owner.jwt });
  if (qr.status !== 200) throw new Error(`qr failed: ${qr.status} ${qr.text}`);
  const scan = await api('POST', `/sandbox/phones/${phone}/scan`, { token: owner.jwt, body: { qr: qr.body.data.qr } });
  if (scan.status !== 200) throw new Error(`scan failed: ${scan.status} ${scan.text}`);
  await waitFor(async () => (await status(api, owner, instanceId)).connected === true, 'connected');
}

export async function status(api: Api, owner: TestAccount, instanceId: string): Promise<any> {
  const res = await api('GET', `/instances/${instanceId}/session/status`, { token: owner.jwt });
  if (res.status !== 200) throw new Error(`status failed: ${res.status} ${res.text}`);
  return res.body.data;
}

/**
 * Polls until the condition holds; read models are eventually consistent by design.
 * The default is generous because on a loaded 2-core CI machine log + projection work can
 * take seconds; a condition that never holds still fails, just later.
 */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Pairs an instance with a phone by pairing code, and waits until the status says connected. */
export async function pairByCode(api: Api, owner: TestAccount, instanceId: string, phone: string): Promise<void> {
  const code = await api('GET', `/instances/${instanceId}/session/paircode/${phone}`, { token: owner.jwt });
  if (code.status !== 200) throw new Error(`paircode failed: ${code.status} ${code.text}`);
  const link = await api('POST', `/sandbox/phones/${phone}/link`, { token: owner.jwt, body: { code: code.body.data.code } });
  if (link.status !== 200) throw new Error(`link failed: ${link.status} ${link.text}`);
  await waitFor(async () => (await status(api, owner, instanceId)).connected === true, 'connected');
}

/** The instance as GET /instances/{id} shows it. */
export async function instanceOf(api: Api, owner: TestAccount, instanceId: string): Promise<any> {
  const res = await api('GET', `/instances/${instanceId}`, { token: owner.jwt });
  if (res.status !== 200) throw new Error(`instance failed: ${res.status} ${res.text}`);
  return res.body;
}

/** The download body (chat/download*) for a Message event's media, its fields mapped as the spec maps them. */
export function downloadBody(media: any): Record<string, unknown> {
  return {
    url: media.url,
    media_key: media.media_key,
    mimetype: media.mimetype,
    file_sha256: media.file_sha256,
    file_length: media.file_length,
    direct_path: media.direct_path,
    file_enc_sha256: media.file_enc_sha256,
  };
}

export interface LoggedEvent {
  type: string;
  data: any;
}

/** What the session recorded in `session-<id>`, oldest first. */
export async function sessionEvents(gateway: Gateway, instanceId: string): Promise<LoggedEvent[]> {
  const events = await gateway.events.readStream(`session-${instanceId}`);
  return events.map((e) => ({ type: e.type, data: e.data }));
}

/** Polls the session stream until an event matches; answers it. */
export async function waitForEvent(
  gateway: Gateway,
  instanceId: string,
  match: (event: LoggedEvent) => boolean,
  what: string,
  timeoutMs = 5000,
): Promise<LoggedEvent> {
  let found: LoggedEvent | undefined;
  await waitFor(async () => (found = (await sessionEvents(gateway, instanceId)).find(match)) !== undefined, what, timeoutMs);
  return found!;
}
