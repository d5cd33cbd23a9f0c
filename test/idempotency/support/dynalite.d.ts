// Types for dynalite (a local DynamoDB on LevelDB, in memory by default), which ships none.
declare module "dynalite" {
  import type { Server } from "node:http";
  type Options = { createTableMs?: number; deleteTableMs?: number; updateTableMs?: number; path?: string };
  export default function dynalite(options?: Options): Server;
}
