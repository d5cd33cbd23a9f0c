// A fetch-standard route (`(request: Request) => Response`, as Next.js, Bun and Deno call it), served by
// @hono/node-server with Node 20's own Request and Response: the bare route or our block's fetch adapter.
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { idempotent, withIdempotency } from "@/blocks/idempotency/adapters/fetch";
import type { Closable } from "./block-handler";
import { blockHandler } from "./block-handler";
import { charge, type PaymentBody } from "./payment";
import { ROUTE, type ServerSpec } from "./spec";

type FetchRoute = (request: Request) => Promise<Response>;

const bare: FetchRoute = async (request) =>
  Response.json(charge((await request.json()) as PaymentBody), { status: 201 });

async function route(spec: ServerSpec): Promise<{ fetch: FetchRoute } & Closable> {
  if (spec.variant === "bare") return { fetch: bare, close: async () => {} };
  if (spec.variant !== "block") throw new Error(`No fetch ${spec.variant} server.`);
  const { handler, close } = await blockHandler(spec);
  const options = { getUserId: () => "u_bench", getOperation: () => `POST ${ROUTE}` };
  const protectedRoute =
    spec.style === "capture"
      ? withIdempotency(handler, options, bare)
      : idempotent(handler, {
          ...options,
          run: async (request) => ({ status: 201, body: charge((await request.json()) as PaymentBody) }),
        });
  return { fetch: (request) => protectedRoute(request, undefined), close };
}

export async function fetchServer(spec: ServerSpec): Promise<{ server: Server } & Closable> {
  const { fetch, close } = await route(spec);
  const notFound = () => new Response(null, { status: 404 });
  // overrideGlobalObjects: false keeps Node's standard Response (not @hono/node-server's lighter stand-in).
  const server = serve({
    fetch: (request: Request) => (new URL(request.url).pathname === ROUTE ? fetch(request) : notFound()),
    port: 0,
    hostname: "127.0.0.1",
    overrideGlobalObjects: false,
  }) as Server;
  return { server, close };
}
