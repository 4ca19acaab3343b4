import type { GroupCommands } from '../../commands/groups.js';
import type { GroupInvites } from '../../commands/group-invites.js';
import type { GroupQueries } from '../../projections/groups/group-queries.js';
import type { GroupDoc } from '../../projections/groups/groups-projection.js';
import type { SessionQueries } from '../../projections/sessions/session-queries.js';
import { commandContext } from '../deps.js';
import { envelope } from '../envelope.js';
import { identitiesOf, inviteUrl, presentGroup } from '../presenters/chats.js';
import { defineRoute, type AnyRoute } from '../route.js';
import {
  CreateGroupBody,
  GroupAnswer,
  GroupParams,
  InviteAnswer,
  InviteQuery,
  JidAnswer,
  JoinBody,
  ParticipantsAnswer,
  ParticipantsBody,
  PatchGroupBody,
  PictureAnswer,
  PictureBody,
} from '../schemas/account-admin.js';
import { InstanceIdParams } from '../schemas/common.js';
import { EmptyAnswer } from '../schemas/messaging.js';

const TAG = 'Groups';

export interface GroupRouteDeps {
  commands: GroupCommands;
  groups: GroupQueries;
  sessions: SessionQueries;
  invites: GroupInvites;
}

/** CONTRACT.md, "Groups, contacts, ...": the group routes. `/group/invite` is mounted before `/group/{jid}`. */
export function groupRoutes(deps: GroupRouteDeps): AnyRoute[] {
  const present = async (instanceId: string, doc: GroupDoc) => {
    const status = await deps.sessions.status(instanceId);
    const { lids, pns } = identitiesOf([doc]);
    const pairs = await deps.groups.pairs(instanceId, lids, pns);
    const group = presentGroup(doc, { jid: status?.jid, lid: status?.lid }, pairs);
    if (group.is_admin && group.invite_url === '') {
      const code = (await deps.invites.codes(instanceId, [group.jid])).get(group.jid);
      if (code) group.invite_url = inviteUrl(code);
    }
    return group;
  };
  const acting = { auth: 'instance' as const, liveSession: true, paidOnly: true, tag: TAG };
  return [
    defineRoute({
      ...acting,
      method: 'post',
      path: '/instances/{id}/group/create',
      summary: 'Create a group with the account as its owner (every participant must be on WhatsApp, or nothing is created)',
      params: InstanceIdParams,
      body: CreateGroupBody,
      response: { description: 'the new group', schema: GroupAnswer },
      errors: [400, 409, 502],
      handler: async ({ instance, body, principal, requestId }) => {
        const doc = await deps.commands.create(instance, body.name, body.participants, commandContext(principal, requestId, instance._id));
        return { body: envelope(await present(instance._id, doc)) };
      },
    }),
    defineRoute({
      ...acting,
      paidOnly: false,
      method: 'get',
      path: '/instances/{id}/group/invite',
      summary: 'The group an invite link leads to, without joining',
      query: InviteQuery,
      params: InstanceIdParams,
      response: { description: 'the group as the invite shows it', schema: GroupAnswer },
      errors: [400, 404, 409, 502],
      handler: async ({ instance, query }) => ({ body: envelope(await present(instance._id, await deps.commands.inviteInfo(instance, query.invite_url))) }),
    }),
    defineRoute({
      ...acting,
      method: 'post',
      path: '/instances/{id}/group/join',
      summary: 'Join a group by its invite link',
      params: InstanceIdParams,
      body: JoinBody,
      response: { description: 'the group joined', schema: JidAnswer },
      errors: [400, 404, 409, 502],
      handler: async ({ instance, body, principal, requestId }) => ({
        body: envelope({ jid: await deps.commands.join(instance, body.invite_url, commandContext(principal, requestId, instance._id)) }),
      }),
    }),
    defineRoute({
      tag: TAG,
      auth: 'instance',
      method: 'get',
      path: '/instances/{id}/group/{jid}',
      summary: 'One group of the account, as the group read model holds it (changes made anywhere included)',
      params: GroupParams,
      response: { description: 'the group', schema: GroupAnswer },
      errors: [400, 404],
      handler: async ({ instance, params }) => ({ body: envelope(await present(instance._id, await deps.commands.get(instance, params.jid))) }),
    }),
    defineRoute({
      ...acting,
      method: 'patch',
      path: '/instances/{id}/group/{jid}',
      summary: 'Change the subject, description, who may send or edit, or the disappearing timer (all checked before anything changes)',
      params: GroupParams,
      body: PatchGroupBody,
      response: { description: 'the group after the change', schema: GroupAnswer },
      errors: [400, 403, 404, 409, 502],
      handler: async ({ instance, params, body, principal, requestId }) => {
        const doc = await deps.commands.update(instance, params.jid, body, commandContext(principal, requestId, instance._id));
        return { body: envelope(await present(instance._id, doc)) };
      },
    }),
    defineRoute({
      ...acting,
      method: 'post',
      path: '/instances/{id}/group/{jid}/participants',
      summary:
        "Add, remove, promote or demote people. The network answers each person: 200 when every one is done; otherwise 207 with success false and each person's status (403 not allowed, 408 not on the network or not a member, 409 already so)",
      params: GroupParams,
      body: ParticipantsBody,
      response: { description: 'every person done', schema: ParticipantsAnswer },
      otherAnswers: [{ status: 207, description: "some person not done: success false, each person's status says why", schema: ParticipantsAnswer }],
      errors: [400, 403, 404, 409, 502],
      handler: async ({ instance, params, body, principal, requestId }) => {
        const results = await deps.commands.participants(instance, params.jid, body.action, body.participants, commandContext(principal, requestId, instance._id));
        const participants = results.map((r) => ({ jid: r.jid, phone_number: r.phone, status: r.status }));
        const all = results.every((r) => r.status === 200);
        return all ? { body: envelope({ participants }) } : { status: 207, body: { code: 207, success: false, data: { participants } } };
      },
    }),
    defineRoute({
      ...acting,
      paidOnly: false,
      method: 'get',
      path: '/instances/{id}/group/{jid}/invite',
      summary: "The group's invite link (admins only)",
      params: GroupParams,
      response: { description: 'the link', schema: InviteAnswer },
      errors: [400, 403, 404, 409, 502],
      handler: async ({ instance, params }) => ({ body: envelope({ invite_url: await deps.commands.inviteUrl(instance, params.jid) }) }),
    }),
    defineRoute({
      ...acting,
      method: 'post',
      path: '/instances/{id}/group/{jid}/invite/revoke',
      summary: 'Reset the invite link: the old one stops working; answers the new one (admins only)',
      params: GroupParams,
      response: { description: 'the new link', schema: InviteAnswer },
      errors: [400, 403, 404, 409, 502],
      handler: async ({ instance, params, principal, requestId }) => ({
        body: envelope({ invite_url: await deps.commands.revokeInvite(instance, params.jid, commandContext(principal, requestId, instance._id)) }),
      }),
    }),
    defineRoute({
      ...acting,
      method: 'post',
      path: '/instances/{id}/group/{jid}/leave',
      summary: 'Leave the group: it leaves the group list',
      params: GroupParams,
      response: { description: 'left', schema: EmptyAnswer },
      errors: [400, 404, 409, 502],
      handler: async ({ instance, params, principal, requestId }) => {
        await deps.commands.leave(instance, params.jid, commandContext(principal, requestId, instance._id));
        return { body: envelope({}) };
      },
    }),
    defineRoute({
      ...acting,
      method: 'post',
      path: '/instances/{id}/group/{jid}/picture',
      summary: "Set the group's picture (JPEG or PNG, at most 5 MiB)",
      params: GroupParams,
      body: PictureBody,
      bodyLimit: 8 * 1024 * 1024,
      response: { description: 'the new picture', schema: PictureAnswer },
      errors: [400, 403, 404, 409, 413, 502],
      handler: async ({ instance, params, body, principal, requestId }) => ({
        body: envelope({ profile_picture_id: await deps.commands.picture(instance, params.jid, body.media, commandContext(principal, requestId, instance._id)) }),
      }),
    }),
  ];
}
