import { notFound } from '../../domain/errors.js';
import type { AccountQueries } from '../../projections/accounts/account-queries.js';
import type { ChatQueries } from '../../projections/chats/chat-queries.js';
import type { GroupQueries } from '../../projections/groups/group-queries.js';
import type { SessionQueries } from '../../projections/sessions/session-queries.js';
import { envelope } from '../envelope.js';
import { presentChat, presentGroup } from '../presenters/chats.js';
import { defineRoute, type AnyRoute } from '../route.js';
import { ChatListQuery, ChatPage, GroupList, GroupListQuery } from '../schemas/chats.js';
import { InstanceIdParams } from '../schemas/common.js';

export interface ChatRouteDeps {
  groups: GroupQueries;
  chats: ChatQueries;
  sessions: SessionQueries;
  accounts: AccountQueries;
}

export function chatListRoutes(deps: ChatRouteDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/instances/{id}/group/list',
      tag: 'Groups',
      summary: "The connected account's groups, paginated",
      auth: 'instance',
      params: InstanceIdParams,
      query: GroupListQuery,
      response: { description: 'a page of groups', schema: GroupList },
      handler: async ({ instance, query }) => {
        const page = query.page ?? 1;
        const pageSize = query.pageSize ?? 10;
        const [account, status, { groups }] = await Promise.all([
          deps.accounts.byId(instance.account_id),
          deps.sessions.status(instance._id),
          deps.groups.page(instance._id, page, pageSize),
        ]);
        if (!account) throw notFound('account not found');
        const self = { jid: status?.jid, lid: status?.lid };
        return { body: envelope({ groups: groups.map((g) => presentGroup(g, self)), user_id: account.user_id, instance_id: instance._id }) };
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
      handler: async ({ instance, query }) => {
        const page = query.page ?? 1;
        const pageSize = query.page_size ?? 50;
        const { total, chats } = await deps.chats.page(instance._id, page, pageSize);
        return { body: { page, page_size: pageSize, total, total_pages: Math.ceil(total / pageSize), content: chats.map(presentChat) } };
      },
    }),
  ];
}
