/* eslint-disable @typescript-eslint/no-explicit-any -- answers are read field by field */
import { makeWASocket } from '@whiskeysockets/baileys';
import { expect } from 'chai';
import type { GatewayOptions } from '../../../src/composition-root.js';
import { startTestGateway, type TestAccount, type TestGateway } from '../../support/gateway.js';
import { sessionEvents, waitFor, type LoggedEvent } from '../../support/sandbox.js';
import type { ScriptedConnection, ScriptedWhatsApp } from '../../servers/whatsapp/scripted-whatsapp.js';

/**
 * A gateway on the real network's driver (Baileys) whose sockets connect to a scripted WhatsApp
 * server: HTTP in, Baileys' real socket, the server's frames, events stored, HTTP or webhooks out.
 */
export async function startPhoneGateway(
  server: ScriptedWhatsApp,
  env: Record<string, string> = {},
  options: GatewayOptions & { socket?: Record<string, unknown> } = {},
): Promise<TestGateway> {
  const { socket, network, ...rest } = options;
  return startTestGateway(
    {
      MESSAGING_NETWORK: 'baileys',
      // No history wait at login (Baileys holds events up to 20 s for a first history sync).
      HISTORY_SYNC_DAYS: '0',
      SEND_RATE_PER_MIN: '100000',
      SEND_JITTER_MS: '0',
      ...env,
    },
    {
      // PHONE_LOG=debug shows the gateway's log (Baileys' included) while a test runs.
      ...(process.env.PHONE_LOG ? { logger: (await import('pino')).pino({ level: process.env.PHONE_LOG }) } : {}),
      ...rest,
      network: { makeSocket: (config) => makeWASocket({ ...config, waWebSocketUrl: server.url, ...socket }), ...network },
    },
  );
}

/**
 * Pairs an instance as a user does: asks for the QR over HTTP, the phone scans it, the network asks
 * for a fresh socket (515), the device logs in. Answers the logged-in connection.
 */
export async function pairInstance(gw: TestGateway, server: ScriptedWhatsApp, owner: TestAccount, instanceId: string): Promise<ScriptedConnection> {
  const first = server.connections.length;
  const qr = await gw.api('GET', `/instances/${instanceId}/session/qr`, { token: owner.jwt });
  expect(qr.status, qr.text).to.equal(200);
  await server.scanQr(await server.connection(first), qr.body.data.qr);
  const login = await server.connection(first + 1);
  await waitForSession(gw, instanceId, (e) => e.type === 'SessionConnected', 'Connected');
  await waitFor(async () => (await gw.api('GET', `/instances/${instanceId}/session/status`, { token: owner.jwt })).body?.data?.connected === true, 'status connected');
  return login;
}

export async function waitForSession(gw: TestGateway, instanceId: string, match: (e: LoggedEvent) => boolean, what: string, timeoutMs = 15_000): Promise<LoggedEvent> {
  let found: LoggedEvent | undefined;
  await waitFor(async () => (found = (await sessionEvents(gw.gateway, instanceId)).find(match)) !== undefined, what, timeoutMs);
  return found as LoggedEvent;
}

export const anyData = (e: LoggedEvent): any => e.data;
