import QRCode from 'qrcode';
import type { ReadYourWrites } from '../../commands/read-your-writes.js';
import { commandContext } from '../deps.js';
import type { SessionQueries } from '../../projections/sessions/session-queries.js';
import type { SessionStatusDoc } from '../../projections/sessions/sessions-projection.js';
import type { SessionManager } from '../../sessions/session-manager.js';
import { envelope } from '../envelope.js';
import { presentSessionStatus } from '../presenters/session-status.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';
import { ConnectedAnswer, PairCodeAnswer, PairCodeParams, QrAnswer, SessionStatus } from '../schemas/session.js';

const TAG = 'Session';

export interface SessionRouteDeps {
  manager: SessionManager;
  sessions: SessionQueries;
  rw: ReadYourWrites;
}

const READ_MODELS = ['sessions', 'instances'];

export function sessionRoutes({ manager, sessions, rw }: SessionRouteDeps): AnyRoute[] {
  // A live status changes identity when it changes, so its presentation is kept until then.
  const cache = new WeakMap<SessionStatusDoc, ReturnType<typeof presentSessionStatus>>();
  const presented = (live: SessionStatusDoc) => {
    let body = cache.get(live);
    if (!body) cache.set(live, (body = presentSessionStatus(live, true)));
    return body;
  };
  return [
    defineRoute({
      method: 'get',
      path: '/instances/{id}/session/status',
      tag: TAG,
      summary: 'Connection state and profile of the paired account',
      auth: 'instance',
      liveSession: true,
      params: InstanceIdParams,
      response: { description: 'session status', schema: SessionStatus },
      handler: async ({ instance }) => {
        // A session open here answers from what it reported: the hottest read skips the store.
        const live = manager.liveStatus(instance._id);
        if (live) return { body: envelope(presented(live)) };
        const doc = await sessions.status(instance._id);
        // The live session decides `connected`; the read model holds what was learned of it.
        return { body: envelope(presentSessionStatus(doc, manager.isConnected(instance._id) && doc?.connected === true)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/instances/{id}/session/qr',
      tag: TAG,
      summary: 'Start pairing (when not started) and show the current QR',
      auth: 'instance',
      liveSession: true,
      paidOnly: true,
      params: InstanceIdParams,
      response: { description: 'the QR string and its image', schema: QrAnswer },
      errors: [409, 502],
      handler: async ({ instance }) => {
        const qr = await manager.qr(instance._id, instance.account_id);
        return { body: envelope({ qr, qr_image: await QRCode.toDataURL(qr, { errorCorrectionLevel: 'M', margin: 2, width: 264 }) }) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/instances/{id}/session/paircode/{phone}',
      tag: TAG,
      summary: 'Start pairing by code for the given phone number',
      auth: 'instance',
      liveSession: true,
      paidOnly: true,
      params: PairCodeParams,
      response: { description: 'the pairing code to type on the phone', schema: PairCodeAnswer },
      // 400: a malformed phone; 404: a sandbox phone that does not exist or is another account's.
      errors: [400, 404, 409, 502],
      handler: async ({ instance, params }) => ({
        body: envelope({ code: await manager.pairCode(instance._id, instance.account_id, params.phone) }),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/instances/{id}/session/logout',
      tag: TAG,
      summary: 'Unpair the instance',
      auth: 'instance',
      liveSession: true,
      params: InstanceIdParams,
      response: { description: 'logged out', schema: ConnectedAnswer },
      handler: async ({ instance, principal, requestId }) => {
        await rw.settle(await manager.logout(instance._id, instance.account_id, commandContext(principal, requestId, instance._id)), READ_MODELS);
        return { body: envelope({ connected: false }) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/instances/{id}/session/restart',
      tag: TAG,
      summary: 'Drop and re-open the connection',
      auth: 'instance',
      liveSession: true,
      paidOnly: true,
      params: InstanceIdParams,
      response: { description: 'whether the session is connected after the restart', schema: ConnectedAnswer },
      errors: [409],
      handler: async ({ instance }) => ({
        body: envelope({ connected: await manager.restart(instance._id, instance.account_id) }),
      }),
    }),
  ];
}
