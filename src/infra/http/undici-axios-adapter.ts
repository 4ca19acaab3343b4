import axios, {
  AxiosError,
  AxiosHeaders,
  CanceledError,
  type AxiosAdapter,
  type AxiosResponse,
  type InternalAxiosRequestConfig,
} from 'axios';
import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { BoundedMap } from '../bounded-map.js';

/**
 * An axios adapter that sends through an undici Dispatcher (Agent or Pool). Callers keep axios's
 * API (interceptors, transformers, validateStatus, AxiosError); the socket work is undici's,
 * which keeps connections alive per origin and costs a fraction of axios's own http adapter.
 *
 * Supported: absolute URLs (or baseURL + url, params), string/Buffer/ArrayBuffer/typed array/
 * stream bodies, timeout, signal and cancelToken (both also end a streamed answer's body), basic
 * auth, responseType text/json/arraybuffer/stream, maxContentLength, maxBodyLength, validateStatus. Redirects are not followed and
 * nothing is decompressed: the adapter never asks for either.
 */
export function undiciAdapter(dispatcher: Dispatcher): AxiosAdapter {
  return (config) => send(dispatcher, config);
}

type Body = string | Buffer | Uint8Array | Readable | null;

async function send(dispatcher: Dispatcher, config: InternalAxiosRequestConfig): Promise<AxiosResponse> {
  const url = targetOf(config);
  const method = (config.method ?? 'get').toUpperCase();
  const request = { method, url: url.href };
  const body = requestBody(config, request);
  const abort = new AbortController();
  const stopWatching = watchCancellation(config, abort, request);

  let answer: Dispatcher.ResponseData;
  try {
    answer = await dispatcher.request({
      origin: url.origin,
      path: url.path,
      method: method as Dispatcher.HttpMethod,
      headers: requestHeaders(config),
      body,
      signal: abort.signal,
    });
  } catch (err) {
    stopWatching();
    throw toAxiosError(err, abort, config, request);
  }

  let streaming = false;
  try {
    const data = config.responseType === 'stream' ? answer.body : await readBody(answer.body, config, request);
    const response = settle({
      data,
      status: answer.statusCode,
      statusText: STATUS_CODES[answer.statusCode] ?? '',
      headers: new AxiosHeaders(answer.headers as Record<string, string | string[]>),
      config,
      request,
    });
    streaming = data === answer.body;
    return response;
  } catch (err) {
    answer.body.destroy();
    throw err instanceof AxiosError ? err : toAxiosError(err, abort, config, request);
  } finally {
    // A streamed body stays under the timeout and the signal until its reader is done with it
    // (undici destroys it with the abort's reason); anything else is fully read by now.
    if (streaming && !answer.body.closed) answer.body.once('close', stopWatching);
    else stopWatching();
  }
}

/** The parts of a URL a request needs. */
interface Target {
  href: string;
  origin: string;
  path: string;
}

/** Callers send to a few URLs again and again (a webhook's URL, an API's endpoints). */
const targets = new BoundedMap<string, Target>(1024);

function targetOf(config: InternalAxiosRequestConfig): Target {
  // getUri merges defaults and serializes params; skip that work on the common plain-URL path.
  const raw = config.baseURL || config.params ? axios.getUri(config) : (config.url ?? '');
  const known = targets.get(raw);
  if (known) return known;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AxiosError(`invalid URL: ${raw}`, AxiosError.ERR_INVALID_URL, config);
  }
  const target = { href: url.href, origin: url.origin, path: url.pathname + url.search };
  targets.set(raw, target);
  return target;
}

