import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { Context } from 'koa';
import { isLapsed, paymentRequired } from '../domain/instance/billing.js';
import type { InstanceDoc } from '../projections/instances/instances-projection.js';

/**
 * - public: no credentials.
 * - jwt: the account's Bearer JWT.
 * - instance: the owner's JWT, or X-Instance-Token + X-Client-Token of the owner.
 * - instance_jwt: the owner's JWT only (billing, cancel, credential rotation).
 */
export type AuthMode = 'public' | 'jwt' | 'instance' | 'instance_jwt';

export interface Principal {
  accountId: string;
  via: 'jwt' | 'instance_token';
  /** The access token's id (`jti`) when the caller came with a JWT: the account area marks it as this session. */
  tokenId?: string;
}

export interface RouteInput<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  /** Set on every non-public route. */
  principal: Principal;
  /** Set on instance routes, after ownership has been checked. */
  instance: InstanceDoc;
  requestId: string;
  ip: string;
  /** The body's exact bytes as text, on routes that ask for them (to check a signature over them). */
  rawBody?: string;
  koa: Context;
}

interface RouteAnswer {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Already-serialised or non-JSON content (e.g. HTML). */
  contentType?: string;
}

interface ResponseSpec {
  description: string;
  schema?: TSchema;
  contentType?: string;
}

export interface RouteSpec<B extends TSchema | undefined, Q extends TObject | undefined, P extends TObject | undefined> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI style: /instances/{id}. */
  path: string;
  summary: string;
  tag: string;
  auth: AuthMode;
  body?: B;
  query?: Q;
  params?: P;
  /** Bytes; the app's default limit otherwise. */
  bodyLimit?: number;
  /** Hand the handler the body's exact text too, as `rawBody` (signed callbacks and webhooks). */
  rawBody?: boolean;
  /** The path itself is a credential (an unguessable callback path): the access log names the template, never the path. */
  secretPath?: boolean;
  /** Success answer; error answers are added from `errors`. */
  response: ResponseSpec & { status?: number };
  /** Other success answers (e.g. 207, some of the work done), documented with their own schema. */
  otherAnswers?: (ResponseSpec & { status: number })[];
  /** Error statuses this route can answer besides the auth ones. */
  errors?: number[];
  hidden?: boolean;
  /**
   * Honours `Idempotency-Key`: a repeat within 24 hours answers the first answer and runs
   * nothing (api/idempotency). For writes a client may retry after a lost answer.
   */
  idempotent?: boolean;
  /** The route acts on the instance: refused with 402 payment_required while it is EXPIRED or CANCELED. */
  paidOnly?: boolean;
  /**
   * The route needs the instance's live session (the socket, or state only the process holding it
   * knows). With many nodes it is forwarded to the node owning the session (api/middleware/forward-to-owner).
   */
  liveSession?: boolean;
  /**
   * The instance whose live session the request needs, found from its input rather than its path
   * (the sandbox's phone routes: the instance linked to the phone they reach). With many nodes the
   * request is forwarded to the node owning that session, its body as received; null: handled here.
   */
  liveSessionOf?(input: { accountId: string; params: Infer<NoInfer<P>>; body: Infer<NoInfer<B>> }): Promise<string | null>;
  handler(input: RouteInput<Infer<NoInfer<B>>, Infer<NoInfer<Q>>, Infer<NoInfer<P>>>): Promise<RouteAnswer> | RouteAnswer;
}

type Infer<T> = T extends TSchema ? Static<T> : Record<string, never>;

// The registry stores routes with their schemas erased; each handler was checked at definition.
export type AnyRoute = RouteSpec<TSchema | undefined, TObject | undefined, TObject | undefined>;

export function defineRoute<
  B extends TSchema | undefined = undefined,
  Q extends TObject | undefined = undefined,
  P extends TObject | undefined = undefined,
>(spec: RouteSpec<B, Q, P>): AnyRoute {
  return (spec.paidOnly ? refuseLapsed(spec) : spec) as unknown as AnyRoute;
}

/** The one check of `paidOnly`: after auth and validation, before the handler acts. */
function refuseLapsed<B extends TSchema | undefined, Q extends TObject | undefined, P extends TObject | undefined>(
  spec: RouteSpec<B, Q, P>,
): RouteSpec<B, Q, P> {
  return {
    ...spec,
    errors: [...new Set([...(spec.errors ?? []), 402])],
    handler: (input) => {
      if (isLapsed(input.instance.billing_status)) throw paymentRequired();
      return spec.handler(input);
    },
  };
}
