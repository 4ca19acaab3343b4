import type { Static } from '@sinclair/typebox';
import type { BotCommands } from '../../commands/bots.js';
import type { BotSettings } from '../../domain/bots/events.js';
import { invalidInput, notFound } from '../../domain/errors.js';
import { compileTrigger } from '../../bots/triggers.js';
import type { BotQueries } from '../../projections/bots/bot-queries.js';
import type { BotSessionDoc } from '../../projections/bots/bot-sessions-projection.js';
import type { BotDoc } from '../../projections/bots/bots-projection.js';
import { commandContext } from '../deps.js';
import { envelope } from '../envelope.js';
import { webhookUrl } from '../inputs.js';
import { defineRoute } from '../route.js';
import { InstanceIdParams } from '../schemas/common.js';
import { BotAnswer, BotList, BotParams, BotSessionAnswer, BotSessionList, BotSessionParams, BotSessionsQuery, SaveBotBody } from '../schemas/bots.js';

const TAG = 'Bots';

export interface BotRouteDeps {
  commands: BotCommands;
  queries: BotQueries;
  allowPrivate: boolean;
}

/** The bot as answered: its settings flat, the key only masked. */
export function presentBot(doc: BotDoc) {
  return { bot_id: doc.bot_id, ...doc.settings, api_key_masked: doc.api_key_masked, created_at: doc.created_at, updated_at: doc.updated_at };
}

function presentSession(doc: BotSessionDoc) {
  const { _id, instance_id, bot_id, ...shown } = doc;
  return shown;
}

/** A phone number or a jid, as CONTRACT's chat operations take it. */
export const jidOf = (raw: string) => (raw.includes('@') ? raw : `${raw.replace(/\D/g, '')}@s.whatsapp.net`);

/** Every rule a save must pass, checked before anything is recorded (400 names the field). */
export function botSettings(body: Static<typeof SaveBotBody>, allowPrivate: boolean): BotSettings {
  const trigger = body.trigger ?? { type: 'all' as const };
  if (trigger.type !== 'all' && trigger.value === undefined) throw invalidInput('trigger.value', `a ${trigger.type} trigger needs a value`);
  if (trigger.type === 'regex') compileTrigger(trigger.value ?? '');
  const url = (webhookUrl('url', body.url, allowPrivate) as string).replace(/\/+$/, '');
  const common = {
    kind: body.kind,
    enabled: body.enabled ?? true,
    trigger: trigger.type === 'all' ? { type: 'all' as const } : trigger,
    scope: body.scope ?? 'contacts',
    ignore_jids: (body.ignore_jids ?? []).map(jidOf),
    expire_minutes: body.expire_minutes ?? 60,
    stop_keyword: body.stop_keyword ?? null,
    pause_on_human: body.pause_on_human ?? true,
    delay_ms: body.delay_ms ?? 1000,
    url,
  };
  if (body.kind === 'typebot') {
    if (body.typebot === undefined) throw invalidInput('typebot', "a Typebot bot names its flow's public id");
    for (const field of ['model', 'api_key'] as const) if (body[field] !== undefined) throw invalidInput(field, 'only for kind openai');
    // `vision` defaults to false in the schema: only asking for it is a mistake.
    if (body.vision === true) throw invalidInput('vision', 'only for kind openai');
    return { ...common, typebot: body.typebot };
  }
  if (body.model === undefined) throw invalidInput('model', 'an OpenAI-compatible bot names its model');
  if (body.typebot !== undefined) throw invalidInput('typebot', 'only for kind typebot');
  return { ...common, model: body.model, system_prompt: body.system_prompt ?? '', max_history: body.max_history ?? 10, vision: body.vision ?? false };
}

