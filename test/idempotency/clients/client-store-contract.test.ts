// Runs the store contract over every client adapter (pg, PGlite, postgres.js, Drizzle, Prisma, Kysely).
import { clientKinds, clientStoreKind } from "../support/client-harness";
import { describeStoreContract } from "../support/store-contract";

for (const kind of clientKinds) describeStoreContract(clientStoreKind(kind));
