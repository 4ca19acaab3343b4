import type { Middleware } from 'koa';
import { MethodNotAllowed } from '../errors.js';
import type { AnyRoute } from '../route.js';

interface PathPattern {
  template: string;
  pattern: RegExp;
  methods: Set<string>;
  secretPath: boolean;
}

export interface MethodChecks {
  /**
   * Before the routers: a literal path (/instances/create) names that resource even where a
   * pattern (/instances/{id}) would also match it, so GET /instances/create is a wrong method,
   * not a lookup of an instance called "create". One map lookup, no await.
   */
  literal: Middleware;
  /**
   * After the routers, reached only by a request none of them took: a path some route serves with
   * another method answers 405 with `Allow` (RFC 9110) instead of 404. Costs matched requests nothing.
   */
  fallback: Middleware;
}

export function methodChecks(routes: readonly AnyRoute[]): MethodChecks {
  const byPath = new Map<string, PathPattern>();
  for (const route of routes) {
    const entry = byPath.get(route.path) ?? { template: route.path, pattern: patternOf(route.path), methods: new Set<string>(), secretPath: false };
    entry.methods.add(route.method.toUpperCase());
    if (route.secretPath) entry.secretPath = true;
    if (route.method === 'get') entry.methods.add('HEAD');
    byPath.set(route.path, entry);
  }
  const patterns = [...byPath.values()];
  const literals = new Map([...byPath].filter(([path]) => !path.includes('{')).map(([path, p]) => [path, p.methods]));
  return {
    literal: (ctx, next) => {
      const path = ctx.path;
      const methods = literals.get(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
      if (methods && !methods.has(ctx.method)) throw new MethodNotAllowed([...methods].sort());
      return next();
    },
    fallback: (ctx, next) => {
      const allow = new Set<string>();
      for (const { template, pattern, methods, secretPath } of patterns) {
        if (!pattern.test(ctx.path)) continue;
        for (const m of methods) allow.add(m);
        // Even with the wrong method, a path that is a credential is logged as its template only.
        if (secretPath) Object.assign(ctx.state, { route: template, secretPath: true });
      }
      if (allow.size > 0 && !allow.has(ctx.method)) throw new MethodNotAllowed([...allow].sort());
      return next();
    },
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
