import { DomainError, invalidInput } from '../domain/errors.js';
import { helpdeskDecider, maskToken } from '../domain/helpdesk/helpdesk-decider.js';
import { helpdeskStream, type HelpdeskSettings } from '../domain/helpdesk/events.js';
import type { SecretBox } from '../infra/crypto/secret-box.js';
import type { IdGenerator } from '../infra/ids.js';
import { CallbackPaths } from '../helpdesk/callback-paths.js';
import { HelpdeskError, type HelpdeskAccount, type HelpdeskClient, type HelpdeskInbox } from '../helpdesk/port.js';
import type { CommandHandler } from './command-handler.js';
import type { CommandContext } from '../domain/audit.js';
import type { ReadYourWrites } from './read-your-writes.js';

export interface SaveHelpdeskInput extends HelpdeskSettings {
  /** Omitted: the current token stays. */
  token?: string;
  /** Create the API inbox when none of that name exists. */
  auto_create: boolean;
}

export interface HelpdeskCommandsOptions {
  publicUrl: string;
}

const READ_MODELS = ['helpdesk'];

/**
 * Saves and removes an instance's helpdesk configuration. A save of an enabled configuration
 * talks to the helpdesk first (finds the inbox by name or creates it, pushes the callback URL,
 * learns the inbox's signing secret), then records the result: nothing is recorded when the
 * helpdesk refuses, so a bad token or account changes nothing.
 */
export class HelpdeskCommands {
  constructor(
    private readonly handler: CommandHandler,
    private readonly rw: ReadYourWrites,
    private readonly ids: IdGenerator,
    private readonly box: SecretBox,
    private readonly paths: CallbackPaths,
    private readonly client: HelpdeskClient,
    private readonly options: HelpdeskCommandsOptions,
  ) {}

  callbackUrl(instanceId: string, generation: number): string {
    return `${this.options.publicUrl}/helpdesk/webhook/${this.paths.path(instanceId, generation)}`;
  }

  openToken(instanceId: string, sealed: string): string {
    return this.box.open(sealed, `helpdesk-token:${instanceId}`).toString('utf8');
  }

  openInboxSecret(instanceId: string, sealed: string): string {
    return this.box.open(sealed, `helpdesk-inbox-secret:${instanceId}`).toString('utf8');
  }

  async save(instanceId: string, input: SaveHelpdeskInput, context: CommandContext): Promise<void> {
    const stream = helpdeskStream(instanceId);
    const { state } = await this.handler.load(stream, helpdeskDecider);
    const current = state.config;
    const token = input.token ?? (current ? this.openToken(instanceId, current.token_sealed) : undefined);
    if (token === undefined) throw invalidInput('token', 'required on the first save');
    const { token: _token, auto_create, ...settings } = input;
    const generation = state.removals;
    const callbackUrl = this.callbackUrl(instanceId, generation);

    // The inbox stays linked while the configuration still names the same helpdesk account and inbox.
    const same = current && current.settings.url === settings.url && current.settings.account_id === settings.account_id && current.settings.name_inbox === settings.name_inbox;
    let inbox = same
      ? { inbox_id: current.inbox_id, inbox_identifier: current.inbox_identifier, inbox_secret_sealed: current.inbox_secret_sealed }
      : { inbox_id: null as number | null, inbox_identifier: '', inbox_secret_sealed: null as string | null };
    if (settings.enabled || auto_create) {
      const linked = await this.linkInbox({ url: settings.url, accountId: settings.account_id, token }, settings.name_inbox, auto_create, callbackUrl);
      inbox = {
        inbox_id: linked.id,
        inbox_identifier: linked.inbox_identifier,
        // A secret learned once is kept when later listings stop showing it (a non-admin token).
        inbox_secret_sealed: linked.secret ? this.box.seal(linked.secret, `helpdesk-inbox-secret:${instanceId}`) : inbox.inbox_secret_sealed,
      };
    }

    const { position } = await this.handler.handle(
      stream,
      helpdeskDecider,
      {
        type: 'SaveHelpdesk',
        data: {
          settings,
          ...inbox,
          callback_generation: generation,
          callback_path_hash: CallbackPaths.hash(this.paths.path(instanceId, generation)),
          new_config_id: this.ids.uuid(),
          ...(input.token === undefined ? {} : { token: { sealed: this.box.seal(input.token, `helpdesk-token:${instanceId}`), masked: maskToken(input.token) } }),
        },
      },
      { ...context, instanceId },
    );
    await this.rw.settle(position, READ_MODELS);
  }

  async remove(instanceId: string, context: CommandContext): Promise<void> {
    const { position } = await this.handler.handle(helpdeskStream(instanceId), helpdeskDecider, { type: 'RemoveHelpdesk' }, { ...context, instanceId });
    await this.rw.settle(position, READ_MODELS);
  }

  /** Finds the inbox by name (or creates it) and makes its callback URL ours. */
  private async linkInbox(account: HelpdeskAccount, name: string, autoCreate: boolean, callbackUrl: string): Promise<HelpdeskInbox> {
    try {
      const found = (await this.client.listInboxes(account)).find((i) => i.name === name);
      if (!found) {
        if (!autoCreate) throw invalidInput('name_inbox', 'no inbox of this name in the helpdesk; create it there or send auto_create: true');
        return await this.client.createApiInbox(account, name, callbackUrl);
      }
      // Pushed on every save, even when it looks current: the helpdesk is the one to trust.
      const updated = await this.client.setInboxWebhook(account, found.id, callbackUrl);
      return { ...updated, ...(found.secret && !updated.secret ? { secret: found.secret } : {}) };
    } catch (err) {
      throw helpdeskRefusal(err);
    }
  }
}

/** What a helpdesk's refusal means to the caller who saved the configuration. */
function helpdeskRefusal(err: unknown): unknown {
  if (!(err instanceof HelpdeskError)) return err;
  if (err.status === 401 || err.status === 403) return invalidInput('token', `the helpdesk refused the token (${err.status})`);
  if (err.status === 404) return invalidInput('account_id', 'the helpdesk has no such account (404)');
  return new DomainError('upstream_failed', err.message);
}
