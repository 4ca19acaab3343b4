import type { Static, TSchema } from '@sinclair/typebox';
import { invalidInput } from '../../domain/errors.js';
import type { Draft, SendAnswer as Answer, SendCommands, SendOptions } from '../../commands/sending/send-commands.js';
import type { SendKind } from '../../media/outgoing/prepare-media.js';
import { vcardOf } from '../../media/outgoing/vcard.js';
import { commandContext } from '../deps.js';
import { envelope } from '../envelope.js';
import { defineRoute, type AnyRoute, type RouteInput } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';
import {
  EditBody,
  EmptyData,
  ForwardBody,
  MessageIdData,
  MessageParams,
  MessageRefBody,
  PresenceBody,
  SendAnswer,
  SendAudioBody,
  SendContactBody,
  SendDocumentBody,
  SendImageBody,
  SendListBody,
  SendLocationBody,
  SendPollBody,
  SendStickerBody,
  SendTextBody,
  SendVideoBody,
} from '../schemas/sending.js';

const TAG = 'Sending';
const ERRORS = [400, 404, 409, 413, 502];

/** A media route's body: the file as base64 is about 4/3 of it, plus the rest of the JSON. */
const mediaBodyLimit = (maxBytes: number) => Math.ceil((maxBytes * 4) / 3) + 64 * 1024;

const optionsOf = (body: { reply_to?: string; mentions?: string[]; delay_ms?: number; send_at?: string }): SendOptions => ({
  ...(body.reply_to !== undefined ? { reply_to: body.reply_to } : {}),
  ...(body.mentions !== undefined ? { mentions: body.mentions } : {}),
  ...(body.delay_ms !== undefined ? { delay_ms: body.delay_ms } : {}),
  ...(body.send_at !== undefined ? { send_at: body.send_at } : {}),
});

/** The answer, with X-Fallback when the network would not render the kind (never a silent downgrade). */
const answered = (a: Answer) => ({ body: envelope(a), ...(a.fallback ? { headers: { 'x-fallback': a.fallback } } : {}) });

