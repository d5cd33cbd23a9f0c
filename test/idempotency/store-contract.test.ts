// Runs the store contract against MemoryStore, PostgresStore on PGlite and on DATABASE_URL.
import { describeStoreContract } from "./support/store-contract";
import { allStoreKinds } from "./support/store-harness";

for (const kind of allStoreKinds) describeStoreContract(kind);
