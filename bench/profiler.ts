import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import WebSocket from 'ws';

/**
 * CPU profiles of a child process over its inspector, taken around the measured phase only (not
 * its start or the bench's set-up), which `--cpu-prof` cannot do. The child runs with
 * `--inspect=127.0.0.1:<port>`; profiles land in `dir` as .cpuprofile files for Chrome DevTools.
 */
export class ChildProfiler {
  private socket: WebSocket | null = null;
  private next = 1;
  private readonly pending = new Map<number, (result: unknown) => void>();

  constructor(private readonly port: number) {}

  /** The option that makes a child listen for this profiler. */
  static option(port: number): string {
    return `--inspect=127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    const targets = (await (await fetch(`http://127.0.0.1:${this.port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
    const url = targets[0]?.webSocketDebuggerUrl;
    if (!url) throw new Error(`no inspector target on port ${this.port}`);
    const socket = new WebSocket(url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { id?: number; result?: unknown };
      if (message.id !== undefined) this.pending.get(message.id)?.(message.result);
    });
    this.socket = socket;
    await this.call('Profiler.enable');
    await this.call('Profiler.setSamplingInterval', { interval: 200 });
    await this.call('Profiler.start');
  }

  /** Stops profiling and writes the profile as `<dir>/<name>.cpuprofile`. */
  async stop(dir: string, name: string): Promise<string> {
    const { profile } = (await this.call('Profiler.stop')) as { profile: unknown };
    const file = join(dir, `${name}.cpuprofile`);
    await writeFile(file, JSON.stringify(profile));
    this.socket?.close();
    this.socket = null;
    return file;
  }

  private call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    const id = this.next++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.socket?.send(JSON.stringify({ id, method, params }));
    });
  }
}
