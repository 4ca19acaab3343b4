import axios, { type AxiosInstance, type CreateAxiosDefaults } from 'axios';

/**
 * An axios instance whose defaults are exactly `config`. axios.create merges its global defaults
 * into the instance (JSON transforms, a header bucket per method, transitional flags, XSRF
 * names), and every request merges and validates all of them again: on a webhook POST through
 * the undici adapter that was most of axios's cost. Whatever `config` leaves out takes axios's
 * built-in fallback, as it would for a key missing from the defaults.
 */
export function leanAxios(config: CreateAxiosDefaults & { headers?: Record<string, string> }): AxiosInstance {
  const instance = axios.create(config);
  const defaults = instance.defaults as unknown as Record<string, unknown>;
  for (const key of Object.keys(defaults)) {
    if (!(key in config)) delete defaults[key];
  }
  // Flat headers: no per-method buckets to merge on each request.
  defaults.headers = { ...config.headers };
  return instance;
}
