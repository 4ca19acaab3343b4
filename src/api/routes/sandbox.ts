import { Type, type Static, type TObject } from '@sinclair/typebox';
import { notFound } from '../../domain/errors.js';
import { defineRoute, type AnyRoute } from '../route.js';
import type { SandboxNetwork } from '../../sessions/sandbox/sandbox-network.js';
import {
  CallAnswer,
  CallBody,
  CallsAnswer,
  ChatPresenceBody,
  CreateGroupBody,
  CreatePhoneBody,
  Done,
  GroupAnswer,
  GroupParams,
  InboxAnswer,
  LinkBody,
  MessageIdAnswer,
  ParticipantsBody,
  PhoneAnswer,
  PhoneParams,
  PhoneMessageParams,
  StatusBody,
  EditBody,
  PresenceBody,
  ReadBody,
  ReceiptsBody,
  ScanBody,
  SendBody,
  VoteBody,
  ChatPresenceAnswer,
} from '../../sessions/sandbox/schemas.js';

const TAG = 'Sandbox';
/** 64 MiB of media is about 85.4 MiB of base64, plus the rest of the JSON. */
const SANDBOX_MEDIA_BODY_LIMIT = 90 * 1024 * 1024;
const MediaFileParams = Type.Object({ file: Type.String({ minLength: 1, maxLength: 80 }) });

