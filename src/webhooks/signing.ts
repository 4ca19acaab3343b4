import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signing: HMAC-SHA256 over `id.timestamp.body`, keyed with the base64 part of
 * the `whsec_` secret, sent as `v1,<base64>`. Receivers verify with any Standard Webhooks library.
 */
export function signingKey(secret: string): Buffer {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  return Buffer.from(encoded, 'base64');
}

export function sign(key: Buffer, id: string, timestampS: number, body: string): string {
  const mac = createHmac('sha256', key).update(`${id}.${timestampS}.`).update(body).digest('base64');
  return `v1,${mac}`;
}

/** A type alias, not an interface, so it passes as a plain header record (axios's). */
export type SignedHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

export function signedHeaders(key: Buffer, id: string, timestampS: number, body: string): SignedHeaders {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampS), 'webhook-signature': sign(key, id, timestampS, body) };
}
