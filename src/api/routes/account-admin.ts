import type { AccountSettingsCommands } from '../../commands/account-settings.js';
import type { ContactQueries } from '../../projections/contacts/contact-queries.js';
import type { SessionQueries } from '../../projections/sessions/session-queries.js';
import type { SessionManager } from '../../sessions/session-manager.js';
import { commandContext } from '../deps.js';
import { envelope } from '../envelope.js';
import { presentSessionStatus } from '../presenters/session-status.js';
import { defineRoute, type AnyRoute } from '../route.js';
import {
  BlockAnswer,
  BlockBody,
  BlocklistAnswer,
  ContactAnswer,
  ContactParams,
  ContactsPage,
  ContactsQuery,
  LabelChatBody,
  LabelsAnswer,
  MessageIdAnswer,
  PictureAnswer,
  PictureBody,
  PrivacyAnswer,
  PrivacyBody,
  ProfileBody,
  StatusBody,
} from '../schemas/account-admin.js';
import { InstanceIdParams } from '../schemas/common.js';
import { EmptyAnswer } from '../schemas/messaging.js';
import { SessionStatus } from '../schemas/session.js';

export interface AccountAdminRouteDeps {
  commands: AccountSettingsCommands;
  contacts: ContactQueries;
  sessions: SessionQueries;
  manager: SessionManager;
}