/** The /sandbox routes of SANDBOX.md; mounted only when MESSAGING_NETWORK=sandbox. */
export function sandboxRoutes(sandbox: SandboxNetwork): AnyRoute[] {
  const done = { description: 'done', schema: Done };
  const phoneAction = <B extends TObject>(
    path: string,
    summary: string,
    body: B,
    errors: number[],
    act: (accountId: string, phone: string, body: Static<B>) => Promise<void>,
  ) =>
    defineRoute({
      method: 'post',
      path: `/sandbox/phones/{phone}/${path}`,
      tag: TAG,
      summary,
      auth: 'jwt',
      params: PhoneParams,
      body,
      response: done,
      errors: [400, 404, ...errors],
      ...forwarded,
      handler: async ({ principal, params, body: input }) => {
        await act(principal.accountId, params.phone, input);
        return { body: {} };
      },
    });

  // With many nodes, sent to the node holding the session the phone route reaches (sessionOf).
  const forwarded = {
    liveSessionOf: ({ accountId, params, body }: { accountId: string; params: { phone: string }; body: unknown }) => sandbox.sessionOf(accountId, params.phone, body),
  };

  return [
    defineRoute({
      method: 'post',
      path: '/sandbox/phones',
      tag: TAG,
      summary: 'Create a simulated phone (an account on the sandbox network)',
      auth: 'jwt',
      body: CreatePhoneBody,
      response: { status: 201, description: 'the phone and its jid', schema: PhoneAnswer },
      errors: [400, 409],
      handler: async ({ principal, body }) => ({ status: 201, body: await sandbox.createPhone(principal.accountId, body) }),
    }),
    phoneAction('scan', 'The phone scans an instance QR: the instance pairs, connects and syncs the history', ScanBody, [409], (a, p, b) =>
      sandbox.scan(a, p, b),
    ),
    phoneAction('link', 'The phone enters a pairing code: the instance pairs as with a QR', LinkBody, [409], (a, p, b) =>
      sandbox.link(a, p, b),
    ),
    defineRoute({
      method: 'post',
      path: '/sandbox/phones/{phone}/messages',
      tag: TAG,
      summary: 'The phone sends a text or media message to a phone or a group',
      auth: 'jwt',
      ...forwarded,
      params: PhoneParams,
      body: SendBody,
      bodyLimit: SANDBOX_MEDIA_BODY_LIMIT,
      response: { status: 201, description: 'the id every party sees', schema: MessageIdAnswer },
      errors: [400, 403, 404, 413],
      handler: async ({ principal, params, body }) => ({
        status: 201,
        body: await sandbox.sendFromPhone(principal.accountId, params.phone, body),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/phones/{phone}/status',
      tag: TAG,
      summary: 'The phone posts a status: instances of phones that have it as a contact receive it on status@broadcast',
      auth: 'jwt',
      ...forwarded,
      params: PhoneParams,
      body: StatusBody,
      response: { status: 201, description: 'the status message id', schema: MessageIdAnswer },
      errors: [400, 404],
      handler: async ({ principal, params, body }) => ({ status: 201, body: await sandbox.postStatus(principal.accountId, params.phone, body) }),
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/phones/{phone}/messages/{message_id}/edit',
      tag: TAG,
      summary: "Edit for everyone: recipients' instances receive Message carrying the network's edit protocol message",
      auth: 'jwt',
      ...forwarded,
      params: PhoneMessageParams,
      body: EditBody,
      response: { status: 201, description: 'the id of the edit', schema: MessageIdAnswer },
      errors: [400, 404],
      handler: async ({ principal, params, body }) => ({
        status: 201,
        body: await sandbox.editMessage(principal.accountId, params.phone, params.message_id, body),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/sandbox/phones/{phone}/messages/{message_id}',
      tag: TAG,
      summary: "Delete for everyone: recipients' instances receive Message carrying the network's revoke protocol message",
      auth: 'jwt',
      ...forwarded,
      params: PhoneMessageParams,
      response: { description: 'the id of the revoke', schema: MessageIdAnswer },
      errors: [400, 404],
      handler: async ({ principal, params }) => ({ body: await sandbox.deleteMessage(principal.accountId, params.phone, params.message_id) }),
    }),
    defineRoute({
      method: 'get',
      path: '/sandbox/phones/{phone}/inbox/{message_id}/media',
      tag: TAG,
      summary: 'The decrypted bytes of a media message the phone received (what the phone would decrypt and show)',
      auth: 'jwt',
      params: PhoneMessageParams,
      response: { description: 'the file, with its mimetype as Content-Type', contentType: 'application/octet-stream' },
      errors: [404],
      handler: async ({ principal, params }) => {
        const { mimetype, bytes } = await sandbox.inboxMedia(principal.accountId, params.phone, params.message_id);
        return { body: bytes, contentType: mimetype };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/phones/{phone}/messages/{message_id}/vote',
      tag: TAG,
      summary: "The phone votes on a poll it received ([] withdraws its vote): the poll's sender instance emits Message with the encrypted vote and the decrypted PollVote",
      auth: 'jwt',
      ...forwarded,
      params: PhoneMessageParams,
      body: VoteBody,
      response: { status: 201, description: 'the vote message', schema: MessageIdAnswer },
      errors: [400, 404],
      handler: async ({ principal, params, body }) => ({ status: 201, body: await sandbox.vote(principal.accountId, params.phone, params.message_id, body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/sandbox/phones/{phone}/chat-presence',
      tag: TAG,
      summary: 'The last typing, recording or paused state each chat showed this phone',
      auth: 'jwt',
      params: PhoneParams,
      response: { description: 'presences by chat', schema: ChatPresenceAnswer },
      errors: [404],
      handler: async ({ principal, params }) => ({ body: await sandbox.chatPresenceSeen(principal.accountId, params.phone) }),
    }),
    defineRoute({
      method: 'get',
      path: '/sandbox/phones/{phone}/inbox',
      tag: TAG,
      summary: 'What the phone received, oldest first (buttons and reactions from instances included)',
      auth: 'jwt',
      params: PhoneParams,
      response: { description: 'the inbox', schema: InboxAnswer },
      errors: [400, 404],
      handler: async ({ principal, params }) => ({ body: await sandbox.inbox(principal.accountId, params.phone) }),
    }),
    phoneAction('receipts', 'The phone acknowledges received messages: their senders see Delivered or Read', ReceiptsBody, [], (a, p, b) =>
      sandbox.receipts(a, p, b),
    ),
    phoneAction('read', 'The paired account reads a chat on its phone: its instance sees ReadSelf', ReadBody, [], (a, p, b) =>
      sandbox.readSelf(a, p, b),
    ),
    phoneAction('presence', 'The phone comes online or goes offline, for instances that know it', PresenceBody, [], (a, p, b) =>
      sandbox.presence(a, p, b),
    ),
    phoneAction('chat-presence', 'The phone is typing, recording or paused in a chat', ChatPresenceBody, [], (a, p, b) =>
      sandbox.chatPresence(a, p, b),
    ),
    defineRoute({
      method: 'post',
      path: '/sandbox/phones/{phone}/unlink',
      tag: TAG,
      summary: 'The phone removes its linked device: that instance is logged out',
      auth: 'jwt',
      ...forwarded,
      params: PhoneParams,
      response: done,
      errors: [400, 404],
      handler: async ({ principal, params }) => {
        await sandbox.unlink(principal.accountId, params.phone);
        return { body: {} };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/phones/{phone}/call',
      tag: TAG,
      summary: "Sandbox extension: the phone calls another phone; that phone's instance sees the call (and rejects it when reject_calls is on)",
      auth: 'jwt',
      ...forwarded,
      params: PhoneParams,
      body: CallBody,
      response: { status: 201, description: 'the call id the callee instance sees', schema: CallAnswer },
      errors: [400, 404],
      handler: async ({ principal, params, body }) => ({ status: 201, body: await sandbox.placeCall(principal.accountId, params.phone, body) }),
    }),
    defineRoute({
      method: 'get',
      path: '/sandbox/phones/{phone}/calls',
      tag: TAG,
      summary: 'Sandbox extension: the calls the phone placed and received, oldest first, with their outcome',
      auth: 'jwt',
      params: PhoneParams,
      response: { description: 'the call log', schema: CallsAnswer },
      errors: [400, 404],
      handler: async ({ principal, params }) => ({ body: await sandbox.callLog(principal.accountId, params.phone) }),
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/groups',
      tag: TAG,
      summary: 'Create a group: the owner is super admin, the participants members',
      auth: 'jwt',
      body: CreateGroupBody,
      response: { status: 201, description: 'the group jid', schema: GroupAnswer },
      errors: [400, 404],
      handler: async ({ principal, body }) => ({ status: 201, body: await sandbox.createGroup(principal.accountId, body) }),
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/groups/{jid}/participants',
      tag: TAG,
      summary: "An admin adds or removes participants; members' instances see the change",
      auth: 'jwt',
      params: GroupParams,
      body: ParticipantsBody,
      response: done,
      errors: [400, 403, 404],
      handler: async ({ principal, params, body }) => {
        await sandbox.changeParticipants(principal.accountId, params.jid, body);
        return { body: {} };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/sandbox/media/{file}',
      tag: TAG,
      summary: 'Encrypted media of sandbox messages, as the network media host serves it',
      auth: 'public',
      params: MediaFileParams,
      response: { description: 'the encrypted bytes', contentType: 'application/octet-stream' },
      errors: [404],
      handler: async ({ params }) => {
        const bytes = await sandbox.mediaFile(params.file);
        if (!bytes) throw notFound('media not found');
        return { body: bytes, contentType: 'application/octet-stream' };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/sandbox/media/{file}',
      tag: TAG,
      summary:
        "The media host lets a file of the account's phones expire, as the network's does after a while: GET answers 404 until the sender's phone uploads it again (an instance's media retry, under a new URL)",
      auth: 'jwt',
      params: MediaFileParams,
      response: done,
      errors: [404],
      handler: async ({ principal, params }) => {
        await sandbox.expireMedia(principal.accountId, params.file);
        return { body: {} };
      },
    }),
  ];
}
