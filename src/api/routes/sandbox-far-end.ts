import { Type } from '@sinclair/typebox';
import { notFound } from '../../domain/errors.js';
import { AccountView, AdminsBody, GroupChangeBody, GroupView, JoinAnswer, JoinBody, StatusesAnswer } from '../../sessions/sandbox/far-end.js';
import type { SandboxNetwork } from '../../sessions/sandbox/sandbox-network.js';
import { GroupParams, PhoneParams } from '../../sessions/sandbox/schemas.js';
import { defineRoute, type AnyRoute } from '../route.js';

const TAG = 'Sandbox';
const PictureParams = Type.Object({ file: Type.String({ minLength: 1, maxLength: 80 }) });

/** SANDBOX.md, "What phones see of what instances do": groups, accounts, joins, statuses, pictures. */
export function sandboxFarEndRoutes(sandbox: SandboxNetwork): AnyRoute[] {
  const far = sandbox.farEnd;
  return [
    defineRoute({
      method: 'get',
      path: '/sandbox/groups/{jid}',
      tag: TAG,
      summary: 'The group as the network holds it',
      auth: 'jwt',
      params: GroupParams,
      response: { description: 'the group', schema: GroupView },
      errors: [400, 404],
      handler: async ({ principal, params }) => ({ body: await far.group(principal.accountId, params.jid) }),
    }),
    defineRoute({
      method: 'patch',
      path: '/sandbox/groups/{jid}',
      tag: TAG,
      summary: "Sandbox extension: a member changes the group on its phone (another admin, or the paired phone itself); members' instances see who changed what",
      auth: 'jwt',
      params: GroupParams,
      body: GroupChangeBody,
      response: { description: 'done', schema: Type.Object({}) },
      errors: [400, 403, 404],
      handler: async ({ principal, params, body }) => {
        await far.changeGroup(principal.accountId, params.jid, body);
        return { body: {} };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/groups/{jid}/admins',
      tag: TAG,
      summary: "Sandbox extension: an admin promotes or demotes members on its phone; members' instances see it",
      auth: 'jwt',
      params: GroupParams,
      body: AdminsBody,
      response: { description: 'done', schema: Type.Object({}) },
      errors: [400, 403, 404],
      handler: async ({ principal, params, body }) => {
        await far.changeAdmins(principal.accountId, params.jid, body);
        return { body: {} };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/sandbox/phones/{phone}/join',
      tag: TAG,
      summary: "The phone joins a group by invite: members' instances see GroupParticipantsAdd",
      auth: 'jwt',
      params: PhoneParams,
      body: JoinBody,
      response: { description: 'the group joined', schema: JoinAnswer },
      errors: [400, 404, 409],
      handler: async ({ principal, params, body }) => ({ body: await far.join(principal.accountId, params.phone, body.invite_url) }),
    }),
    defineRoute({
      method: 'get',
      path: '/sandbox/accounts/{phone}',
      tag: TAG,
      summary: "How the network sees an account (a sandbox phone or an instance's paired phone): name, about, picture, privacy, blocks, labels",
      auth: 'jwt',
      params: PhoneParams,
      response: { description: 'the account', schema: AccountView },
      errors: [400, 404],
      handler: async ({ principal, params }) => ({ body: await far.account(principal.accountId, params.phone) }),
    }),
    defineRoute({
      method: 'get',
      path: '/sandbox/phones/{phone}/statuses',
      tag: TAG,
      summary: 'Status posts this phone can see, newest first',
      auth: 'jwt',
      params: PhoneParams,
      response: { description: 'the statuses', schema: StatusesAnswer },
      errors: [400, 404],
      handler: async ({ principal, params }) => ({ body: await far.statuses(principal.accountId, params.phone) }),
    }),
    defineRoute({
      method: 'get',
      path: '/sandbox/pictures/{file}',
      tag: TAG,
      summary: 'Profile and group pictures, as the network picture host serves them (the random name is the secret)',
      auth: 'public',
      params: PictureParams,
      response: { description: 'the JPEG', contentType: 'image/jpeg' },
      errors: [404],
      handler: async ({ params }) => {
        const bytes = await far.picture(params.file);
        if (!bytes) throw notFound('picture not found');
        return { body: bytes, contentType: 'image/jpeg' };
      },
    }),
  ];
}
