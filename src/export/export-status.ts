import type { SinkKind } from './documents.js';
import type { ExportRepo } from './export-repo.js';
import type { Sink } from './sinks/port.js';

export interface SinkStatus {
  sink: SinkKind;
  /** This node's connection to the broker can publish now. */
  connected: boolean;
  lag: number;
  last_published_seq: number;
  last_error: string | null;
  last_error_at: string | null;
  /** Events refused for good and passed over, and why the last was. */
  skipped: number;
  last_skipped: string | null;
}

export interface ExportStatus {
  /** Comma-separated, as the webhook's `events`; '' when the export is off. */
  events: string;
  /** Events recorded for export that the slowest sink has not published yet. */
  lag: number;
  /** The highest seq every sink has published (0 before the first). */
  last_published_seq: number;
  last_error: string | null;
  sinks: SinkStatus[];
}

/** What GET /instances/{id}/export answers, from the store (any node) and this node's connections. */
export class ExportQueries {
  constructor(
    private readonly repo: ExportRepo,
    private readonly sinks: readonly Sink[],
  ) {}

  async status(instanceId: string): Promise<ExportStatus> {
    const [settings, cursors] = await Promise.all([this.repo.settings(instanceId), this.repo.cursors(instanceId)]);
    const published = (kind: SinkKind) => cursors.find((c) => c.sink === kind)?.published_seq ?? 0;
    // Counted, not a seq difference: the instance's seq has gaps (events the export does not carry).
    const waiting = await Promise.all(this.sinks.map((sink) => this.repo.waiting(instanceId, published(sink.kind))));
    const sinks = this.sinks.map((sink, i): SinkStatus => {
      const cursor = cursors.find((c) => c.sink === sink.kind);
      return {
        sink: sink.kind,
        connected: sink.ready,
        lag: waiting[i] ?? 0,
        last_published_seq: published(sink.kind),
        last_error: cursor?.last_error ?? sink.lastError,
        last_error_at: cursor?.last_error_at ?? null,
        skipped: cursor?.skipped ?? 0,
        last_skipped: cursor?.last_skipped ?? null,
      };
    });
    return {
      events: (settings?.events ?? []).join(','),
      lag: Math.max(0, ...sinks.map((s) => s.lag)),
      last_published_seq: sinks.length === 0 ? 0 : Math.min(...sinks.map((s) => s.last_published_seq)),
      last_error: sinks.map((s) => (s.last_error === null ? null : `${s.sink}: ${s.last_error}`)).find((e) => e !== null) ?? null,
      sinks,
    };
  }
}
