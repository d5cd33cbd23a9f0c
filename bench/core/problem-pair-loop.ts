// Run as a bundle by bench/problem-cpu.ts: the CPU of answering one typed problem on Hono in this process, without HTTP:
// the error thrown and answered by our adapter (`problemDetails().onError`) against hono-problem-details'
// (`problemDetails()` + `problemDetailsHandler()`), in alternating rounds (A B, then B A, ...). Node-server's Request
// and Response stand in for the globals, as under `serve()`.
// argv: peerModule calls rounds
import { pathToFileURL } from "node:url";
import { getRequestListener } from "@hono/node-server";
import { Context, type ErrorHandler } from "hono";
import { problemDetails } from "@/blocks/error-handler/adapters/hono";
import { defineProblem } from "@/blocks/error-handler/define-problem";
import { alternateRounds } from "../support/in-process-rounds";

type Peer = {
  problemDetailsHandler(): ErrorHandler;
  problemDetails(input: { status: number; title: string; type: string; detail: string }): Error;
};
type Variant = { name: string; call: () => Response | Promise<Response> };

const [peerModule = "", callsArg = "200000", roundsArg = "5"] = process.argv.slice(2);
const CALLS = Number(callsArg);
const ROUNDS = Number(roundsArg);

/** The README's typed problem, the same both ways (bench/servers/problem-routes.ts). */
const CARD_DECLINED = {
  status: 402,
  title: "Card declined",
  type: "https://docs.example.com/problems/card-declined",
  detail: "The issuer declined the card.",
};

async function variants(): Promise<Variant[]> {
  // Installs @hono/node-server's Request and Response as the globals, as serve() does.
  getRequestListener(() => new Response(null));
  const peer = (await import(pathToFileURL(peerModule).href)) as Peer;
  const CardDeclined = defineProblem({
    code: "CARD_DECLINED",
    status: CARD_DECLINED.status,
    title: CARD_DECLINED.title,
    type: CARD_DECLINED.type,
  });
  const ours = problemDetails({ problems: [CardDeclined] }).onError;
  const theirs = peer.problemDetailsHandler();
  // One request for every answer: the handlers only read it (a header or two, the path). The env is what
  // serve() hands each request: Node's IncomingMessage (its parsed headers) as `incoming`.
  const headers = { "content-type": "application/json", "content-length": "32" };
  const incoming = { headers, rawHeaders: Object.entries(headers).flat() };
  const context = new Context(new Request("http://127.0.0.1/payments", { method: "POST", headers }), {
    env: { incoming },
    path: "/payments",
  });
  return [
    { name: "ours: create() + onError", call: () => ours(CardDeclined.create(CARD_DECLINED.detail), context) },
    { name: "hono-problem-details", call: () => theirs(peer.problemDetails(CARD_DECLINED), context) },
  ];
}

async function run(variant: Variant, calls: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    // Both build their body's text before the Response; @hono/node-server writes it from there, unread.
    const response = await variant.call();
    if (response.status !== 402) throw new Error(`${variant.name}: status ${response.status}`);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

async function main(): Promise<void> {
  const rows = await alternateRounds(await variants(), run, { warmup: 20_000, calls: CALLS, rounds: ROUNDS });
  console.log(JSON.stringify(rows));
}

await main();
