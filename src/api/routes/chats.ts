import type { GroupInvites } from '../../commands/group-invites.js';
import { notFound } from '../../domain/errors.js';
import type { Clock } from '../../infra/clock.js';
import type { AccountQueries } from '../../projections/accounts/account-queries.js';
import type { ChatQueries } from '../../projections/chats/chat-queries.js';
import type { GroupQueries } from '../../projections/groups/group-queries.js';
import type { SessionQueries } from '../../projections/sessions/session-queries.js';
import { envelope } from '../envelope.js';
import { identitiesOf, inviteUrl, presentChat, presentGroup } from '../presenters/chats.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { ChatListQuery, ChatPage, GroupList, GroupListQuery } from '../schemas/chats.js';
import { InstanceIdParams } from '../schemas/common.js';

export interface ChatRouteDeps {
  groups: GroupQueries;
  chats: ChatQueries;
  sessions: SessionQueries;
  accounts: AccountQueries;
  invites: GroupInvites;
  clock: Clock;
}

export function chatListRoutes(deps: ChatRouteDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/instances/{id}/group/list',
      tag: 'Groups',
      summary: "The connected account's groups, by name, paginated (invite_url only where the account is admin)",
      auth: 'instance',
      // Invite codes come from the live session.
      liveSession: true,
      params: InstanceIdParams,
      query: GroupListQuery,
      response: { description: 'a page of groups', schema: GroupList },
      errors: [400],
      handler: async ({ instance, query }) => {
        const page = query.page ?? 1;
        const pageSize = query.pageSize ?? 10;
        const [account, status, { groups }] = await Promise.all([
          deps.accounts.byId(instance.account_id),
          deps.sessions.status(instance._id),
          deps.groups.page(instance._id, page, pageSize),
        ]);
        if (!account) throw notFound('account not found');
        const { lids, pns } = identitiesOf(groups);
        const pairs = await deps.groups.pairs(instance._id, lids, pns);
        const self = { jid: status?.jid, lid: status?.lid };
        const presented = groups.map((g) => presentGroup(g, self, pairs));
        const needCodes = presented.filter((g) => g.is_admin && g.invite_url === '').map((g) => g.jid);
        const codes = needCodes.length ? await deps.invites.codes(instance._id, needCodes) : new Map<string, string>();
        for (const g of presented) {
          const code = codes.get(g.jid);
          if (code) g.invite_url = inviteUrl(code);
        }
        return { body: envelope({ groups: presented, user_id: account.user_id, instance_id: instance._id }) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/instances/{id}/chats',
      tag: 'Chats',
      summary: 'The chat list: pinned first, then newest first',
      auth: 'instance',
      params: InstanceIdParams,
      query: ChatListQuery,
      response: { description: 'a page of chats', schema: ChatPage },
      errors: [400],
      handler: async ({ instance, query }) => {
        const page = query.page ?? 1;
        const pageSize = query.page_size ?? 50;
        const { total, chats } = await deps.chats.page(instance._id, page, pageSize);
        const lids = chats.filter((c) => c.jid.endsWith('@lid')).map((c) => c.jid);
        const { pnByLid } = lids.length ? await deps.groups.pairs(instance._id, lids, []) : { pnByLid: new Map<string, string>() };
        const ctx = { nowMs: deps.clock.now().getTime(), pnByLid };
        return { body: { page, page_size: pageSize, total, total_pages: Math.ceil(total / pageSize), content: chats.map((c) => presentChat(c, ctx)) } };
      },
    }),
  ];
}