function requestHeaders(config: InternalAxiosRequestConfig): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(AxiosHeaders.from(config.headers).toJSON(true))) {
    if (value !== undefined && value !== null && (value as unknown) !== false) out[name.toLowerCase()] = String(value);
  }
  if (config.auth) {
    const { username = '', password = '' } = config.auth;
    out.authorization = `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
  }
  return out;
}

function requestBody(config: InternalAxiosRequestConfig, request: object): Body {
  const data: unknown = config.data;
  if (data === undefined || data === null) return null;
  if (data instanceof Readable) return data;
  let bytes: Buffer | string;
  if (typeof data === 'string' || Buffer.isBuffer(data)) bytes = data;
  else if (data instanceof ArrayBuffer) bytes = Buffer.from(data);
  else if (ArrayBuffer.isView(data)) bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  else throw new AxiosError('request data must be a string, Buffer, ArrayBuffer, typed array or stream', AxiosError.ERR_BAD_REQUEST, config, request);
  const max = config.maxBodyLength ?? -1;
  if (max > -1 && Buffer.byteLength(bytes) > max) {
    throw new AxiosError('Request body larger than maxBodyLength limit', AxiosError.ERR_BAD_REQUEST, config, request);
  }
  return bytes;
}


/** Wires timeout, signal and cancelToken to one AbortController; returns the un-wiring. */
function watchCancellation(config: InternalAxiosRequestConfig, abort: AbortController, request: object): () => void {
  const timer = config.timeout ? setTimeout(() => abort.abort(timeoutError(config, request)), config.timeout) : undefined;
  const signal = config.signal;
  const onAbort = () => abort.abort(new CanceledError(undefined, config, request));
  if (signal?.aborted) onAbort();
  signal?.addEventListener?.('abort', onAbort);
  void config.cancelToken?.promise.then((reason) => abort.abort(reason));
  return () => {
    clearTimeout(timer);
    signal?.removeEventListener?.('abort', onAbort);
  };
}

function timeoutError(config: InternalAxiosRequestConfig, request: object): AxiosError {
  const message = config.timeoutErrorMessage ?? `timeout of ${config.timeout}ms exceeded`;
  const code = config.transitional?.clarifyTimeoutError ? AxiosError.ETIMEDOUT : AxiosError.ECONNABORTED;
  return new AxiosError(message, code, config, request);
}

function toAxiosError(err: unknown, abort: AbortController, config: InternalAxiosRequestConfig, request: object): AxiosError {
  if (abort.signal.aborted) {
    const reason: unknown = abort.signal.reason;
    if (reason instanceof AxiosError) return reason;
    return new CanceledError(undefined, config, request);
  }
  if (err instanceof AxiosError) return err;
  const cause = err instanceof Error ? err : new Error(String(err));
  const code = (cause as { code?: unknown }).code;
  // undici's own timeouts say UND_ERR_*_TIMEOUT; callers test for ETIMEDOUT as with axios.
  const mapped = typeof code === 'string' && /TIMEOUT$/.test(code) ? AxiosError.ETIMEDOUT : typeof code === 'string' ? code : AxiosError.ERR_NETWORK;
  const error = new AxiosError(cause.message, mapped, config, request);
  error.cause = cause;
  return error;
}

async function readBody(body: Dispatcher.ResponseData['body'], config: InternalAxiosRequestConfig, request: object): Promise<string | Buffer> {
  const max = config.maxContentLength ?? -1;
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (max > -1 && length > max) {
      throw new AxiosError(`maxContentLength size of ${max} exceeded`, AxiosError.ERR_BAD_RESPONSE, config, request);
    }
    chunks.push(chunk);
  }
  const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, length);
  if (config.responseType === 'arraybuffer') return bytes;
  const encoding = (config.responseEncoding ?? 'utf8') as BufferEncoding;
  return bytes.toString(encoding);
}

function settle(response: AxiosResponse): AxiosResponse {
  const validate = response.config.validateStatus;
  if (!validate || validate(response.status)) return response;
  throw new AxiosError(
    `Request failed with status code ${response.status}`,
    response.status >= 400 && response.status < 500 ? AxiosError.ERR_BAD_REQUEST : AxiosError.ERR_BAD_RESPONSE,
    response.config,
    response.request,
    response,
  );
}
