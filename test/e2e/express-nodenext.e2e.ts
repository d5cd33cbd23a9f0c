// Express, ESM + NodeNext (relative imports need .js), @/* alias inherited through `extends`.
import { fixtureSuite } from "./fixture-suite.js";

fixtureSuite({
  fixture: "express-nodenext",
  alias: "@/blocks",
  moduleStyle: "nodenext",
  framework: "express",
  jobImport: '"@/blocks/idempotency/index.js"',
});