export function botRoutes({ commands, queries, allowPrivate }: BotRouteDeps) {
  const current = async (instanceId: string, botId: string) => {
    const doc = await queries.byId(instanceId, botId);
    if (!doc) throw notFound(`no bot ${botId} on this instance`);
    return doc;
  };
  const session = async (instanceId: string, botId: string, jid: string) =>
    (await queries.sessions(instanceId, botId, 500)).find((s) => s.jid === jid) ?? null;
  return [
    defineRoute({
      method: 'get',
      path: '/instances/{id}/bots',
      tag: TAG,
      summary: "The instance's bots (API keys masked)",
      auth: 'instance_jwt',
      params: InstanceIdParams,
      response: { description: 'the bots', schema: BotList },
      handler: async ({ instance }) => ({ body: envelope((await queries.ofInstance(instance._id)).map(presentBot)) }),
    }),
    defineRoute({
      method: 'post',
      path: '/instances/{id}/bots/{bot_id}',
      tag: TAG,
      summary: 'Save a bot (Typebot flow or OpenAI-compatible assistant) that answers the instance’s contacts',
      auth: 'instance_jwt',
      paidOnly: true,
      params: BotParams,
      body: SaveBotBody,
      response: { description: 'the bot, saved', schema: BotAnswer },
      errors: [409],
      handler: async ({ body, params, instance, principal, requestId }) => {
        const settings = botSettings(body, allowPrivate);
        if (body.kind === 'openai' && body.api_key !== undefined && body.api_key !== '' && !/^[\x21-\x7e]+$/.test(body.api_key)) throw invalidInput('api_key', 'printable characters without spaces');
        await commands.save(instance._id, params.bot_id, settings, body.kind === 'openai' ? body.api_key : undefined, commandContext(principal, requestId, instance._id));
        return { body: envelope(presentBot(await current(instance._id, params.bot_id))) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/instances/{id}/bots/{bot_id}',
      tag: TAG,
      summary: 'One bot (API key masked)',
      auth: 'instance_jwt',
      params: BotParams,
      response: { description: 'the bot', schema: BotAnswer },
      handler: async ({ params, instance }) => ({ body: envelope(presentBot(await current(instance._id, params.bot_id))) }),
    }),
    defineRoute({
      method: 'delete',
      path: '/instances/{id}/bots/{bot_id}',
      tag: TAG,
      summary: 'Remove a bot (its conversations end with it)',
      auth: 'instance_jwt',
      paidOnly: true,
      params: BotParams,
      response: { description: 'removed', schema: BotAnswer },
      handler: async ({ params, instance, principal, requestId }) => {
        const doc = await current(instance._id, params.bot_id);
        await commands.remove(instance._id, params.bot_id, commandContext(principal, requestId, instance._id));
        return { body: envelope(presentBot(doc)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/instances/{id}/bots/{bot_id}/sessions',
      tag: TAG,
      summary: "The bot's conversations, the most recently active first",
      auth: 'instance_jwt',
      params: BotParams,
      query: BotSessionsQuery,
      response: { description: 'the conversations', schema: BotSessionList },
      handler: async ({ params, query, instance }) => {
        await current(instance._id, params.bot_id);
        return { body: envelope((await queries.sessions(instance._id, params.bot_id, query.limit ?? 100)).map(presentSession)) };
      },
    }),
    ...(['pause', 'resume'] as const).map((action) =>
      defineRoute({
        method: 'post',
        path: `/instances/{id}/bots/{bot_id}/sessions/{jid}/${action}`,
        tag: TAG,
        summary: action === 'pause' ? 'Take a conversation over: the bot stops answering this contact until resumed' : 'Hand a paused conversation back to the bot',
        auth: 'instance_jwt',
        paidOnly: true,
        params: BotSessionParams,
        response: { description: 'the conversation', schema: BotSessionAnswer },
        handler: async ({ params, instance, principal, requestId }) => {
          const bot = await current(instance._id, params.bot_id);
          const jid = jidOf(params.jid);
          const context = commandContext(principal, requestId, instance._id);
          if (action === 'pause') await commands.pause(instance._id, params.bot_id, jid, bot.settings.expire_minutes, context);
          else await commands.resume(instance._id, params.bot_id, jid, bot.settings.expire_minutes, context);
          const doc = await session(instance._id, params.bot_id, jid);
          return { body: envelope(doc ? presentSession(doc) : null) };
        },
      }),
    ),
  ];
}
