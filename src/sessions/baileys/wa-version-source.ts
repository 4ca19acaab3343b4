import { fetchLatestWaWebVersion } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import { formatWaVersion, type WaVersion } from './version.js';

/** What Baileys' fetchLatestWaWebVersion answers: `isLatest` false (and `error`) when it could not fetch. */
export interface FetchedWaVersion {
  version: number[];
  isLatest: boolean;
  error?: unknown;
}

/** Asks web.whatsapp.com for the current client revision; tests inject their own (CI has no internet). */
export type FetchWaVersion = (signal: AbortSignal) => Promise<FetchedWaVersion>;

export const fetchWaWebVersion: FetchWaVersion = (signal) => fetchLatestWaWebVersion({ signal });

/** The versions a socket is opened with, and what to do when the network refuses one (405). */
export interface WaVersionProvider {
  current(): Promise<WaVersion>;
  /** After a 405 for `refused`: a newer version to retry with once, or undefined (nothing newer to be had). */
  refused(refused: WaVersion): Promise<WaVersion | undefined>;
}

type Choice = { version: WaVersion; source: 'configured' | 'fetched' | 'built_in'; why?: string };

export interface WaVersionSourceOptions {
  /** WHATSAPP_VERSION: used as given, nothing fetched (until the network refuses it). */
  configured?: WaVersion;
  /** Baileys' own version: the fallback when nothing else is known. */
  builtIn: WaVersion;
  fetch: FetchWaVersion;
  /** How long a fetch may take before the built-in version is used instead. */
  timeoutMs: number;
  logger: Pick<Logger, 'info' | 'warn'>;
}

/**
 * The WhatsApp Web version the driver announces. WhatsApp refuses clients it considers outdated
 * (405), and Baileys' built-in version ages with the installed release: the current one is fetched
 * from web.whatsapp.com at start (in the background, bounded by a timeout, so a gateway without
 * internet starts at once on the built-in one), unless WHATSAPP_VERSION sets it. A refusal fetches
 * again: when that gives a newer version, the refused socket is retried once with it.
 */
export class WaVersionSource implements WaVersionProvider {
  private choice: Choice | undefined;
  private readonly first: Promise<Choice>;
  private refetch: { refused: string; answer: Promise<WaVersion | undefined> } | undefined;

  constructor(private readonly o: WaVersionSourceOptions) {
    this.first = o.configured ? Promise.resolve(this.settle({ version: o.configured, source: 'configured' })) : this.fetchOrFallBack();
  }

  async current(): Promise<WaVersion> {
    return (this.choice ?? (await this.first)).version;
  }

  /** For /ready: the version in use and where it came from. */
  describe(): string {
    const choice = this.choice;
    if (!choice) return `${formatWaVersion(this.o.builtIn)} (fetching the current version)`;
    const version = formatWaVersion(choice.version);
    if (choice.source === 'configured') return `${version} (WHATSAPP_VERSION)`;
    if (choice.source === 'fetched') return `${version} (fetched)`;
    return `${version} (built-in: the current version could not be fetched: ${choice.why ?? 'unknown'})`;
  }

  refused(refused: WaVersion): Promise<WaVersion | undefined> {
    const key = formatWaVersion(refused);
    // Sessions refused together share one fetch.
    if (this.refetch?.refused === key) return this.refetch.answer;
    const answer = (async () => {
      const fetched = await this.fetchCurrent();
      if ('version' in fetched && formatWaVersion(fetched.version) !== key) {
        this.o.logger.warn(`WhatsApp refused client version ${key} (405); retrying once with the current one, ${formatWaVersion(fetched.version)}`);
        this.settle({ version: fetched.version, source: 'fetched' });
        return fetched.version;
      }
      const why = 'version' in fetched ? 'it is the current one' : fetched.why;
      this.o.logger.warn(`WhatsApp refused client version ${key} (405) and no newer one could be fetched (${why})`);
      return undefined;
    })().finally(() => {
      if (this.refetch?.answer === answer) this.refetch = undefined;
    });
    this.refetch = { refused: key, answer };
    return answer;
  }

  private async fetchOrFallBack(): Promise<Choice> {
    const fetched = await this.fetchCurrent();
    if ('version' in fetched) return this.settle({ version: fetched.version, source: 'fetched' });
    return this.settle({ version: this.o.builtIn, source: 'built_in', why: fetched.why });
  }

  private settle(choice: Choice): Choice {
    this.choice = choice;
    // Info, not a warning: without internet the built-in version is the expected answer.
    this.o.logger.info(`WhatsApp Web version ${this.describe()}`);
    return choice;
  }

  /** One bounded fetch: the version, or why there is none. Never throws. */
  private async fetchCurrent(): Promise<{ version: WaVersion } | { why: string }> {
    const controller = new AbortController();
    const timedOut = new Promise<never>((_, reject) => {
      controller.signal.addEventListener('abort', () => reject(new Error(`no answer within ${this.o.timeoutMs} ms`)), { once: true });
    });
    const timer = setTimeout(() => controller.abort(), this.o.timeoutMs);
    try {
      // Raced as well as signalled: a fetch that ignores its signal must not hold anyone.
      const answer = await Promise.race([this.o.fetch(controller.signal), timedOut]);
      const version = asVersion(answer.version);
      if (!answer.isLatest || !version) return { why: reasonOf(answer.error ?? 'no version in the answer') };
      return { version };
    } catch (error) {
      return { why: reasonOf(error) };
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
  }
}

function asVersion(value: unknown): WaVersion | undefined {
  if (!Array.isArray(value) || value.length !== 3) return undefined;
  if (!value.every((n): n is number => Number.isSafeInteger(n) && n >= 0) || value[0] === 0) return undefined;
  return [value[0], value[1], value[2]] as WaVersion;
}

function reasonOf(error: unknown): string {
  const cause = error instanceof Error ? (error.cause instanceof Error ? `: ${error.cause.message}` : '') : '';
  const message = error instanceof Error ? error.message : typeof error === 'object' && error && 'message' in error ? String((error as { message: unknown }).message) : String(error);
  return `${message}${cause}`;
}