/** CONTRACT.md: contacts, profile, privacy, labels and status posts. `/contacts/blocklist` is mounted before `/contacts/{jid}`. */
export function accountAdminRoutes(deps: AccountAdminRouteDeps): AnyRoute[] {
  const acting = { auth: 'instance' as const, liveSession: true, paidOnly: true };
  const reading = { auth: 'instance' as const, liveSession: true };
  const status = async (instanceId: string) => {
    const live = deps.manager.liveStatus(instanceId);
    if (live) return presentSessionStatus(live, true);
    const doc = await deps.sessions.status(instanceId);
    return presentSessionStatus(doc, deps.manager.isConnected(instanceId) && doc?.connected === true);
  };
  return [
    defineRoute({
      tag: 'Contacts',
      auth: 'instance',
      method: 'get',
      path: '/instances/{id}/contacts',
      summary: 'The contacts read model: address book, whoever wrote, blocked ones marked (phone and LID are one contact)',
      params: InstanceIdParams,
      query: ContactsQuery,
      response: { description: 'a page of contacts', schema: ContactsPage },
      errors: [400],
      handler: async ({ instance, query }) => {
        const page = query.page ?? 1;
        const size = query.size ?? 20;
        const { total, contacts } = await deps.contacts.page(instance._id, page, size, query.query);
        const content = contacts.map((c) => ({
          jid: c.jid,
          phone: c.phone,
          ...(c.lid ? { lid: c.lid } : {}),
          ...(c.name ? { name: c.name } : {}),
          ...(c.push_name ? { push_name: c.push_name } : {}),
          ...(c.business_name ? { business_name: c.business_name } : {}),
          blocked: c.blocked,
        }));
        return { body: envelope({ page, size, total, total_pages: Math.ceil(total / size), content }) };
      },
    }),
    defineRoute({
      ...reading,
      tag: 'Contacts',
      method: 'get',
      path: '/instances/{id}/contacts/blocklist',
      summary: 'Who the account blocked, as the network answers now',
      params: InstanceIdParams,
      response: { description: 'the block list', schema: BlocklistAnswer },
      errors: [409, 502],
      handler: async ({ instance }) => ({ body: envelope({ jids: await deps.commands.blocklist(instance) }) }),
    }),
    defineRoute({
      ...acting,
      tag: 'Contacts',
      method: 'post',
      path: '/instances/{id}/contacts/block',
      summary: 'Block or unblock a person (they can still send; nothing reaches the account)',
      params: InstanceIdParams,
      body: BlockBody,
      response: { description: 'the new state', schema: BlockAnswer },
      errors: [400, 409, 502],
      handler: async ({ instance, body, principal, requestId }) => {
        await deps.commands.block(instance, body.phone, body.blocked, commandContext(principal, requestId, instance._id));
        return { body: envelope({ blocked: body.blocked }) };
      },
    }),
    defineRoute({
      ...reading,
      tag: 'Contacts',
      method: 'get',
      path: '/instances/{id}/contacts/{jid}',
      summary: "A person's public profile as the network shows it to the account (404: not on WhatsApp)",
      params: ContactParams,
      response: { description: 'the profile', schema: ContactAnswer },
      errors: [400, 404, 409, 502],
      handler: async ({ instance, params }) => {
        const p = await deps.commands.contact(instance, params.jid);
        return {
          body: envelope({
            jid: p.jid,
            phone: p.phone,
            ...(p.lid ? { lid: p.lid } : {}),
            ...(p.push_name ? { push_name: p.push_name } : {}),
            ...(p.about ? { about: p.about } : {}),
            ...(p.picture_url ? { profile_picture_url: p.picture_url } : {}),
            ...(p.business ? { business_profile: p.business } : {}),
          }),
        };
      },
    }),
    defineRoute({
      ...acting,
      tag: 'Profile',
      method: 'patch',
      path: '/instances/{id}/profile',
      summary: "Change the account's name (push_name) and/or about",
      params: InstanceIdParams,
      body: ProfileBody,
      response: { description: 'the session status after the change', schema: SessionStatus },
      errors: [400, 409, 502],
      handler: async ({ instance, body, principal, requestId }) => {
        await deps.commands.updateProfile(instance, body, commandContext(principal, requestId, instance._id));
        return { body: envelope(await status(instance._id)) };
      },
    }),
    defineRoute({
      ...acting,
      tag: 'Profile',
      method: 'post',
      path: '/instances/{id}/profile/picture',
      summary: "Set the account's picture (JPEG or PNG, at most 5 MiB)",
      params: InstanceIdParams,
      body: PictureBody,
      bodyLimit: 8 * 1024 * 1024,
      response: { description: 'the new picture', schema: PictureAnswer },
      errors: [400, 409, 413, 502],
      handler: async ({ instance, body, principal, requestId }) => ({
        body: envelope({ profile_picture_id: await deps.commands.setPicture(instance, body.media, commandContext(principal, requestId, instance._id)) }),
      }),
    }),
    defineRoute({
      ...acting,
      tag: 'Profile',
      method: 'delete',
      path: '/instances/{id}/profile/picture',
      summary: "Remove the account's picture",
      params: InstanceIdParams,
      response: { description: 'removed', schema: EmptyAnswer },
      errors: [409, 502],
      handler: async ({ instance, principal, requestId }) => {
        await deps.commands.removePicture(instance, commandContext(principal, requestId, instance._id));
        return { body: envelope({}) };
      },
    }),
    defineRoute({
      ...reading,
      tag: 'Profile',
      method: 'get',
      path: '/instances/{id}/privacy',
      summary: "The account's privacy settings, as the network answers now",
      params: InstanceIdParams,
      response: { description: 'the settings', schema: PrivacyAnswer },
      errors: [409, 502],
      handler: async ({ instance }) => ({ body: envelope(await deps.commands.privacy(instance)) }),
    }),
    defineRoute({
      ...acting,
      tag: 'Profile',
      method: 'patch',
      path: '/instances/{id}/privacy',
      summary: "Change privacy settings; a value outside the network's list for its setting is 400 and changes nothing",
      params: InstanceIdParams,
      body: PrivacyBody,
      response: { description: 'the whole setting after the change', schema: PrivacyAnswer },
      errors: [400, 409, 502],
      handler: async ({ instance, body, principal, requestId }) => ({
        body: envelope(await deps.commands.updatePrivacy(instance, body, commandContext(principal, requestId, instance._id))),
      }),
    }),
    defineRoute({
      tag: 'Labels',
      auth: 'instance',
      method: 'get',
      path: '/instances/{id}/labels',
      summary: "The business account's labels (other accounts: none)",
      params: InstanceIdParams,
      response: { description: 'the labels', schema: LabelsAnswer },
      handler: async ({ instance }) => ({ body: envelope({ labels: (await deps.commands.labels(instance)).map((l) => ({ id: l.id, name: l.name, color: l.color })) }) }),
    }),
    defineRoute({
      ...acting,
      tag: 'Labels',
      method: 'post',
      path: '/instances/{id}/chat/label',
      summary: 'Put a label on a chat or take it off (business accounts); the chat list shows it in `labels`',
      params: InstanceIdParams,
      body: LabelChatBody,
      response: { description: 'done', schema: EmptyAnswer },
      errors: [400, 409, 502],
      handler: async ({ instance, body, principal, requestId }) => {
        await deps.commands.labelChat(instance, body.phone, body.label_id, body.labeled, commandContext(principal, requestId, instance._id));
        return { body: envelope({}) };
      },
    }),
    defineRoute({
      ...acting,
      tag: 'Status posts',
      method: 'post',
      path: '/instances/{id}/status/send',
      summary: "Post a status (text on a color, or an image or video with a caption) to the account's contacts, or to `recipients`",
      params: InstanceIdParams,
      body: StatusBody,
      bodyLimit: 24 * 1024 * 1024,
      response: { description: 'the status message id', schema: MessageIdAnswer },
      errors: [400, 409, 413, 502],
      handler: async ({ instance, body, principal, requestId }) => ({
        body: envelope({ message_id: await deps.commands.postStatus(instance, body, commandContext(principal, requestId, instance._id)) }),
      }),
    }),
  ];
}
