// Every harness scenario against simulated Foundry 14 (see README.md beside this file).
import { runVersion } from "./run.mjs";

await runVersion(14);
