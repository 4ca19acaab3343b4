import type { CommandContext } from '../domain/audit.js';
import type { WebhookEventName } from '../domain/events-table.js';
import { instanceStream } from '../domain/instance/events.js';
import { instanceDecider, type InstanceCommand } from '../domain/instance/instance-decider.js';
import type { CommandHandler } from './command-handler.js';
import type { ReadYourWrites } from './read-your-writes.js';

/** The export's settings: events in the instance's stream, saying who changed them (history). */
export class ExportCommands {
  constructor(
    private readonly handler: CommandHandler,
    private readonly rw: ReadYourWrites,
    /** The projection the export's answers are read from. */
    private readonly readModel: string,
  ) {}

  configure(instanceId: string, events: WebhookEventName[], context: CommandContext): Promise<void> {
    return this.run(instanceId, { type: 'ConfigureExport', data: { events } }, context);
  }

  clear(instanceId: string, context: CommandContext): Promise<void> {
    return this.run(instanceId, { type: 'ClearExport', data: {} }, context);
  }

  private async run(instanceId: string, command: InstanceCommand, context: CommandContext): Promise<void> {
    const { position } = await this.handler.handle(instanceStream(instanceId), instanceDecider, command, { ...context, instanceId });
    await this.rw.settle(position, [this.readModel]);
  }
}
