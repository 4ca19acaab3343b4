import type { Middleware } from 'koa';
import { MethodNotAllowed } from '../errors.js';
import type { AnyRoute } from '../route.js';

interface PathPattern {
  pattern: RegExp;
  methods: Set<string>;
}

/**
 * A request no route took, on a path that some route serves with another method, answers 405
 * with `Allow` instead of 404 (RFC 9110). It runs only after a miss, so it costs the routes that
 * match nothing.
 */
export function methodNotAllowed(routes: readonly AnyRoute[]): Middleware {
  const byPath = new Map<string, PathPattern>();
  for (const route of routes) {
    const entry = byPath.get(route.path) ?? { pattern: patternOf(route.path), methods: new Set<string>() };
    entry.methods.add(route.method.toUpperCase());
    if (route.method === 'get') entry.methods.add('HEAD');
    byPath.set(route.path, entry);
  }
  const patterns = [...byPath.values()];
  // A literal path (/instances/create) names that resource even where a pattern (/instances/{id})
  // would also match it: GET /instances/create is a wrong method, not a lookup of instance "create".
  const literals = new Map([...byPath].filter(([path]) => !path.includes('{')).map(([path, p]) => [path, p.methods]));
  return async (ctx, next) => {
    const literal = literals.get(ctx.path.length > 1 && ctx.path.endsWith('/') ? ctx.path.slice(0, -1) : ctx.path);
    if (literal && !literal.has(ctx.method)) throw new MethodNotAllowed([...literal].sort());
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const allow = new Set<string>();
    for (const { pattern, methods } of patterns) if (pattern.test(ctx.path)) for (const m of methods) allow.add(m);
    if (allow.size > 0 && !allow.has(ctx.method)) throw new MethodNotAllowed([...allow].sort());
  };
}

/** /instances/{id}/cancel -> ^/instances/[^/]+/cancel/?$ (one trailing slash, as the router allows). */
function patternOf(path: string): RegExp {
  const literal = path
    .split(/\{\w+\}/)
    .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
    .join('[^/]+');
  return new RegExp(`^${literal}/?$`);
}
