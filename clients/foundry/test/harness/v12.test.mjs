// Every harness scenario against simulated Foundry 12 (see README.md beside this file).
import { runVersion } from "./run.mjs";

await runVersion(12);
