// Whose key space a request's key lives in: the route's user, the framework's, or the anonymous scope.
import { warnOnce } from "../utils/warn-once";

/**
 * The scope of requests that carry no user. A control character opens it, so no real id is
 * likely to equal it, and a `getUserId` that returns it anyway is refused: a real user can never
 * share the anonymous key space.
 */
export const ANONYMOUS_USER_ID = "\u0001anonymous";

/** A wiring mistake found while serving a request: warned once with its fix, and answered 500 by the framework. */
export class IdempotencySetupError extends Error {
  override readonly name = "IdempotencySetupError";
  readonly code = "IDEMPOTENCY_SETUP";

  constructor(message: string) {
    super(message);
    warnOnce(message);
  }
}

/**
 * What a user lookup sees of the request besides the framework's object. The id itself when the
 * lookup answers at once (no promise to await per request), else a promise; a setup error always
 * arrives as a rejected promise, never thrown.
 */
export type UserLookup<Req> = (req: Req, hasCredentials: boolean) => string | Promise<string>;

/**
 * The route's own `getUserId`, checked: it may not claim the anonymous scope.
 *
 * @example
 * const userIdOf = routeUserId((req: Request) => req.user.id);
 */
export function routeUserId<Req>(getUserId: (req: Req) => string | Promise<string>): UserLookup<Req> {
  return function routeUserIdOf(req) {
    try {
      const id = getUserId(req);
      return typeof id === "string" ? checked(id) : Promise.resolve(id).then(checked);
    } catch (err) {
      return rejection(err);
    }
  };
}

function checked(id: string): string {
  if (id === ANONYMOUS_USER_ID)
    throw new IdempotencySetupError(
      "idempotency: a user id equals the reserved anonymous scope; return the user's own id.",
    );
  return id;
}

/**
 * The framework's user (`req.user.id`, `c.get("user").id`). A request without one is anonymous,
 * unless it carries credentials: then authentication ran somewhere this lookup cannot see (hono/jwt
 * sets `jwtPayload`, @fastify/jwt a `user` without `id`), and guessing "anonymous" would let
 * signed-in users replay each other's responses. That is refused as a setup error.
 */
export function frameworkUserId<Req>(userOf: (req: Req) => unknown, allowAnonymous: boolean): UserLookup<Req> {
  return function frameworkUserIdOf(req, hasCredentials) {
    try {
      return userIdFrom(userOf(req), hasCredentials, allowAnonymous);
    } catch (err) {
      return rejection(err);
    }
  };
}

/** What a lookup threw, untouched, as the rejection an async lookup would have given. */
function rejection(err: unknown): Promise<never> {
  return new Promise<never>(() => {
    throw err;
  });
}

function userIdFrom(id: unknown, hasCredentials: boolean, allowAnonymous: boolean): string {
  if ((typeof id === "string" && id !== "") || typeof id === "number") return checked(String(id));
  if (hasCredentials) {
    throw new IdempotencySetupError(
      'idempotency: a request carried an Authorization header but the route found no user id (it reads the framework\'s user: `req.user.id`, `request.user.id`, `c.get("user").id`). Pass `getUserId` returning the authenticated user\'s id, e.g. `(c) => c.get("jwtPayload").sub`.',
    );
  }
  if (!allowAnonymous) {
    warnOnce(
      "idempotency: a request had no authenticated user and its route has no `getUserId`, so its key is scoped to the shared anonymous user. Pass `getUserId` (or `allowAnonymous: true`).",
    );
  }
  return ANONYMOUS_USER_ID;
}