/** CONTRACT.md, "Sending every kind of message": the send routes and the message actions. */
export function sendingRoutes(sending: SendCommands, o: { mediaMaxBytes: number }): AnyRoute[] {
  const send = <B extends TSchema>(kind: string, summary: string, body: B, toDraft: (b: Static<B>) => Draft, media = false) =>
    defineRoute({
      method: 'post',
      path: `/instances/{id}/chat/send/${kind}`,
      idempotent: true,
      tag: TAG,
      summary,
      auth: 'instance',
      liveSession: true,
      paidOnly: true,
      params: InstanceIdParams,
      body,
      ...(media ? { bodyLimit: mediaBodyLimit(o.mediaMaxBytes) } : {}),
      response: { description: 'sent, queued (send pacing) or scheduled (send_at)', schema: SendAnswer },
      errors: ERRORS,
      handler: async ({ instance, body: b, principal, requestId }: RouteInput<Static<B>, unknown, { id: string }>) => {
        const input = b as Static<B> & { phone: string; reply_to?: string; mentions?: string[]; delay_ms?: number; send_at?: string };
        return answered(await sending.send(instance, input.phone, toDraft(b), optionsOf(input), commandContext(principal, requestId, instance._id)));
      },
    });
  const media = (kind: SendKind, extra: (b: { caption?: string; view_once?: boolean; voice?: boolean; gif?: boolean; file_name?: string }) => Partial<Extract<Draft, { kind: 'upload' }>['request']>) =>
    (b: { media: { url?: string; data?: string; mimetype?: string; file_name?: string }; caption?: string; view_once?: boolean }): Draft => ({
      kind: 'upload',
      media: kind,
      request: { media: b.media as Extract<Draft, { kind: 'upload' }>['request']['media'], ...extra(b) },
      ...(b.caption !== undefined ? { caption: b.caption } : {}),
      ...(b.view_once ? { view_once: true } : {}),
    });

  return [
    send('text', 'Send a text (links get a preview unless link_preview is false)', SendTextBody, (b) => ({
      kind: 'text',
      text: b.message,
      ...(b.link_preview === false ? { link_preview: false } : {}),
    })),
    send('image', 'Send an image (JPEG, PNG or WebP as is; other images converted to JPEG)', SendImageBody, media('image', () => ({})), true),
    send('video', 'Send a video (MP4 or 3GP); gif plays it looped and muted', SendVideoBody, media('video', (b) => (b.gif ? { gif: true } : {})), true),
    send(
      'audio',
      'Send audio: a voice note by default (converted to OGG/Opus with duration and waveform), or an audio file (voice false)',
      SendAudioBody,
      media('audio', (b) => ({ voice: b.voice !== false })),
      true,
    ),
    send('document', 'Send a document of any type, under file_name', SendDocumentBody, media('document', (b) => (b.file_name ? { file_name: b.file_name } : {})), true),
    send('sticker', 'Send a sticker (WebP; PNG and JPEG converted to 512×512 WebP)', SendStickerBody, media('sticker', () => ({})), true),
    send('location', 'Send a location pin', SendLocationBody, (b) => ({
      kind: 'location',
      location: { latitude: b.latitude, longitude: b.longitude, ...(b.name ? { name: b.name } : {}), ...(b.address ? { address: b.address } : {}) },
    })),
    send('contact', 'Send contact cards (the gateway builds the vCards)', SendContactBody, (b) => ({
      kind: 'contact',
      contacts: b.contacts.map((c) => ({ display_name: c.name, vcard: vcardOf(c) })),
    })),
    send('poll', 'Send a poll; votes arrive decrypted as Message with PollVote, the tally is on the message', SendPollBody, (b) => {
      const selectable = b.selectable_count ?? 1;
      if (selectable > b.options.length) throw invalidInput('selectable_count', 'must not exceed the number of options');
      if (new Set(b.options.map((x) => x.trim())).size !== b.options.length) throw invalidInput('options', 'must be distinct');
      return { kind: 'poll', poll: { name: b.name, options: b.options, selectable_count: selectable } };
    }),
    send('list', 'Send a list card; where the network will not render lists a numbered text is sent and data.fallback says so', SendListBody, (b) => {
      const ids = b.sections.flatMap((s) => s.rows.map((r) => r.id));
      if (new Set(ids).size !== ids.length) throw invalidInput('sections', 'row ids must be distinct');
      return {
        kind: 'list',
        text: b.text,
        list: { button_text: b.button_text, sections: b.sections, ...(b.title ? { title: b.title } : {}), ...(b.footer ? { footer: b.footer } : {}) },
      };
    }),
    defineRoute({
      method: 'post',
      path: '/instances/{id}/chat/edit',
      tag: TAG,
      summary: 'Edit an own text or caption for everyone (within 15 minutes of sending: 409 after)',
      auth: 'instance',
      liveSession: true,
      paidOnly: true,
      params: InstanceIdParams,
      body: EditBody,
      response: { description: 'the edit was sent', schema: MessageIdData },
      errors: [400, 403, 404, 409, 502],
      handler: async ({ instance, body, principal, requestId }) => ({
        body: envelope(await sending.edit(instance, body.phone, body.message_id, body.message, commandContext(principal, requestId, instance._id))),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/instances/{id}/chat/revoke',
      tag: TAG,
      summary: "Delete a message for everyone: own messages; others' in groups the account administers",
      auth: 'instance',
      liveSession: true,
      paidOnly: true,
      params: InstanceIdParams,
      body: MessageRefBody,
      response: { description: 'the deletion was sent', schema: MessageIdData },
      errors: [400, 403, 404, 409, 502],
      handler: async ({ instance, body, principal, requestId }) => ({
        body: envelope(await sending.revoke(instance, body.phone, body.message_id, commandContext(principal, requestId, instance._id))),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/instances/{id}/chat/forward',
      idempotent: true,
      tag: TAG,
      summary: 'Forward a stored message of any chat (media included, by reference) to phone',
      auth: 'instance',
      liveSession: true,
      paidOnly: true,
      params: InstanceIdParams,
      body: ForwardBody,
      response: { description: 'forwarded', schema: MessageIdData },
      errors: [400, 404, 409, 502],
      handler: async ({ instance, body, principal, requestId }) => {
        const a = await sending.forward(instance, body.phone, body.message_id, body.delay_ms ? { delay_ms: body.delay_ms } : {}, commandContext(principal, requestId, instance._id));
        return { body: envelope({ message_id: a.message_id }) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/instances/{id}/chat/presence',
      tag: TAG,
      summary: 'Show typing (composing), recording or paused in a chat',
      auth: 'instance',
      liveSession: true,
      paidOnly: true,
      params: InstanceIdParams,
      body: PresenceBody,
      response: { description: 'shown', schema: EmptyData },
      errors: [400, 409, 502],
      handler: async ({ instance, body }) => {
        await sending.presence(instance, body.phone, body.state);
        return { body: envelope({}) };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/instances/{id}/messages/{message_id}',
      tag: TAG,
      summary: 'Cancel a scheduled or queued send (404 once it has gone out; 409 while it is going out)',
      auth: 'instance',
      paidOnly: true,
      params: MessageParams,
      response: { description: 'canceled', schema: MessageIdData },
      errors: [404, 409],
      handler: async ({ instance, params, principal, requestId }) => ({
        body: envelope(await sending.cancel(instance, params.message_id, commandContext(principal, requestId, instance._id))),
      }),
    }),
  ];
}
